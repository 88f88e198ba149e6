"""Shared helpers for faultd's end-to-end tests: run the real binaries on a temp config, poll
with deadlines (never sleep to wait for a result), read /metrics, talk through faultctl."""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faultd", required=True)
    ap.add_argument("--faultctl", required=True)
    ap.add_argument("--source-dir", required=True)
    return ap.parse_args()


def shared_dir(source_dir):
    """The shared directory beside the project's root (<source dir>/../shared), where data that
    is not the project's is read from, or $FAULTD_SHARED_DIR when set."""
    return (os.environ.get("FAULTD_SHARED_DIR")
            or os.path.join(os.path.dirname(os.path.abspath(source_dir)), "shared"))


def mindcluster_dir(source_dir):
    """MindCluster's real catalogues (faultCode.json, faultCustomization.json, kg-config.json)."""
    return os.path.join(shared_dir(source_dir), "data", "mindcluster")


MINDCLUSTER_FILES = ("faultCode.json", "faultCustomization.json", "kg-config.json")


def mindcluster_missing(source_dir):
    """None when the catalogues are there, else why a case that needs them is skipped."""
    d = mindcluster_dir(source_dir)
    if all(os.path.isfile(os.path.join(d, f)) for f in MINDCLUSTER_FILES):
        return None
    return ("MindCluster catalogues not found at %s (set FAULTD_SHARED_DIR to the shared "
            "directory)" % os.path.normpath(d))


def needs_mindcluster(body):
    """Marks a test body that reads MindCluster's real catalogues: main() skips it, saying so,
    when they are absent; the others still run."""
    body.needs_mindcluster = True
    return body


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Waits scale with the build: a sanitizer or debug build runs several times slower, and the
# machine may be busy with other tests (ctest sets FAULTD_TEST_TIME_SCALE per build type).
TIME_SCALE = max(1.0, float(os.environ.get("FAULTD_TEST_TIME_SCALE") or 1))


def scaled(seconds):
    """A deadline or timeout of `seconds` on a plain build, stretched for slow builds."""
    return seconds * TIME_SCALE


def wait_for(what, predicate, timeout=20.0, interval=0.01):
    """Polls `predicate` until it returns a truthy value or the deadline (scaled) passes."""
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


class Check:
    """Collects failures so one run reports all of them; exits non-zero if any failed."""

    def __init__(self):
        self.failures = 0
        self.passes = 0

    def __call__(self, cond, message):
        if cond:
            self.passes += 1
            print("ok   - " + message, flush=True)
        else:
            self.failures += 1
            print("FAIL - " + message, flush=True)
        return cond

    def done(self):
        print("%d passed, %d failed" % (self.passes, self.failures), flush=True)
        sys.exit(1 if self.failures else 0)


_running = []  # every faultd a test started, stopped at the end even when the test failed


class Faultd:
    def __init__(self, args, workdir, config_text):
        args.faultd = os.path.abspath(args.faultd)
        args.faultctl = os.path.abspath(args.faultctl)
        self.args = args
        self.dir = workdir
        self.config = os.path.join(workdir, "faultd.yaml")
        with open(self.config, "w") as f:
            f.write(config_text)
        self.socket = os.path.join(workdir, "control.sock")
        self.proc = None
        self.log = open(os.path.join(workdir, "faultd.log"), "ab")

    def start(self):
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        self.proc = subprocess.Popen([self.args.faultd, "--config", self.config], stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env, cwd=self.dir)
        _running.append(self.proc)
        wait_for("faultd to answer on its control socket",
                 lambda: self.proc.poll() is not None or self.ctl("status").returncode == 0)
        if self.proc.poll() is not None:
            raise AssertionError("faultd exited with %s:\n%s" % (self.proc.returncode, self.read_log()))

    def ctl(self, *argv):
        return subprocess.run([self.args.faultctl, "--socket", self.socket] + list(argv),
                              capture_output=True, text=True, timeout=scaled(30))

    def ctl_json(self, *argv):
        r = self.ctl("-o", "json", *argv)
        if r.returncode != 0:
            raise AssertionError("faultctl %s failed (%d): %s" % (argv, r.returncode, r.stderr))
        return json.loads(r.stdout)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return -9
        return self.proc.returncode if self.proc else None

    def read_log(self):
        with open(os.path.join(self.dir, "faultd.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        return r.read().decode()


def metric_value(text, name, labels):
    """The value of the series `name` whose labels include all of `labels` (dict), or None."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)', line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return None


def device_state(port, device):
    """The state faultd_device_state says `device` is in ("healthy", ...), or None."""
    text = scrape(port)
    for state in ("healthy", "warning", "isolated"):
        if metric_value(text, "faultd_device_state", {"device": device, "state": state}) == 1.0:
            return state
    return None


# The security audit's rule pack: one fault line whose device a log writer chooses.
AUDIT_RULES = """
rules:
  - id: audit.fault
    description: the audit's fault line
    match: { any: ["FAULT-X"], regex: 'dev=<(?P<device>[^>]*)>' }
    device: "{device}"
    fault: { code: E0001, level: SeparateNPU }
"""


def write_audit_rules(work):
    """Writes AUDIT_RULES to work/rules.yaml and returns that path (for a config's include)."""
    path = os.path.join(work, "rules.yaml")
    with open(path, "w") as f:
        f.write(AUDIT_RULES)
    return path


def sanitizer_of(pid):
    """The sanitizer runtime mapped into process `pid` (its shadow memory and quarantines make
    memory figures meaningless), if any."""
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    for lib in ("libtsan", "libasan"):
        if lib in maps:
            return lib
    return None


def tempdir():
    return tempfile.mkdtemp(prefix="faultd-e2e-")


def cleanup(path):
    if os.environ.get("FAULTD_E2E_KEEP"):
        print("# kept " + path)
        return
    shutil.rmtree(path, ignore_errors=True)


def stop_all():
    """Kills every faultd still running (a failed test must not leave daemons behind)."""
    for proc in _running:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main(*bodies):
    """Runs each body(args, check, workdir) in a fresh temp dir, then reports and exits. A body
    marked @needs_mindcluster is skipped, with a message, when the catalogues are absent; when
    every body was skipped a last line says so (ctest's SKIP_REGULAR_EXPRESSION for e2e tests)."""
    args = parse_args()
    check = Check()
    skipped = 0
    for body in bodies:
        missing = getattr(body, "needs_mindcluster", False) and mindcluster_missing(args.source_dir)
        if missing:
            print("skipped: %s: %s" % (body.__name__, missing), flush=True)
            skipped += 1
            continue
        work = tempdir()
        try:
            body(args, check, work)
        finally:
            stop_all()
            cleanup(work)
    if skipped:
        print("%d of %d cases skipped" % (skipped, len(bodies)), flush=True)
        if skipped == len(bodies):
            print("every case of this test was skipped", flush=True)
    check.done()
