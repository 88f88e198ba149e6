#!/usr/bin/env python3
"""End to end, with the real faultd and faultctl and the real FaultDiag knowledge base: a
device-OS event line matched by a kg-config.json entry is journaled with the entry's id, cause
and suggestion, which `faultctl events` shows (table and JSON) and `--replay` prints; the
finding is a diagnosis, recorded without changing the device's state; the multi-line entry
matches a pair of lines that arrive in separate reads; `--check-config` reports
how many entries became rules and why the others were skipped. The catalogues are read from the
shared directory beside the project; without it the test is skipped, saying so."""
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


if __name__ == "__main__":
    harness.main(test_faultdiag_annotations)
