#!/usr/bin/env python3
"""Hostile input, end to end against one real faultd: what a careless or malicious writer of
logs, a broken device-health tool or a misbehaving hook can throw at it. For every case faultd
keeps running, the right counter moves (faultd_source_errors_total{kind=...},
faultd_actions_total{result=...}) and a good line written afterwards is still detected.

File sources: a 10 MB line, NUL bytes, invalid UTF-8 and ANSI escapes around a match, a file
that grows without newlines, a glob matching 10,000 files, symlink loops, a FIFO, a followed
file replaced by a directory, device values `../../x` and `0;rm -rf /` (refused before any
metric label, hook environment or store row). The command source runs tests/sim/fake-npu-smi
with output cut inside its Error Code line. Hooks: one that never exits (not even on SIGTERM),
one that daemonises a child that keeps its stdout and exits, one that prints 1 GB.

faultd runs with the soft open-file limit systemd gives a service by default (1024), so the
10,000 files are a real test of descriptor use; a second run sets the hard limit below the
match count too. Peak RSS (VmHWM) is printed and bounded."""
import json
import os
import resource
import signal
import sqlite3
import stat
import time

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

MANY_FILES = 10_000
RSS_BOUND_MIB = 64
SOFT_NOFILE = 1024  # systemd's default soft limit for a service without LimitNOFILE

NOISE = b"[INFO] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 [engine.cc:1263] SyncStream ok\n"
HOSTILE_DEVICES = ["../../x", "0;rm -rf /"]

RULES = """
rules:
  - id: hostile.good
    description: a well-formed fault line, written after each hostile case
    match: { any: ["HOSTILE-GOOD"], regex: 'dev=<(?P<device>[^>]*)>' }
    device: "{device}"
    fault: { code: "E0001", level: SeparateNPU }
  - id: hostile.hook-hang
    description: runs the hook that never exits
    match: { any: ["HOOK-HANG"], regex: 'dev=<(?P<device>[^>]*)>' }
    device: "{device}"
    fault: { code: "E0002", level: RestartRequest }
  - id: hostile.hook-fork
    description: runs the hook that daemonises a child and exits
    match: { any: ["HOOK-FORK"], regex: 'dev=<(?P<device>[^>]*)>' }
    device: "{device}"
    fault: { code: "E0003", level: RestartBusiness }
  - id: hostile.hook-flood
    description: runs the hook that prints 1 GB
    match: { any: ["HOOK-FLOOD"], regex: 'dev=<(?P<device>[^>]*)>' }
    device: "{device}"
    fault: { code: "E0004", level: FreeRestartNPU }
"""

# Records its environment under $1/<device>-<action>.env (written to a temp name, then renamed).
RECORD_HOOK = """#!/bin/sh
out="$1/$FAULTD_DEVICE-$FAULTD_ACTION.env"
env > "$out.tmp" && mv "$out.tmp" "$out"
cat > /dev/null
"""
# Ignores SIGTERM, so only the SIGKILL after the grace period ends it.
HANG_HOOK = """#!/bin/sh
trap '' TERM
echo $$ > "$1/hang.pid"
while :; do sleep 1; done
"""
# The grandchild leaves the hook's process group and keeps the output pipe open.
FORK_HOOK = """#!/bin/sh
setsid sh -c 'echo $$ > "$1/daemon.pid"; exec sleep 600' sh "$1" &
echo forked
exit 0
"""
FLOOD_HOOK = """#!/bin/sh
head -c 1073741824 /dev/zero
"""


def good(device):
    return ("[ERROR] HOSTILE-GOOD fault on dev=<%s>\n" % device).encode()


def write_exec(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU)
    return path


def append(path, data):
    with open(path, "ab") as f:
        f.write(data)


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open("/proc/%d/stat" % pid) as f:  # a zombie is dead for our purpose
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def open_files(pid):
    """The paths a process holds open (a descriptor closed while we look is skipped)."""
    fd_dir = "/proc/%d/fd" % pid
    paths = []
    for name in os.listdir(fd_dir):
        try:
            paths.append(os.readlink(os.path.join(fd_dir, name)))
        except FileNotFoundError:
            pass
    return paths


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


