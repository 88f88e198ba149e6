#!/usr/bin/env python3
"""End to end, the fault lifecycle's device paths with the real faultd, faultctl and hooks:
- recovery: a `command` source running tests/sim/fake-npu-smi flips device 3 to Warning/80818C06
  (SubHealthFault: warning only) and back: warning, then healthy; device 4 goes to
  Warning/80818C00 (SeparateNPU: isolated) and back: it stays isolated;
- escalation with the real MindCluster catalogues: 80C98000 (RestartRequestCodes, record only)
  occurring twice within its FaultFrequency window (Times 2) becomes ManuallySeparateNPU and
  runs the isolate hook; the catalogue gives findings their level (these two read the
  catalogues from the shared directory beside the project and are skipped, saying so, without
  it);
- diagnosis verdicts: the diagnose hook (after: isolate) exiting 0 releases the device with the
  verdict in its history, 1 keeps it isolated and marked for repair, 2 records no verdict;
- faultctl ack / history / incidents / budget, text and -o json, and their exit codes."""
import json
import os

import harness
from harness import wait_for
from lifecycle_common import Node, write_script

BUDGET = "  max_isolations: { count: 10, window: 1h }\n"
# The fake npu-smi is a Python script: on a busy machine or a sanitizer build one call can take
# most of a second, so the poll's timeout (and its interval, which may not be shorter) scale.
PROBE_MS = int(harness.scaled(1.0) * 1000)
EVENT = ("Warning   Occur   pod/ascend-device-plugin-daemonset-910-dlpmv   device fault, "
         "nodeName:e2e-node, assertion:%s, cardID:%d, deviceID:0, faultCodes:%s, "
         "faultLevelName:RestartRequest, alarmRaisedTime:2023-11-21 05:36:53\n")


def catalogs(args):
    data = harness.mindcluster_dir(args.source_dir)
    return ("catalogs:\n  mindcluster_fault_codes: %s/faultCode.json\n"
            "  mindcluster_customization: %s/faultCustomization.json\n" % (data, data))


def pack(args, name):
    return '"%s"' % os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d", name)


def write_json(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f)
    os.replace(path + ".tmp", path)


