#!/usr/bin/env python3
"""Hooks of one real faultd and the processes they leave, reproduced the way the security audit
did (R13, R14):

- F14: faultd is killed with SIGKILL while an isolate hook runs (outside systemd nothing kills
  the hook's group). The next faultd finds the run journaled as running with its pid and start
  time, waits for the survivor instead of starting a second copy beside it, and the re-run gets
  FAULTD_ATTEMPT=2.
- F15: faultd as PID 1 of a PID namespace (a container started with `exec faultd`) reaps the
  orphans its hooks leave (`sleep &`), instead of keeping one zombie per hook.
- F25: `policy.max_concurrent_hooks` bounds the hooks running at once; the rest wait and run."""
import copy
import os
import shutil
import signal
import stat
import subprocess
import time

import harness
from harness import Faultd, free_port, wait_for


def write_script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def config(work, port, isolate, extra_policy=""):
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    rules = harness.write_audit_rules(work)
    return f"""
node: hooks
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}"]
sources:
  - {{ name: logs, type: file, paths: ["{work}/logs/*.log"], scan_interval: 100ms }}
actions:
  isolate: {isolate}
policy:
  incident_ttl: 0s
  storm: {{ min_devices: 100000 }}
  max_isolations: {{ count: 1000, window: 1h }}
{extra_policy}
"""


def inject(work, devices):
    with open(os.path.join(work, "logs", "job.log"), "a") as f:
        for d in devices:
            f.write("FAULT-X on dev=<%s>\n" % d)


def lines(path):
    try:
        with open(path) as f:
            return [l.split() for l in f if l.strip()]
    except FileNotFoundError:
        return []


def survivor_is_waited_for(args, check, work):
    runs = os.path.join(work, "runs.log")
    hook = write_script(os.path.join(work, "slow-isolate.sh"),
                        'echo "start $(date +%s.%N) attempt=$FAULTD_ATTEMPT $$" >> "$1"\n'
                        'sleep "$2"\n'
                        'echo "end $(date +%s.%N) attempt=$FAULTD_ATTEMPT $$" >> "$1"\n')
    port = free_port()
    hook_seconds = harness.scaled(3)
    d = Faultd(args, work, config(work, port, "{ argv: [%s, %s, \"%s\"], timeout: 60s }"
                                  % (hook, runs, hook_seconds)))
    d.start()
    inject(work, ["4"])
    wait_for("the isolate hook to start", lambda: len(lines(runs)) >= 1)
    d.kill9()  # the hook carries on: its parent is gone, nobody killed its group
    d.start()
    wait_for("two runs to end", lambda: sum(1 for l in lines(runs) if l[0] == "end") >= 2,
             timeout=30 + 3 * hook_seconds)
    got = lines(runs)
    starts = [l for l in got if l[0] == "start"]
    ends = [l for l in got if l[0] == "end"]
    check(len(starts) == 2, "two runs in all: the interrupted one and its re-run (%d)" % len(starts))
    first_end = next(float(l[1]) for l in ends if l[3] == starts[0][3])
    check(float(starts[1][1]) >= first_end,
          "F14: the re-run starts only after the survivor ended (%.2fs after it)"
          % (float(starts[1][1]) - first_end))
    check(starts[0][2] == "attempt=1" and starts[1][2] == "attempt=2",
          "F14: the re-run is told it is attempt 2 (%s, %s)" % (starts[0][2], starts[1][2]))
    events = d.ctl_json("events", "--device", "4")["actions"]
    check(len(events) == 1 and events[0]["status"] == "success",
          "the isolate action is journaled once, as a success")
    check(d.stop() == 0, "faultd stops cleanly")


def zombie_children(pid):
    """The zombie children of `pid` (host pids)."""
    zombies = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            for child in f.read().split():
                try:
                    with open("/proc/%s/stat" % child) as s:
                        if s.read().rsplit(")", 1)[1].split()[0] == "Z":
                            zombies.append(int(child))
                except FileNotFoundError:
                    pass
    return zombies


def child_of(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        children = f.read().split()
    return int(children[0]) if children else None


def orphans_are_reaped_as_pid1(args, check, work):
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None or not os.path.exists("/proc/self/task/%d/children"
                                                                   % os.getpid()):
        print("skipped: PID 1 reaping needs root, unshare(1) and /proc/PID/task/TID/children",
              flush=True)
        return
    wrapper = write_script(os.path.join(work, "as-pid1.sh"),
                           'exec %s --pid --fork --mount-proc --kill-child %s "$@"\n'
                           % (unshare, os.path.abspath(args.faultd)))
    pid1_args = copy.copy(args)
    pid1_args.faultd = wrapper
    hook = write_script(os.path.join(work, "leaves-orphans.sh"),
                        'sleep 0.2 &\nsleep 0.1 &\necho "$FAULTD_DEVICE" >> "$1"\n')
    runs = os.path.join(work, "runs.log")
    port = free_port()
    d = Faultd(pid1_args, work, config(work, port, "{ argv: [%s, %s], timeout: 30s }"
                                       % (hook, runs)))
    d.start()
    faultd_pid = wait_for("faultd inside the namespace", lambda: child_of(d.proc.pid))
    with open("/proc/%d/status" % faultd_pid) as f:
        nspid = [l.split()[-1] for l in f if l.startswith("NSpid:")]
    check(nspid == ["1"], "faultd is PID 1 of its namespace (NSpid %s)" % nspid)
    devices = [str(i) for i in range(20)]
    inject(work, devices)
    wait_for("20 hooks to run", lambda: len(lines(runs)) >= 20, timeout=60)
    time.sleep(harness.scaled(1))  # the orphans' sleeps end
    deadline = time.monotonic() + harness.scaled(10)
    while zombie_children(faultd_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    zombies = zombie_children(faultd_pid)
    check(not zombies, "F15: no zombie left below faultd as PID 1 after 20 hooks with 40 orphans "
          "(%d)" % len(zombies))
    check(d.ctl("status").returncode == 0, "faultd still answers")
    os.kill(faultd_pid, signal.SIGTERM)  # unshare ignores SIGTERM while it waits
    check(d.proc.wait(timeout=harness.scaled(30)) == 0, "faultd as PID 1 stops cleanly")


def hooks_are_bounded(args, check, work):
    slots = os.path.join(work, "slots")
    os.makedirs(slots)
    counts = os.path.join(work, "counts.log")
    hook = write_script(os.path.join(work, "counted.sh"),
                        'touch "$1/$FAULTD_DEVICE"\nls "$1" | wc -l >> "$2"\nsleep 0.3\n'
                        'rm "$1/$FAULTD_DEVICE"\n')
    port = free_port()
    d = Faultd(args, work, config(work, port, "{ argv: [%s, %s, %s], timeout: 30s }"
                                  % (hook, slots, counts), "  max_concurrent_hooks: 3"))
    d.start()
    inject(work, [str(i) for i in range(12)])
    wait_for("12 hooks to run", lambda: len(lines(counts)) >= 12, timeout=60)
    most = max(int(l[0]) for l in lines(counts))
    check(most <= 3, "F25: at most 3 hooks ran at once (%d)" % most)
    succeeded = lambda: sum(1 for a in d.ctl_json("events", "--limit", "100")["actions"]
                            if a["status"] == "success")
    deadline = time.monotonic() + harness.scaled(30)
    while succeeded() < 12 and time.monotonic() < deadline:
        time.sleep(0.1)
    check(succeeded() == 12, "F25: all 12 hooks ran to success (%d)" % succeeded())
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(survivor_is_waited_for, orphans_are_reaped_as_pid1, hooks_are_bounded)
