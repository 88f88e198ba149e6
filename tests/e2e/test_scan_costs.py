#!/usr/bin/env python3
"""What discovering files costs one real faultd, measured as its own CPU time (utime + stime in
/proc/PID/stat) over a bounded window and printed; the bounds are generous (the security audit's
figures are three to thirty times them) and are not applied to a sanitizer or debug build.

- F21: 10,000 idle files under one file source (the audit: 3.1 s of CPU per 20 s, every file
  stat'ed at every 1 s scan).
- F5: a file created every 50 ms under a `**` tree of 4,096 directories (the audit: 18.7 s of
  CPU in 21 s, a full walk per inotify event).
- N7: the same under an overflow_dump root of 20,000 directories (the audit: 18.4 s in 21 s and
  20,007 inotify watches): the walk also stops at max_directories (4,096)."""
import os
import time

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for
from test_log_writer_costs import inotify_watches

WINDOW = 10.0  # seconds of faultd's life measured under load
IDLE_WINDOW = 20.0  # and while idle, as the audit measured it
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def config(work, port, source):
    return f"""
node: costs
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
sources:
  - {source}
"""


def source_value(port, source, name, labels=None):
    return metric_value(scrape(port), name, dict({"source": source}, **(labels or {}))) or 0.0


def bounded(d):
    """Whether CPU bounds apply to this build (not under a sanitizer or a debug build)."""
    sanitizer = harness.sanitizer_of(d.proc.pid)
    if sanitizer or harness.TIME_SCALE > 1:
        print("# CPU not bounded under %s" % (sanitizer or "a slow build"), flush=True)
        return False
    return True


def make_tree(root, directories):
    """`directories` directories below root, 64 to a parent."""
    for i in range(directories):
        os.makedirs(os.path.join(root, "p%03d" % (i // 64), "d%05d" % i), exist_ok=True)


def create_files_for(d, directory, seconds, name):
    """Creates a file every 50 ms in `directory` for `seconds`; returns faultd's CPU seconds
    meanwhile and the number of files made."""
    start_cpu = cpu_seconds(d.proc.pid)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        with open(os.path.join(directory, name % n), "w") as f:
            f.write("x\n")
        n += 1
        time.sleep(0.05)  # the load's pace, not a wait for a result
    return cpu_seconds(d.proc.pid) - start_cpu, n


def idle_files(args, check, work):
    """F21: 10,000 idle files."""
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    for i in range(10000):
        with open(os.path.join(logs, "f%05d.log" % i), "w") as f:
            f.write("line %d\n" % i)
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{logs}/*.log"] }}'))
    d.start()
    wait_for("every file read",
             lambda: source_value(port, "logs", "faultd_source_lines_total") == 10000,
             timeout=120)
    wait_for("no lag", lambda: source_value(port, "logs", "faultd_source_lag_bytes") == 0)
    before = cpu_seconds(d.proc.pid)
    time.sleep(IDLE_WINDOW)  # the idle window measured
    used = cpu_seconds(d.proc.pid) - before
    print("# F21: %.2f s of CPU in %.0f s with 10,000 idle files" % (used, IDLE_WINDOW),
          flush=True)
    if bounded(d):
        # The window holds at most one full scan (every 30 s); the rest is inotify's.
        check(used < 0.8, "F21: idle files cost %.2f s of CPU per %.0f s (< 0.8; the audit: 3.1)"
              % (used, IDLE_WINDOW))
    # Idle does not mean deaf: an append to one of them is still read.
    with open(os.path.join(logs, "f04242.log"), "a") as f:
        f.write("appended\n")
    wait_for("the append to be read",
             lambda: source_value(port, "logs", "faultd_source_lines_total") == 10001)
    check(d.stop() == 0, "faultd stops cleanly")


def busy_tree(args, check, work):
    """F5: a file every 50 ms under a `**` tree of 4,096 directories."""
    train = os.path.join(work, "train")
    make_tree(train, 4032)  # with the 63 parents and the root: 4,096
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{train}/**/*.log"] }}'))
    d.start()
    wait_for("the tree to be watched", lambda: inotify_watches(d.proc.pid) >= 4096, timeout=60)
    used, made = create_files_for(d, os.path.join(train, "p000", "d00000"), WINDOW, "f%d.log")
    print("# F5: %.2f s of CPU in %.0f s (%.0f %% of a core) with a file created every 50 ms "
          "under 4,096 directories" % (used, WINDOW, 100 * used / WINDOW), flush=True)
    if bounded(d):
        check(used < 0.15 * WINDOW,
              "F5: %.0f %% of a core (< 15 %%; the audit: 89 %%)" % (100 * used / WINDOW))
    wait_for("every file created to be read",
             lambda: source_value(port, "logs", "faultd_source_lines_total") == made)
    check(d.stop() == 0, "faultd stops cleanly")


def busy_dump_tree(args, check, work):
    """N7: a dump every 50 ms under an overflow_dump root of 20,000 directories."""
    dumps = os.path.join(work, "dumps")
    # The dumps' directory is entered first (the walk is depth-first), the 20,000 below it.
    layout = os.path.join(dumps, "20200808163566", "0", "11", "0")
    make_tree(os.path.join(layout, "many"), 20000)
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: dumps, type: overflow_dump, '
                                  f'root: "{dumps}" }}'))
    d.start()
    wait_for("the walk limit to be counted",
             lambda: source_value(port, "dumps", "faultd_source_errors_total",
                                  {"kind": "walk_limit"}) == 1, timeout=60)
    watches = inotify_watches(d.proc.pid)
    print("# N7: %d inotify watches for over 20,000 directories" % watches, flush=True)
    check(watches <= 4096, "N7: the walk stops at max_directories (%d watches)" % watches)
    used, made = create_files_for(d, layout, WINDOW, "OpDebug.Node_Opdebug.%d.1597922031178434")
    print("# N7: %.2f s of CPU in %.0f s (%.0f %% of a core) with a dump created every 50 ms "
          "under over 20,000 directories" % (used, WINDOW, 100 * used / WINDOW), flush=True)
    if bounded(d):
        check(used < 0.15 * WINDOW,
              "N7: %.0f %% of a core (< 15 %%; the audit: 87 %%)" % (100 * used / WINDOW))
    wait_for("every dump to be handed out",
             lambda: source_value(port, "dumps", "faultd_source_lines_total") == made)
    check(source_value(port, "dumps", "faultd_source_errors_total", {"kind": "walk_limit"}) == 1,
          "N7: the walk limit is counted once while it lasts")
    check("stopped the directory walk at max_directories (4096)" in d.read_log(),
          "N7: the walk limit is logged")
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(idle_files, busy_tree, busy_dump_tree)