@harness.needs_mindcluster
def recovery_and_escalation(args, check, work):
    fake = os.path.join(os.path.abspath(args.source_dir), "tests", "sim", "fake-npu-smi")
    script = os.path.join(work, "npu-smi.json")
    warn = lambda code: [{"status": "Warning", "codes": [code],
                          "info": ["node type=SoC, sensor type=Check Sensor, event state=check fail"]}]
    write_json(script, {"npus": 8, "health": {"3": warn("80818C06"), "4": warn("80818C00")}})
    os.environ["FAKE_NPU_SMI_SCRIPT"] = script
    os.environ["FAKE_NPU_SMI_STATE"] = os.path.join(work, "npu-smi-state")
    sources = ('  - { name: npu-health, type: command, argv: [%s, info, -t, health, -i, "{device}"],'
               ' devices: "3-4", interval: %dms, timeout: %dms, parser: npu_smi_health }\n'
               % (fake, PROBE_MS, PROBE_MS))
    policy = BUDGET + ("  levels:\n    SubHealthFault: { state: warning, recover: true }\n"
                       "    SeparateNPU: { state: warning, actions: [isolate], recover: true }\n")
    n = Node(args, work, policy=policy, sources=sources, catalogs=catalogs(args),
             include=pack(args, "ascend-npu-health.yaml")).start()

    # Levels from the real faultCode.json (the npu-smi rule names no level).
    n.wait_state("3", "warning")
    n.wait_state("4", "isolated")
    f3 = [f for f in n.faults("3") if f["rule"] == "ascend.npu-smi.health-fault"]
    f4 = [f for f in n.faults("4") if f["rule"] == "ascend.npu-smi.health-fault"]
    check(len(f3) == 1 and f3[0]["code"] == "80818C06" and f3[0]["level"] == "SubHealthFault",
          "80818C06 is SubHealthFault on the finding (%s)" % [(f["code"], f["level"]) for f in f3])
    check(len(f4) == 1 and f4[0]["code"] == "80818C00" and f4[0]["level"] == "SeparateNPU",
          "80818C00 is SeparateNPU on the finding (%s)" % [(f["code"], f["level"]) for f in f4])
    check([r[1] for r in n.hook_runs()] == ["4"], "the isolate hook ran for device 4 only")

    # Back to OK: the warning device recovers, the isolated one does not.
    write_json(script, {"npus": 8, "health": {}})
    n.wait_state("3", "healthy")
    wait_for("device 4's recovery finding",
             lambda: any(f["rule"] == "ascend.npu-smi.health-recovered" for f in n.faults("4")))
    check(n.state("4") == "isolated", "an isolated device is not released by a recovery")
    h3 = n.d.ctl_json("history", "3")["transitions"]
    check([(t["from"], t["to"]) for t in h3][:2] in ([("warning", "healthy"), ("healthy", "warning")],
                                                     [("healthy", "warning"), ("warning", "healthy")]),
          "device 3's history: healthy -> warning -> healthy (%s)"
          % [(t["from"], t["to"]) for t in h3])
    check(any("recovered" in t["reason"] for t in h3), "the recovery is the reason")
    check(n.metric("faultd_device_state", {"device": "3", "state": "healthy"}) == 1.0,
          "device 3 healthy on /metrics")
    check(not [i for i in n.incidents("--device", "3")], "device 3 has no open incident")

    # Escalation: 80C98000 is RestartRequest (record only); twice within 24 h → ManuallySeparateNPU.
    n.write(EVENT % ("Occur", 1, "80C98000"))
    wait_for("the first 80C98000",
             lambda: any(f["code"] == "80C98000" for f in n.faults("1")))
    first = [f for f in n.faults("1") if f["code"] == "80C98000"]
    check(first[0]["level"] == "RestartRequest", "80C98000 is RestartRequest on the finding")
    check(n.state("1") == "healthy", "a RestartRequest fault changes no device state")
    n.write(EVENT % ("Recovery", 1, "80C98000"))
    wait_for("the recovery closes the incident", lambda: not n.incidents("--device", "1"))
    n.write(EVENT % ("Occur", 1, "80C98000"))
    n.wait_state("1", "isolated")
    check([r[1] for r in n.hook_runs()] == ["4", "1"], "the isolate hook ran for device 1")
    status = n.device("1")
    check(status["level"] == "ManuallySeparateNPU",
          "device 1's incident is ManuallySeparateNPU (%s)" % status["level"])
    inc = n.incidents("--device", "1")
    check(len(inc) == 1 and "2 occurrences" in inc[0]["escalation"]
          and inc[0]["base_level"] == "RestartRequest",
          "the open incident says why it was raised: %s" % inc)
    check(n.metric("faultd_escalations_total", {"level": "ManuallySeparateNPU"}) == 1.0,
          "faultd_escalations_total counts it")
    check(n.metric("faultd_faults_total", {"device": "1", "level": "RestartRequest",
                                           "code": "80C98000"}) == 2.0,
          "both occurrences counted at their catalogue level")


DIAGNOSE = """#!/bin/sh
# Exits with the code the test left for this device.
echo "stress test of device $FAULTD_DEVICE"
exit "$(cat "$0.exit-$FAULTD_DEVICE")"
"""