def run(args, check, work):
    src = os.path.abspath(args.source_dir)
    logs = os.path.join(work, "logs")
    dirs = {n: os.path.join(logs, n) for n in ("hostile", "many", "loop", "special")}
    for d in dirs.values():
        os.makedirs(d)
    hook_out = os.path.join(work, "hook-out")
    os.makedirs(hook_out)
    hooks = {n: write_exec(os.path.join(work, n + ".sh"), t) for n, t in
             (("record", RECORD_HOOK), ("hang", HANG_HOOK), ("fork", FORK_HOOK),
              ("flood", FLOOD_HOOK))}
    with open(os.path.join(work, "hostile.yaml"), "w") as f:
        f.write(RULES)

    # The glob of 10,000 files, one of them with a fault; and the symlink loops.
    for i in range(MANY_FILES):
        with open(os.path.join(dirs["many"], "rank-%05d.log" % i), "wb") as f:
            f.write(good(23) if i == MANY_FILES - 1 else NOISE)
    os.symlink(".", os.path.join(dirs["loop"], "self"))  # loop/self/self/... for **
    os.symlink("b.log", os.path.join(dirs["loop"], "a.log"))  # a.log -> b.log -> a.log: ELOOP
    os.symlink("a.log", os.path.join(dirs["loop"], "b.log"))
    os.mkfifo(os.path.join(dirs["special"], "fifo.log"))

    npu_script = os.path.join(work, "npu.json")
    with open(npu_script, "w") as f:
        json.dump({"health": {
            "3": [{"calls": 2, "status": "OK"},
                  {"status": "Warning", "codes": ["80818C00"]}],
            "4": [{"behaviour": "truncated", "status": "Warning", "codes": ["80818C00"]}],
        }}, f)
    fake_npu_smi = os.path.join(src, "tests", "sim", "fake-npu-smi")
    os.environ["FAKE_NPU_SMI_SCRIPT"] = npu_script  # the command source passes it on
    os.environ["FAKE_NPU_SMI_STATE"] = os.path.join(work, "npu-state")

    probe_ms = int(harness.scaled(1.0) * 1000)  # a Python stand-in, on a busy machine
    port = free_port()
    d = Faultd(args, work, f"""
node: hostile
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{work}/hostile.yaml", "{src}/etc/faultd/rules.d/ascend-npu-health.yaml"]
sources:
  - {{ name: hostile, type: file, paths: ["{dirs['hostile']}/*.log"], scan_interval: 100ms }}
  - {{ name: many, type: file, paths: ["{dirs['many']}/*.log"] }}
  - {{ name: loop, type: file, paths: ["{dirs['loop']}/**/*.log"], scan_interval: 100ms }}
  - {{ name: special, type: file, paths: ["{dirs['special']}/*.log"], scan_interval: 100ms }}
  - {{ name: npu-health, type: command, argv: [{fake_npu_smi}, info, -t, health, -i, "{{device}}"],
      devices: "3,4", interval: {probe_ms}ms, timeout: {probe_ms}ms, parser: npu_smi_health }}
actions:
  record: {{ argv: [{hooks['record']}, {hook_out}], timeout: 10s }}
  hang:   {{ argv: [{hooks['hang']}, {hook_out}], timeout: 1s, kill_grace: 500ms }}
  fork:   {{ argv: [{hooks['fork']}, {hook_out}], timeout: 60s }}
  flood:  {{ argv: [{hooks['flood']}], timeout: 60s }}
policy:
  default_level: SeparateNPU
  incident_ttl: 0s
  storm: {{ min_devices: 100000 }}
  max_isolations: {{ count: 1000, window: 1h }}
  levels:
    SeparateNPU:    {{ state: warning, actions: [record] }}
    RestartRequest: {{ state: warning, actions: [hang] }}
    RestartBusiness: {{ state: warning, actions: [fork] }}
    FreeRestartNPU: {{ state: warning, actions: [flood] }}
""")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(SOFT_NOFILE, hard), hard))
    try:
        d.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    pid = d.proc.pid
    grandchild = None
    try:
        grandchild = cases(check, d, port, dirs, hook_out)
        check(d.proc.poll() is None, "faultd is still running after every case")
        rss = peak_rss_kib(pid)
        print("# peak RSS (VmHWM) of faultd: %.1f MiB" % (rss / 1024.0), flush=True)
        sanitizer = harness.sanitizer_of(pid)
        if sanitizer:  # shadow memory and quarantines: the bound is for the real build
            check(True, "peak RSS not bounded under %s" % sanitizer)
        else:
            check(rss is not None and rss < RSS_BOUND_MIB * 1024,
                  "peak RSS %.1f MiB < %d MiB" % ((rss or 0) / 1024.0, RSS_BOUND_MIB))
        check(d.stop() == 0, "faultd stops cleanly on SIGTERM")
    finally:
        grandchild = grandchild or read_pid(os.path.join(hook_out, "daemon.pid"))
        if grandchild and alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)  # the daemonised child of the fork hook
    if check.failures:
        print(d.read_log()[-6000:])


