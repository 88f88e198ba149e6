"""What every shipped faultd hook recipe shares: reading faultd's hook contract (FAULTD_*
environment, the fault as JSON on stdin), dry run, exit statuses, running tools by argv, and
talking to Kubernetes through kubectl.

Lifecycle: a recipe builds one `Hook` at start (it reads stdin once), does its work through
`hook.run()` / `Kube`, and ends through `hook.main()`, which turns `HookError` into a message on
stderr and the exit status faultd understands: 0 done, 75 try again later (faultd retries with
backoff), anything else failed. Single-threaded; one process per hook run.

Safety rules the recipes rely on: tools run by argv, never through a shell; nothing from the log
line (the fault's `text`, `evidence`) is ever passed to a tool or evaluated; the device id is
checked against faultd's own pattern again here, because a hook can be run by hand too; with
FAULTD_DRY_RUN=1 a recipe may read (kubectl get, scontrol show) but every change is printed
instead of done.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_RETRY = 75  # EX_TEMPFAIL: faultd retries with backoff up to the action's `retries`

# faultd's own device id pattern (daemon/core/types.hpp): the first character a letter or digit,
# so that no id reads as an option (-sc) or a directory (., ..); matched whole (fullmatch: "$"
# would let a trailing newline through).
DEVICE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
# Action names that undo what the recipe did for the device (see docs/hooks.md).
RELEASE_ACTIONS = ("clear", "release")
STDIN_LIMIT = 1 << 20
DEFAULT_KUBECONFIG = "/etc/faultd/kubeconfig"
TOOL_TIMEOUT = 60.0


class HookError(Exception):
    """Ends the hook with `status` and `message` on stderr."""

    def __init__(self, message, status=EXIT_FAILED):
        super().__init__(message)
        self.status = status


def retry(message):
    return HookError(message, EXIT_RETRY)


def _read_fault():
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    data = sys.stdin.buffer.read(STDIN_LIMIT)
    while sys.stdin.buffer.read(65536):  # drain the rest so faultd's writer never blocks
        pass
    if not data.strip():
        return {}
    try:
        fault = json.loads(data.decode("utf-8", "replace"))
    except ValueError as e:
        raise HookError("the fault on stdin is not JSON: %s" % e)
    if not isinstance(fault, dict):
        raise HookError("the fault on stdin is not a JSON object")
    return fault


class Hook:
    """One run of a recipe: faultd's inputs, the mode (apply or release) and the dry-run switch."""

    def __init__(self, name, parser=None, argv=None, need_device=True):
        self.name = name
        parser = parser or argparse.ArgumentParser(prog=name)
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--release", dest="mode", action="store_const", const="release",
                           help="undo for the device (default when FAULTD_ACTION is %s)"
                           % " or ".join(RELEASE_ACTIONS))
        group.add_argument("--apply", dest="mode", action="store_const", const="apply",
                           help="act for the device whatever the action's name")
        self.args = parser.parse_args(argv)
        env = os.environ
        self.action = env.get("FAULTD_ACTION", "")
        self.node = env.get("FAULTD_NODE", "")
        self.device = env.get("FAULTD_DEVICE", "")
        self.rule = env.get("FAULTD_RULE", "")
        self.code = env.get("FAULTD_CODE", "")
        self.level = env.get("FAULTD_LEVEL", "")
        self.fault_id = env.get("FAULTD_FAULT_ID", "")
        self.dry_run = env.get("FAULTD_DRY_RUN", "0") == "1"
        self.need_device = need_device
        self.fault = {}
        self.releasing = (self.args.mode == "release"
                          or (self.args.mode is None and self.action in RELEASE_ACTIONS))

    def log(self, message):
        print("%s: %s" % (self.name, message), file=sys.stderr, flush=True)

    def say(self, message):
        """The one-line outcome, kept in faultd's action journal (stdout)."""
        print(message, flush=True)

    def check_inputs(self):
        self.fault = _read_fault()
        if self.need_device and not DEVICE_ID.fullmatch(self.device):
            raise HookError("FAULTD_DEVICE %r is not a valid device id" % self.device)
        if not self.node:
            raise HookError("FAULTD_NODE is empty: faultd sets it to the node name")

    def run(self, argv, changes=True, stdin=None, timeout=TOOL_TIMEOUT):
        """Runs `argv` and returns (status, stdout, stderr). A change is only printed in dry run
        (status None). A tool that is missing or hangs is a HookError."""
        if changes and self.dry_run:
            self.say("dry run: would run: " + shlex.join(argv))
            if stdin is not None:
                self.say("dry run: with stdin: " + stdin)
            return None, "", ""
        try:
            p = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                               timeout=timeout, stdin=None if stdin is not None else
                               subprocess.DEVNULL)
        except FileNotFoundError:
            raise HookError("%s is not installed (not found in PATH=%s)"
                            % (argv[0], os.environ.get("PATH", "")))
        except subprocess.TimeoutExpired:
            raise retry("%s did not finish within %ds" % (argv[0], timeout))
        return p.returncode, p.stdout, p.stderr

    def main(self, body):
        """Runs body(self) and exits with the status faultd understands."""
        try:
            self.check_inputs()
            body(self)
        except HookError as e:
            self.log(str(e))
            sys.exit(e.status)
        sys.exit(EXIT_DONE)


