#!/usr/bin/env python3
"""Reload with the real faultd: SIGHUP and `faultctl reload` swap in a new rule set while state,
read positions and a half-written line carry over; a bad reload keeps the running set, says why
and counts a failure."""
import os
import signal

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

RULE_A = """rules:
  - id: test.alpha
    match: { any: ["ALPHA FAULT"] }
    device: "{device}"
    fault: { code: 80818C00, level: SubHealthFault }
"""
RULE_B = """rules:
  - id: test.beta
    match: { any: ["BETA FAULT"], regex: 'dev=(?P<dev>\\d+)' }
    # Not `device`: the device-N/ path field would outrank an inline id (docs/log-formats.md §11).
    device: "{dev}"
    fault: { code: 8C084E00, level: SubHealthFault }
"""


def run(args, check, work):
    logs = os.path.join(work, "logs", "device-2")
    os.makedirs(logs)
    log = os.path.join(logs, "device-1_1.log")
    open(log, "w").close()
    rules_dir = os.path.join(work, "rules.d")
    os.makedirs(rules_dir)
    with open(os.path.join(rules_dir, "a.yaml"), "w") as f:
        f.write(RULE_A)
    port = free_port()
    config = f"""
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules_dir}/*.yaml"]
sources:
  - {{ name: dev, paths: ["{work}/logs/device-*/*.log"], path_fields: 'device-(?P<device>\\d+)/' }}
"""
    d = Faultd(args, work, config)
    d.start()

    def value(name, labels):
        return metric_value(scrape(port), name, labels)

    check(value("faultd_rules_loaded", {}) == 1.0, "one rule at start")
    # Half a line is written before the reload and finished after it.
    with open(log, "a") as f:
        f.write("2025-01-01 BETA FAU")

    with open(os.path.join(rules_dir, "b.yaml"), "w") as f:
        f.write(RULE_B)
    d.proc.send_signal(signal.SIGHUP)
    wait_for("SIGHUP reload", lambda: value("faultd_config_reloads_total", {"result": "success"}) == 1.0)
    text = scrape(port)
    check(metric_value(text, "faultd_rules_loaded", {}) == 2.0, "two rules after the reload")
    check(metric_value(text, "faultd_rule_matches_total", {"rule": "test.beta"}) == 0.0,
          "the new rule's counter starts at 0")
    with open(log, "a") as f:
        f.write("LT dev=7\nALPHA FAULT here\n")
    wait_for("both findings", lambda: value("faultd_rule_matches_total", {"rule": "test.alpha"}) == 1.0
             and value("faultd_rule_matches_total", {"rule": "test.beta"}) == 1.0)
    text = scrape(port)
    check(metric_value(text, "faultd_device_state", {"device": "7", "state": "warning"}) == 1.0,
          "the line split across the reload was read whole and matched the new rule")
    check(metric_value(text, "faultd_device_state", {"device": "2", "state": "warning"}) == 1.0,
          "the old rule still works, device from the path")
    check(metric_value(text, "faultd_source_lines_total", {"source": "dev"}) == 2.0,
          "the unchanged source kept its position: 2 lines read, none twice")

    # A bad reload: the running set stays, the error is reported and counted.
    with open(os.path.join(rules_dir, "c.yaml"), "w") as f:
        f.write("rules:\n  - id: bad\n    match: { regex: '(' }\n")
    r = d.ctl("reload")
    check(r.returncode == 1, "faultctl reload fails on a bad rule file (exit %d)" % r.returncode)
    check("c.yaml:3:" in r.stderr, "the reply names file:line:column (%s)" % r.stderr.strip())
    text = scrape(port)
    check(metric_value(text, "faultd_config_reloads_total", {"result": "failure"}) == 1.0,
          "the failure is counted")
    check(metric_value(text, "faultd_rules_loaded", {}) == 2.0, "the old rules stay in force")
    with open(log, "a") as f:
        f.write("BETA FAULT dev=8\n")
    wait_for("the old rules to keep matching",
             lambda: value("faultd_device_state", {"device": "8", "state": "warning"}) == 1.0)
    os.remove(os.path.join(rules_dir, "c.yaml"))
    r = d.ctl("reload")
    check(r.returncode == 0 and "2 rule(s)" in r.stdout, "faultctl reload succeeds once fixed")
    status = d.ctl_json("status")
    states = {x["device"]: x["state"] for x in status["devices"]}
    check(states == {"2": "warning", "7": "warning", "8": "warning"},
          "device states survive reloads (%s)" % states)
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(run)
