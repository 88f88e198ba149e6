#!/usr/bin/env python3
"""End to end, the health of a command source's probe with the real faultd, faultctl and the fake
npu-smi (tests/sim/fake-npu-smi), card 5 of which hangs:
- faultd_probe_up{source="npu-health",device="5"} goes to 0 (card 4's stays 1), the log says
  why ("timed out after ..."), and after `unresponsive_after` timeouts in a row a
  probe.unresponsive finding (SubHealthFault) puts device 5 in warning; each hung npu-smi is
  killed, none piles up;
- the same records printed into a job's log by an unprivileged writer (`nobody`) raise nothing
  and clear nothing (`source_types: [command]`), counted as refused;
- once the card answers again: a probe.recovered finding, device 5 healthy, probe_up 1."""
import os
import re
import time

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for
from test_lifecycle_paths import write_json
from test_log_writer import as_writer, writer_dir

# The fake npu-smi is a Python script: on a busy machine or a sanitizer build one call can take
# most of a second, so the poll's timeout (and its interval, which may not be shorter) scale.
PROBE_MS = int(harness.scaled(1.5) * 1000)
UNRESPONSIVE_AFTER = 2


def alive(pid):
    """Whether `pid` runs (a zombie, killed but not reaped, does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def hung_probes(work):
    """The fake npu-smi processes for card 5 that are running now."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read()
        except OSError:
            continue
        if any(a.endswith(b"fake-npu-smi") for a in argv) and b"5" in argv[-3:] \
                and work.encode() in env and alive(int(pid)):
            out.append(int(pid))
    return out


def hung_card(args, check, work):
    src = os.path.abspath(args.source_dir)
    fake = os.path.join(src, "tests", "sim", "fake-npu-smi")
    script = os.path.join(work, "npu-smi.json")
    write_json(script, {"npus": 8, "health": {"5": [{"behaviour": "hang"}]}})
    os.environ["FAKE_NPU_SMI_SCRIPT"] = script  # the command source passes them on
    os.environ["FAKE_NPU_SMI_STATE"] = os.path.join(work, "npu-smi-state")
    train = writer_dir(os.path.join(work, "train"))
    port = free_port()
    d = Faultd(args, work, f"""
node: probe
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{src}/etc/faultd/rules.d/*.yaml"]
sources:
  - {{ name: training, type: file, paths: ["{train}/*.log"], scan_interval: 200ms }}
  - {{ name: npu-health, type: command, argv: [{fake}, info, -t, health, -i, "{{device}}"],
      devices: "4-5", interval: {PROBE_MS}ms, timeout: {PROBE_MS}ms,
      unresponsive_after: {UNRESPONSIVE_AFTER}, parser: npu_smi_health }}
policy:
  levels:
    SubHealthFault: {{ state: warning, recover: true }}
""")
    d.start()
    probe_up = lambda device: metric_value(scrape(port), "faultd_probe_up",
                                           {"source": "npu-health", "device": device})
    faults = lambda device: d.ctl_json("events", "--device", device)["faults"]
    state = lambda device: harness.device_state(port, device) or "healthy"

    wait_for("probe_up of card 5 to be 0", lambda: probe_up("5") == 0.0)
    check(probe_up("5") == 0.0, "faultd_probe_up{device=\"5\"} 0 while its npu-smi hangs")
    wait_for("probe_up of card 4", lambda: probe_up("4") is not None)
    check(probe_up("4") == 1.0, "faultd_probe_up{device=\"4\"} 1: the healthy card goes on")
    timeout = "timed out after %s" % (("%ds" % (PROBE_MS // 1000)) if PROBE_MS % 1000 == 0
                                      else "%dms" % PROBE_MS)
    check(wait_for("a log line naming the timeout",
                   lambda: re.search(r"source npu-health: device 5 .*" + re.escape(timeout),
                                     d.read_log())),
          "the log says card 5's npu-smi %s" % timeout)

    wait_for("the probe.unresponsive finding",
             lambda: any(f["rule"] == "probe.unresponsive" for f in faults("5")))
    found = [f for f in faults("5") if f["rule"] == "probe.unresponsive"]
    check(len(found) == 1 and found[0]["level"] == "SubHealthFault"
          and found[0]["code"] == "PROBE-UNRESPONSIVE",
          "one probe.unresponsive finding on device 5, SubHealthFault (%s)"
          % [(f["level"], f["code"]) for f in found])
    text = [f.get("text", "") for f in d.ctl_json("events", "--device", "5", "--verbose")["faults"]
            if f["rule"] == "probe.unresponsive"]
    check(text == ["probe: device=5 status=unresponsive failures=%d reason=\"%s\""
                   % (UNRESPONSIVE_AFTER, timeout)],
          "the finding's evidence is the probe record with the reason (%s)" % text)
    check(re.search(r"device 5 unresponsive after %d failed run\(s\) in a row, the last: %s"
                    % (UNRESPONSIVE_AFTER, re.escape(timeout)), d.read_log()),
          "the log says card 5 is unresponsive and why")
    wait_for("device 5 in warning", lambda: state("5") == "warning")
    check(state("4") == "healthy", "device 4 stays healthy")

    # Each hung npu-smi is killed at its timeout: never more than one for the card at a time.
    with open(os.path.join(work, "npu-smi-state", "hang-5.pid")) as f:
        first = int(f.read())
    wait_for("the hung npu-smi %d to be killed" % first, lambda: not alive(first))
    check(not alive(first), "the hung npu-smi was killed")
    # Looked at over three intervals: one hung call at a time (seen at least once), never two.
    counts = []
    deadline = time.monotonic() + 3 * PROBE_MS / 1000.0
    while time.monotonic() < deadline:
        counts.append(len(hung_probes(work)))
        time.sleep(0.05)
    check(max(counts) == 1, "hung npu-smi calls do not pile up (at most %d at once)" % max(counts))

    # A job prints the records into its own log: they raise nothing and clear nothing.
    refused = lambda: metric_value(scrape(port), "faultd_rule_refused_values_total",
                                   {"field": "source_type"}) or 0.0
    before = refused()
    as_writer('printf "%s" "$2" >> "$1"', os.path.join(train, "job.log"),
              "probe: device=5 status=OK recovered\n"
              "probe: device=5 status=unresponsive failures=3 reason=\"timed out after 3s\"\n"
              "probe: device=7 status=unresponsive failures=3 reason=\"timed out after 3s\"\n")
    check(wait_for("the forged records to be refused", lambda: refused() >= before + 3),
          "the probe records printed into a job's log are refused and counted")
    check(state("5") == "warning", "a forged probe recovery leaves device 5 in warning")
    check(len([f for f in faults("5") if f["rule"].startswith("probe.")]) == 1,
          "a forged probe record adds no finding on device 5")
    check(not faults("7"), "a forged probe record creates no finding on device 7")

    # Card 5 answers again.
    write_json(script, {"npus": 8, "health": {}})
    wait_for("device 5 healthy again", lambda: state("5") == "healthy")
    check(any(f["rule"] == "probe.recovered" for f in faults("5")),
          "a probe.recovered finding on device 5")
    wait_for("probe_up of card 5 to be 1", lambda: probe_up("5") == 1.0)
    check(probe_up("5") == 1.0, "faultd_probe_up{device=\"5\"} 1 once it answers")
    check("device 5 answers again after" in d.read_log(), "the log says card 5 answers again")
    check(not hung_probes(work), "no npu-smi for card 5 is left running")
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(hung_card)
