#!/usr/bin/env python3
"""Writes the seed corpora in corpus/<target>/ from the project's own material: the golden
cases' logs (fuzz_scan), the shipped rule packs (fuzz_rules), the shipped and demo configs
(fuzz_config), the demo's code-to-level file (fuzz_catalog), and Alertmanager payloads and
control requests as the tests send them. Re-run after adding golden cases or configs; inputs
kept from fuzzing (crash-*, regress-*) are left alone. Seeds are named seed-*."""
import glob
import json
import tempfile
import sys
import subprocess
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MAX = 65536  # the -max_len the fuzz tests run with


def write(target, name, data, limit=MAX):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data[:limit])


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
    # The fuzz target puts the shipped packs in rules.d/ and a catalogue (the demo's
    # fault-levels.json) in faultCode.json beside the config it loads.
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
    # The project's own files only: MindCluster's catalogue is not in the repository.
    with open(os.path.join(ROOT, "etc", "demo", "fault-levels.json"), "rb") as f:
        write("catalog", "demo-fault-levels.json", f.read())
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
                {"cmd": "boom", "device": "x"}, {"cmd": "isolate", "device": 3, "limit": -1},
                {"cmd": "report", "check": "replica-divergence", "device": "2", "replica": "rank2",
                 "reference": "rank0", "api": "Module.fc.Linear.forward.0",
                 "tensor": "Module.fc.Linear.forward.0.parameters.weight", "mode": "tensor",
                 "data_row": 2, "replicas": 4, "majority": 3, "disagreements": 1,
                 "rows_checked": 1, "metrics": [["Cosine", "0.993999088548"], ["MaxAbsErr", "1.0"]]},
                {"cmd": "report", "check": "replica-divergence", "device": "../2", "level": "x",
                 "metrics": [["detector", 1], "Cosine"]}]
    for i, r in enumerate(requests):
        for peer in range(3):  # root, group member, stranger
            write("control_request", "%d-peer%d" % (i, peer),
                  bytes([peer]) + json.dumps(r).encode() + b"\n")


def parsers_seeds():
    # The first byte picks the parser (fuzz_parsers.cpp). npu-smi outputs come from the stand-in
    # npu-smi, which prints the real tool's layouts; the rest are the documented forms.
    fake = os.path.join(ROOT, "tests", "sim", "fake-npu-smi")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump({"npus": 2, "layout": "a3", "health": {"1": [{"status": "Warning",
                       "codes": ["80818C00", "80E18005"],
                       "info": ["node type=SoC, sensor type=Check Sensor, event state=check fail",
                                "node type=HBM, sensor type=ECC"]}]}}, f)
        env = dict(os.environ, FAKE_NPU_SMI_SCRIPT=script, FAKE_NPU_SMI_STATE=os.path.join(tmp, "s"))
        for i, argv in enumerate([["info", "-t", "health", "-i", "0"],
                                  ["info", "-t", "health", "-i", "1"]]):
            out = subprocess.run([sys.executable, fake] + argv, env=env, capture_output=True).stdout
            write("parsers", "npu-smi-health-%d" % i, b"\x00" + out)
        out = subprocess.run([sys.executable, fake, "info"], env=env, capture_output=True).stdout
        write("parsers", "npu-smi-info", b"\x01" + out)
    cfg = {"DeviceInfo": {"DeviceList": {
        "huawei.com/Ascend910": "Ascend910-0,Ascend910-1",
        "huawei.com/Ascend910-Fault": json.dumps([{"fault_type": "CardUnhealthy",
                                                   "npu_name": "Ascend910-1",
                                                   "fault_code": "80818C00,80E18005",
                                                   "fault_level": "SeparateNPU"}])},
        "UpdateTime": 1767312000}, "CheckCode": "x"}
    write("parsers", "deviceinfo", b"\x02" + json.dumps(
        {"data": {"DeviceInfoCfg": json.dumps(cfg)}}).encode())
    write("parsers", "nvidia-smi", b"\x03" + b"0, 00000000:3B:00.0\n1, 00000000:86:00.0\n")
    write("parsers", "kmsg", b"\x04" + b"4,1234,601000472,-;NVRM: Xid (PCI:0000:3b:00): 79, "
                                         b"pid=1, GPU has fallen off the bus.")
    write("parsers", "dump-cann", b"\x05" + b"/var/log/npu/overflow/20260102120000/3/1/0/"
                                              b"OpDebug.Node_Opdebug.12.1767312000000")
    write("parsers", "dump-ms", b"\x05" + b"/dump/7/20260102/3/Default/1/7/"
                                            b"Opdebug.Node_OpDebug.12.2.1767312000000.output.0.json")
    write("parsers", "dump-json", b"\x06" + json.dumps({
        "AI Core": {"model_id": 1, "stream_id": 2, "task_id": 12, "pc_start": "0x0",
                    "para_base": "0x0", "kernel_code": "0x0", "block_idx": 0, "status": 272},
        "DHA Atomic Add": {"model_id": 1, "stream_id": 2, "task_id": 12, "status": 2546},
        "L2 Atomic Add": {"model_id": 1, "stream_id": 2, "task_id": 12, "status": 2546}}).encode())
    write("parsers", "status", b"\x07" + (272).to_bytes(8, "little"))
    # The activity parsers: npu-smi's usages and process table (the golden inputs), nvidia-smi's
    # activity and compute apps, hccn_tool's counters.
    golden = os.path.join(ROOT, "tests", "golden", "npu-smi-activity")
    with open(os.path.join(golden, "usages-telegraf-25.5.1.txt"), "rb") as f:
        write("parsers", "npu-smi-usages", b"\x08" + f.read())
    with open(os.path.join(golden, "processes-constructed.txt"), "rb") as f:
        write("parsers", "npu-smi-procs", b"\x09" + f.read())
    write("parsers", "nvidia-smi-activity", b"\x0a" + b"0, 00000000:3B:00.0, 37, 2048\n"
                                                       b"1, 00000000:86:00.0, [N/A], [N/A]\n")
    write("parsers", "nvidia-smi-apps", b"\x0b" + b"00000000:3B:00.0, 4242, 30784\n")
    write("parsers", "hccn-stat", b"\x0c" + b"roce_rx_all_pkt_num:1000\nroce_tx_all_pkt_num:2000\n")


