#!/usr/bin/env python3
"""End to end, with the real faultd: liveness rules (`expect_within`, `expect_every`, `until`)
turn silence into findings on the daemon's own timer, when no line comes at all. Four training
logs are written by this test, each on its own device (path_fields):

  worker_1  torchrun's launch line, then nothing: an init hang (expect_within) → a finding
  worker_2  the launch, its rendezvous, steps with jitter and a checkpoint pause shorter than
            the window, then the job's end line and silence: nothing
  worker_3  the launch, its rendezvous, steps, then silence without an end line (expect_every)
            → a finding
  worker_4  steps, then a pause shorter than the window, then steps again: nothing

The windows are seconds long (the rules are the config's own, written like the shipped pack's),
scaled with the build. --replay over the same files judges no silence: the end of a file is not
the end of a job."""
import json
import os
import subprocess
import time

import harness
from harness import Faultd, scaled, wait_for

WITHIN = 3.0  # expect_within, seconds on a plain build
EVERY = 3.0   # expect_every

LAUNCH = "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:"
RENDEZVOUS = ("INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for "
              "workers. Result:")
END = "[after training is done] datetime: 2024-08-01 09:45:12"


def step_line(n):
    return (" [2024-08-01 09:44:55] iteration %8d/     500 | consumed samples:  %10d | elapsed time"
            " per iteration (ms): 689.4 | number of skipped iterations:   0 | number of nan"
            " iterations:   0 |" % (n, 32 * n))


def config(work):
    return """node: sim-node
state_dir: {w}/state
control: {{ socket: {w}/control.sock }}
include: []
sources:
  - {{ name: training, type: file, paths: ["{w}/logs/worker_*.log"],
      path_fields: 'worker_(?P<device>\\d+)\\.log$' }}
rules:
  - id: e2e.rendezvous
    match: {{ any: ["Starting elastic_operator with launch configs", "Rendezvous complete for workers"] }}
    after: ["Starting elastic_operator with launch configs"]
    expect_within: {within}ms
    fault: {{ level: SubHealthFault }}
  - id: e2e.steps
    match: {{ any: ["number of skipped iterations:", "[after training is done]"] }}
    until: ["[after training is done]"]
    expect_every: {every}ms
    fault: {{ level: SubHealthFault }}
""".format(w=work, within=int(scaled(WITHIN) * 1000), every=int(scaled(EVERY) * 1000))


class Log:
    def __init__(self, work, device):
        self.path = os.path.join(work, "logs", "worker_%d.log" % device)
        self.f = open(self.path, "a")

    def write(self, line):
        self.f.write(line + "\n")
        self.f.flush()


def findings(d):
    return d.ctl_json("events").get("faults", [])


def of(faults, device):
    return [(f["rule"], f.get("line")) for f in faults if f.get("device") == str(device)]


def steps(log, first, count, gap):
    """`count` step lines `gap` (±30 %, scaled) apart: a healthy run's jitter."""
    for i in range(count):
        log.write(step_line(first + i))
        time.sleep(scaled(gap * (0.7 + 0.6 * ((i * 7) % 5) / 4)))


def test_silences(args, check, work):
    os.makedirs(os.path.join(work, "logs"))
    d = Faultd(args, work, config(work))
    d.start()
    hang, clean, stopped, paused = (Log(work, n) for n in (1, 2, 3, 4))

    hang.write(LAUNCH)  # and nothing more
    for log in (clean, stopped):
        log.write(LAUNCH)
        log.write(RENDEZVOUS)
    # Six seconds of steps on 2, 3 and 4 (every 0.5s ± 30 %), with a pause of half the window on
    # 4 and a checkpoint pause of two thirds of it on 2.
    started = time.monotonic()
    n = 1
    while time.monotonic() - started < scaled(6.0):
        for log in (clean, stopped, paused):
            log.write(step_line(n))
        n += 1
        if n == 5:
            time.sleep(scaled(EVERY * 0.5))
        elif n == 9:
            paused.write(step_line(n))  # 4 goes on, 2 and 3 save a checkpoint
            time.sleep(scaled(EVERY * 0.5))
        else:
            time.sleep(scaled(0.5 * (0.7 + 0.6 * ((n * 7) % 5) / 4)))
    clean.write(END)  # 2 ends cleanly; 3 and 4 just stop
    for log in (clean, stopped, paused):
        log.f.close()

    # The hang on 1 was due long ago (its window is half of the steps' run); 3 and 4 are due one
    # window after their last line.
    got = wait_for("findings on devices 1, 3 and 4", lambda: (
        lambda fs: fs if of(fs, 1) and of(fs, 3) and of(fs, 4) else None)(findings(d)),
        timeout=30)
    # Two more windows of silence for 2 to go wrong in, if it were going to.
    time.sleep(scaled(2 * EVERY + 1))
    got = findings(d)
    print("# liveness e2e: %s" % json.dumps([(f["rule"], f.get("device"), f.get("line"))
                                              for f in got]))
    check(of(got, 1) == [("e2e.rendezvous", 1)],
          "an init hang (a launch line, then nothing) is one finding on device 1, on the launch "
          "line: %s" % of(got, 1))
    check(of(got, 2) == [],
          "a healthy run with jitter, a checkpoint pause shorter than the window and a clean end "
          "gives nothing: %s" % of(got, 2))
    check(of(got, 3) == [("e2e.steps", 3 + n - 2)],
          "steps that stop without an end line: one finding on device 3, on its last step: %s"
          % of(got, 3))
    check(of(got, 4) == [("e2e.steps", n - 1 + 1)],
          "device 4's pause shorter than the window gives nothing, its final silence one "
          "finding: %s" % of(got, 4))
    levels = {f.get("level") for f in got}
    check(levels == {"SubHealthFault"}, "every finding at the rule's level: %s" % levels)
    check(d.stop() == 0, "faultd stops cleanly")

    # --replay: the same files, no clock between their lines: no silence is judged.
    r = subprocess.run([os.path.abspath(args.faultd), "--replay", "--config", d.config,
                        hang.path, stopped.path], capture_output=True, text=True,
                       timeout=scaled(60))
    replayed = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    check(r.returncode == 0 and replayed == [],
          "--replay reports no silence at the end of its input: %s" % replayed)


if __name__ == "__main__":
    harness.main(test_silences)
