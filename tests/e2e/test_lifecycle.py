#!/usr/bin/env python3
"""End to end, the fault lifecycle's safety paths with the real faultd, faultctl and hooks:
- flood: one fault line 10,000 times is one incident of count 10,000, every match is counted in
  faultd_faults_total, and the isolate hook runs once;
- storm: the same fault on most devices at once is one node-level incident, no hook runs and no
  device changes; a different signature on one device still isolates it;
- shadow: a `mode: shadow` rule's finding is journaled and counted, nothing else happens;
- budget: with max_isolations count 1 the second automatic isolation is held (metric, `faultctl
  budget`), while an operator's `faultctl isolate` still works."""
import harness
from harness import wait_for
from lifecycle_common import Node

BUDGET = "  max_isolations: { count: 10, window: 1h }\n"


def flood(args, check, work):
    n = Node(args, work, policy=BUDGET).start()
    n.write("XFAULT dev=3 the same error again\n" * 10000)
    n.wait_metric("faults_total to count all 10,000 matches", "faultd_faults_total",
                  {"device": "3", "level": "SeparateNPU", "code": "80818C00"}, 10000.0)
    n.wait_state("3", "isolated")
    incidents = n.incidents("--device", "3")
    check(len(incidents) == 1, "one open incident for device 3 (got %d)" % len(incidents))
    if incidents:
        check(incidents[0]["count"] == 10000,
              "the incident counts 10,000 findings (got %s)" % incidents[0]["count"])
        check(incidents[0]["rule"] == "test.fault" and incidents[0]["open"],
              "the incident is test.fault's, open")
    check(n.metric("faultd_findings_grouped_total", {"rule": "test.fault"}) == 9999.0,
          "9,999 findings were grouped into it")
    check(n.metric("faultd_rule_matches_total", {"rule": "test.fault"}) == 10000.0,
          "rule matches count every line")
    check(len(n.faults("3")) == 1, "the fault journal holds the first finding only")
    runs = n.hook_runs("isolate")
    check(len(runs) == 1, "the isolate hook ran once (got %d)" % len(runs))
    check(n.metric("faultd_incidents_open") == 1.0, "faultd_incidents_open is 1")
    # More of the same while the incident is open: counted, still one incident, no new hook.
    n.write("XFAULT dev=3 the same error again\n" * 5)
    n.wait_metric("5 more matches", "faultd_faults_total",
                  {"device": "3", "level": "SeparateNPU", "code": "80818C00"}, 10005.0)
    check(n.incidents("--device", "3")[0]["count"] == 10005, "the incident counts 10,005")
    check(len(n.hook_runs("isolate")) == 1, "still one isolate hook run")


def storm(args, check, work):
    n = Node(args, work, policy=BUDGET + "  storm: { window: 60s, min_devices: 3, fraction: 0.5, "
             "devices: 8 }\n").start()
    # The same fault on 6 of 8 devices in one write: a software problem, not 6 broken NPUs.
    n.write("".join("XFAULT dev=%d collective failed\n" % i for i in range(6)))
    n.wait_metric("a storm", "faultd_storms_total", {"rule": "test.fault"}, 1.0)
    n.wait_metric("6 findings", "faultd_faults_total",
                  {"device": "5", "level": "SeparateNPU", "code": "80818C00"}, 1.0)
    node_level = [i for i in n.incidents() if i["node_level"]]
    check(len(node_level) == 1, "one node-level incident (got %d)" % len(node_level))
    if node_level:
        check("6 devices" in node_level[0]["note"], "its note names 6 devices: %s"
              % node_level[0]["note"])
    states = {d["device"]: d["state"] for d in n.d.ctl_json("status")["devices"]}
    check(all(s == "healthy" for s in states.values()),
          "no device changed state (got %s)" % states)
    check(n.metric("faultd_device_state", {"device": "0", "state": "warning"}) in (None, 0.0),
          "device 0 is not warning on /metrics")
    # A different signature on one device is a device fault: it isolates.
    n.write("XOTHER dev=7 real hardware fault\n")
    n.wait_state("7", "isolated")
    runs = n.hook_runs("isolate")
    check([r[1] for r in runs] == ["7"],
          "the isolate hook ran for device 7 only (got %s)" % runs)
    # More of the storm's signature while it lasts: still no device changes.
    n.write("XFAULT dev=6 collective failed\n")
    n.wait_metric("device 6's finding", "faultd_faults_total",
                  {"device": "6", "level": "SeparateNPU", "code": "80818C00"}, 1.0)
    check(n.state("6") == "healthy", "device 6 stays healthy during the storm")
    check(len(n.hook_runs("isolate")) == 1, "still one isolate hook run")


