#!/usr/bin/env python3
"""End to end, with the real faultd: eight ranks write simulated training logs (Megatron format
on ranks 0-3, MindFormers on 4-7) step by step. Every rank shows what a healthy fp16 run shows:
the calibration burst of loss-scale halvings, a single overflow, "nan iterations: 0". Rank 3
gets a grad-norm spike at step 40, rank 5 at step 45: each of those devices must be `warning`
within one step of its spike, and no other device may get any finding. The test prints the
false-alarm count of every negative example and the step delay of every positive one, and
checks the numerics metrics (last step, overflow steps, loss-scale drops, detector findings)."""
import json
import os
import subprocess
import sys

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import training_log_sim  # noqa: E402

RANKS = 8
STEPS = 60
SPIKES = {3: 40, 5: 45}  # rank → step of the injected grad-norm spike


def config(work, port, source_dir):
    return """node: sim-node
state_dir: {w}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {w}/control.sock }}
include: ["{src}/etc/faultd/rules.d/training-numerics.yaml"]
sources:
  - {{ name: training, type: file, paths: ["{w}/logs/worker_*.log"],
      path_fields: 'worker_(?P<device>\\d+)\\.log$' }}
""".format(w=work, port=port, src=source_dir)


def state_of(metrics, device):
    for state in ("healthy", "warning", "isolated"):
        if metric_value(metrics, "faultd_device_state", {"device": device, "state": state}) == 1:
            return state
    return "healthy"  # never seen: no finding named it


def test_spikes_and_quiet_ranks(args, check, work):
    os.makedirs(os.path.join(work, "logs"))
    port = free_port()
    d = Faultd(args, work, config(work, port, args.source_dir))
    d.start()
    runs = {}
    for rank in range(RANKS):
        fmt = "megatron" if rank < 4 else "mindformers"
        spikes = {SPIKES[rank]: 5e7} if rank in SPIKES else {}
        runs[rank] = training_log_sim.Run(fmt, spikes=spikes)
    files = {r: open(os.path.join(work, "logs", "worker_%d.log" % r), "a") for r in range(RANKS)}
    detected_at = {}
    for step in range(1, STEPS + 1):
        for rank in range(RANKS):
            files[rank].write(runs[rank].line(step) + "\n")
            files[rank].flush()
        # The step is processed once every rank's last step shows on /metrics.
        wait_for("step %d on every rank" % step, lambda: all(
            metric_value(scrape(port), "faultd_training_last_step", {"device": str(r)}) == step
            for r in range(RANKS)))
        m = scrape(port)
        for rank in SPIKES:
            if rank not in detected_at and state_of(m, str(rank)) == "warning":
                detected_at[rank] = step
    for f in files.values():
        f.close()

    events = d.ctl_json("events")
    faults = events.get("faults", [])
    print("# numerics e2e: %d findings journaled" % len(faults))
    for rank in range(RANKS):
        mine = [f for f in faults if f.get("device") == str(rank)]
        if rank in SPIKES:
            delay = detected_at.get(rank)
            delay = None if delay is None else delay - SPIKES[rank]
            print("# positive: rank %d (%s), grad-norm spike at step %d: step delay to `warning` = %s"
                  % (rank, runs[rank].fmt, SPIKES[rank], delay))
            check(delay is not None and 0 <= delay <= 1,
                  "device %d is warning within one step of its spike (delay %s)" % (rank, delay))
            check(all(f["rule"].endswith("grad-norm-anomaly") for f in mine),
                  "device %d: only the grad-norm strike was recorded: %s"
                  % (rank, [f["rule"] for f in mine]))
        else:
            print("# negative: rank %d (%s; calibration burst, a single overflow, nan iterations 0):"
                  " false alarms = %d" % (rank, runs[rank].fmt, len(mine)))
            check(not mine, "device %d has no finding: %s" % (rank, [f["rule"] for f in mine]))
    check(not [f for f in faults if not f.get("device")], "no device-less (storm) finding")

    m = scrape(port)
    check(metric_value(m, "faultd_detector_findings_total",
                       {"rule": "training.megatron.grad-norm-anomaly",
                        "detector": "feature_anomaly"}) == 1,
          "faultd_detector_findings_total counts the Megatron strike")
    # 5 calibration halvings + 1 single overflow per rank.
    check(metric_value(m, "faultd_training_overflow_steps_total", {"device": "0", "rank": ""}) == 6,
          "overflow steps per device: 6 on device 0")
    check(metric_value(m, "faultd_training_loss_scale_drops_total", {"device": "6", "rank": ""}) == 5,
          "loss-scale drops per device: 5 on device 6 (the first line has no earlier scale)")
    check(metric_value(m, "faultd_training_last_step_timestamp_seconds", {"device": "1"}) is not None,
          "last-step timestamp exported for stall alerts")
    check(d.stop() == 0, "faultd stops cleanly")


def test_replay_negative_examples(args, check, work):
    """The verbatim negative lines of docs/log-formats.md §9 through --replay: no alarm; the
    single NaN among them is recorded (NotHandleFault) and nothing else is."""
    lines = [
        "... | lm loss: 7.334521E-01 | loss scale: 1.0 | grad norm: 0.752 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        "- INFO - { Epoch:[  1/  2], step:[    1/ 6500], loss: 0.000, per_step_time: 166756ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: [44.313248], train_throughput_per_npu: 2.849T",
        "[WARNING] overflow, still update, loss scale adjust to 1024.0",
        "[INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
        "[INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1",
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.0, 'epoch': 0.02}",
        "step: 0, loss: 138.42825, overflow:False, scale:1.0",
    ]
    path = os.path.join(work, "worker_0.log")
    with open(path, "w") as f:
        f.write("".join(l + "\n" for l in lines))
    cfg = os.path.join(work, "faultd.yaml")
    with open(cfg, "w") as f:
        f.write(config(work, free_port(), args.source_dir))
    r = subprocess.run([os.path.abspath(args.faultd), "--replay", "--config", cfg, path],
                       capture_output=True, text=True, timeout=60)
    found = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    alarms = [f for f in found if f["level"] != "NotHandleFault"]
    print("# negative: the %d verbatim §9 lines via --replay: false alarms = %d"
          % (len(lines), len(alarms)))
    check(r.returncode == 0, "replay exits 0")
    check(not alarms, "no alarm from single overflows, 'nan iterations: 0', constant scale 1.0, "
          "a single NaN: %s" % [f["rule"] for f in alarms])
    # A single NaN is recorded, never more: the HF dict's grad_norm nan (line 7).
    check([(f["rule"], f["line"]) for f in found] == [("training.step.non-finite", 7)],
          "only the single NaN is recorded, at NotHandleFault: %s"
          % [(f["rule"], f["line"], f["level"]) for f in found])


if __name__ == "__main__":
    harness.main(test_spikes_and_quiet_ranks, test_replay_negative_examples)
