#!/usr/bin/env python3
"""End to end, with the real faultd and faultctl and the real FaultDiag knowledge base: a
device-OS event line matched by a kg-config.json entry is journaled with the entry's id, cause
and suggestion, which `faultctl events` shows (table and JSON) and `--replay` prints; the
finding is a diagnosis, recorded without changing the device's state; the multi-line entry
matches a pair of lines that arrive in separate reads; `--check-config` reports
how many entries became rules and why the others were skipped. With the demo configuration and
every entry of the knowledge base loaded, an idle node exposes at most 100 series besides each
source's, each device's and each pack rule's own: the entries' match counters appear at their
first match. The catalogues are read from the shared directory
beside the project; without it the test is skipped, saying so."""
import json
import re
import os
import subprocess

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

EVENT = ("[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811]"
         "[RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x80818c00.\n")
NOISE = ("[INFO] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811]"
         "[RunSpecialProcess][tid:4717] heartbeat ok\n")


@harness.needs_mindcluster
def test_faultdiag_annotations(args, check, work):
    logs = os.path.join(work, "logs")
    dev_dir = os.path.join(logs, "dev-os-2", "debug", "device-os")
    os.makedirs(dev_dir)
    dev_log = os.path.join(dev_dir, "device-os_20231031164139951.log")
    open(dev_log, "w").close()
    data = harness.mindcluster_dir(args.source_dir)
    port = free_port()
    config = f"""
node: e2e-node
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: []
catalogs:
  mindcluster_fault_codes: {data}/faultCode.json
  faultdiag_knowledge:
    path: {data}/kg-config.json
    source_classes: {{ NPU_OS: [device-os], PyMotor_vLLM_Log: [device-os] }}
sources:
  - {{ name: device-os, type: file, paths: ["{logs}/dev-os-*/debug/device-os/*.log"],
      path_fields: 'dev-os-(?P<device>\\d+)/', start_at: end }}
"""
    d = Faultd(args, work, config)

    checked = subprocess.run([os.path.abspath(args.faultd), "--check-config", "--config", d.config],
                             capture_output=True, text=True, timeout=60)
    check(checked.returncode == 0, "check-config accepts the real catalogues: " + checked.stderr)
    check("faultdiag: " in checked.stdout and "1050 entries: " in checked.stdout
          and "log class not mapped to a source" in checked.stdout,
          "check-config reports the FaultDiag import: " + checked.stdout)

    d.start()
    with open(dev_log, "a") as f:
        f.write(NOISE + EVENT + NOISE)
    rule = {"rule": "faultdiag.0x80818c00"}
    wait_for("the FaultDiag rule to match",
             lambda: metric_value(scrape(port), "faultd_rule_matches_total", rule) == 1.0)
    faults = []
    wait_for("the finding in the journal",
             lambda: faults.extend(d.ctl_json("events")["faults"]) or len(faults) > 0)
    check(len(faults) == 1, "one finding: %s" % faults)
    f = faults[0]
    check(f["rule"] == "faultdiag.0x80818c00" and f["device"] == "2" and f["code"] == "80818C00",
          "rule, device from the path and code from the entry id: %s" % f)
    check(f["level"] == "NotHandleFault", "a diagnosis is recorded only: %s" % f["level"])
    a = f.get("annotations", {})
    check(a.get("faultdiag_id") == "0x80818C00", "the entry id is kept: %s" % a)
    check("precision-sensitive" in a.get("cause", ""), "the English cause is kept: %s" % a)
    check(a.get("suggestion", "") != "" and a.get("description", "") != "",
          "suggestion and description are kept")
    check("recovery" not in f, "recovery is written only when set")
    table = d.ctl("events")
    check(table.returncode == 0 and "cause: " in table.stdout and "suggestion: " in table.stdout,
          "faultctl events shows the annotations: " + table.stdout)
    state = metric_value(scrape(port), "faultd_device_state", {"device": "2", "state": "warning"})
    check(state in (None, 0.0), "the device's state does not change")

    # The multi-line entry: its two lines arrive in separate reads, and still make one finding.
    lines = lambda: metric_value(scrape(port), "faultd_source_lines_total", {"source": "device-os"})
    wait_for("the first lines to be read", lambda: lines() == 3.0)
    with open(dev_log, "a") as f:
        f.write("E send request to 10.0.0.2:8080 failed: connection refused\n")
    wait_for("the first line of the pair to be read", lambda: lines() == 4.0)
    with open(dev_log, "a") as f:
        f.write("E Initialize mooncake failed: metadata_server http://x P2PHANDSHAKE. Check mooncake "
                "config and network\n")
    wait_for("the multi-line rule to match across reads",
             lambda: metric_value(scrape(port), "faultd_rule_matches_total",
                                  {"rule": "faultdiag.aisw_vllm_ascend_kv_pool_mooncake_002"}) == 1.0)
    check(d.stop() == 0, "faultd stops cleanly")

    replay = subprocess.run([os.path.abspath(args.faultd), "--replay", "--config", d.config, dev_log],
                            capture_output=True, text=True, timeout=60)
    check(replay.returncode == 0 and '"faultdiag_id":"0x80818C00"' in replay.stdout.replace(" ", ""),
          "--replay prints the annotations: " + replay.stdout)


