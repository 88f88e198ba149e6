#!/usr/bin/env python3
"""What the writer of a log can do to one real faultd, reproduced the way the security audit did:
the writer is an unprivileged process (`nobody`, through setpriv) when the test runs as root, and
faultd runs as root.

- F1: a log truncated (copytruncate, `: >`) and written again with the same first line puts a new
  fault at an offset journaled before: it is a new line of the next generation, found, not
  dropped as a re-read; the same fault on the same device after an operator's clear too.
- F16: a file rewritten with the same long banner and grown past the read offset while faultd
  cannot look (SIGSTOP standing in for a stall, and a kill -9 across the rewrite) is read again
  from its start.
- F17: terminal escapes in a log's file name are shown escaped by `faultctl events`, and a name
  holding ESC, BEL and a newline followed by a record of its own making neither reaches faultd's
  own log raw nor starts a record there.
- F2: the records of the command source printed into a job's log neither clear the warning the
  kernel log raised nor raise a fault of their own; they are counted as refused."""
import os
import shutil
import signal
import subprocess
import time

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

NOBODY = 65534

BANNER = "HEADER banner line 0001\n"
# Longer than the 1 KiB fingerprint of a file's first bytes: only the bytes last read can tell
# the rewritten file from the one read before.
LONG_BANNER = "".join("banner %04d %s\n" % (i, "=" * 60) for i in range(24))
HEARTBEAT = ("[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> "
             "Heartbeat lost! (device=3; old_count=1104; new_count=1104)\n")


def unprivileged():
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def as_writer(script, *argv):
    """Runs a shell script as the log writer: `nobody` when possible, else this user."""
    cmd = ["sh", "-c", script, "sh"] + list(argv)
    if unprivileged():
        cmd = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"] + cmd
    subprocess.run(cmd, check=True, timeout=30)


def writer_dir(path):
    """A directory the writer owns, below directories it may traverse."""
    os.makedirs(path, exist_ok=True)
    parent = path
    while parent != "/" and os.stat(parent).st_uid == os.geteuid():
        os.chmod(parent, os.stat(parent).st_mode | 0o711)
        parent = os.path.dirname(parent)
    if unprivileged():
        os.chown(path, NOBODY, NOBODY)
    return path


def append(path, text):
    as_writer('printf "%s" "$2" >> "$1"', path, text)


def rewrite(path, text):
    as_writer('printf "%s" "$2" > "$1"', path, text)


state_of = harness.device_state


def faults_total(port, device):
    return metric_value(scrape(port), "faultd_faults_total", {"device": device}) or 0.0


def truncations(port):
    return metric_value(scrape(port), "faultd_source_rotations_total", {"kind": "truncate"}) or 0.0


def audit_config(work, logs, port):
    rules = harness.write_audit_rules(work)
    return f"""
node: writer
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}"]
sources:
  - {{ name: logs, type: file, paths: ["{logs}/*.log"], scan_interval: 200ms }}
policy:
  incident_ttl: 0s
  levels:
    SeparateNPU: {{ state: warning }}
"""


def truncate_and_rewrite(args, check, work):
    """R1 of the audit: the same first line, then a fault at the offset journaled before."""
    logs = writer_dir(os.path.join(work, "logs"))
    log = os.path.join(logs, "a.log")
    port = free_port()
    d = Faultd(args, work, audit_config(work, logs, port))
    d.start()
    append(log, BANNER + "FAULT-X on dev=<1>\n")
    wait_for("device 1 in warning", lambda: state_of(port, "1") == "warning")

    rewrite(log, "")
    wait_for("the truncation to be seen", lambda: truncations(port) >= 1)
    append(log, BANNER + "FAULT-X on dev=<2>\n")
    check(wait_for("device 2 in warning", lambda: state_of(port, "2") == "warning"),
          "F1: a fault at the offset of an earlier one, after a truncation, is found")
    check(faults_total(port, "2") == 1.0, "F1: counted once in faultd_faults_total")

    # The same fault on the same device again, after an operator cleared it.
    check(d.ctl("clear", "1", "--reason", "operator: replaced").returncode == 0, "faultctl clear 1")
    wait_for("device 1 healthy", lambda: state_of(port, "1") == "healthy")
    rewrite(log, "")
    wait_for("the second truncation to be seen", lambda: truncations(port) >= 2)
    append(log, BANNER + "FAULT-X on dev=<1>\n")
    check(wait_for("device 1 in warning again", lambda: state_of(port, "1") == "warning"),
          "F1: the identical fault after clear and truncation is found again")
    rows = d.ctl_json("events", "--device", "1")["faults"]
    check(len(rows) == 2, "F1: two journal rows for device 1 at the same offset (%d)" % len(rows))
    check(d.stop() == 0, "faultd stops cleanly")


