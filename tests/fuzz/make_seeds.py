#!/usr/bin/env python3
"""Writes the seed corpora in corpus/<target>/ from the project's own material: the golden
cases' logs (fuzz_scan), the shipped rule packs (fuzz_rules), the shipped and demo configs
(fuzz_config), the demo MindCluster catalogue (fuzz_catalog), and Alertmanager payloads and
control requests as the tests send them. Re-run after adding golden cases or configs; inputs
kept from fuzzing (crash-*, regress-*) are left alone. Seeds are named seed-*."""
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MAX = 65536  # the -max_len the fuzz tests run with


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data[:MAX])


def clear_seeds():
    for path in glob.glob(os.path.join(HERE, "corpus", "*", "seed-*")):
        os.remove(path)


def scan_seeds():
    for case in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "*", "input.log"))):
        name = os.path.basename(os.path.dirname(case))
        with open(case, "rb") as f:
            data = f.read()
        # First line: the device a path_fields regex gave (none, a good one, a hostile one).
        write("scan", name, b"\n" + data)
        write("scan", name + "-pathdev", b"3\n" + data)
    write("scan", "hostile-device",
          b"../../x\n[ERROR] accuracy sensitivity feature abnormal device_id=0;rm -rf /\n")


def rules_seeds():
    for pack in sorted(glob.glob(os.path.join(ROOT, "etc", "faultd", "rules.d", "*.yaml"))):
        with open(pack, "rb") as f:
            write("rules", os.path.basename(pack), f.read())


def config_seeds():
    # The fuzz target puts the shipped packs in rules.d/ and a catalogue in faultCode.json
    # beside the config it loads.
    sources = [os.path.join(ROOT, "etc", "faultd", "faultd.yaml"),
               os.path.join(ROOT, "etc", "demo", "faultd.yaml")]
    for src in sources:
        with open(src) as f:
            text = f.read()
        text = re.sub(r'include: \[[^\]]*\]', 'include: ["rules.d/*.yaml"]', text)
        text = re.sub(r'mindcluster_fault_codes: \S+', 'mindcluster_fault_codes: faultCode.json',
                      text)
        rel = os.path.relpath(src, ROOT).replace(os.sep, "-")
        write("config", rel, text)
        # The same without comments: more of the fuzzer's length budget goes to structure.
        bare = "\n".join(l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#"))
        write("config", rel + "-bare", bare + "\n")


def catalog_seeds():
    with open(os.path.join(ROOT, "etc", "demo", "faultCode.json"), "rb") as f:
        write("catalog", "demo-faultCode.json", f.read())
    write("catalog", "small.json", json.dumps(
        {"NotHandleFaultCodes": ["80E18402"], "SeparateNPUCodes": ["80818C00", "0x80C98000"]}))


def payload_seeds():
    alert = {"status": "firing",
             "labels": {"alertname": "NpuFeatureAbnormal", "device": "3",
                        "faultd_action": "isolate", "node": "node-17"},
             "annotations": {"summary": "feature abnormal"},
             "startsAt": "2024-05-01T10:00:00Z", "endsAt": "0001-01-01T00:00:00Z",
             "generatorURL": "http://prometheus:9090/graph", "fingerprint": "5d2f1e4a9b7c3e01"}
    batch = {"receiver": "faultd", "status": "firing", "alerts": [alert],
             "groupLabels": {"alertname": "NpuFeatureAbnormal"}, "commonLabels": {},
             "commonAnnotations": {}, "externalURL": "http://alertmanager:9093", "version": "4",
             "groupKey": "{}:{alertname=\"NpuFeatureAbnormal\"}", "truncatedAlerts": 0}
    write("alertmanager_payload", "firing.json", json.dumps(batch))
    resolved = json.loads(json.dumps(batch))
    resolved["status"] = resolved["alerts"][0]["status"] = "resolved"
    resolved["alerts"][0]["labels"]["faultd_action"] = "clear"
    write("alertmanager_payload", "resolved.json", json.dumps(resolved))
    write("alertmanager_payload", "empty.json", '{"version":"4","status":"resolved","alerts":[]}')
    write("alertmanager_payload", "deep.json", '{"version":"4","a":' + "[" * 40 + "]" * 40 + "}")


def control_seeds():
    requests = [{"cmd": "status"}, {"cmd": "events", "device": "3", "since": "30m", "limit": 10},
                {"cmd": "isolate", "device": "3", "reason": "bad HBM"},
                {"cmd": "clear", "device": "npu-0", "reason": "repaired"}, {"cmd": "reload"},
                {"cmd": "boom", "device": "x"}, {"cmd": "isolate", "device": 3, "limit": -1}]
    for i, r in enumerate(requests):
        for peer in range(3):  # root, group member, stranger
            write("control_request", "%d-peer%d" % (i, peer),
                  bytes([peer]) + json.dumps(r).encode() + b"\n")


clear_seeds()
scan_seeds()
rules_seeds()
config_seeds()
catalog_seeds()
payload_seeds()
control_seeds()
