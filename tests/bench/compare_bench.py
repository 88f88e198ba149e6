#!/usr/bin/env python3
"""`faultctl compare` side by side with a plain numpy reference, on float32 tensor dumps.

  tests/bench/compare_bench.py --faultctl build/faultctl [--work DIR] [--short] [--json OUT]
                               [--check-only]

Writes a msprobe tensor-mode dump pair (dump.json + dump_tensor_data/*.npy, as MindSpore's
msprobe writes it) for two shapes of the same volume: many small tensors and a few large ones,
the NPU side a perturbed copy of the bench. Then, for each:
  - runs `faultctl compare NPU BENCH -o json` (one rank, one thread) under GNU time's view of
    CPU seconds and peak RSS;
  - runs the reference: numpy loading each pair, upcasting to float64 and computing the same
    metrics the way msprobe's npy_compare does (whole arrays, copies for the relative error);
  - checks that both agree on every tensor's Cosine, MaxAbsErr, MaxRelativeErr and ratios.
Throughput is input bytes (both sides) per CPU second: the machine is shared, so wall time would
measure the neighbours too. --check-only: small sizes, correctness only, no timing claims (what
ctest runs). Exit 1 when the two disagree."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    # numpy comes from Debian: an interpreter of its own on PATH (pyenv, a venv) may lack it.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("skipped: numpy is not installed (Debian: python3-numpy)")
    sys.exit(0)

MIB = 1024 * 1024


def write_dump(root, side, tensors, seed):
    """tensors: list of (name, element count). The bench is N(0,1); the NPU adds noise of 1e-4
    to every element and a sign flip to one tensor's first half, so metrics are non-trivial."""
    rng = np.random.default_rng(seed)
    data_dir = os.path.join(root, side, "dump_tensor_data")
    os.makedirs(data_dir, exist_ok=True)
    entries = {}
    for i, (api, n) in enumerate(tensors):
        base = np.random.default_rng(1000 + i).standard_normal(n, dtype=np.float32)
        if side == "npu":
            base = base + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-4)
            if i == len(tensors) // 2:
                base[: n // 2] *= -1
        name = api + ".output.0"
        np.save(os.path.join(data_dir, name + ".npy"), base.astype(np.float32))
        entries[api] = {"output": [{"type": "mindspore.Tensor", "dtype": "Float32",
                                    "shape": [n], "Max": 0, "Min": 0, "Mean": 0, "Norm": 0,
                                    "data_name": name + ".npy"}]}
    with open(os.path.join(root, side, "dump.json"), "w") as f:
        json.dump({"task": "tensor", "level": "L1", "framework": "mindspore",
                   "dump_data_dir": data_dir, "data": entries}, f, indent=1)


def reference(root, tensors):
    """msprobe's metrics in numpy: float64 copies, a relative-error copy with eps where the bench
    is 0. Returns {name: metrics} and the peak RSS of this process."""
    out = {}
    for api, _ in tensors:
        name = api + ".output.0"
        n = np.load(os.path.join(root, "npu", "dump_tensor_data", name + ".npy"))
        b = np.load(os.path.join(root, "bench", "dump_tensor_data", name + ".npy"))
        rel_n, rel_b = n.copy(), b.copy()
        zero = rel_b == 0
        rel_b[zero] += np.finfo(np.float32).eps
        rel_n[zero] += np.finfo(np.float32).eps
        rel = np.abs((rel_n - rel_b) / rel_b)
        n64, b64 = n.astype(np.float64), b.astype(np.float64)
        d = n64 - b64
        cos = float(np.dot(n64, b64) / (np.linalg.norm(n64) * np.linalg.norm(b64)))
        out[name] = {"Cosine": cos, "EucDist": float(np.linalg.norm(d)),
                     "MaxAbsErr": float(np.max(np.abs(d))), "MaxRelativeErr": float(np.max(rel)),
                     "One Thousandth Err Ratio": float(np.mean(rel < 0.001)),
                     "Five Thousandths Err Ratio": float(np.mean(rel < 0.005))}
    return out


def run_reference(root, tensors):
    """The reference in a child process of its own, so its CPU time and peak RSS are its own."""
    code = ("import json, sys, resource; sys.path.insert(0, %r); import compare_bench as c; "
            "r = c.reference(%r, %r); "
            "u = resource.getrusage(resource.RUSAGE_SELF); "
            "print(json.dumps({'metrics': r, 'cpu': u.ru_utime + u.ru_stime, "
            "'rss_kib': u.ru_maxrss}))") % (os.path.dirname(os.path.abspath(__file__)), root,
                                            tensors)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def run_faultctl(faultctl, root):
    """Under GNU time, whose CPU seconds and peak RSS are faultctl's alone."""
    stats = os.path.join(root, "time.txt")
    p = subprocess.run(["/usr/bin/time", "-o", stats, "-f", "%e %U %S %M", faultctl, "compare",
                        os.path.join(root, "npu"), os.path.join(root, "bench"), "-o", "json",
                        "--jobs", "1"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit("faultctl compare failed (%d): %s" % (p.returncode, p.stderr))
    with open(stats) as f:
        wall, user, system, rss_kib = f.read().split()[-4:]
    return json.loads(p.stdout), float(user) + float(system), float(wall), int(rss_kib)


def agree(mine, ref):
    """faultctl prints msprobe's formatting (12 places; Cosine above 0.9999 to 6)."""
    bad = []
    for row in mine["ranks"][0]["results"]:
        r = ref[row["NPU Name"]]
        for key, want in r.items():
            got = float(row[key])
            tol = 1e-6 if key == "Cosine" else 1e-9 + 1e-9 * abs(want)
            if abs(got - want) > tol:
                bad.append("%s %s: faultctl %s, numpy %r" % (row["NPU Name"], key, row[key], want))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--faultctl", required=True)
    ap.add_argument("--work")
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    total = (8 if a.check_only else 64 if a.short else 512) * MIB  # float32 bytes per side
    cases = [("many small", 64), ("few large", 2)]
    work = a.work or tempfile.mkdtemp(prefix="compare-bench-")
    results, failed = [], False
    try:
        for label, count in cases:
            n = total // 4 // count
            tensors = [("Functional.op%d.0.forward" % i, n) for i in range(count)]
            root = os.path.join(work, label.replace(" ", "-"))
            shutil.rmtree(root, ignore_errors=True)
            write_dump(root, "bench", tensors, 1)
            write_dump(root, "npu", tensors, 2)
            mine, cpu, wall, rss_kib = run_faultctl(a.faultctl, root)
            ref = run_reference(root, tensors)
            bad = agree(mine, ref["metrics"])
            for b in bad[:5]:
                print("MISMATCH", b)
            failed |= bool(bad)
            volume = 2 * total
            cpu = max(cpu, 0.01)  # GNU time counts in hundredths: a tiny run may show 0
            results.append({"case": label, "tensors": count, "elements_each": n,
                            "input_mib": volume / MIB, "faultctl_cpu_s": cpu,
                            "faultctl_wall_s": wall, "faultctl_gb_per_cpu_s": volume / cpu / 1e9,
                            "faultctl_peak_rss_mib": rss_kib / 1024,
                            "numpy_cpu_s": ref["cpu"],
                            "numpy_gb_per_cpu_s": volume / max(ref["cpu"], 0.01) / 1e9,
                            "numpy_peak_rss_mib": ref["rss_kib"] / 1024,
                            "agree": not bad})
            shutil.rmtree(root, ignore_errors=True)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    if not a.check_only:
        print("%-11s %8s %10s %12s %12s %10s %12s %12s" % (
            "case", "tensors", "input MiB", "faultctl GB/s", "faultctl RSS", "numpy GB/s",
            "numpy RSS", "ratio"))
        for r in results:
            print("%-11s %8d %10.0f %12.2f %10.0f MiB %10.2f %9.0f MiB %11.1fx" % (
                r["case"], r["tensors"], r["input_mib"], r["faultctl_gb_per_cpu_s"],
                r["faultctl_peak_rss_mib"], r["numpy_gb_per_cpu_s"], r["numpy_peak_rss_mib"],
                r["faultctl_gb_per_cpu_s"] / r["numpy_gb_per_cpu_s"]))
    print("compare bench: faultctl and numpy %s on every tensor" % ("DISAGREE" if failed else "agree"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
