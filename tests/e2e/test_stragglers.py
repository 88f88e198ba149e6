#!/usr/bin/env python3
"""End to end, with the real faultd and the node simulator: `node_sim.py --inject slow --device 5`
(the demo's command) writes one job's MindFormers step lines on eight devices, device 5's 30 %
slower than its peers' from the first step. faultd must name device 5 `device.slow`
(SubHealthFault: warning, never isolated) and no other device. Then a healthy run of eight
devices whose step times jitter by up to ±8 % at random must give no finding at all. The test
prints the step at which the slow device was named and the healthy run's false alarms, and
checks the per-device step-time metric the Prometheus straggler rules read."""
import os
import subprocess
import sys

import yaml

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

SIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim")
sys.path.insert(0, SIM)
import training_log_sim  # noqa: E402

DEVICES = 8


def config(work, port, source_dir):
    """The demo's `training` source (etc/demo/faultd.yaml: the job from the directory, the
    device from worker_N.log) under `work`, with the shipped numerics pack."""
    with open(os.path.join(source_dir, "etc", "demo", "faultd.yaml")) as f:
        demo = yaml.safe_load(f)
    training = next(s for s in demo["sources"] if s["name"] == "training")
    training["paths"] = [os.path.join(work, p) for p in training["paths"]]
    training.pop("start_at", None)
    return yaml.safe_dump({
        "node": "sim-node", "state_dir": work + "/state",
        "metrics": {"listen": "127.0.0.1:%d" % port}, "control": {"socket": work + "/control.sock"},
        "include": [source_dir + "/etc/faultd/rules.d/training-numerics.yaml"],
        "sources": [training]})


def all_at_step(port, step):
    m = scrape(port)
    return all(metric_value(m, "faultd_training_last_step", {"device": str(d)}) == step
               for d in range(DEVICES))


def test_slow_device_named(args, check, work):
    os.makedirs(os.path.join(work, "logs", "training"))  # as scripts/run-demo makes it
    port = free_port()
    d = Faultd(args, work, config(work, port, args.source_dir))
    d.start()
    r = subprocess.run([sys.executable, os.path.join(SIM, "node_sim.py"), "--root",
                        os.path.join(work, "logs"), "--inject", "slow", "--device", "5"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "node_sim.py --inject slow exits 0 (%s)" % r.stderr.strip())
    wait_for("every device's step lines read", lambda: all_at_step(port, 12))
    faults = wait_for("a device.slow finding", lambda: [
        f for f in d.ctl_json("events").get("faults", []) if f["rule"] == "device.slow"])
    print("# positive: device 5 at 1.3 × its peers' step time: named at line %s"
          % [f.get("line") for f in faults])
    check([f.get("device") for f in faults] == ["5"], "device.slow names device 5 only: %s"
          % [(f.get("device"), f.get("line")) for f in faults])
    check(faults[0].get("line") == 5, "named at its fifth step (from step 1, against its peers)")
    check(faults[0].get("level") == "SubHealthFault", "at SubHealthFault")
    others = [f for f in d.ctl_json("events").get("faults", []) if f.get("device") != "5"]
    check(not others, "no finding on the other devices: %s" % [f["rule"] for f in others])
    m = scrape(port)
    states = {s: metric_value(m, "faultd_device_state", {"device": "5", "state": s})
              for s in ("warning", "isolated")}
    check(states == {"warning": 1, "isolated": 0}, "device 5 is warning, not isolated: %s" % states)
    t5 = metric_value(m, "faultd_training_step_time", {"device": "5", "rank": ""})
    t0 = metric_value(m, "faultd_training_step_time", {"device": "0", "rank": ""})
    check(t5 is not None and t0 is not None and t5 > 1.2 * t0,
          "faultd_training_step_time per device (device 5 %s, device 0 %s)" % (t5, t0))
    check(d.stop() == 0, "faultd stops cleanly")


def test_healthy_jitter_is_quiet(args, check, work):
    steps = 100
    os.makedirs(os.path.join(work, "logs", "training", "healthy"))
    port = free_port()
    d = Faultd(args, work, config(work, port, args.source_dir))
    d.start()
    runs = {r: training_log_sim.Run("mindformers", jitter=0.08, seed=100 + r)
            for r in range(DEVICES)}
    files = {r: open(os.path.join(work, "logs", "training", "healthy", "worker_%d.log" % r), "a")
             for r in range(DEVICES)}
    for step in range(1, steps + 1):
        for r in range(DEVICES):
            files[r].write(runs[r].line(step) + "\n")
            files[r].flush()
        if step % 10 == 0:
            wait_for("step %d on every device" % step, lambda: all_at_step(port, step))
    for f in files.values():
        f.close()
    faults = d.ctl_json("events").get("faults", [])
    slow = [f for f in faults if f["rule"].startswith("device.slow")]
    print("# negative: %d devices × %d steps at ±8 %% jitter: false alarms = %d (all findings %d)"
          % (DEVICES, steps, len(slow), len(faults)))
    check(not slow, "no straggler on a healthy run: %s" % [(f["device"], f["line"]) for f in slow])
    check(not faults, "no finding at all: %s" % [f["rule"] for f in faults])
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(test_slow_device_named, test_healthy_jitter_is_quiet)
