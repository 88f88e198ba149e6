#!/usr/bin/env python3
"""Scores faultd's detection on a labelled corpus of real log samples (docs/detection.md).

    score.py --faultd BIN --rules DIR [--min-recall P] [--min-device P] [--max-fp N]
             [--max-over N] [--table FILE] CORPUS...

Each CORPUS is a directory with `expected.tsv` (columns: file, category, devices, negative,
input_kind, provenance, notes[, source]) and `logs/`. Every sample is replayed alone through
`faultd --replay` (command output through `--replay --parser`), with the shipped rules and no
catalogue, and judged:

  found         a positive sample has a finding whose level is not NotHandleFault; a sample
                whose notes say [accept:recorded] (an application-class fault) is found by any
                finding, and counts as over-escalated when a finding would isolate or reset the
                device (PreSeparateNPU, SeparateNPU, ManuallySeparateNPU, RestartNPU,
                FreeRestartNPU);
  right device  a counted finding names one of the sample's devices (ids compare as numbers,
                PCI bus ids with or without domain and function, GPU UUIDs exactly);
  false alarm   a negative sample has a finding whose level is not NotHandleFault.

Prints a table by class and the totals; exits 1 when a total is below its floor (or a replay
failed), 0 otherwise."""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

PARSERS = {"npu_smi_health": "npu_smi_health", "npu_smi_info": "npu_smi_info",
           "configmap_json": "deviceinfo_cm", "nvidia_smi": "nvidia_smi"}
ACTING = {"preseparatenpu", "separatenpu", "manuallyseparatenpu", "restartnpu", "freerestartnpu"}
BUS = re.compile(r"^(?:pci:)?(?:([0-9a-f]{4,8}):)?([0-9a-f]{2}):([0-9a-f]{2})(?:\.[0-7])?$")
UUID = re.compile(r"^gpu-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$")


def device_key(text):
    s = (text or "").strip().lower()
    if not s:
        return ""
    m = BUS.match(s)
    if m:
        return "bus:%d:%s:%s" % (int(m.group(1) or "0", 16), m.group(2), m.group(3))
    if UUID.match(s):
        return s
    m = re.search(r"(\d+)$", s)
    return str(int(m.group(1))) if m else s


def replay_config(work):
    nowhere = os.path.join(work, "nowhere")
    sources = "\n".join('  - { name: %s, type: file, paths: ["%s/%s/*.log"]%s }'
                        % (n, nowhere, n, ", kernel_log: true" if n == "kernel" else "")
                        for n in ("plog", "device-log", "training", "kernel"))
    return ("node: corpus\nstate_dir: %s/state\nmetrics: { listen: \"\" }\n"
            "control: { socket: %s/control.sock }\ninclude: [\"%s/*.yaml\"]\nsources:\n%s\n"
            % (work, work, RULES, sources))


