#!/usr/bin/env python3
"""Writes the compare-* golden cases: an NPU and a bench dump per case (npu/, bench/) and the
result table faultctl compare must print for them (expected.csv). Every expected cell is written
here next to the input it comes from, worked out from the reference tools' formulas (see
compare/compare.hpp and compare/metrics.hpp), never copied from faultctl's output. Values are
binary fractions, so the decimal text of every statistic is exact. Re-run after editing; review
the diff. Run by tests/unit/compare_golden_test.cpp."""
import csv
import io
import json
import math
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
N_A = "N/A"


def case_dir(name):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def write_csv(path, header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    with open(path, "w") as f:
        f.write(buf.getvalue())


def msprobe_dump(path, data, task="statistics"):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "dump.json"), "w") as f:
        json.dump({"task": task, "level": "L1", "framework": "pytorch", "dump_data_dir": None,
                   "data": data}, f, indent=1)


def t(dtype, shape, mx, mn, mean, norm, grad=False, **extra):
    leaf = {"type": "torch.Tensor", "dtype": dtype, "shape": shape, "Max": mx, "Min": mn,
            "Mean": mean, "Norm": norm, "requires_grad": grad}
    leaf.update(extra)
    return leaf


def stat_diff(n, b):
    """msprobe HEAD CalcStatsDiff for one statistic: (diff, relative error) cells."""
    if str(n) == str(b):
        return "0", "0"
    if isinstance(n, float) and math.isnan(n) or isinstance(b, float) and math.isnan(b):
        return "Nan", "Nan"
    if isinstance(n, str) or isinstance(b, str):
        return "Diff", "Diff"  # text that differs
    d = float(n) - float(b)
    return repr(d), (repr(abs(d / b * 100)) + "%") if b != 0 else "inf"


def stat_cell(v):
    return "Nan" if isinstance(v, float) and math.isnan(v) else str(v)