def add_kube_options(parser):
    parser.add_argument("--kubeconfig", default=DEFAULT_KUBECONFIG,
                        help="kubectl's kubeconfig (default %(default)s; ignored when absent)")


# kubectl's messages for errors that a later attempt will not fix.
_PERMANENT = ("Forbidden", "Unauthorized", "is invalid", "BadRequest", "unknown flag",
              "error: unable to read", "UnsupportedMediaType")


class Kube:
    """kubectl by argv. Reads run in dry run too; writes are printed instead."""

    def __init__(self, hook, kubeconfig):
        self.hook = hook
        self.base = ["kubectl"]
        if kubeconfig and os.path.exists(kubeconfig):
            self.base += ["--kubeconfig", kubeconfig]

    def _call(self, args, changes, stdin=None):
        status, out, err = self.hook.run(self.base + args, changes=changes, stdin=stdin)
        if status is None or status == 0:
            return out
        err = err.strip()
        if "NotFound" in err or "not found" in err:
            raise _NotFound(err)
        if any(p in err for p in _PERMANENT):
            raise HookError("kubectl %s failed: %s" % (args[0], err))
        # Conflicts (someone else changed the object since we read it), timeouts, connection
        # errors, 5xx: a later attempt re-reads and can succeed.
        raise retry("kubectl %s failed (will retry): %s" % (args[0], err))

    def get(self, kind, name, namespace=None):
        """The object as a dict, or None when it does not exist."""
        args = ["get", kind, name, "-o", "json"]
        if namespace:
            args += ["-n", namespace]
        try:
            out = self._call(args, changes=False)
        except _NotFound:
            return None
        try:
            return json.loads(out)
        except ValueError:
            raise retry("kubectl get %s %s printed no JSON" % (kind, name))

    def merge_patch(self, kind, name, patch, namespace=None):
        """A JSON merge patch. Put metadata.resourceVersion in `patch` to make it conditional:
        the API server refuses it (Conflict → retry) if the object changed since it was read."""
        args = ["patch", kind, name, "--type", "merge", "-p", json.dumps(patch, sort_keys=True)]
        if namespace:
            args += ["-n", namespace]
        try:
            self._call(args, changes=True)
        except _NotFound as e:
            raise retry("kubectl patch %s %s: %s" % (kind, name, e))

    def create(self, obj):
        """Creates `obj`; AlreadyExists (another run won the race) is a retry that re-reads."""
        try:
            self._call(["create", "-f", "-"], changes=True, stdin=json.dumps(obj, sort_keys=True))
        except _NotFound as e:  # the namespace is missing
            raise HookError("kubectl create: %s" % e)

    def call(self, args, changes=True):
        try:
            return self._call(args, changes=changes)
        except _NotFound as e:
            raise HookError("kubectl %s: %s" % (args[0], e))


class _NotFound(Exception):
    pass


def sorted_devices(devices):
    """Device ids in a stable order: numerically when they are all numbers."""
    devices = set(d for d in devices if d)
    if all(d.isdigit() for d in devices):
        return sorted(devices, key=int)
    return sorted(devices)


def read_key_values(path):
    """A `key = value` file (# comments, blank lines). Never sourced or evaluated."""
    values = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise HookError("%s:%d: expected `key = value`" % (path, number))
            values[key.strip()] = value.strip()
    return values