def replay(config, path, kind):
    argv = [FAULTD, "--replay", "--config", config]
    if kind in PARSERS:
        argv += ["--parser", PARSERS[kind]]
    p = subprocess.run(argv + [path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("replay of %s exited %d: %s" % (path, p.returncode,
                                                           p.stderr.decode(errors="replace")[-300:]))
    return [json.loads(l) for l in p.stdout.decode(errors="replace").splitlines() if l.strip()]


def score(corpus, config, rows_out):
    with open(os.path.join(corpus, "expected.tsv"), newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                if r["file"] and not r["file"].startswith("#")]
    for r in rows:
        findings = replay(config, os.path.join(corpus, "logs", r["file"]), r["input_kind"].strip())
        counted = [f for f in findings if str(f.get("level", "")).lower() != "nothandlefault"]
        negative = r["negative"].strip().lower() == "yes"
        recorded_ok = "[accept:recorded]" in r["notes"]
        want = {device_key(d) for d in r["devices"].split(",") if d.strip()}
        result = {"file": r["file"], "class": "NONE" if negative else r["category"].split(",")[0],
                  "negative": negative, "want": want}
        if negative:
            result["false_alarm"] = bool(counted)
        else:
            hits = findings if recorded_ok else counted
            result["found"] = bool(hits)
            result["over"] = recorded_ok and any(str(f.get("level", "")).lower() in ACTING
                                                 for f in findings)
            result["device_ok"] = bool(want) and any(device_key(f.get("device")) in want
                                                     for f in hits)
            result["got"] = {device_key(f.get("device")) for f in hits if f.get("device")}
        rows_out.append(result)


def main():
    global FAULTD, RULES
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--faultd", required=True)
    ap.add_argument("--rules", required=True, help="directory of the rule packs")
    ap.add_argument("--min-recall", type=float, default=0)
    ap.add_argument("--min-device", type=float, default=0)
    ap.add_argument("--max-fp", type=int, default=0)
    ap.add_argument("--max-over", type=int, default=0)
    ap.add_argument("--table", help="also write the table (Markdown) to this file")
    ap.add_argument("corpus", nargs="+")
    args = ap.parse_args()
    FAULTD, RULES = os.path.abspath(args.faultd), os.path.abspath(args.rules)
    results = []
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "replay.yaml")
        with open(config, "w") as fh:
            fh.write(replay_config(work))
        for corpus in args.corpus:
            score(corpus, config, results)

    classes = {}
    for r in results:
        c = classes.setdefault(r["class"], {"n": 0, "found": 0, "dev_n": 0, "dev_ok": 0, "fp": 0,
                                             "over": 0})
        c["n"] += 1
        if r["negative"]:
            c["fp"] += r["false_alarm"]
            continue
        c["found"] += r["found"]
        c["over"] += r["over"]
        if r["want"]:
            c["dev_n"] += 1
            c["dev_ok"] += r["device_ok"]
    lines = ["| class | samples | found | right device | false alarms | over-escalated |",
             "|---|---|---|---|---|---|"]
    for name in sorted(classes):
        c = classes[name]
        if name == "NONE":
            lines.append("| NONE (negatives) | %d | | | %d | |" % (c["n"], c["fp"]))
        else:
            lines.append("| %s | %d | %d | %d/%d | | %d |" % (name, c["n"], c["found"], c["dev_ok"],
                                                            c["dev_n"], c["over"]))
    pos = [r for r in results if not r["negative"]]
    neg = [r for r in results if r["negative"]]
    found = sum(r["found"] for r in pos)
    dev_n = sum(1 for r in pos if r["want"])
    dev_ok = sum(r["device_ok"] for r in pos if r["want"])
    fp = sum(r["false_alarm"] for r in neg)
    over = sum(r["over"] for r in pos)
    recall = 100.0 * found / len(pos) if pos else 100.0
    device = 100.0 * dev_ok / dev_n if dev_n else 100.0
    total = ("corpus: %d samples; recall %d/%d (%.0f%%), right device %d/%d (%.0f%%), "
             "false alarms %d/%d, over-escalated %d"
             % (len(results), found, len(pos), recall, dev_ok, dev_n, device, fp, len(neg), over))
    lines.append("")
    lines.append(total)
    missed = [r["file"] for r in pos if not r["found"]]
    print("\n".join(lines))
    if missed:
        print("missed: " + ", ".join(missed))
    for r in pos:
        if r["found"] and r["want"] and not r["device_ok"]:
            print("wrong device: %s (want %s, got %s)" % (r["file"], ",".join(sorted(r["want"])),
                                                          ",".join(sorted(r["got"])) or "none"))
    for r in neg:
        if r["false_alarm"]:
            print("false alarm: " + r["file"])
    for r in pos:
        if r["over"]:
            print("over-escalated: " + r["file"])
    if args.table:
        with open(args.table, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    failed = []
    if recall < args.min_recall:
        failed.append("recall %.0f%% < %.0f%%" % (recall, args.min_recall))
    if device < args.min_device:
        failed.append("right device %.0f%% < %.0f%%" % (device, args.min_device))
    if fp > args.max_fp:
        failed.append("false alarms %d > %d" % (fp, args.max_fp))
    if over > args.max_over:
        failed.append("over-escalated %d > %d" % (over, args.max_over))
    if failed:
        print("corpus: below the floor: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError) as e:
        print("corpus: FAIL: %s" % e)
        sys.exit(1)