def msprobe_statistics():
    d = case_dir("compare-msprobe-statistics")
    x = t("torch.float32", [2, 2], 1.5, -0.5, 0.25, 2.0, True)
    npu = {
        # 1. Outputs drift: Norm 4.0 against 2.0 -> NormRelativeErr 100.0% while the inputs agree:
        #    error (> 0.5) and warning (10 times the input's, which is 0 as text "0" counts not).
        "Torch.matmul.0.forward": {"input_args": [x, {"type": "int", "value": 3}, None],
                                   "output": [t("torch.float32", [2], 2.5, 0.5, 1.5, 4.0, True)]},
        # 2. On the NPU only: no bench, N/A, still pass (msprobe's checkers overwrite the message).
        "Torch.extra.0.forward": {"input_args": [x], "output": [x]},
        # 3. NaN in the NPU's Max, the bench's finite: error.
        "Torch.exp.0.forward": {"input_args": [x],
                                "output": [t("torch.float32", [2], float("nan"), 0.5, 1.0, 2.0)]},
        # 4. float16 against float32 is matched, then flagged as a dtype difference.
        "Torch.cast.0.forward": {"input_args": [x],
                                 "output": [t("torch.float16", [2], 1.0, 0.0, 0.5, 1.0)]},
        # 5. A string argument that differs: text against text is "Diff"; parameters check.
        "Torch.pad.0.forward": {"input_args": [x], "input_kwargs": {
            "mode": {"type": "str", "value": "reflect"}}, "output": [x]},
    }
    bench = {
        "Torch.matmul.0.forward": {"input_args": [x, {"type": "int", "value": 3}, None],
                                   "output": [t("torch.float32", [2], 2.5, 0.5, 1.5, 2.0, True)]},
        "Torch.exp.0.forward": {"input_args": [x],
                                "output": [t("torch.float32", [2], 2.0, 0.5, 1.0, 2.0)]},
        "Torch.cast.0.forward": {"input_args": [x],
                                 "output": [t("torch.float32", [2], 1.0, 0.0, 0.5, 1.0)]},
        "Torch.pad.0.forward": {"input_args": [x], "input_kwargs": {
            "mode": {"type": "str", "value": "constant"}}, "output": [x]},
    }
    msprobe_dump(os.path.join(d, "npu"), npu)
    msprobe_dump(os.path.join(d, "bench"), bench)

    def row(name, n, b, result="pass", msgs=()):
        """n, b: (dtype, shape, grad, [max, min, mean, norm]) or None for no bench."""
        cells = [name, name if b else N_A, n[0], b[0] if b else N_A, n[1], b[1] if b else N_A,
                 n[2], b[2] if b else N_A]
        if b:
            diffs = [stat_diff(p, q) for p, q in zip(n[3], b[3])]
            cells += [x[0] for x in diffs] + [x[1] for x in diffs]
        else:
            cells += [N_A] * 8
        cells += [stat_cell(v) for v in n[3]]
        cells += [stat_cell(v) for v in b[3]] if b else [N_A] * 4
        cells += [str(n[2] == (b[2] if b else N_A)), result, json.dumps(list(msgs))]
        return cells

    X = ("torch.float32", "[2, 2]", "True", [1.5, -0.5, 0.25, 2.0])
    three = ("<class 'int'>", "[]", N_A, [3, 3, 3, 3])
    none = ("None", "None", N_A, ["None"] * 4)
    rows = [
        row("Torch.matmul.0.forward.input.0", X, X),
        row("Torch.matmul.0.forward.input.1", three, three),
        row("Torch.matmul.0.forward.input.2", none, none),
        row("Torch.matmul.0.forward.output.0", ("torch.float32", "[2]", "True", [2.5, 0.5, 1.5, 4.0]),
            ("torch.float32", "[2]", "True", [2.5, 0.5, 1.5, 2.0]), "error",
            ["error: The NormRelativeErr of output is greater than 0.5.",
             "warning: The norm relative error of output is 10 times that of input."]),
        row("Torch.extra.0.forward.input.0", X, None),
        row("Torch.extra.0.forward.output.0", X, None),
        row("Torch.exp.0.forward.input.0", X, X),
        row("Torch.exp.0.forward.output.0", ("torch.float32", "[2]", "False", [float("nan"), 0.5, 1.0, 2.0]),
            ("torch.float32", "[2]", "False", [2.0, 0.5, 1.0, 2.0]), "error",
            ["error: There is nan/inf/-inf in the maximum or minimum value of NPU."]),
        row("Torch.cast.0.forward.input.0", X, X),
        row("Torch.cast.0.forward.output.0", ("torch.float16", "[2]", "False", [1.0, 0.0, 0.5, 1.0]),
            ("torch.float32", "[2]", "False", [1.0, 0.0, 0.5, 1.0]), "error",
            ["error: The dtype of NPU and Bench are inconsistent."]),
        row("Torch.pad.0.forward.input.0", X, X),
    ]
    mode_n = ("<class 'str'>", "[]", N_A, ["reflect"] * 4)
    mode_b = ("<class 'str'>", "[]", N_A, ["constant"] * 4)
    rows.append(row("Torch.pad.0.forward.input.mode", mode_n, mode_b, "error",
                    ["error: The scalar parameters of NPU and Bench are inconsistent."]))
    rows.append(row("Torch.pad.0.forward.output.0", X, X))
    header = ["NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
              "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad", "Max diff",
              "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
              "MeanRelativeErr", "NormRelativeErr", "NPU max", "NPU min", "NPU mean",
              "NPU l2norm", "Bench max", "Bench min", "Bench mean", "Bench l2norm",
              "Requires_grad Consistent", "Result", "Err_message"]
    write_csv(os.path.join(d, "expected.csv"), header, rows)


def npy(values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
            + struct.pack("<%df" % len(values), *values))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def ptdbg_metrics(n, b):
    """ptdbg compare_by_op on float32 data (no NaN here): RE with eps where b == 0, in place."""
    eps = 2.0 ** -23
    re = []
    for x, y in zip(n, b):
        if y == 0:
            xs, ys = f32(x + eps), f32(eps)
            re.append(abs(f32(f32(xs - ys) / ys)))
        else:
            re.append(abs(f32(f32(x - y) / y)))
    n = [x + eps if y == 0 else x for x, y in zip(n, b)]
    b = [y + eps if y == 0 else y for y in b]
    dot = sum(x * y for x, y in zip(n, b))
    nn, bb = math.sqrt(sum(x * x for x in n)), math.sqrt(sum(y * y for y in b))
    cos = dot / (nn * bb)
    max_abs = max(abs(x - y) for x, y in zip(n, b))
    cells = ["1.0" if cos > 0.99999 else "%.12f" % cos, "%.12f" % max_abs, "%.12f" % max(re),
             "%.12f" % (sum(r < 0.001 for r in re) / len(re)),
             "%.12f" % (sum(r < 0.005 for r in re) / len(re))]
    if cells[0] != "1.0" and cos < 0.99 and max_abs > 0.001 or cos < 0.9 or max_abs > 1:
        accuracy = "No"
    else:
        accuracy = "Yes"
    return cells, accuracy


