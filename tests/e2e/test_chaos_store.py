#!/usr/bin/env python3
"""Store faults: state_dir on a small tmpfs that fills up while faults arrive. /metrics keeps
answering, the store's failures are logged and counted (faultd_store_errors_total,
faultd_source_errors_total{kind="commit"}), and once space returns every finding is recorded
exactly once (a chunk whose commit failed is offered again). Then a read-only and a corrupt
state.db at start: a clear message and a non-zero exit, not a crash.

Needs root with CAP_SYS_ADMIN for mount(8); prints a skip otherwise. FAULTD_CHAOS_LONG=1 injects
ten times as many faults while the disk is full."""
import os
import subprocess

import chaos
import harness
from chaos import say
from harness import Faultd, free_port, metric_value, scrape, wait_for

FAULTS = 2000 if chaos.LONG else 200


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path],
                          capture_output=True).returncode == 0


def fill(path):
    """Writes a filler file until the file system is full."""
    # Unbuffered: nothing is left for close() to flush into the full file system.
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError:
            pass


def run(args, check, work):
    state = os.path.join(work, "state")
    if not mount_tmpfs(state, "2m"):
        say("skip: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
        check(True, "skipped: no mount")
        return
    try:
        body(args, check, work, state)
    finally:
        subprocess.run(["umount", "-l", state], capture_output=True)


def body(args, check, work, state):
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    port = free_port()
    rules = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d")
    d = Faultd(args, work, f"""
node: chaos
state_dir: {state}
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
policy:
  # every injected fault is its own incident: no grouping, no storm verdict
  incident_ttl: 0s
  storm: {{ min_devices: 100000 }}
# a device per fault: without an inventory only the first 64 device ids named would count
inventory: {{ devices: "0-{FAULTS - 1}" }}
include: ["{rules}/*.yaml"]
sources:
  - {{ name: plog, type: file, paths: ["{logs}/plog-*.log"] }}
""")
    d.start()
    fill(state)
    plog = os.path.join(logs, "plog-1.log")
    with open(plog, "ab") as f:
        for i in range(FAULTS):
            f.write((chaos.NOISE % i).encode() * 20 + (chaos.FAULT % i).encode())
    wait_for("store errors to be counted",
             lambda: (metric_value(scrape(port), "faultd_store_errors_total", {}) or 0) > 0,
             timeout=30)
    text = scrape(port)
    check(metric_value(text, "faultd_source_errors_total", {"source": "plog", "kind": "commit"}) > 0,
          "failed commits are counted per source")
    check(d.proc.poll() is None, "faultd keeps running with a full disk")
    check("cannot record" in d.read_log(), "the store failure is logged")
    recorded_while_full = len(chaos.fault_rows(state))
    os.unlink(os.path.join(state, "filler"))
    wait_for("every finding recorded once space returned",
             lambda: len(chaos.fault_rows(state)) >= FAULTS, timeout=60)
    rows = chaos.fault_rows(state)
    devices = sorted(int(r[2]) for r in rows)
    check(devices == list(range(FAULTS)),
          "each of %d findings recorded exactly once (%d rows)" % (FAULTS, len(rows)))
    say("figures: %d faults while full, %d recorded before space returned, %s store errors"
        % (FAULTS, recorded_while_full,
           metric_value(scrape(port), "faultd_store_errors_total", {})))
    check(d.stop() == 0, "faultd stops cleanly")

    # Read-only state at start: a clear error, exit non-zero.
    subprocess.run(["mount", "-o", "remount,ro", state], check=True)
    r = subprocess.run([d.args.faultd, "--config", d.config], capture_output=True, text=True,
                       timeout=30)
    out = r.stdout + r.stderr
    check(r.returncode == 73,
          "read-only state.db: faultd exits 73, which the unit does not restart (got %d)"
          % r.returncode)
    check("state.db" in out and ("read-only" in out or "readonly" in out or "writable" in out),
          "read-only state.db: the message says why (%s)" % out.strip().splitlines()[-1:])
    subprocess.run(["mount", "-o", "remount,rw", state], check=True)

    # A corrupt state.db at start: a clear error naming the recovery steps.
    for name in os.listdir(state):
        os.unlink(os.path.join(state, name))
    with open(os.path.join(state, "state.db"), "wb") as f:
        f.write(b"this is not an SQLite database" * 200)
    r = subprocess.run([d.args.faultd, "--config", d.config], capture_output=True, text=True,
                       timeout=30)
    out = r.stdout + r.stderr
    check(r.returncode == 73, "corrupt state.db: faultd exits 73 (got %d)" % r.returncode)
    check("damaged" in out or "not a faultd database" in out,
          "corrupt state.db: the message says so (%s)" % out.strip().splitlines()[-1:])
    if check.failures:
        print(d.read_log()[-20000:])


if __name__ == "__main__":
    harness.main(run)