# Series one node may expose at idle with everything loaded (a fleet of 10,000 nodes pays for
# each of them 10,000 times), besides a fixed set per configured source and per inventory device
# and one counter per pack rule a configured source can feed (the packs a site loads are its
# choice; each rule's counter is one series).
IDLE_SERIES_BUDGET = 100
# State, repair, acknowledgement and info (8), and a hang source's activity (utilisation,
# memory in use, holding processes: 3).
PER_DEVICE_SERIES_BUDGET = 11
# Each source that probes devices (the demo's npu-health and npu-hang) has a probe_up series per
# device, and one for its node-wide runs (device "").
PROBING_SOURCES = 2


def knowledge_classes(path):
    """Every log class the knowledge base names (its entries' source_file, "A | B" lists)."""
    with open(path) as f:
        entries = json.load(f)["knowledge-repository"].values()
    return sorted({c.strip() for e in entries for c in str(e.get("source_file", "")).split("|")
                   if c.strip()})


@harness.needs_mindcluster
def test_idle_series_budget(args, check, work):
    """The demo configuration plus the whole knowledge base, every class mapped to a source: at
    idle, the packs' rules are counted from 0 and the knowledge base's entries have no series
    until they match."""
    data = harness.mindcluster_dir(args.source_dir)
    source_dir = os.path.abspath(args.source_dir)
    logs = os.path.join(work, "logs")
    for sub in ["plog", "training"] + ["device-%d" % i for i in range(8)]:
        os.makedirs(os.path.join(logs, sub))
    with open(os.path.join(source_dir, "etc", "demo", "faultd.yaml")) as f:
        config = f.read()
    config = (config.replace("../../", source_dir + "/").replace("@DEMO@", work)
              .replace("state_dir: state", "state_dir: " + os.path.join(work, "state"))
              .replace("control.sock", os.path.join(work, "control.sock"))
              .replace('"logs/', '"%s/' % logs)
              .replace("127.0.0.1:9847", "127.0.0.1:%d" % free_port()))
    classes = knowledge_classes(os.path.join(data, "kg-config.json"))
    config = config.replace("catalogs:\n", "catalogs:\n  faultdiag_knowledge:\n    path: %s\n"
                            "    source_classes: { %s }\n" % (
                                os.path.join(data, "kg-config.json"),
                                ", ".join('"%s": [plog]' % c for c in classes)))
    port = int(config.split("127.0.0.1:")[1].split('"')[0])
    # The stand-in npu-smi reports every device OK: the node is idle.
    script = os.path.join(work, "npu-smi.json")
    with open(script, "w") as f:
        json.dump({"npus": 8}, f)
    os.environ.update(FAKE_NPU_SMI_SCRIPT=script, FAKE_NPU_SMI_STATE=script + ".state")
    try:
        d = Faultd(args, work, config)
        d.start()
    finally:
        for name in ("FAKE_NPU_SMI_SCRIPT", "FAKE_NPU_SMI_STATE"):
            os.environ.pop(name)
    wait_for("a health poll", lambda: (metric_value(
        scrape(port), "faultd_source_bytes_total", {"source": "npu-health"}) or 0) > 0)
    wait_for("the inventory", lambda: metric_value(
        scrape(port), "faultd_devices_present", {}) == 8)
    text = scrape(port)
    series = [line for line in text.splitlines() if line and not line.startswith("#")]
    loaded = metric_value(text, "faultd_rules_loaded", {})
    rules = [line for line in series if line.startswith("faultd_rule_matches_total{")]
    # Each configured source has its own fixed set (lines, bytes, lag, files, each error and
    # rotation kind): counted apart, as the budget is per node plus so many per source.
    per_source = [line for line in series if line.startswith("faultd_source_")]
    # Each inventory device has its own fixed set too (state, info, repair, acknowledgement).
    devices = int(metric_value(text, "faultd_devices_present", {}) or 0)
    probes = [line for line in series if line.startswith("faultd_probe_up{")]
    per_device = [line for line in series if re.search(r'[{,]device="[^"]*"', line)
                  and line not in probes]
    print("# idle: %d series (%d faultd_rule_matches_total, %d of the sources, %d of %d devices) "
          "with %d rules loaded, %d bytes" % (len(series), len(rules), len(per_source),
                                             len(per_device), devices, loaded, len(text)),
          flush=True)
    check(len(per_device) <= PER_DEVICE_SERIES_BUDGET * devices,
          "%d series name a device (at most %d per device)"
          % (len(per_device), PER_DEVICE_SERIES_BUDGET))
    check(loaded is not None and loaded > 1000, "the knowledge base is loaded (%s rules)" % loaded)
    check(not [r for r in rules if 'rule="faultdiag.' in r],
          "no knowledge-base entry has a series before its first match")
    check(any('rule="ascend.asd.feature-abnormal"} 0' in r for r in rules),
          "the packs' rules are counted from 0")
    check(not [r for r in rules if 'rule="nvidia.xid.' in r],
          "no counter at 0 for the kernel log's rules: the demo reads no kernel log")
    check(len(probes) <= PROBING_SOURCES * (devices + 1),
          "%d probe_up series (at most one per probing source and device)" % len(probes))
    rest = len(series) - len(per_source) - len(per_device) - len(rules) - len(probes)
    check(rest <= IDLE_SERIES_BUDGET, "%d series at idle besides the sources', the devices' and "
          "the rules' (at most %d)" % (rest, IDLE_SERIES_BUDGET))
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(test_faultdiag_annotations, test_idle_series_budget)
