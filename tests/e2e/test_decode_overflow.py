#!/usr/bin/env python3
"""`faultctl decode-overflow` on the status examples of the CANN overflow-detection reference
(272 -> 0x10 + 0x100; 2546 as DHA Atomic Add -> 0x9; 2546 as L2 Atomic Add -> no error), in
text and JSON, on converted dump files (the earliest dump first), and its usage errors (exit 2).
It runs without a daemon: nothing listens on the socket it is given."""
import json
import os
import subprocess

import harness


def run(args, *argv):
    # A socket path nobody listens on: decode-overflow must not need the daemon.
    env = dict(os.environ, FAULTD_SOCKET="/nonexistent/faultd.sock")
    return subprocess.run([args.faultctl, *argv], capture_output=True, text=True, timeout=60,
                          env=env)


def statuses(args, check, work):
    r = run(args, "decode-overflow", "--status", "272")
    check(r.returncode == 0, "--status 272 exits 0 (%s)" % r.stderr.strip())
    check("0x00000010+0x00000100" in r.stdout, "272 is 0x00000010+0x00000100: %r" % r.stdout)
    check("FP32 to FP16 conversion" in r.stdout and "integer addition" in r.stdout,
          "both causes are named")

    r = run(args, "-o", "json", "decode-overflow", "--status", "272", "--kind", "aicore")
    j = json.loads(r.stdout)
    check([c["code"] for c in j["causes"]] == ["0x00000010", "0x00000100"] and j["error"],
          "-o json lists the two AI Core causes")

    r = run(args, "decode-overflow", "--status", "2546", "--kind", "dha", "-o", "json")
    j = json.loads(r.stdout)
    check(r.returncode == 0 and [c["code"] for c in j["causes"]] == ["0x9"]
          and j["causes"][0]["text"] == "atomic overflow", "2546 as DHA is 0x9, atomic overflow")

    r = run(args, "decode-overflow", "--status", "2546", "--kind", "l2")
    check(r.returncode == 0 and "no error" in r.stdout, "2546 as L2 is no error: %r" % r.stdout)
    r = run(args, "-o", "json", "decode-overflow", "--status", "2546", "--kind", "l2")
    check(json.loads(r.stdout)["causes"] == [], "... and has no causes in JSON")

    r = run(args, "decode-overflow", "--status", "0x41", "-o", "json")
    j = json.loads(r.stdout)
    check([(c["code"], c["known"]) for c in j["causes"]] == [("0x00000001", False),
                                                            ("0x00000040", False)],
          "bits the reference does not list are reported as unknown")

    for argv, what in ((["decode-overflow"], "nothing to decode"),
                       (["decode-overflow", "--status", "12x"], "a bad status"),
                       (["decode-overflow", "--status", "1", "--kind", "l3"], "a bad kind"),
                       (["decode-overflow", "--status"], "a missing value"),
                       (["decode-overflow", "--kind", "dha", "x.json"], "--kind with files")):
        r = run(args, *argv)
        check(r.returncode == 2, "usage error exits 2: %s (got %d)" % (what, r.returncode))


def files(args, check, work):
    late = os.path.join(work, "20200808163566", "0", "11", "3")
    early = os.path.join(work, "20200808163566", "0", "11", "1")
    os.makedirs(late)
    os.makedirs(early)
    late_json = os.path.join(late, "OpDebug.Node_Opdebug.5.100.output.0.json")
    early_json = os.path.join(early, "OpDebug.Node_Opdebug.9.200.output.0.json")
    with open(late_json, "w") as f:
        json.dump({"AI Core": {"model_id": 1, "stream_id": 2, "task_id": 5, "task_type": 0,
                               "block_idx": 0, "status": 32}}, f)
    # The reference's example output, with the DHA record filled in.
    with open(early_json, "w") as f:
        f.write('{ "DHA Atomic Add": { "model_id": 0, "stream_id": 0, "task_id": 0, '
                '"task_type": 0, "pc_start": "0x0", "para_base": "0x0", "status": 2546 }, '
                '"L2 Atomic Add": { "model_id": 0, "stream_id": 0, "task_id": 0, "task_type": 0, '
                '"pc_start": "0x0", "para_base": "0x0", "status": 0 }, "AI Core": { "model_id": '
                '514, "stream_id": 563, "task_id": 57, "task_type": 0, "pc_start": '
                '"0x1008005b0000", "para_base": "0x100800297000", "kernel_code": '
                '"0x1008005ae000", "block_idx": 1, "status": 272 } }')
    r = run(args, "-o", "json", "decode-overflow", late_json, early_json)
    check(r.returncode == 0, "decoding two files exits 0 (%s)" % r.stderr.strip())
    out = json.loads(r.stdout)
    check([e["file"] for e in out] == [early_json, late_json] and out[0]["first"],
          "the dump with the lowest data_index comes first")
    recs = {rec["record"]: rec for rec in out[0]["records"]}
    check([c["code"] for c in recs["AI Core"]["causes"]] == ["0x00000010", "0x00000100"]
          and recs["AI Core"]["task_id"] == 57, "the AI Core record: 272 with its task")
    check([c["code"] for c in recs["DHA Atomic Add"]["causes"]] == ["0x9"], "DHA 2546 -> 0x9")
    check(not recs["L2 Atomic Add"]["error"], "L2 0 -> no error")
    check(out[0]["device"] == "0" and out[0]["iteration"] == 1, "the path gives device, data_index")

    r = run(args, "decode-overflow", late_json, early_json)
    check(r.stdout.index(early_json) < r.stdout.index(late_json) and "analyse first" in r.stdout,
          "text output says which dump to analyse first")

    bad = os.path.join(work, "bad.json")
    with open(bad, "w") as f:
        f.write("{not json")
    r = run(args, "decode-overflow", bad, late_json)
    check(r.returncode == 1 and "bad.json" in r.stderr, "an invalid file exits 1 and is named")
    check(late_json in r.stdout, "the valid file is still decoded")
    r = run(args, "decode-overflow", os.path.join(work, "missing.json"))
    check(r.returncode == 1, "a missing file exits 1")


if __name__ == "__main__":
    harness.main(statuses, files)