def shadow(args, check, work):
    n = Node(args, work, policy=BUDGET).start()
    n.write("XSHADOW dev=5 would isolate\n")
    n.wait_metric("the shadow finding", "faultd_shadow_findings_total", {"rule": "test.shadow"},
                  1.0)
    faults = n.faults("5")
    check(len(faults) == 1 and faults[0]["rule"] == "test.shadow",
          "the shadow finding is journaled (faultctl events)")
    check(n.state("5") == "healthy", "device 5 unchanged")
    check(n.metric("faultd_rule_matches_total", {"rule": "test.shadow"}) == 1.0,
          "the shadow rule's match is counted")
    # The daemon is alive and acting: an enforcing rule after it still isolates, so the absence
    # of a hook run for the shadow rule is not the absence of hooks.
    n.write("XFAULT dev=6 enforced\n")
    n.wait_state("6", "isolated")
    check([r[1] for r in n.hook_runs()] == ["6"], "hooks ran for device 6 only, none for 5")
    check(n.actions("5") == [], "no action journaled for device 5")


def budget(args, check, work):
    n = Node(args, work, policy="  max_isolations: { count: 1, window: 1h }\n").start()
    b = n.d.ctl_json("budget")
    check(b["remaining"] == 1 and not b["exhausted"] and b["max_isolations"] == 1,
          "budget starts with 1 left: %s" % b)
    check(n.metric("faultd_isolation_budget_exhausted") == 0.0, "not exhausted at start")
    n.write("XFAULT dev=1 first\n")
    n.wait_state("1", "isolated")
    n.write("XFAULT dev=2 second\n")
    n.wait_metric("the budget exhausted", "faultd_isolation_budget_exhausted", {}, 1.0)
    wait_for("device 2's held isolate action",
             lambda: any(a["action"] == "isolate" and a["status"] == "skipped"
                         for a in n.actions("2")))
    check(n.state("2") == "warning", "device 2 stays warning (not isolated)")
    check([r[1] for r in n.hook_runs()] == ["1"], "the isolate hook ran for device 1 only")
    check(n.metric("faultd_actions_total", {"action": "isolate", "result": "skipped"}) == 1.0,
          "the held isolation is counted as skipped")
    b = n.d.ctl_json("budget")
    check(b["exhausted"] and b["remaining"] == 0 and b["used"] == 1,
          "faultctl budget -o json says exhausted: %s" % b)
    text = n.d.ctl("budget")
    check(text.returncode == 0 and "exhausted" in text.stdout and "0 left" in text.stdout,
          "faultctl budget (text): %r" % text.stdout)
    # The operator still can.
    r = n.d.ctl("isolate", "2", "--reason", "operator decision")
    check(r.returncode == 0, "faultctl isolate 2 works past the budget (%s)" % r.stderr)
    n.wait_state("2", "isolated")
    wait_for("the operator's isolate hook", lambda: [x[1] for x in n.hook_runs()] == ["1", "2"])
    check(True, "the isolate hook ran for the operator's request")


if __name__ == "__main__":
    harness.main(flood, storm, shadow, budget)
