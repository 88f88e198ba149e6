#!/usr/bin/env python3
"""What the writer of a log can make one real faultd spend, reproduced the way the security audit
did (the writer is `nobody` through setpriv when the test runs as root) and measured by counting:
inotify watches and open files (/proc/PID/fdinfo, /proc/PID/fd), resident memory (VmRSS), bytes
read (/proc/PID/io rchar) and position rows written, never by timing.

- F5: links to / and /usr planted in a job's directory under a `**` source are not walked,
  watched or tailed; with `follow_symlinks: true` a link inside the tree is followed and one out
  of it is not.
- F8: 2,000 files that each got 64,000 bytes in one write do not keep 64 KiB each once read.
- F21: an idle node with many files writes no position rows.
- F22: a sparse 1 GiB file (`truncate -s 1G`) is consumed without being read, leaves no lag, and
  is not read again after a restart.
- F6 (codes): 10,000 Device Plugin fault events, each with a code of the writer's choosing, add
  at most 64 `code` label values; the rest are counted under `code="other"`."""
import os
import re
import sqlite3
import time

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for
from test_log_writer import as_writer, unprivileged, writer_dir


def config(work, port, source):
    return f"""
node: costs
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
sources:
  - {source}
"""


def source_value(port, name, labels=None):
    return metric_value(scrape(port), name, dict({"source": "logs"}, **(labels or {}))) or 0.0


def lines_read(port):
    return source_value(port, "faultd_source_lines_total")


