#!/usr/bin/env python3
"""`faultctl decode-overflow` on the status examples of the CANN overflow-detection reference
(272 -> 0x10 + 0x100; 2546 as DHA Atomic Add -> 0x9; 2546 as L2 Atomic Add -> no error), in
text and JSON, on converted dump files (the earliest dump first), on dump directories (the
earliest overflowing operator named; symlinked directories not entered; broken dumps named and
counted), and its usage errors (exit 2). It runs without a daemon: nothing listens on the socket
it is given."""
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
    out = json.loads(r.stdout)["dumps"]
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


def write_dump(path, status, task_id=0, stream_id=0, kind="AI Core"):
    """A converted dump as msaccucmp writes it, with one record's status set."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    records = {name: {"model_id": 0, "stream_id": 0, "task_id": 0, "task_type": 0,
                      "pc_start": "0x0", "para_base": "0x0", "status": 0}
               for name in ("DHA Atomic Add", "L2 Atomic Add", "AI Core")}
    records["AI Core"]["block_idx"] = 0
    records[kind].update({"model_id": 514, "stream_id": stream_id, "task_id": task_id,
                          "status": status})
    with open(path, "w") as f:
        json.dump(records, f)
    return path


def directories(args, check, work):
    root = os.path.join(work, "dumps")
    run_dir = os.path.join(root, "20200808163566", "0", "11")
    later = write_dump(os.path.join(run_dir, "2", "OpDebug.Node_Opdebug.5.100.output.0.json"),
                       32, task_id=5, stream_id=1)
    # The earliest dump records no error: the earliest *overflowing* one is the next.
    write_dump(os.path.join(run_dir, "1", "OpDebug.Node_Opdebug.8.200.output.0.json"), 0)
    first = write_dump(os.path.join(run_dir, "1", "OpDebug.Node_Opdebug.9.300.output.0.json"),
                       272, task_id=57, stream_id=563)
    dha = write_dump(os.path.join(run_dir, "1", "OpDebug.Node_Opdebug.4.400.output.0.json"),
                     2546, task_id=60, stream_id=7, kind="DHA Atomic Add")
    with open(os.path.join(run_dir, "1", "OpDebug.Node_Opdebug.8.200"), "wb") as f:
        f.write(b"\x00binary dump, not converted")
    with open(os.path.join(run_dir, "1", "notes.txt"), "w") as f:
        f.write("not a dump\n")
    # A dump tree outside the root, reachable only through a symlink: with data_index 0 it
    # would be the earliest if the walk followed the link.
    outside = os.path.join(work, "outside")
    write_dump(os.path.join(outside, "20200808163566", "0", "11", "0",
                            "OpDebug.Node_Opdebug.1.1.output.0.json"), 32, task_id=1)
    os.symlink(outside, os.path.join(root, "elsewhere"))

    r = run(args, "decode-overflow", root)
    check(r.returncode == 0, "a dump directory exits 0 (%s)" % r.stderr.strip())
    lines = r.stdout.splitlines()
    check(lines and lines[0].startswith("earliest overflow: AI Core operator task_id 57, "
                                        "stream_id 563")
          and "timestamp 300" in lines[0] and lines[0].endswith(first),
          "the first line names the earliest overflowing operator: %r" % lines[:1])
    check("outside" not in r.stdout and "elsewhere" not in r.stdout,
          "the symlinked directory is not entered")
    check(r.stdout.index(first) < r.stdout.index(dha) < r.stdout.index(later),
          "then every dump, earliest first")
    check("notes.txt" not in r.stdout + r.stderr, "a file that is no dump is ignored")
    check("1 binary dump(s) skipped" in r.stderr, "an unconverted dump is counted: %r" % r.stderr)

    # A broken dump (a conversion cut short) and a dump-prefixed name that is no dump name are
    # named and counted; the rest is still decoded, and the run exits 1 as for a bad file.
    broken = os.path.join(run_dir, "1", "OpDebug.Node_Opdebug.7.250.output.0.json")
    with open(broken, "w") as f:
        f.write('{"AI Core": {"status": ')
    odd = os.path.join(run_dir, "3", "OpDebug.Node_Opdebug.x.json")
    write_dump(odd, 32)
    r = run(args, "-o", "json", "decode-overflow", root)
    check(r.returncode == 1, "a broken dump exits 1 (got %d)" % r.returncode)
    out = json.loads(r.stdout)
    check(sorted(f["file"] for f in out["failed"]) == sorted([broken, odd]),
          "both bad files are listed: %r" % out["failed"])
    check(broken in r.stderr and odd in r.stderr and "2 file(s) could not be decoded" in r.stderr,
          "... named and counted on stderr: %r" % r.stderr)
    e = out["earliest"]
    check(e is not None and e["file"] == first and e["operator"]["task_id"] == 57
          and e["operator"]["stream_id"] == 563 and e["operator"]["record"] == "AI Core"
          and e["timestamp"] == 300 and e["iteration"] == 1 and e["device"] == "0",
          "-o json: the earliest object: %r" % e)
    check([d["file"] for d in out["dumps"]][1:3] == [first, dha] and out["unconverted"] == 1,
          "-o json: the dumps, earliest first")
    os.remove(broken)
    os.remove(odd)

    # Converted copies outside the dump tree (msaccucmp's -out directory) are ordered by the
    # timestamp of their names, after the dumps whose path gives the data_index.
    flat = os.path.join(work, "converted")
    late_copy = write_dump(os.path.join(flat, "Opdebug.Node_OpDebug.3.2.50.output.0.json"), 32,
                           task_id=3)
    early_copy = write_dump(os.path.join(flat, "Opdebug.Node_OpDebug.2.2.40.output.0.json"), 32,
                            task_id=2)
    r = run(args, "-o", "json", "decode-overflow", flat)
    out = json.loads(r.stdout)
    check(r.returncode == 0 and out["earliest"]["file"] == early_copy
          and out["earliest"]["timestamp"] == 40, "a flat directory: the lowest timestamp first")
    r = run(args, "-o", "json", "decode-overflow", late_copy, root)
    out = json.loads(r.stdout)
    check(r.returncode == 0 and out["earliest"]["file"] == first
          and out["dumps"][-1]["file"] == late_copy, "a file and a directory together")

    r = run(args, "decode-overflow", os.path.join(work, "empty-dir-missing"))
    check(r.returncode == 1, "a missing path exits 1")


if __name__ == "__main__":
    harness.main(statuses, files, directories)