def errors(text, source, kind):
    return metric_value(text, "faultd_source_errors_total", {"source": source, "kind": kind}) or 0.0


state_of = harness.device_state


def wait_warning(port, device, what, timeout=20.0):
    wait_for("device %s warning (%s)" % (device, what),
             lambda: state_of(port, device) == "warning", timeout=timeout)


def cases(check, d, port, dirs, hook_out):
    hostile = dirs["hostile"]

    # A 10 MB line, then a good one in the same file.
    big = os.path.join(hostile, "big.log")
    append(big, NOISE + b"X" * (10 * 1024 * 1024) + b"\n" + good(20))
    wait_warning(port, "20", "after a 10 MB line")
    check(errors(scrape(port), "hostile", "long_line") >= 1, "the 10 MB line counts long_line")

    # NUL bytes, invalid UTF-8 and ANSI escapes on noise lines and around a match.
    binary = os.path.join(hostile, "binary.log")
    append(binary, b"\x00\x00\x00 nul line\n\xff\xfe\xc3\x28 invalid utf-8\n"
           b"\x1b[31m\x1b]0;title\x07 ansi \x1b[0m\n" + b"\x00" * 4096 + b"\n"
           b"\x1b[1;31m\xff\x00[ERROR] HOSTILE-GOOD fault on dev=<21>\x1b[0m\xc0\xaf\n")
    wait_warning(port, "21", "a match among NUL, invalid UTF-8 and ANSI bytes")
    text = scrape(port)
    check("\x1b" not in text and "\x00" not in text, "no control byte reaches /metrics")

    # A file that grows without newlines: 20 MB in 1 MB writes, then a newline and a good line.
    endless = os.path.join(hostile, "endless.log")
    before = errors(scrape(port), "hostile", "long_line")
    for _ in range(20):
        append(endless, b"Y" * (1024 * 1024))
    # The line is counted as too long as soon as it outgrows max_line_bytes, before its newline
    # (the peak RSS at the end shows the rest was skipped, not kept).
    wait_for("the line without newlines to count long_line",
             lambda: errors(scrape(port), "hostile", "long_line") > before)
    check(d.proc.poll() is None, "faultd survives 20 MB without a newline")
    append(endless, b"\n" + good(22))
    wait_warning(port, "22", "after 20 MB without a newline")

    # 10,000 files under one glob, the last one with a fault, at a soft limit of 1024 fds.
    wait_warning(port, "23", "in the last of %d files" % MANY_FILES, timeout=60.0)
    wait_for("all %d files read" % MANY_FILES, lambda: (metric_value(
        scrape(port), "faultd_source_lines_total", {"source": "many"}) or 0) >= MANY_FILES,
        timeout=60.0)
    check(True, "every line of the %d files was read" % MANY_FILES)
    append(os.path.join(dirs["many"], "rank-00000.log"), good(27))
    wait_warning(port, "27", "appended to the first of the many files")

    # Symlink loops: a directory linking to itself under **, two file links pointing at each
    # other. A real file beside them is still read.
    append(os.path.join(dirs["loop"], "real.log"), NOISE + good(24))
    wait_warning(port, "24", "beside symlink loops")

    # A FIFO matching the glob is skipped without being opened (opening it would block).
    append(os.path.join(dirs["special"], "after-fifo.log"), good(25))
    wait_warning(port, "25", "beside a FIFO")

    # A followed file replaced by a directory of the same name.
    gone = os.path.join(dirs["special"], "gone.log")
    append(gone, NOISE * 10)
    wait_for("gone.log to be read", lambda: (metric_value(
        scrape(port), "faultd_source_lines_total", {"source": "special"}) or 0) >= 10)
    os.unlink(gone)
    os.mkdir(gone)
    append(os.path.join(gone, "inside.log"), NOISE)
    append(os.path.join(dirs["special"], "after-dir.log"), good(26))
    wait_warning(port, "26", "after a file was replaced by a directory")

    # Device values that are paths or shell: refused, counted, kept out of every label,
    # hook environment and store row. The finding itself is kept, without a device.
    refused = lambda text: metric_value(text, "faultd_rule_refused_values_total", {"field": "device"}) or 0
    before = refused(scrape(port))
    evil = os.path.join(hostile, "evil.log")
    append(evil, b"".join(good(v) for v in HOSTILE_DEVICES) + good(28))
    wait_warning(port, "28", "after hostile device values")
    text = scrape(port)
    check(refused(text) >= before + len(HOSTILE_DEVICES),
          "each hostile device value is counted as refused by the rules")
    check(all(v not in text for v in HOSTILE_DEVICES) and "rm -rf" not in text,
          "no hostile device value in /metrics")
    rows = store_devices(d.dir)
    check(rows and all(v not in rows for v in HOSTILE_DEVICES),
          "no hostile device value in state.db (devices, faults, transitions, actions)")
    envs = wait_for("the record hook to run for device 28",
                    lambda: (lambda e: "28" in e.get("record", []) and e)(hook_envs(hook_out)))
    check(all(v not in envs.get("record", []) for v in HOSTILE_DEVICES) and not any(
        "rm -rf" in name or ".." in name for name in os.listdir(hook_out)),
        "no hook ran with a hostile FAULTD_DEVICE")

    # npu-smi output cut inside its Error Code line: a parse error, never a finding with a
    # half code; the healthy-then-warning device beside it is still seen.
    wait_for("a parse error from truncated npu-smi output",
             lambda: errors(scrape(port), "npu-health", "parse") >= 2)
    wait_warning(port, "3", "npu-smi Warning 80818C00 beside the truncated device")
    text = scrape(port)
    check(state_of(port, "4") is None, "device 4 (truncated output) was never marked")
    check(metric_value(text, "faultd_faults_total", {"device": "4"}) is None,
          "no finding from truncated npu-smi output")
    check(metric_value(text, "faultd_faults_total",
                       {"device": "3", "code": "80818C00"}) == 1.0,
          "device 3's code is recorded whole, once")

    # Hooks: one that never exits, one that daemonises a child and exits, one that prints 1 GB.
    hooks = os.path.join(hostile, "hooks.log")
    t0 = time.monotonic()
    append(hooks, b"HOOK-HANG dev=<30>\nHOOK-FORK dev=<31>\nHOOK-FLOOD dev=<32>\n")

    def actions(action, result):
        return metric_value(scrape(port), "faultd_actions_total",
                            {"action": action, "result": result}) or 0

    wait_for("the hanging hook to time out", lambda: actions("hang", "timeout") == 1, timeout=30)
    hang_pid = read_pid(os.path.join(hook_out, "hang.pid"))
    check(hang_pid is not None and not alive(hang_pid),
          "the hook that ignores SIGTERM was killed (SIGKILL after the grace)")
    wait_for("the forking hook to succeed", lambda: actions("fork", "success") == 1, timeout=30)
    fork_s = time.monotonic() - t0
    check(fork_s < 30, "the forking hook completed when it exited (%.1fs), not when its "
          "daemonised child closed the output (timeout 60s)" % fork_s)
    grandchild = wait_for("the daemonised child's pid",
                          lambda: read_pid(os.path.join(hook_out, "daemon.pid")))
    check(alive(grandchild), "the daemonised child outlives its hook (it left the group)")
    wait_for("the 1 GB hook to finish", lambda: actions("flood", "success") == 1, timeout=120)
    print("# hook printing 1 GB finished %.1fs after the line" % (time.monotonic() - t0))
    lengths = action_output_lengths(d.dir, "flood")
    check(lengths and max(lengths) <= 64 * 1024,
          "the 1 GB output is kept capped at 64 KiB (kept: %s bytes)" % lengths)
    check(errors(scrape(port), "hostile", "commit") == 0, "no commit error along the way")

    # After all of it, a good line is still detected.
    append(big, good(29))
    wait_warning(port, "29", "at the end")
    return grandchild