def inotify_watches(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fdinfo" % pid):
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                n += sum(1 for line in f if line.startswith("inotify wd:"))
        except OSError:
            pass
    return n


def open_files(pid):
    out = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return out


def proc_field(pid, path, name):
    with open("/proc/%d/%s" % (pid, path)) as f:
        for line in f:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    return None


def vm_rss_kib(pid):
    return proc_field(pid, "status", "VmRSS")


def rchar(pid):
    return proc_field(pid, "io", "rchar")


def settled(port):
    """The source has read everything there is."""
    return source_value(port, "faultd_source_lag_bytes") == 0


def query(db, sql, *params):
    """One value from the store, read-only beside the running faultd."""
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return c.execute(sql, params).fetchone()[0]
    finally:
        c.close()


def links_out_of_the_tree(args, check, work):
    """R5 of the audit (F5): `ln -s / x` and `ln -s /usr y` in a job's directory."""
    train = writer_dir(os.path.join(work, "train"))
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{train}/**/*.log"], scan_interval: 200ms }}'))
    d.start()
    as_writer('mkdir -p "$1/job1" && echo start > "$1/job1/a.log"', train)
    wait_for("the job's log to be read", lambda: lines_read(port) >= 1)
    watches_before = inotify_watches(d.proc.pid)
    as_writer('ln -s / "$1/job1/x" && ln -s /usr "$1/job1/y"', train)
    # A file created after the links: once it is read, a whole walk has passed them.
    as_writer('echo after > "$1/job1/b.log"', train)
    wait_for("a rescan after the links", lambda: lines_read(port) >= 2)
    watches = inotify_watches(d.proc.pid)
    files = open_files(d.proc.pid)
    own_log = os.path.join(work, "faultd.log")
    outside = [f for f in files
               if f.endswith(".log") and not f.startswith(train + "/") and f != own_log]
    check(watches <= watches_before + 1,
          "F5: watches stay small (%d before the links, %d after)" % (watches_before, watches))
    check(not outside, "F5: no file outside the tree is open: %r" % outside[:5])
    check(source_value(port, "faultd_source_errors_total", {"kind": "symlink"}) == 2,
          "F5: both links are counted as kind=symlink")
    check("not following the directory link" in d.read_log(), "F5: the refusal is logged")
    check(d.stop() == 0, "faultd stops cleanly")


def follow_within_the_tree(args, check, work):
    """follow_symlinks: true follows a link below the glob's prefix, not one out of it."""
    train = writer_dir(os.path.join(work, "train"))
    outside = writer_dir(os.path.join(work, "elsewhere"))
    # The glob matches one level down: shared/deep/in.log only through the link `in`.
    as_writer('mkdir -p "$1/shared/deep" && echo inside > "$1/shared/deep/in.log"', train)
    as_writer('echo outside > "$1/out.log"', outside)
    as_writer('ln -s "$1/shared/deep" "$1/in" && ln -s "$2" "$1/out" && ln -s /usr "$1/usr"',
              train, outside)
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{train}/*/*.log"], scan_interval: 200ms, '
                                  f'follow_symlinks: true }}'))
    d.start()
    wait_for("the linked log inside the tree to be read", lambda: lines_read(port) >= 1)
    files = open_files(d.proc.pid)
    check(os.path.join(train, "shared", "deep", "in.log") in files,
          "follow_symlinks: the link inside the tree is followed")
    check(not any(f.startswith(outside) or f.startswith("/usr/") for f in files),
          "follow_symlinks: the links out of the tree are not")
    watches = inotify_watches(d.proc.pid)
    check(watches <= 6, "follow_symlinks: watches stay small (%d)" % watches)
    check(source_value(port, "faultd_source_errors_total", {"kind": "symlink"}) == 2,
          "follow_symlinks: the two links out of the tree are counted")
    check(d.stop() == 0, "faultd stops cleanly")


def per_file_buffers(args, check, work):
    """R8 of the audit (F8): 2,000 followed files, then 64,000 bytes appended to each."""
    logs = writer_dir(os.path.join(work, "logs"))
    as_writer('i=0; while [ $i -lt 2000 ]; do : > "$1/f$i.log"; i=$((i+1)); done', logs)
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{logs}/*.log"], scan_interval: 1s }}'))
    d.start()
    wait_for("2000 files followed",
             lambda: source_value(port, "faultd_source_files") == 2000, timeout=60)
    baseline = vm_rss_kib(d.proc.pid)
    payload = os.path.join(work, "payload")
    with open(payload, "w") as f:
        f.write(("x" * 99 + "\n") * 640)  # 64,000 bytes: one write(2) of cat
    os.chmod(payload, 0o644)
    as_writer('for f in "$1"/*.log; do cat "$2" >> "$f"; done', logs, payload)
    wait_for("every line read", lambda: lines_read(port) == 2000 * 640, timeout=120)
    wait_for("no lag", lambda: settled(port), timeout=60)
    after = vm_rss_kib(d.proc.pid)
    growth_mib = (after - baseline) / 1024.0
    print("# VmRSS %d kB followed, %d kB after 64,000 bytes per file (+%.1f MiB)"
          % (baseline, after, growth_mib), flush=True)
    sanitizer = harness.sanitizer_of(d.proc.pid)
    if sanitizer:  # the bound is for the real build
        print("# RSS growth not bounded under %s" % sanitizer, flush=True)
    else:
        check(growth_mib < 20,
              "F8: RSS grows %.1f MiB (< 20 MiB; the audit saw +122 MiB)" % growth_mib)
    check(d.stop() == 0, "faultd stops cleanly")


def idle_positions(args, check, work):
    """R20 of the audit (F21): many idle files, and the position rows written meanwhile."""
    logs = writer_dir(os.path.join(work, "logs"))
    as_writer('i=0; while [ $i -lt 1000 ]; do echo "line $i" > "$1/f$i.log"; i=$((i+1)); done',
              logs)
    port = free_port()
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{logs}/*.log"], scan_interval: 200ms }}'))
    d.start()
    wait_for("every file read", lambda: lines_read(port) == 1000, timeout=60)
    db = os.path.join(work, "state", "state.db")
    wait_for("the read positions to be saved",
             lambda: query(db, "SELECT count(*) FROM positions WHERE file_offset > 0") == 1000)
    since = query(db, "SELECT max(updated_ms) FROM positions")
    # A window of idle time: three position saves and fifteen rescans on a plain build. What is
    # counted is rows written in it, which must be none, however long it lasts.
    time.sleep(harness.scaled(3))
    rows = query(db, "SELECT count(*) FROM positions WHERE updated_ms > ?", since)
    check(rows == 0, "F21: no position row is written while the files are idle (%d were)" % rows)
    check(d.stop() == 0, "faultd stops cleanly")


def sparse_file(args, check, work):
    """R21 of the audit (F22): `truncate -s 1G` as the log writer."""
    logs = writer_dir(os.path.join(work, "logs"))
    size = 1 << 30
    port = free_port()
    cfg = config(work, port, f'{{ name: logs, type: file, paths: ["{logs}/*.log"], '
                             f'scan_interval: 200ms }}')
    d = Faultd(args, work, cfg)
    d.start()
    read_at_start = rchar(d.proc.pid)
    as_writer('truncate -s 1G "$1/sparse.log"', logs)
    wait_for("the sparse file to be consumed",
             lambda: source_value(port, "faultd_source_bytes_total") == size, timeout=60)
    check(source_value(port, "faultd_source_lag_bytes") == 0, "F22: no lag is left behind")
    read = rchar(d.proc.pid) - read_at_start
    print("# rchar grew by %d bytes for a %d-byte sparse file" % (read, size), flush=True)
    check(read < 64 << 20, "F22: the holes are not read (%d bytes read)" % read)
    check(source_value(port, "faultd_source_errors_total", {"kind": "sparse"}) == 1,
          "F22: the sparse file is counted once")
    check(d.stop() == 0, "faultd stops cleanly")

    d2 = Faultd(args, work, cfg)
    d2.start()
    # A file made after the start is found by a later scan: the sparse file was served by then.
    as_writer('echo later > "$1/later.log"', logs)
    wait_for("a later scan after the restart", lambda: lines_read(port) >= 1)
    read = rchar(d2.proc.pid)
    check(read < 64 << 20, "F22: a restart does not read it again (rchar %d)" % read)
    check(source_value(port, "faultd_source_lag_bytes") == 0, "F22: no lag after the restart")
    check(d2.stop() == 0, "faultd stops cleanly")


# The Device Plugin's fault event (etc/faultd/rules.d/ascend-npu-health.yaml): the code is the
# writer's to choose.
PLUGIN_EVENT = ("Warning   Occur   pod/ascend-device-plugin-daemonset-910-dlpmv   device fault, "
                "nodeName:costs, assertion:Occur, cardID:0, deviceID:0, faultCodes:%X, "
                "alarmRaisedTime:2023-11-21 05:36:53\n")
CODE_LABEL_CAP = 64


def forged_codes(args, check, work):
    """R6 of the audit, for codes (F6): 10,000 fault events with 10,000 codes."""
    logs = writer_dir(os.path.join(work, "logs"))
    port = free_port()
    rules = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d",
                         "ascend-npu-health.yaml")
    d = Faultd(args, work, config(work, port, f'{{ name: logs, type: file, '
                                  f'paths: ["{logs}/*.log"] }}') + f'include: ["{rules}"]\n')
    d.start()
    payload = os.path.join(work, "payload")
    with open(payload, "w") as f:
        f.writelines(PLUGIN_EVENT % (0x10000000 + i) for i in range(10000))
    os.chmod(payload, 0o644)
    as_writer('cat "$2" >> "$1/events.log"', logs, payload)
    wait_for("every event read", lambda: lines_read(port) == 10000, timeout=120)
    text = scrape(port)
    codes = set(re.findall(r'^faultd_faults_total\{code="([^"]*)"', text, re.M))
    series = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    print("# %d code values, %d series, %d bytes of /metrics, VmRSS %d kB after 10,000 codes"
          % (len(codes), series, len(text), vm_rss_kib(d.proc.pid)), flush=True)
    check(len(codes) == CODE_LABEL_CAP + 1 and "other" in codes,
          "F6: 10,000 forged codes make %d code values (%d kept, then 'other')"
          % (len(codes), CODE_LABEL_CAP))
    other = metric_value(text, "faultd_faults_total", {"code": "other", "device": "0"})
    check(other == 10000 - CODE_LABEL_CAP, "F6: the others are counted under code=\"other\" (%s)"
          % other)
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    if not unprivileged():
        print("# not root or no setpriv: the writer is this user, not nobody", flush=True)
    harness.main(links_out_of_the_tree, follow_within_the_tree, per_file_buffers,
                 idle_positions, sparse_file, forged_codes)
