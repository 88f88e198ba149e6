#!/usr/bin/env python3
"""The first device to fail, across nodes, in the real Prometheus with the shipped rules.

Three faultd nodes of one cluster (node-a, node-b, node-c), scraped every second. Device 3 of
node-a fails (an ASD fault line); a few seconds later, as when a device dies under a running job,
devices of node-b and node-c log HCCL collective timeouts. The nodes flag RestartBusiness
findings (collective timeouts) as warnings, which a site does to see its victims: by default
they are recorded only (docs/operations.md). Meanwhile an operator isolates device 4 of node-c,
which logged no timeout. Asserted through the Prometheus HTTP API: each faultd exports when its
devices' incidents started, the recording rule names node-a's device 3 the suspect, the three
that logged timeouts its victims (started later, by the seconds between) and the operator's
isolation "other", and the FaultdFirstFailedDevice alert names the suspect and lists only the
victims."""
import os
import shutil
import sys
import time

import yaml

import harness
import prom_stack
from harness import Faultd, free_port, metric_value, scrape, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import node_sim  # noqa: E402  (tests/sim: the node simulator)

CLUSTER = "c1"
RULE = "cluster_device:faultd_incident_after_first_seconds:1h"
INCIDENT_START = "faultd_device_incident_start_timestamp_seconds"
GAP = 2.0  # seconds between the suspect's fault and its victims' timeouts


def collective_timeout(root, device):
    """One HCCL notify-wait timeout line in the plog, as a rank waiting for a dead peer logs it."""
    line = ("[ERROR] HCCL(%d,python3):%s [hccl_impl.cc:900][107626] notify wait timeout, "
            "remote rank[3], deviceId[%d]\n" % (node_sim.PID, node_sim.stamp(), device))
    with open(node_sim.plog_path(root), "a") as f:
        f.write(line)


def faultd_config(node_dir, node, port, rules_dir):
    return f"""
node: {node}
state_dir: {node_dir}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {node_dir}/control.sock, group: "" }}
include: ["{rules_dir}/*.yaml"]
sources:
  - {{ name: plog, type: file, paths: ["{node_dir}/logs/plog/plog-*.log"], start_at: end }}
policy:
  levels:
    RestartBusiness: {{ state: warning }}
    SeparateNPU: {{ state: warning }}
"""


def prometheus_config(args, work, targets):
    cfg = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [os.path.abspath(os.path.join(args.source_dir, "etc", "prometheus",
                                                    "faultd-rules.yml"))],
        "scrape_configs": [{
            "job_name": "faultd",
            "static_configs": [{"targets": ["127.0.0.1:%d" % port],
                                "labels": {"cluster": CLUSTER, "node": node}}
                               for node, port in targets],
        }],
    }
    path = os.path.join(work, "prometheus.yml")
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    return path


def roles(prom):
    """{(node, device): (role, seconds after the first)} from the recording rule."""
    return {(r["metric"].get("node"), r["metric"].get("device")):
            (r["metric"].get("role"), float(r["value"][1])) for r in prom.query(RULE)}


def test_first_to_fail(args, check, work):
    rules_dir = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d")
    nodes, roots, services = {}, {}, []
    try:
        for node in ("node-a", "node-b", "node-c"):
            node_dir = os.path.join(work, node)
            roots[node] = os.path.join(node_dir, "logs")
            node_sim.plog_path(roots[node])
            port = free_port()
            d = Faultd(args, node_dir, faultd_config(node_dir, node, port, rules_dir))
            d.start()
            nodes[node] = (d, port)
        prom = prom_stack.Prometheus(
            shutil.which("prometheus"), work, free_port(),
            prometheus_config(args, work, [(n, p) for n, (_, p) in nodes.items()]))
        services.append(prom.start())
        wait_for("Prometheus ready", prom.ready, timeout=30, interval=0.1)
        wait_for("Prometheus to scrape the three faultd",
                 lambda: len(prom.query('up{job="faultd"} == 1')) == 3, timeout=30, interval=0.2)
        check(not prom.query(INCIDENT_START), "no incident before the faults")

        # The suspect: device 3 of node-a. Its victims start once its incident is committed.
        node_sim.inject(roots["node-a"], "asd", 3)
        port_a = nodes["node-a"][1]
        start_a = wait_for("node-a to export device 3's incident start", lambda: metric_value(
            scrape(port_a), INCIDENT_START, {"device": "3", "code": "80818C00"}))
        time.sleep(GAP)  # the victims' timeouts come a few seconds later (not a wait for a result)
        for node, device in (("node-b", 0), ("node-b", 1), ("node-c", 2)):
            collective_timeout(roots[node], device)
        # An incident of another kind after the suspect's: no victim of it.
        r = nodes["node-c"][0].ctl("isolate", "4", "--reason", "swap the card")
        check(r.returncode == 0,
              "faultctl isolate 4 on node-c (%s)" % (r.stdout + r.stderr).strip())

        want = {("node-a", "3"), ("node-b", "0"), ("node-b", "1"), ("node-c", "2"),
                ("node-c", "4")}
        got = wait_for("the recording rule to order the five devices",
                       lambda: (lambda r: r if set(r) == want else None)(roles(prom)),
                       timeout=30, interval=0.2)
        check(got[("node-a", "3")] == ("suspect", 0.0),
              "node-a device 3 is the suspect (%s)" % (got[("node-a", "3")],))
        check(got[("node-c", "4")][0] == "other",
              "node-c device 4, isolated by an operator, is no victim (%s)"
              % (got[("node-c", "4")],))
        victims = {k: v for k, v in got.items() if k not in (("node-a", "3"), ("node-c", "4"))}
        check(all(role == "victim" and after >= GAP for role, after in victims.values()),
              "the others are victims, started at least %.0f s later (%s)" % (GAP, victims))
        for (node, device), (_, after) in victims.items():
            start = metric_value(scrape(nodes[node][1]), INCIDENT_START, {"device": device})
            check(start is not None and abs(start - start_a - after) < 1e-6,
                  "%s device %s: its own incident start, %.3f s after the suspect's"
                  % (node, device, after))

        alerts = wait_for("FaultdFirstFailedDevice to fire", lambda: [
            a for a in prom.alerts() if a["labels"].get("alertname") == "FaultdFirstFailedDevice"
            and a["state"] == "firing"], timeout=30, interval=0.2)
        labels = alerts[0]["labels"]
        check(len(alerts) == 1 and labels.get("node") == "node-a" and labels.get("device") == "3"
              and labels.get("cluster") == CLUSTER,
              "one FaultdFirstFailedDevice alert, for node-a device 3 (%s)" % [a["labels"] for a in alerts])
        description = alerts[0]["annotations"].get("description", "")
        check(all("device %s +" % d in description for d in ("0", "1", "2"))
              and "device 4 +" not in description,
              "its description lists the victims, not the isolated device: %s" % description)
    except AssertionError as e:
        check(False, str(e))
        for s in services:
            print("# --- %s log (tail) ---\n%s" % (s.name, s.tail()))
    finally:
        for s in reversed(services):
            s.stop()
        harness.stop_all()


def main():
    if not shutil.which("prometheus"):
        print("SKIP: prometheus not installed (Debian package prometheus; scripts/deps installs it)")
        print("0 passed, 0 failed")
        sys.exit(0)
    harness.main(test_first_to_fail)


if __name__ == "__main__":
    main()