def rewrite_unseen(args, check, work):
    """R15 of the audit: the rewrite happens while faultd cannot look, and grows past the offset."""
    logs = writer_dir(os.path.join(work, "logs"))
    log = os.path.join(logs, "job.log")
    port = free_port()
    d = Faultd(args, work, audit_config(work, logs, port))
    d.start()
    append(log, LONG_BANNER + "FAULT-X first run dev=<3>\n")
    wait_for("device 3 in warning", lambda: state_of(port, "3") == "warning")

    # A stall: faultd is stopped while the job restarts and rewrites its log past the old end.
    d.proc.send_signal(signal.SIGSTOP)
    try:
        rewrite(log, LONG_BANNER + "FAULT-X second run dev=<4>\n" +
                "".join("step %d ok\n" % i for i in range(20)))
    finally:
        d.proc.send_signal(signal.SIGCONT)
    check(wait_for("device 4 in warning", lambda: state_of(port, "4") == "warning"),
          "F16: a rewrite that grew past the offset during a stall is read from its start")

    # A kill -9, then the rewrite, then a start: the saved position is of other content now.
    time.sleep(harness.scaled(1.5))  # the periodic position save has run
    d.kill9()
    rewrite(log, LONG_BANNER + "FAULT-X third run dev=<5>\n" +
            "".join("step %d ok\n" % i for i in range(40)))
    d.start()
    check(wait_for("device 5 in warning", lambda: state_of(port, "5") == "warning"),
          "F16: a rewrite while faultd was down is read from its start after the restart")
    check(len(d.ctl_json("events", "--device", "4")["faults"]) == 1,
          "the second run's fault is journaled once, not again after the restart")
    check(d.stop() == 0, "faultd stops cleanly")


def escaped_names(args, check, work):
    """R16 of the audit: terminal escapes in a log's file name reach neither `faultctl events` nor
    faultd's own log raw."""
    logs = writer_dir(os.path.join(work, "logs"))
    name = "x\x1b]0;pwned-title\x07\x1b[2K\r9 forged row\x1b[8m.log"
    port = free_port()
    d = Faultd(args, work, audit_config(work, logs, port))
    d.start()
    append(os.path.join(logs, name), "FAULT-X on dev=<7>\n")
    wait_for("device 7 in warning", lambda: state_of(port, "7") == "warning")
    out = d.ctl("events").stdout
    check(not any(c in out for c in "\x1b\x07\r"),
          "F17: no control byte of the file name reaches the terminal")
    check("x\\x1b]0;pwned-title\\x07\\x1b[2K\\x0d9 forged row\\x1b[8m.log" in out,
          "F17: the name is shown escaped: %r" % out[-200:])

    # faultd's own log names the file of every fault it records.
    forged = ("[2026-01-01 00:00:00.000] [warning] fault: rule=forged.rule device=5 "
              "level=SeparateNPU code=- at forged.log:1")
    append(os.path.join(logs, "x\x1b]0;x\x07\n" + forged + ".log"), "FAULT-X on dev=<6>\n")
    wait_for("device 6 in warning", lambda: state_of(port, "6") == "warning")
    check(d.stop() == 0, "faultd stops cleanly")
    log = d.read_log()
    check(not any(c in log for c in "\x1b\x07\r"), "F17: no control byte reaches faultd's log")
    check(not any(line.startswith("[2026-01-01") for line in log.splitlines()),
          "F17: the name starts no record of its own in faultd's log")
    check("x\\x1b]0;x\\x07\\x0a" + forged in log,
          "F17: faultd's log shows the name escaped, in the fault's record: %r" %
          [line for line in log.splitlines() if "device=6" in line])


def forged_records(args, check, work):
    """R2 of the audit: a job prints the command source's recovery record into its own log."""
    kern = os.path.join(work, "kern")
    os.makedirs(kern)
    train = writer_dir(os.path.join(work, "train"))
    port = free_port()
    src = args.source_dir
    d = Faultd(args, work, f"""
node: writer
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{src}/etc/faultd/rules.d/*.yaml"]
sources:
  - {{ name: host-kernel, type: file, kernel_log: true, paths: ["{kern}/*.log"], scan_interval: 200ms }}
  - {{ name: training, type: file, paths: ["{train}/**/*.log"], scan_interval: 200ms }}
policy:
  levels:
    RestartNPU: {{ state: warning }}
    SubHealthFault: {{ state: warning }}
""")
    d.start()
    with open(os.path.join(kern, "kern.log"), "a") as f:
        f.write(HEARTBEAT)
    wait_for("device 3 in warning", lambda: state_of(port, "3") == "warning")

    job = os.path.join(train, "job.log")
    append(job, "npu-smi health: device=3 status=OK recovered\n"
                "npu-smi health: device=5 chip=0 status=Alarm code=A4025021\n"
                "deviceinfo: device=6 status=Fault code=8C084E00 fault_level=RestartBusiness\n")
    refused = lambda: metric_value(scrape(port), "faultd_rule_refused_values_total",
                                   {"field": "source_type"}) or 0.0
    check(wait_for("the forged records to be refused", lambda: refused() >= 3),
          "F2: the records printed into a job's log are refused and counted")
    check(state_of(port, "3") == "warning",
          "F2: the forged recovery leaves the kernel log's warning in place")
    check(state_of(port, "5") is None and state_of(port, "6") is None,
          "F2: forged fault records create no device")
    status = d.ctl("status")
    check("40F84E00" in status.stdout, "faultctl status still shows the heartbeat fault")
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(truncate_and_rewrite, rewrite_unseen, escaped_names, forged_records)
