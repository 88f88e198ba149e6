#!/usr/bin/env python3
"""Simulated training logs for the numerics detectors: one step line per call, per rank, in
Megatron/MindSpeed or MindFormers format, with what a normal fp16 run shows (a calibration
burst of loss-scale halvings at the start, a single overflow later, "nan iterations: 0") and
optional injected faults (a grad-norm spike at a step). Used by tests/e2e/test_numerics.py;
as a script it prints a whole log: training_log_sim.py megatron 100 [--spike STEP:VALUE]."""
import argparse
import random
import sys


class Run:
    def __init__(self, fmt, calibration=5, single_overflow=25, spikes=None, initial_scale=2.0 ** 17,
                 slowdown=1.0, jitter=0.0, seed=0):
        # Step time: the format's usual one × slowdown (1.3: a device 30 % slower), each step
        # off by up to ±jitter at random (0.08: the few per cent a healthy step varies).
        self.slowdown, self.jitter, self.random = slowdown, jitter, random.Random(seed)
        self.fmt = fmt
        self.scale = initial_scale
        self.calibration = calibration
        self.single_overflow = single_overflow
        self.spikes = dict(spikes or {})

    def line(self, step):
        overflow = step <= self.calibration or step == self.single_overflow
        if overflow:
            self.scale /= 2
        grad = self.spikes.get(step, 0.9 + 0.01 * (step % 5))
        loss = 2.5 - 0.005 * step
        factor = self.slowdown * (1 + self.random.uniform(-self.jitter, self.jitter) if self.jitter else 1)
        if self.fmt == "megatron":
            return (" iteration %8d/  500000 | consumed samples: %12d | elapsed time per iteration (ms): %.1f"
                    " | learning rate: 1.000E-04 | global batch size:  1024 | lm loss: %.6E | loss scale: %.1f"
                    " | grad norm: %s | number of skipped iterations: %3d | number of nan iterations: %3d |"
                    % (step, step * 1024, (1200.0 + step % 3) * factor, loss, self.scale, "%.3f" % grad,
                       1 if overflow else 0, 0))
        return ("2024-06-24 10:00:00,000 - mindformers - INFO - { Epoch:[  1/  2], step:[%5d/ 6500], "
                "loss: %.3f, per_step_time: %dms, lr: 1e-05, overflow cond: %s, loss_scale: %.1f, "
                "global_norm: [%s], train_throughput_per_npu: 2.849T"
                % (step, loss, (1000 + step % 4) * factor, overflow, self.scale, "%g" % grad))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("format", choices=["megatron", "mindformers"])
    ap.add_argument("steps", type=int)
    ap.add_argument("--spike", action="append", default=[], help="STEP:VALUE")
    a = ap.parse_args()
    spikes = {int(s.split(":")[0]): float(s.split(":")[1]) for s in a.spike}
    run = Run(a.format, spikes=spikes)
    for step in range(1, a.steps + 1):
        sys.stdout.write(run.line(step) + "\n")


if __name__ == "__main__":
    main()
