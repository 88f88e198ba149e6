"""Shared pieces of the fault-lifecycle end-to-end tests: a daemon on a temp config with one
watched log file and test rules, the fake hooks, and small readers for what faultd shows."""
import os
import stat

from harness import Faultd, free_port, metric_value, scrape, wait_for

# Test rules: one enforcing rule with an explicit level, one in shadow mode, and one that takes
# its code from the line so that the level comes from the MindCluster catalogue.
RULES = """
rules:
  - id: test.fault
    match: { any: ["XFAULT dev="], regex: 'XFAULT dev=(?P<device>\\d+)' }
    device: "{device}"
    fault: { code: 80818C00, level: SeparateNPU }
  - id: test.other
    match: { any: ["XOTHER dev="], regex: 'XOTHER dev=(?P<device>\\d+)' }
    device: "{device}"
    fault: { code: 80818C01, level: SeparateNPU }
  - id: test.shadow
    mode: shadow
    match: { any: ["XSHADOW dev="], regex: 'XSHADOW dev=(?P<device>\\d+)' }
    device: "{device}"
    fault: { code: 80818C02, level: SeparateNPU }
"""


def write_script(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU)
    return path


class Node:
    """A faultd watching `<work>/logs/app.log`, with the record hook for isolate (and optional
    other actions). `hook_runs()` lists "<action> <device> <fault id> <dry run>" lines."""

    def __init__(self, args, work, policy="", actions="", sources="", catalogs="", rules=RULES,
                 include=""):
        self.work = work
        self.logs = os.path.join(work, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.log = os.path.join(self.logs, "app.log")
        open(self.log, "w").close()
        self.runs_file = os.path.join(work, "hook-runs")
        self.port = free_port()
        record = os.path.join(os.path.abspath(args.source_dir), "tests", "support", "hooks", "record.sh")
        config = f"""
node: e2e-node
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{self.port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: [{include}]
{catalogs}
sources:
  - {{ name: app, type: file, paths: ["{self.logs}/*.log"] }}
{sources}
actions:
  isolate: {{ argv: [{record}, {self.runs_file}, "0"], timeout: 30s }}
{actions}
policy:
{policy}
{rules}
"""
        self.d = Faultd(args, work, config)

    def start(self):
        self.d.start()
        return self

    def write(self, text):
        with open(self.log, "a") as f:
            f.write(text)

    def hook_runs(self, action=None):
        if not os.path.exists(self.runs_file):
            return []
        with open(self.runs_file) as f:
            lines = [l.split() for l in f.read().splitlines() if l.strip()]
        return [l for l in lines if action is None or l[0] == action]

    def metric(self, name, labels=None):
        return metric_value(scrape(self.port), name, labels or {})

    def wait_metric(self, what, name, labels, value, timeout=20.0):
        return wait_for(what, lambda: self.metric(name, labels) == value, timeout=timeout)

    def device(self, device):
        for d in self.d.ctl_json("status")["devices"]:
            if d["device"] == device:
                return d
        return None

    def state(self, device):
        d = self.device(device)
        return d["state"] if d else "healthy"

    def wait_state(self, device, state, timeout=20.0):
        return wait_for("device %s %s" % (device, state), lambda: self.state(device) == state,
                        timeout=timeout)

    def incidents(self, *argv):
        return self.d.ctl_json("incidents", *argv)["incidents"]

    def faults(self, device=None):
        argv = ["events"] + (["--device", device] if device else [])
        return self.d.ctl_json(*argv)["faults"]

    def actions(self, device=None):
        argv = ["events"] + (["--device", device] if device else [])
        return self.d.ctl_json(*argv)["actions"]