def diagnosis_and_faultctl(args, check, work):
    diag = write_script(os.path.join(work, "diagnose"), DIAGNOSE)
    for device, code in (("1", 0), ("2", 1), ("3", 2)):
        with open(diag + ".exit-" + device, "w") as f:
            f.write(str(code))
    actions = "  diagnose: { argv: [%s], timeout: 30s, after: isolate }\n" % diag
    policy = BUDGET + "  storm: { min_devices: 8 }\n  diagnosis: { on_pass: release }\n"
    n = Node(args, work, policy=policy, actions=actions).start()
    for device in ("1", "2", "3"):
        n.write("XFAULT dev=%s\n" % device)
    n.wait_metric("3 verdicts", "faultd_diagnosis_verdicts_total", {"verdict": "unavailable"}, 1.0)
    n.wait_metric("the faulty verdict", "faultd_diagnosis_verdicts_total", {"verdict": "faulty"}, 1.0)
    n.wait_metric("the passed verdict", "faultd_diagnosis_verdicts_total", {"verdict": "passed"}, 1.0)

    # exit 0: passed → released, the verdict in the history.
    n.wait_state("1", "healthy")
    h1 = n.d.ctl_json("history", "1")
    reasons = [t["reason"] for t in h1["transitions"]]
    check(any("diagnosis passed" in r for r in reasons), "device 1's history has the verdict: %s"
          % reasons)
    check([t["to"] for t in h1["transitions"]][0] == "healthy", "device 1's last transition: healthy")
    text = n.d.ctl("history", "1")
    check(text.returncode == 0 and "diagnosis passed" in text.stdout and "TIME" in text.stdout,
          "faultctl history (text) shows it")

    # exit 1: faulty → stays isolated, marked for repair.
    n.wait_state("2", "isolated")
    wait_for("device 2 marked for repair", lambda: n.device("2")["repair"])
    check(n.device("2")["verdict"] == "faulty", "status -o json: verdict faulty")
    check(n.metric("faultd_device_repair", {"device": "2"}) == 1.0, "faultd_device_repair{2} = 1")
    check(n.metric("faultd_device_repair", {"device": "1"}) in (None, 0.0), "device 1 not for repair")
    plain = n.d.ctl("status")
    check(plain.returncode == 0 and "repair" in plain.stdout, "faultctl status (text) says repair")

    # exit 2: no verdict, nothing changes.
    n.wait_state("3", "isolated")
    check(n.device("3")["verdict"] == "" and not n.device("3")["repair"], "device 3: no verdict")
    check(n.metric("faultd_device_repair", {"device": "3"}) in (None, 0.0), "device 3 not for repair")

    # ack: the isolated device's incident.
    r = n.d.ctl("ack", "2", "--reason", "RMA ticket 42")
    check(r.returncode == 0 and "acknowledged" in r.stdout, "faultctl ack: %r" % r.stdout)
    check(n.device("2")["acked"] and "RMA ticket 42" in n.device("2")["ack_reason"],
          "status shows the acknowledgement")
    check(n.metric("faultd_device_acknowledged", {"device": "2"}) == 1.0,
          "faultd_device_acknowledged{2} = 1")
    j = n.d.ctl_json("ack", "3", "--reason", "looking")
    check(j["ok"] and j["device"] == "3" and j["fault_id"] > 0, "ack -o json: %s" % j)
    r = n.d.ctl("ack", "1", "--reason", "nothing to ack")
    check(r.returncode == 1 and "no incident" in r.stderr, "ack of a healthy device is refused (1)")
    r = n.d.ctl("-o", "json", "ack", "9", "--reason", "unknown")
    check(r.returncode == 1 and json.loads(r.stdout)["ok"] is False,
          "ack -o json of an unknown device: exit 1 and ok false")

    # incidents: open ones by default, --all adds closed ones, --device filters.
    inc = n.incidents()
    check(sorted(i["device"] for i in inc) == ["2", "3"] or sorted(i["device"] for i in inc)
          == ["1", "2", "3"], "incidents lists the open ones: %s" % [i["device"] for i in inc])
    every = n.incidents("--all")
    check(len(every) >= len(inc) and {"1", "2", "3"} <= {i["device"] for i in every},
          "incidents --all lists every device's incident")
    check(all(i["device"] == "2" for i in n.incidents("--device", "2")), "--device filters")
    text = n.d.ctl("incidents", "--all")
    check(text.returncode == 0 and "test.fault" in text.stdout and "COUNT" in text.stdout,
          "faultctl incidents (text)")
    b = n.d.ctl_json("budget")
    check(b["used"] == 3 and b["remaining"] == 7 and not b["exhausted"], "budget: 3 of 10 used: %s" % b)

    # Usage errors exit 2, refusals 1.
    for argv in (["ack"], ["ack", "2"], ["ack", "--reason", "x"], ["history"], ["history", "1", "2"],
                 ["incidents", "--bogus"], ["budget", "extra"], ["-o", "yaml", "budget"]):
        r = n.d.ctl(*argv)
        check(r.returncode == 2, "faultctl %s exits 2 (got %d)" % (" ".join(argv), r.returncode))
    r = n.d.ctl("history", "bad/device")
    check(r.returncode == 1 and "invalid device" in r.stderr, "history of an invalid id: exit 1")
    r = n.d.ctl("incidents", "--device", "bad/device")
    check(r.returncode == 1, "incidents --device with an invalid id: exit 1")


if __name__ == "__main__":
    harness.main(recovery_and_escalation, diagnosis_and_faultctl)
