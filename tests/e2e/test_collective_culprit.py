#!/usr/bin/env python3
"""End to end, the culprit of a collective timeout on one node, the demo's way: `node_sim.py
--inject collective-hang --device 5` writes eight ranks' HCCL Flight Recorder dumps (rank 5
never entered the last collective) and the seven other ranks' HCCL timeout lines. faultd with
the shipped rule packs and a flight_recorder source names device 5 the culprit
(collective.culprit) and the other seven its victims (collective.victim, beside their own
timeout findings); no device is isolated and no hook runs."""
import os
import subprocess
import sys

import harness
from harness import wait_for
from lifecycle_common import Node


def culprit(args, check, work):
    source_dir = os.path.abspath(args.source_dir)
    sources = (f'  - {{ name: plog, type: file, paths: ["{work}/logs/plog/*.log"] }}\n'
               f'  - {{ name: flight-recorder, type: flight_recorder, '
               f'prefix: {work}/logs/flight-recorder/hccl_trace_rank_, scan_interval: 200ms, '
               f'settle: 100ms }}\n')
    n = Node(args, work, include=f'"{source_dir}/etc/faultd/rules.d/*.yaml"', sources=sources,
             policy="  max_isolations: { count: 10, window: 1h }\n").start()
    # Device 5's history: an earlier finding, which the culprit's finding is joined to.
    n.write("XSHADOW dev=5 earlier trouble\n")
    wait_for("device 5's earlier finding", lambda: len(n.faults("5")) == 1)
    sim = os.path.join(source_dir, "tests", "sim", "node_sim.py")
    subprocess.run([sys.executable, sim, "--root", os.path.join(work, "logs"),
                    "--inject", "collective-hang", "--device", "5"], check=True,
                   stdout=subprocess.DEVNULL)

    def rules_of(device):
        return {f["rule"] for f in n.faults(device)}

    wait_for("collective.culprit on device 5", lambda: "collective.culprit" in rules_of("5"))
    culprit_faults = [f for f in n.d.ctl_json("events", "--device", "5", "--verbose")["faults"]
                      if f["rule"] == "collective.culprit"]
    check(len(culprit_faults) == 1,
          "one culprit finding on device 5 (got %d)" % len(culprit_faults))
    check("victims=0-4,6-7" in culprit_faults[0].get("text", ""),
          "the culprit's finding names its victims: %s" % culprit_faults[0].get("text"))
    recent = culprit_faults[0].get("annotations", {}).get("recent", "")
    check("test.shadow" in recent, "the culprit's finding names device 5's recent findings: %r"
          % recent)
    wait_for("collective.victim on the seven others",
             lambda: all("collective.victim" in rules_of(str(d)) for d in (0, 1, 2, 3, 4, 6, 7)))
    check(True, "devices 0-4 and 6-7 are the victims")
    check("collective.victim" not in rules_of("5"), "device 5 is not its own victim")
    wait_for("the victims' own HCCL timeout findings",
             lambda: all("ascend.hccl.notify-timeout" in rules_of(str(d))
                         for d in (0, 1, 2, 3, 4, 6, 7)))
    check("ascend.hccl.notify-timeout" not in rules_of("5"), "the culprit printed no timeout")
    states = {d["device"]: d["state"] for d in n.d.ctl_json("status")["devices"]}
    check(states.get("5") == "warning", "the culprit is warning (SubHealthFault): %s" % states)
    check(all(s != "isolated" for s in states.values()), "no device isolated: %s" % states)
    check(n.hook_runs() == [], "no hook ran (got %s)" % n.hook_runs())
    check(n.metric("faultd_rule_matches_total", {"rule": "collective.culprit"}) == 1.0,
          "one culprit match counted")


if __name__ == "__main__":
    harness.main(culprit)
