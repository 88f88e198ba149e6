#!/usr/bin/env python3
"""End to end, the hang verdict (docs/detection.md "Hangs") with the real faultd and faultctl,
the stand-in npu-smi (tests/sim/fake-npu-smi) and real training processes started by the node
simulator (tests/sim/node_sim.py --inject <kind>), each holding its own cards:
- card 5: `hang` (activity flat at 100 %, log silent, the process asleep holding it): one
  device.hang.device-wedge finding on device 5, SeparateNPU, code 200001002, cause
  device-wedge in the finding's JSON, device 5 no longer healthy;
- cards 0-1: `data-stall` (idle, the process busy on the CPU): device.hang.data-stall on each,
  NotHandleFault, the devices stay healthy;
- cards 2-3: `collective-wait` (idle, the process asleep): device.hang.collective-wait on each,
  NotHandleFault, job_devices_flat=2/2;
- no false hang: card 4 `checkpoint` (idle for less than the window, then steps), card 6
  `compile` (idle and silent from the start, the process busy), card 7 `eval` (the device
  computing, the log silent) and card 8 `gone` (the process exits): no finding at all, over
  more than twice the window;
- faultd_device_utilization_percent / _memory_used_bytes / _processes per device."""
import os
import signal
import subprocess
import time

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for
from test_lifecycle_paths import write_json

INTERVAL_MS = int(harness.scaled(1.5) * 1000)
POLLS = 3
WINDOW_S = POLLS * INTERVAL_MS / 1000.0


def causes(args, check, work):
    src = os.path.abspath(args.source_dir)
    fake = os.path.join(src, "tests", "sim", "fake-npu-smi")
    sim = os.path.join(src, "tests", "sim", "node_sim.py")
    script = os.path.join(work, "npu-smi.json")
    write_json(script, {"npus": 9})
    state_dir = os.path.join(work, "npu-smi-state")
    os.environ["FAKE_NPU_SMI_SCRIPT"] = script  # the probes and the jobs read them
    os.environ["FAKE_NPU_SMI_STATE"] = state_dir
    logs = os.path.join(work, "logs")
    for d in range(9):
        os.makedirs(os.path.join(logs, "device-%d" % d), exist_ok=True)
    port = free_port()
    d = Faultd(args, work, f"""
node: hang
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{src}/etc/faultd/rules.d/*.yaml"]
sources:
  - {{ name: device-log, type: file, paths: ["{logs}/device-*/*.log"],
      path_fields: 'device-(?P<device>\\d+)/', scan_interval: 200ms }}
  - {{ name: npu-hang, type: hang, tool: npu_smi, program: {fake}, devices: "0-8",
      interval: {INTERVAL_MS}ms, timeout: {INTERVAL_MS}ms, polls: {POLLS} }}
""")
    d.start()
    train = "%.1f" % max(3 * INTERVAL_MS / 1000.0, 3.0)  # busy for at least two polls
    jobs = []

    def inject(kind, *extra):
        out = subprocess.run(
            ["python3", sim, "--root", logs, "--inject", kind, "--train-seconds", train,
             "--life", "%d" % (WINDOW_S * 6 + 60)] + list(extra),
            capture_output=True, text=True, check=True).stdout
        jobs.append(int(out.split()[-1]))

    try:
        inject("hang", "--device", "5")
        inject("data-stall", "--devices", "0-1")
        inject("collective-wait", "--devices", "2-3")
        # Shorter than the window: at most POLLS - 1 flat polls.
        inject("checkpoint", "--device", "4", "--pause-seconds",
               "%.1f" % ((POLLS - 2) * INTERVAL_MS / 1000.0))
        inject("compile", "--device", "6")
        inject("eval", "--device", "7")
        inject("gone", "--device", "8")

        faults = lambda: [f for f in d.ctl_json("events", "--verbose")["faults"]
                          if f["rule"].startswith("device.hang.")]
        by_device = lambda: {f["device"]: f for f in faults()}
        wanted = {"5", "0", "1", "2", "3"}
        # Training, then the window, then one poll of slack for the verdicts to be journaled.
        limit = float(train) + WINDOW_S + 4 * INTERVAL_MS / 1000.0 + harness.scaled(10)
        wait_for("the hang verdicts", lambda: wanted <= set(by_device()), timeout=limit)
        found = by_device()
        wedge = found.get("5", {})
        check(wedge.get("rule") == "device.hang.device-wedge" and wedge.get("level") == "SeparateNPU"
              and wedge.get("code") == "200001002" and wedge.get("cause") == "device-wedge",
              "device 5: device-wedge, SeparateNPU, 200001002 (%s)" % wedge)
        check("state=S" in wedge.get("text", "") and "util=100.0" in wedge.get("text", ""),
              "the wedge's evidence names the sleeping holder and the flat 100 %% (%s)"
              % wedge.get("text"))
        for dev in ("0", "1"):
            f = found.get(dev, {})
            check(f.get("rule") == "device.hang.data-stall" and f.get("level") == "NotHandleFault"
                  and f.get("cause") == "data-stall",
                  "device %s: data-stall, NotHandleFault (%s)" % (dev, f))
        for dev in ("2", "3"):
            f = found.get(dev, {})
            check(f.get("rule") == "device.hang.collective-wait"
                  and f.get("level") == "NotHandleFault" and "job_devices_flat=2/2" in f.get("text", ""),
                  "device %s: collective-wait, both of the job's cards flat (%s)" % (dev, f))
        state = lambda dev: harness.device_state(port, dev) or "healthy"
        wait_for("device 5 out of healthy", lambda: state("5") != "healthy")
        check(state("5") != "healthy", "device 5 is no longer healthy (%s)" % state("5"))
        check(all(state(x) == "healthy" for x in "0123"),
              "data stalls and collective waits isolate nothing")

        # No false hang: give the others more than twice the window past the verdicts.
        deadline = time.monotonic() + 2 * WINDOW_S + 2 * INTERVAL_MS / 1000.0
        while time.monotonic() < deadline:
            time.sleep(0.2)
        extra = {dev: f["rule"] for dev, f in by_device().items() if dev in {"4", "6", "7", "8"}}
        check(not extra, "no hang for a checkpoint, a compile phase, an evaluation pass or a job "
              "that is gone (%s)" % extra)
        check(len(faults()) == 5, "one verdict per hung device (%d)" % len(faults()))

        text = scrape(port)
        util = metric_value(text, "faultd_device_utilization_percent", {"device": "5"})
        held = metric_value(text, "faultd_device_processes", {"device": "5"})
        memory = metric_value(text, "faultd_device_memory_used_bytes", {"device": "5"})
        check(util == 100.0 and held == 1.0 and memory and memory > 0,
              "device 5's activity series: util %s, processes %s, memory %s" % (util, held, memory))
        check(metric_value(text, "faultd_device_processes", {"device": "8"}) == 0.0,
              "the gone job's card shows no process")
    finally:
        for pid in jobs:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(causes)
