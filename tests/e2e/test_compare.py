#!/usr/bin/env python3
"""`faultctl compare` as an operator runs it: the real quick-start dump (step1 against step0)
gives msprobe's own result table byte for byte and exit 1; rank folders are paired by id and a
set mismatch names the ranks (exit 2); identical dumps exit 0; --replicas names the rank whose
parameter differs from the majority. No daemon is needed: nothing listens on the socket."""
import gzip
import json
import os
import subprocess

import harness


def run(args, *argv):
    env = dict(os.environ, FAULTD_SOCKET="/nonexistent/faultd.sock")
    return subprocess.run([args.faultctl, *argv], capture_output=True, text=True, timeout=120,
                          env=env)


def quickstart(args, check, work):
    root = os.path.join(harness.shared_dir(args.source_dir), "data", "compare",
                        "msprobe_quickstart")
    oracle = os.path.join(root, "expected", "compare_result_proc2016.csv.gz")
    if not os.path.isfile(oracle):
        print("skipped: quickstart: compare fixture not found at %s" % root, flush=True)
        return
    npu = os.path.join(root, "step1", "proc2016", "dump.json.gz")
    bench = os.path.join(root, "step0", "proc2016", "dump.json.gz")
    out = os.path.join(work, "result.csv")
    r = run(args, "compare", npu, bench, "-o", "csv", "--output", out)
    check(r.returncode == 1, "a suspect exits 1 (got %d: %s)" % (r.returncode, r.stderr.strip()))
    with gzip.open(oracle, "rb") as f:
        want = f.read()
    with open(out, "rb") as f:
        got = f.read()
    check(got == want, "the CSV is msprobe's own table, byte for byte (%d vs %d bytes)"
          % (len(got), len(want)))
    check("2822 rows, 2696 pass, 62 warning, 64 error" in r.stderr,
          "the summary goes to stderr with -o csv: %r" % r.stderr[:200])

    r = run(args, "-o", "json", "compare", npu, bench)
    rank = json.loads(r.stdout)["ranks"][0]
    check((rank["rows"], rank["pass"], rank["error"], rank["warning"]) == (2822, 2696, 64, 62),
          "-o json counts: %r" % [rank[k] for k in ("rows", "pass", "error", "warning")])
    check(rank["first_error"]["name"] == "Tensor.add_.0.forward.output.0"
          and rank["first_error"]["data_row"] == 17, "the first error is data row 17")

    r = run(args, "compare", npu, bench)
    check("first suspect: Tensor.add_.0.forward" in r.stdout, "the text summary names it")


def write_rank(path, out_norm, weight_max=1.0):
    def tensor(mx, norm):
        return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], "Max": mx,
                "Min": 0, "Mean": 0.5, "Norm": norm, "requires_grad": False}
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "dump.json"), "w") as f:
        json.dump({"task": "statistics", "level": "L1", "framework": "pytorch",
                   "dump_data_dir": None,
                   "data": {"Module.fc.Linear.forward.0": {
                       "input_args": [tensor(1, 1)], "parameters": {"weight": tensor(weight_max, 1)},
                       "output": [tensor(2, out_norm)]}}}, f, indent=1)


def ranks(args, check, work):
    for side in ("npu", "bench"):
        for rank in (0, 1):
            write_rank(os.path.join(work, side, "step0", "rank%d" % rank), 2)
    npu, bench = os.path.join(work, "npu", "step0"), os.path.join(work, "bench", "step0")
    r = run(args, "compare", npu, bench)
    check(r.returncode == 0, "identical ranks exit 0 (%d: %s)" % (r.returncode, r.stderr))
    check("rank0: 3 rows, 3 pass" in r.stdout and "rank1: 3 rows, 3 pass" in r.stdout,
          "both ranks are compared: %r" % r.stdout)

    write_rank(os.path.join(npu, "rank1"), 9)
    r = run(args, "compare", npu, bench, "-o", "csv", "--output", os.path.join(work, "out"))
    check(r.returncode == 1, "a bad rank exits 1")
    check(sorted(os.listdir(os.path.join(work, "out"))) ==
          ["compare_result_rank0.csv", "compare_result_rank1.csv"], "one table per rank")

    write_rank(os.path.join(bench, "rank2"), 2)
    r = run(args, "compare", npu, bench)
    check(r.returncode == 2 and "only on the bench side: rank2" in r.stderr,
          "different rank sets exit 2 and name the rank: %r" % r.stderr)
    r = run(args, "compare", npu, os.path.join(work, "nowhere"))
    check(r.returncode == 2 and "nowhere: not found" in r.stderr, "a missing dump exits 2")
    r = run(args, "compare", npu)
    check(r.returncode == 2, "one dump is a usage error (exit 2)")


def replicas(args, check, work):
    step = os.path.join(work, "step3")
    for rank, (norm, weight) in enumerate([(2, 1.0), (3, 1.0), (4, 1.5), (5, 1.0)]):
        write_rank(os.path.join(step, "rank%d" % rank), norm, weight)
    r = run(args, "compare", "--replicas", step)
    check(r.returncode == 1 and "suspect: rank2" in r.stdout,
          "the odd replica is named: %r" % r.stdout)
    r = run(args, "compare", "--replicas", step, "-o", "json")
    j = json.loads(r.stdout)
    check(j["suspect"] == "rank2" and j["first"]["name"].endswith("parameters.weight"),
          "-o json names rank2 and the weight: %r" % j)


if __name__ == "__main__":
    harness.main(quickstart, ranks, replicas)
