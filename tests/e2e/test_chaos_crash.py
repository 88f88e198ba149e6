#!/usr/bin/env python3
"""Crash consistency: a log streamed at a high rate with K faults at known positions, faultd
killed with SIGKILL at random moments (some while hooks run) and restarted each time. At the end
the fault journal holds every injected fault exactly once, every hook ran to success, and no hook
ran again for the same (action, device, fault) once its success was journaled.

Short mode: 8 kills, 24 faults. FAULTD_CHAOS_LONG=1: 50 kills, 120 faults (tests/chaos/README.md).
FAULTD_CHAOS_SEED=N replays a run."""
import os
import random
import time

import chaos
import harness
from chaos import say
from harness import Faultd, free_port, wait_for

KILLS = 50 if chaos.LONG else 8
FAULTS = 120 if chaos.LONG else 24
LINES = 1_500_000 if chaos.LONG else 150_000


def journal(state):
    return chaos.db_rows(state, "SELECT action, device, fault_id, status FROM actions")


def run(args, check, work):
    rng = random.Random(chaos.SEED)
    say("seed %d (FAULTD_CHAOS_SEED to replay), %d kills, %d faults, %d lines"
        % (chaos.SEED, KILLS, FAULTS, LINES))
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    state = os.path.join(work, "state")
    runs_log = os.path.join(work, "hook-runs.log")
    hook = chaos.write_hook(os.path.join(work, "hook.sh"))
    port = free_port()
    rules = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d")
    d = Faultd(args, work, f"""
node: chaos
state_dir: {state}
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}/*.yaml"]
sources:
  - {{ name: plog, type: file, paths: ["{logs}/plog-*.log"] }}
actions:
  isolate: {{ argv: [{hook}, {runs_log}, "0.3"], timeout: 60s }}
  resume:  {{ argv: [{hook}, {runs_log}, "0.1"], timeout: 60s, after: isolate }}
policy:
  # every injected fault is its own incident: no grouping, no storm verdict
  incident_ttl: 0s
  storm: {{ min_devices: 100000 }}
  max_isolations: {{ count: 100000, window: 1h }}
""")
    # Two files: the second appears half-way, so discovery is crashed into too.
    first = chaos.Writer(os.path.join(logs, "plog-1.log"), LINES // 2, FAULTS // 2, rng)
    second = chaos.Writer(os.path.join(logs, "plog-2.log"), LINES - LINES // 2,
                          FAULTS - FAULTS // 2, rng,
                          devices=list(range(FAULTS // 2, FAULTS)))
    d.start()
    first.start()
    kills = []  # epoch seconds of each SIGKILL
    during_hooks = 0
    for i in range(KILLS):
        if i == KILLS // 2:
            second.start()
        if i % 3 == 2:
            # Aim at a hook run: wait until some hook has started but not finished.
            def hook_running():
                r = chaos.hook_runs(runs_log)
                started = sum(1 for x in r if x[0] == "start")
                return started > sum(1 for x in r if x[0] == "done")
            try:
                wait_for("a hook to be running", hook_running, timeout=10, interval=0.005)
                during_hooks += 1
            except AssertionError:
                pass
        else:
            time.sleep(rng.uniform(0.02, 0.8))  # a random moment: the point of this test
        kills.append(time.time())
        d.kill9()
        d.start()
    first.join()
    second.join()
    check(first.error is None and second.error is None,
          "the writers ran (%s %s)" % (first.error, second.error))
    injected = {(ino, off): dev for ino, off, dev in first.injected + second.injected}
    check(len(injected) == FAULTS, "%d faults injected" % len(injected))

    # Let the last process catch up: every fault recorded and every hook finished.
    wait_for("every injected fault in the journal",
             lambda: len(chaos.fault_rows(state)) >= FAULTS, timeout=120)
    wait_for("every action finished",
             lambda: (lambda j: len(j) == 2 * FAULTS and all(r[3] != "running" and r[3] != "pending"
                                                              for r in j))(journal(state)),
             timeout=120)
    rows = chaos.fault_rows(state)
    found = {}
    for ino, off, dev, rule in rows:
        found.setdefault((ino, off), []).append((dev, rule))
    missing = [k for k in injected if k not in found]
    doubled = {k: v for k, v in found.items() if len(v) > 1}
    extra = [k for k in found if k not in injected]
    check(not missing, "no injected fault lost (%d missing: %s)" % (len(missing), missing[:5]))
    check(not doubled, "no fault recorded twice (%s)" % list(doubled.items())[:5])
    check(not extra, "no fault recorded that was not injected (%s)" % extra[:5])
    wrong = [k for k, v in found.items() if k in injected and v[0][0] != str(injected[k])]
    check(not wrong, "each fault is on its device (%s)" % wrong[:5])

    statuses = {}
    for action, dev, fault_id, status in journal(state):
        statuses[status] = statuses.get(status, 0) + 1
    check(statuses == {"success": 2 * FAULTS},
          "every isolate and resume ended in success, none forgotten (%s)" % statuses)

    # At most once after success: no run of a key starts after the journal recorded its success
    # (finished_ms). Runs before that are re-runs of hooks whose faultd died before journaling
    # their end; a killed faultd's hooks carry on as orphans, so such a re-run may overlap them.
    finished = {(a, dev, fid): ms / 1000.0 for a, dev, fid, ms in chaos.db_rows(
        state, "SELECT action, device, fault_id, finished_ms FROM actions WHERE status='success'")}
    runs = chaos.hook_runs(runs_log)
    by_key = {}
    for kind, action, dev, fault_id, pid, t in runs:
        by_key.setdefault((action, dev, fault_id), []).append((t, kind, pid))
    reruns = 0
    overlapping = 0
    twice_after_success = []
    for key, events in by_key.items():
        events.sort()
        starts = [t for t, kind, _ in events if kind == "start"]
        reruns += len(starts) - 1
        running = 0
        for t, kind, _ in events:
            running += 1 if kind == "start" else -1
            overlapping += 1 if kind == "start" and running > 1 else 0
        if any(t > finished.get(key, float("inf")) for t in starts):
            twice_after_success.append(key)
    check(len(by_key) == 2 * FAULTS, "every (action, device, fault) ran (%d)" % len(by_key))
    check(not twice_after_success,
          "no hook ran again after its success was journaled (%s)" % twice_after_success[:5])

    # One more clean restart: nothing runs again.
    before = len(runs)
    d.kill9()
    d.start()
    wait_for("the restarted faultd to be idle",
             lambda: d.ctl_json("status")["actions_in_flight"] == 0
             and all(s["lag_bytes"] == 0 for s in d.ctl_json("status")["sources"]))
    check(len(chaos.hook_runs(runs_log)) == before, "a restart after the end runs no hook")
    check(len(chaos.fault_rows(state)) == FAULTS, "and records nothing again")
    say("figures: %d kills (%d aimed at running hooks), %d faults, %d lines, %d hook re-runs "
        "after kills (%d overlapping an orphaned run), 0 lost, 0 doubled"
        % (len(kills), during_hooks, FAULTS, LINES, reruns, overlapping)
        if not check.failures else "failures above")
    if check.failures:
        print(d.read_log()[-20000:])
    d.stop()


if __name__ == "__main__":
    harness.main(run)