def ptdbg_tensor():
    d = case_dir("compare-ptdbg-tensor")
    apis = [  # (name, npu values, bench values); the NPU has one API the bench lacks
        ("Functional_linear_0_forward_input.0", [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]),
        ("Functional_linear_0_forward_output", [0.5, -0.25, 0.0, 2.0], [0.5, -0.25, 0.0, 2.0]),
        ("Torch_extra_0_forward_output", [1.0, 1.0, 1.0, 1.0], None),
        ("Torch_relu_0_forward_input.0", [0.5, -0.25, 0.0, 2.0], [0.5, -0.25, 0.0, 2.0]),
        ("Torch_relu_0_forward_output", [0.5, 0.0, 0.0, 2.0], [0.5, 0.0, 0.25, 1.5]),
    ]
    header = ["NPU Name", "Bench Name", "NPU Tensor Dtype", "Bench Tensor Dtype",
              "NPU Tensor Shape", "Bench Tensor Shape", "Cosine", "MaxAbsErr", "MaxRelativeErr",
              "One Thousandth Err Ratio", "Five Thousandths Err Ratio", "NPU max", "NPU min",
              "NPU mean", "NPU l2norm", "Bench max", "Bench min", "Bench mean", "Bench l2norm",
              "Accuracy Reached or Not", "Err_message"]
    rows = []
    for side in ("npu", "bench"):
        os.makedirs(os.path.join(d, side, "dump"))
        lines = []
        for name, nv, bv in apis:
            v = nv if side == "npu" else bv
            if v is None:
                continue
            summary = [max(v), min(v), sum(v) / len(v), math.sqrt(sum(x * x for x in v))]
            lines.append(json.dumps([name, 1, [], "torch.float32", [len(v)], summary]))
            with open(os.path.join(d, side, "dump", name + ".npy"), "wb") as f:
                f.write(npy(v))
        with open(os.path.join(d, side, "dump.pkl"), "w") as f:
            f.write("\n".join(lines) + "\n")
    for name, nv, bv in apis:
        ns = [max(nv), min(nv), sum(nv) / len(nv), math.sqrt(sum(x * x for x in nv))]
        if bv is None:
            rows.append([name, "Nan", "torch.float32", "Nan", "[4]", "Nan"] + ["Nan"] * 5
                        + [repr(x) for x in ns] + ["Nan"] * 4 + ["Nan", "No bench data matched."])
            continue
        bs = [max(bv), min(bv), sum(bv) / len(bv), math.sqrt(sum(x * x for x in bv))]
        metrics, accuracy = ptdbg_metrics(nv, bv)
        rows.append([name, name, "torch.float32", "torch.float32", "[4]", "[4]"] + metrics
                    + [repr(x) for x in ns] + [repr(x) for x in bs] + [accuracy, ""])
    write_csv(os.path.join(d, "expected.csv"), header, rows)


def msprobe_md5():
    d = case_dir("compare-msprobe-md5")
    def leaf(md5):
        return t("torch.bfloat16", [8], 1.0, 0.0, 0.5, 1.0, md5=md5)
    msprobe_dump(os.path.join(d, "npu"), {
        "Torch.add.0.forward": {"input_args": [leaf("00d69ba8")], "output": [leaf("1a2b3c4d")]},
        "Torch.sub.0.forward": {"input_args": [leaf("00d69ba8")], "output": [leaf("00000001")]}})
    msprobe_dump(os.path.join(d, "bench"), {
        "Torch.add.0.forward": {"input_args": [leaf("00d69ba8")], "output": [leaf("1a2b3c4d")]}})
    header = ["NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
              "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad", "NPU MD5",
              "BENCH MD5", "Requires_grad Consistent", "Result", "Err_message"]
    b16 = ["torch.bfloat16", "torch.bfloat16", "[8]", "[8]", "False", "False"]
    rows = [
        ["Torch.add.0.forward.input.0"] * 2 + b16 + ["00d69ba8", "00d69ba8", "True", "pass", "[]"],
        ["Torch.add.0.forward.output.0"] * 2 + b16 + ["1a2b3c4d", "1a2b3c4d", "True", "pass", "[]"],
        # On the NPU only: the bench's checksum is missing -> warning.
        ["Torch.sub.0.forward.input.0", N_A, "torch.bfloat16", N_A, "[8]", N_A, "False", N_A,
         "00d69ba8", N_A, "False", "warning",
         '["warning: The parameter of NPU does not match the bench."]'],
        ["Torch.sub.0.forward.output.0", N_A, "torch.bfloat16", N_A, "[8]", N_A, "False", N_A,
         "00000001", N_A, "False", "warning",
         '["warning: The parameter of NPU does not match the bench."]'],
    ]
    write_csv(os.path.join(d, "expected.csv"), header, rows)


if __name__ == "__main__":
    msprobe_statistics()
    ptdbg_tensor()
    msprobe_md5()
