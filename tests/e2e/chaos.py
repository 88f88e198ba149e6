"""Shared pieces of the chaos tests (test_chaos_*.py): a log writer that injects faults at known
positions, a recording hook, readers for state.db, and the short/long mode switch.

Short mode runs inside the normal test command; FAULTD_CHAOS_LONG=1 selects the long mode whose
figures are reported in tests/chaos/README.md."""
import os
import random
import sqlite3
import stat
import threading
import time

LONG = os.environ.get("FAULTD_CHAOS_LONG", "") not in ("", "0")
SEED = int(os.environ.get("FAULTD_CHAOS_SEED", "0") or 0) or random.randrange(1, 1 << 30)

NOISE = ("[INFO] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 [engine.cc:1263]163618 "
         "SyncStream: stream_id=17 ok seq=%08d\n")
FAULT = ("[ERROR] ASCENDCL(59420,python3):2025-01-24-11:24:07.908.526 [silent_check.cc:88]107630 "
         "AsdCheck: accuracy sensitivity feature abnormal, device_id=%d\n")
FAULT_RULE = "ascend.asd.feature-abnormal"

# Records every run: "start|done <action> <device> <fault_id> <pid> <epoch seconds>". A run
# sleeps for $2 seconds between the two lines so that kills land while hooks are running.
RECORDING_HOOK = """#!/bin/sh
log="$1"; pause="$2"
echo "start $FAULTD_ACTION $FAULTD_DEVICE $FAULTD_FAULT_ID $$ $(date +%s.%N)" >> "$log"
cat > /dev/null
sleep "$pause"
echo "done $FAULTD_ACTION $FAULTD_DEVICE $FAULTD_FAULT_ID $$ $(date +%s.%N)" >> "$log"
"""


def say(msg):
    print("# " + msg, flush=True)


def write_hook(path, text=RECORDING_HOOK):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU)
    return path


def hook_runs(log):
    """[(kind, action, device, fault_id, pid, time)] from the recording hook's log."""
    out = []
    if not os.path.exists(log):
        return out
    with open(log) as f:
        for line in f:
            p = line.split()
            if len(p) == 6:
                out.append((p[0], p[1], p[2], int(p[3]), int(p[4]), float(p[5])))
    return out


def db_rows(state_dir, sql, args=()):
    """Reads state.db the way an operator would (a second connection, WAL honoured)."""
    con = sqlite3.connect("file:%s/state.db?mode=ro" % state_dir, uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def fault_rows(state_dir):
    try:
        return db_rows(state_dir, "SELECT file_ino, file_offset, device, rule FROM faults")
    except sqlite3.Error:
        return []


class Writer(threading.Thread):
    """Appends noise lines at a high rate with `faults` fault lines at random places, spread
    over files rotated by `rotate(path)` every `rotate_every` seconds (None: never); rotate may
    return the path to go on with. Records where each fault landed: (inode, offset, device)."""

    def __init__(self, path, lines, faults, rng, batch=200, pause=0.002, rotate=None,
                 rotate_every=None, devices=None):
        super().__init__(daemon=True)
        self.path = path
        self.lines = lines
        self.fault_at = set(rng.sample(range(lines), faults))
        self.devices = devices or list(range(faults))
        self.batch = batch
        self.pause = pause
        self.rotate = rotate
        self.rotate_every = rotate_every
        self.injected = []  # (inode, offset, device)
        self.written = 0
        self.error = None

    def run(self):
        try:
            self._run()
        except Exception as e:  # reported by the test, never swallowed
            self.error = e

    def _run(self):
        f = open(self.path, "ab")
        next_rotation = time.monotonic() + (self.rotate_every or 1e9)
        seq = 0
        fault_no = 0
        while seq < self.lines:
            if self.rotate and time.monotonic() >= next_rotation:
                f.close()
                self.path = self.rotate(self.path) or self.path
                f = open(self.path, "ab")
                next_rotation = time.monotonic() + self.rotate_every
            buf = []
            for _ in range(min(self.batch, self.lines - seq)):
                if seq in self.fault_at:
                    device = self.devices[fault_no % len(self.devices)]
                    fault_no += 1
                    # The size, not tell(): after a copytruncate an O_APPEND stream's position is
                    # stale until its next write. The writer is the only one appending.
                    st = os.fstat(f.fileno())
                    offset = st.st_size + sum(len(b) for b in buf)
                    self.injected.append((st.st_ino, offset, device))
                    buf.append((FAULT % device).encode())
                else:
                    buf.append((NOISE % seq).encode())
                seq += 1
            f.write(b"".join(buf))
            f.flush()
            self.written = seq
            time.sleep(self.pause)
        f.close()