def db(state_dir, sql):
    con = sqlite3.connect("file:%s/state.db?mode=ro" % state_dir, uri=True, timeout=10)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def store_devices(work):
    state = os.path.join(work, "state")
    out = []
    for table in ("devices", "faults", "transitions", "actions"):
        out += [r[0] for r in db(state, "SELECT device FROM %s" % table)]
    return out


def action_output_lengths(work, action):
    return [r[0] for r in db(os.path.join(work, "state"),
                             "SELECT length(CAST(output AS BLOB)) FROM actions WHERE action = '%s'"
                             % action)]


def hook_envs(hook_out):
    """{action: [FAULTD_DEVICE, ...]} from the record hook's files."""
    out = {}
    for name in os.listdir(hook_out):
        if not name.endswith(".env"):
            continue
        env = {}
        with open(os.path.join(hook_out, name), errors="replace") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                env[k] = v
        out.setdefault(env.get("FAULTD_ACTION", "?"), []).append(env.get("FAULTD_DEVICE", ""))
    return out


def run_descriptor_limit(args, check, work):
    """A hard open-files limit below the glob's match count: the file sources stop short of the
    descriptors the rest of faultd needs, count what they cannot follow, and the control socket,
    /metrics, the store and hooks go on working. Runs last: it lowers this process's hard limit
    (which cannot be raised again) for faultd to inherit."""
    many = os.path.join(work, "many")
    other = os.path.join(work, "other")
    os.makedirs(many)
    os.makedirs(other)
    files = 1500
    for i in range(files):
        with open(os.path.join(many, "rank-%05d.log" % i), "wb") as f:
            f.write(NOISE)
    hook_out = os.path.join(work, "hook-out")
    os.makedirs(hook_out)
    record = write_exec(os.path.join(work, "record.sh"), RECORD_HOOK)
    with open(os.path.join(work, "hostile.yaml"), "w") as f:
        f.write(RULES)
    port = free_port()
    d = Faultd(args, work, f"""
node: hostile
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{work}/hostile.yaml"]
sources:
  - {{ name: many, type: file, paths: ["{many}/*.log"], scan_interval: 100ms }}
  - {{ name: other, type: file, paths: ["{other}/*.log"], scan_interval: 100ms }}
actions:
  record: {{ argv: [{record}, {hook_out}], timeout: 10s }}
policy:
  incident_ttl: 0s
  storm: {{ min_devices: 100000 }}
  levels:
    SeparateNPU: {{ state: warning, actions: [record] }}
""")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = min(hard, SOFT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    d.start()
    wait_for("the files beyond the descriptor reserve to be counted", lambda: errors(
        scrape(port), "many", "read") >= files - limit + 256)
    text = scrape(port)
    followed = metric_value(text, "faultd_source_files", {"source": "many"})
    print("# limit %d: %d of %d files followed, %d refused" % (
        limit, followed, files, errors(text, "many", "read")), flush=True)
    check(followed is not None and followed <= limit - 256,
          "the file source leaves 256 descriptors to the rest of faultd")
    # File sources share what the reserve leaves, first come first served: a file of another
    # source is refused too, and counted there rather than silently not read.
    append(os.path.join(other, "app.log"), good(41))
    wait_for("the other source to count its refused file",
             lambda: errors(scrape(port), "other", "read") >= 1)
    check(True, "a file source starved by another one says so in its error counter")
    # Which files are followed depends on the order the walk meets them (by inode, and a
    # filesystem reuses freed inodes): write to one that faultd holds open.
    held = sorted(p for p in open_files(d.proc.pid) if p.startswith(many + os.sep))
    check(held, "faultd holds some of the files open (%d)" % len(held))
    append(held[0] if held else os.path.join(many, "rank-00000.log"), good(40))
    wait_warning(port, "40", "in a followed file at the descriptor limit")
    wait_for("the hook to run at the descriptor limit",
             lambda: "40" in hook_envs(hook_out).get("record", []))
    check(d.ctl("status").returncode == 0, "the control socket answers at the descriptor limit")
    check(d.stop() == 0, "faultd stops cleanly at the descriptor limit")


if __name__ == "__main__":
    harness.main(run, run_descriptor_limit)
