#!/usr/bin/env python3
"""The systemd protocol as a real service manager would see it: with NOTIFY_SOCKET set, faultd
sends READY=1 once it is serving, WATCHDOG=1 at half of WATCHDOG_USEC, RELOADING=1 and READY=1
around a SIGHUP reload, and STOPPING=1 on SIGTERM."""
import os
import signal
import socket
import subprocess
import time

import harness
from harness import wait_for


def run(args, check, work):
    sock_path = os.path.join(work, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.setblocking(False)
    messages = []

    def drain():
        while True:
            try:
                messages.append(sock.recv(4096).decode())
            except BlockingIOError:
                return messages

    config = os.path.join(work, "faultd.yaml")
    with open(config, "w") as f:
        f.write(f"""state_dir: {work}/state
metrics: {{ listen: "" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: []
sources: [{{ name: s, paths: ["{work}/*.log"] }}]
""")
    env = dict(os.environ, NOTIFY_SOCKET=sock_path, WATCHDOG_USEC="200000")
    env.pop("WATCHDOG_PID", None)  # unset: the watchdog is meant for whoever reads it
    proc = subprocess.Popen([args.faultd, "--config", config], env=env, cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for("READY=1", lambda: any("READY=1" in m for m in drain()))
        start = time.monotonic()
        wait_for("three WATCHDOG=1 kicks",
                 lambda: sum("WATCHDOG=1" in m for m in drain()) >= 3, timeout=5)
        check(time.monotonic() - start < 2.0, "the watchdog is kicked at half its interval")
        check(any("READY=1" in m for m in messages), "READY=1 sent once serving")
        proc.send_signal(signal.SIGHUP)
        wait_for("RELOADING=1", lambda: any("RELOADING=1" in m for m in drain()))
        reloading = next(i for i, m in enumerate(messages) if "RELOADING=1" in m)
        wait_for("READY=1 after the reload",
                 lambda: any("READY=1" in m for m in drain()[reloading + 1:]))
        check(True, "RELOADING=1, then READY=1 again, around a SIGHUP reload")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=20)
        drain()
        check(any("STOPPING=1" in m for m in messages), "STOPPING=1 sent on SIGTERM")
        check(code == 0, "clean exit (%d)" % code)
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()


if __name__ == "__main__":
    harness.main(run)