def npy_bytes(descr, shape, data, version=1):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    size = len(header).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + size + header.encode() + data


def stored_zip(members):
    import struct
    out, central = b"", b""
    for name, data in members:
        name = name.encode()
        offset = len(out)
        out += struct.pack("<IHHHIIIIHH", 0x04034b50, 20, 0, 0, 0, 0, len(data), len(data),
                           len(name), 0) + name + data
        central += struct.pack("<IHHHHIIIIHHHHHII", 0x02014b50, 20, 20, 0, 0, 0, 0, len(data),
                               len(data), len(name), 0, 0, 0, 0, 0, offset) + name
    return out + central + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(members),
                                       len(members), len(central), len(out), 0)


def compare_readers_seeds():
    """compare/: the first byte picks the reader (fuzz_compare_readers.cpp)."""
    import struct
    write("compare_readers", "json", b"\x00" + b'{"a": [NaN, Infinity, -Infinity, 1, 2.5e-3, '
          b'"x\\u00e9"], "b": {"c": null, "d": true}}')
    leaf = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 1.0,
            "Min": -1, "Mean": float("nan"), "Norm": 2.5, "requires_grad": True}
    dump = {"task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": None,
            "data": {"Functional.conv2d.0.forward": {
                "input_args": [leaf, None, [{"type": "int", "value": 2}],
                               {"type": "torch.Size", "value": [2, 3]}],
                "input_kwargs": {"inplace": {"type": "bool", "value": False}},
                "output": [dict(leaf, md5="00d69ba8")],
                "parameters": {"weight": leaf}},
                "Functional.conv2d.0.backward": {"input": [leaf], "output": [leaf]},
                "Module.fc.Linear.parameters_grad.0": {"bias": [leaf]}}}
    text = json.dumps(dump, indent=1)
    write("compare_readers", "dump-json", b"\x01" + text.encode())
    write("compare_readers", "dump-json-truncated", b"\x01" + text[:len(text) // 2].encode())
    pkl = ('["Functional_linear_0_forward_input.0", 1, [], "torch.float32", [3, 2], '
           '[1.9, -1.0, -0.2]]\n'
           '["Functional.linear.0.forward.output", 1, "1a2b3c4d", "torch.float16", [3], '
           '[2.0, 0.5, 1.0, NaN]]\n'
           '["Functional.linear.0.forward_stack_info", [["train.py", 10, "step", "y = f(x)"]]]\n'
           '["Torch.relu.0.forward.input.0", 1, [], "torch.bool", [0], [[], [], [], "Nan"]]\n'
           '["Torch.relu.0.forward.out')
    write("compare_readers", "pkl", b"\x02" + pkl.encode())
    write("compare_readers", "npy-f4", b"\x03" + npy_bytes("<f4", "(2, 3)",
                                                             struct.pack("<6f", 1, 2, 3, 1, 2, 3)))
    write("compare_readers", "npy-f2-v2", b"\x03" + npy_bytes(
        "<f2", "(4,)", struct.pack("<4H", 0x3C00, 0xC000, 0x7C00, 0x0001), 2))
    pickle = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storage"
              b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x06tQK\x00"
              b"K\x02K\x03\x86K\x03K\x01\x86\x89ccollections\nOrderedDict\n)RtR.")
    write("compare_readers", "pt", b"\x04" + stored_zip([
        ("archive/data.pkl", pickle), ("archive/data/0", struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
        ("archive/version", b"3\n")]))


def pt_pickle(shape, stride, tail=b""):
    """data.pkl as torch.save writes it for a float tensor: _rebuild_tensor_v2(storage 0,
    offset 0, size, stride, False, OrderedDict())."""
    import struct

    def ints(values):
        out = b""
        for v in values:
            out += b"J" + struct.pack("<i", v) if v < 2 ** 31 else \
                b"\x8a" + bytes([8]) + v.to_bytes(8, "little")
        return b"(" + out + b"t"
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storage"
            b"ctorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQK\x00"
            + ints(shape) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR." + tail)


PT_MAX = 262144  # fuzz_pt_reader's -max_len (tests/fuzz/CMakeLists.txt)


def tensor_reader_seeds():
    """The .pt and .npy readers on their own (fuzz_pt_reader.cpp, fuzz_npy_reader.cpp), with the
    three inputs of the second security audit (N4) that crashed the .pt reader."""
    import struct
    pt = stored_zip([("archive/data.pkl", pt_pickle([2, 3], [3, 1])),
                     ("archive/data/0", struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
                     ("archive/version", b"3\n")])
    write("pt_reader", "pt", pt, PT_MAX)
    write("pt_reader", "pt-transposed", stored_zip([
        ("archive/data.pkl", pt_pickle([3, 2], [1, 3])),
        ("archive/data/0", struct.pack("<6f", 1, 2, 3, 4, 5, 6))]), PT_MAX)
    # A 42-byte file: a ZIP64 locator pointing at 0x4141414141414141, then an end record that
    # asks for it (entries 0xFFFF, central directory offset 0xFFFFFFFF).
    zip64 = struct.pack("<IIQI", 0x07064b50, 0, 0x4141414141414141, 1) + \
        struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0, 0xFFFFFFFF, 0)
    assert len(zip64) == 42
    write("pt_reader", "audit-zip64-end-record-42-bytes", zip64, PT_MAX)
    # Shape [2^24 + 1], stride [2^40], a 4-byte storage: (2^24) * 2^40 wraps to 0.
    write("pt_reader", "audit-stride-extent-wraps", stored_zip([
        ("archive/data.pkl", pt_pickle([2 ** 24 + 1], [2 ** 40])),
        ("archive/data/0", struct.pack("<f", 1))]), PT_MAX)
    # TUPLE1 200,000 times: a 200,000-deep chain whose destructor recursed.
    write("pt_reader", "audit-pickle-nesting-200000", stored_zip([
        ("archive/data.pkl", b"\x80\x02N" + b"\x85" * 200000 + b"."),
        ("archive/data/0", struct.pack("<f", 1))]), PT_MAX)
    write("npy_reader", "f4", npy_bytes("<f4", "(2, 3)", struct.pack("<6f", 1, 2, 3, 1, 2, 3)))
    write("npy_reader", "f2-v2", npy_bytes(
        "<f2", "(4,)", struct.pack("<4H", 0x3C00, 0xC000, 0x7C00, 0x0001), 2))
    write("npy_reader", "fortran", npy_bytes("<i8", "(2, 3)", struct.pack("<6q", 1, 2, 3, 4, 5, 6))
          .replace(b"'fortran_order': False", b"'fortran_order': True "))
    write("npy_reader", "huge-shape", npy_bytes("<f4", "(4611686018427387904, 4)", b""))
    write("npy_reader", "empty", npy_bytes("|b1", "(0, 5)", b""))


clear_seeds()
compare_readers_seeds()
tensor_reader_seeds()
parsers_seeds()
scan_seeds()
rules_seeds()
config_seeds()
catalog_seeds()
payload_seeds()
control_seeds()
