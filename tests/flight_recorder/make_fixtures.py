#!/usr/bin/env python3
"""Writes the Flight Recorder fixtures of tests/unit/collectors_flight_recorder_test.cpp and the
fuzz seeds of tests/fuzz/corpus/flight_recorder/: our own dumps in PyTorch's format
(tests/sim/flight_recorder_dumps.py), and hostile pickles. Re-run after changing the writer:

  python3 tests/flight_recorder/make_fixtures.py
"""
import os
import pickle
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "sim"))
import flight_recorder_dumps as fr  # noqa: E402


class RunsCode:
    """Pickles as a call of os.system: what a hostile dump would hold."""

    def __reduce__(self):
        return (os.system, ("touch /tmp/faultd-pwned",))


def main():
    # NCCL, version 2.4 (pg_status): 8 ranks, rank 5 never entered collective 13.
    d = os.path.join(HERE, "nccl-2.4")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    fr.write_job(os.path.join(d, "nccl_trace_rank_"), list(range(8)), 13, {5})
    # HCCL (torch_npu), version 2.2 layout (entries only): 4 ranks, rank 2 stuck.
    d = os.path.join(HERE, "hccl-2.2")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    fr.write_job(os.path.join(d, "hccl_trace_rank_"), list(range(4)), 7, {2}, version="2.2",
                 backend="hccl")
    # A node holding ranks 8-15 of a 16-rank group: no culprit here, ranks 0-7 are elsewhere.
    d = os.path.join(HERE, "nccl-2.4-half")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    job = list(range(16))
    for r in range(8, 16):
        with open(os.path.join(d, "nccl_trace_rank_%d" % r), "wb") as f:
            pickle.dump(fr.dump(r, job, 40, {3}), f, protocol=2)

    d = os.path.join(HERE, "hostile")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    good = pickle.dumps(fr.dump(0, list(range(8)), 13, {5}), protocol=2)
    loop = []
    loop.append(loop)
    deep = []
    for _ in range(100):
        deep = [deep]
    cases = {
        "runs-code.pkl": pickle.dumps({"version": "2.4", "entries": [RunsCode()]}, protocol=2),
        "self-list.pkl": pickle.dumps({"version": "2.4", "entries": loop}, protocol=2),
        "deep.pkl": pickle.dumps({"version": "2.4", "entries": deep}, protocol=2),
        "truncated.pkl": good[: len(good) // 2],
        "not-a-dict.pkl": pickle.dumps(["version", "2.4"], protocol=2),
        "wide-int.pkl": pickle.dumps({"version": "2.4", "n": 2 ** 70}, protocol=2),
        "protocol-0.pkl": pickle.dumps({"version": "2.4"}, protocol=0),
    }
    for name, data in cases.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)

    seeds = os.path.join(HERE, "..", "fuzz", "corpus", "flight_recorder")
    os.makedirs(seeds, exist_ok=True)  # seed-* files are fuzzing's finds: kept
    for sub, n in (("nccl-2.4", 2), ("hccl-2.2", 2), ("hostile", None)):
        for name in sorted(os.listdir(os.path.join(HERE, sub)))[:n]:
            shutil.copy(os.path.join(HERE, sub, name), os.path.join(seeds, sub + "-" + name))


if __name__ == "__main__":
    main()
