#!/usr/bin/env python3
"""Metamorphic test of detection: every log sample of a corpus re-delivered through the
envelopes real nodes put around log lines must give the same findings as the sample itself.

    metamorphic.py --faultd BIN --rules DIR [--only NAME,...] [--show N] [--max-differing N]
                   CORPUS

Each sample whose input is a log (`log`, `kmsg`, `k8s_event` in expected.tsv; a command's saved
output goes to its parser, not through a log pipeline) is written once untouched and once
through each envelope below, by this script's own writers (each from the format's public
specification, cited next to it). Every set is replayed by one `faultd --replay` (each file is
read by its own Matcher, as when replayed alone) and each variant is compared with the untouched
sample: the same findings (rule, level, device), so the same count, the same devices and no
false alarm. Prints a row per envelope and the differing samples; exits 1 on a false alarm or
when an envelope differs on more samples than --max-differing (0 unless given)."""
import argparse
import collections
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import score  # noqa: E402  (its replay configuration and device comparison)

LOG_KINDS = {"log", "kmsg", "k8s_event"}
TIME = "2026-03-14T09:26:53.589793238Z"


def lines_of(data):
    """The sample's lines without their newlines (a last line without one is a line too)."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def text(line):
    return line.decode("utf-8", errors="replace")


# ---- the envelopes, each a function of (sample lines, sample kind) -> file bytes

def cri(lines, kind):
    # The CRI log format of /var/log/pods (kubernetes/design-proposals-archive,
    # node/kubelet-cri-logging.md; containerd pkg/cri/io/logger.go): "<RFC3339Nano> <stream>
    # <tag> <message>", tag F for a full line, P for a partial one; containerd cuts a line
    # longer than its 16 KiB buffer into P parts ending with an F part.
    out = []
    limit = 16 * 1024
    for line in lines:
        parts = [line[i:i + limit] for i in range(0, len(line), limit)] or [b""]
        for i, part in enumerate(parts):
            tag = b"F" if i == len(parts) - 1 else b"P"
            out.append(TIME.encode() + b" stderr " + tag + b" " + part)
    return out


def go_json_string(s):
    # Go's encoding/json (encode.go, appendString): ", \\ and control bytes escaped (\n, \r, \t
    # by name, the rest as \u00XX), and with HTML escaping on, as docker's json-file logger
    # leaves it (moby daemon/logger/jsonfilelog/jsonlog), <, > and & as \u003c, \u003e, \u0026,
    # U+2028 and U+2029 as \u2028, \u2029; invalid UTF-8 becomes U+FFFD.
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or ch in "<>&" or o in (0x2028, 0x2029):
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def docker_json(lines, kind):
    # docker's json-file driver: one JSON object per line, the message with its newline.
    return [('{"log":%s,"stream":"stdout","time":"%s"}'
             % (go_json_string(text(line) + "\n"), TIME)).encode() for line in lines]


def rsyslog(lines, kind):
    # rsyslog's RSYSLOG_TraditionalFileFormat (rsyslog docs, "Templates", reserved template
    # names): "%TIMESTAMP% %HOSTNAME% %syslogtag%%msg%", the tag "ident[pid]:" (RFC 3164 §4.1.3);
    # the kernel's lines under the tag "kernel:".
    tag = b"kernel: " if kind == "kmsg" else b"python3[48213]: "
    return [b"Mar 14 09:26:53 node-a07 " + tag + line for line in lines]


def journald_short_iso(lines, kind):
    # journalctl -o short-iso (journalctl(1), "short-iso"): as short, with an ISO 8601 time.
    tag = b"kernel: " if kind == "kmsg" else b"python3[48213]: "
    return [b"2026-03-14T09:26:53+0000 node-a07 " + tag + line for line in lines]


def kubectl_prefix(lines, kind):
    # kubectl logs --prefix (kubectl reference: "Prefix each log line with the log source
    # (pod name and container name)"): "[pod/<pod>/<container>] ".
    return [b"[pod/train-llama-worker-3/pytorch] " + line for line in lines]


def srun_label(lines, kind):
    # srun -l, --label (srun(1): "Prepend task number to lines of stdout/err"): "<task>: ".
    return [b"12: " + line for line in lines]


def mpirun_tag(lines, kind):
    # Open MPI's mpirun --tag-output (mpirun(1): "Tag each line of output to stdout, stderr, and
    # stddiag with [jobid, MCW_rank]<stdxxx>"): "[1,3]<stdout>:".
    return [b"[1,3]<stdout>:" + line for line in lines]


def torchrun_tee(lines, kind):
    # torchrun --tee (torch.distributed.elastic.multiprocessing.tail_log: each line prefixed
    # "[<role><local_rank>]:").
    return [b"[default3]:" + line for line in lines]


def ray_worker(lines, kind):
    # Ray's driver shows a worker's output prefixed with its actor and process
    # ("Ray Logging", docs.ray.io: "(MyActor pid=480956) ...").
    return [b"(RayWorker pid=48213) " + line for line in lines]


LEVEL_WORD = re.compile(rb"(?<![A-Za-z])(CRITICAL|ERROR|WARNING|WARN|INFO|DEBUG|FATAL)(?![A-Za-z])")


def colour(lines, kind):
    # A logger that colours its level word (colorlog, loguru, rich: SGR sequences, ECMA-48
    # §8.3.117, "ESC [ 33 m" ... "ESC [ 0 m"), wherever the word is in the line.
    return [LEVEL_WORD.sub(b"\x1b[33m\\1\x1b[0m", line, count=1) for line in lines]


def ordinary_run(lines, kind):
    # The sample inside a long run of ordinary lines of a training job (this script's own).
    before = [b"2026-03-14 09:%02d:%02d,%03d - train.py:%d - prefetching shard %d of the data set"
              % (i // 60 % 60, i % 60, i % 1000, 100 + i, i) for i in range(300)]
    after = [b"2026-03-14 10:%02d:%02d,%03d - train.py:%d - writing summary %d"
             % (i // 60 % 60, i % 60, i % 1000, 400 + i, i) for i in range(300)]
    return before + lines + after


ENVELOPES = collections.OrderedDict([
    ("containerd CRI", cri), ("docker json-file", docker_json), ("rsyslog", rsyslog),
    ("journald short-iso", journald_short_iso), ("kubectl logs --prefix", kubectl_prefix),
    ("srun -l", srun_label), ("Open MPI --tag-output", mpirun_tag),
    ("torchrun --tee", torchrun_tee), ("Ray worker", ray_worker),
    ("colouring logger", colour), ("inside an ordinary run", ordinary_run),
])


def replay_all(config, directory):
    """Findings per file name of one `faultd --replay` over every file of `directory`."""
    files = sorted(os.listdir(directory))
    p = subprocess.run([score.FAULTD, "--replay", "--config", config]
                       + [os.path.join(directory, f) for f in files],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=1800)
    if p.returncode != 0:
        raise RuntimeError("replay of %s exited %d: %s" % (directory, p.returncode,
                                                           p.stderr.decode(errors="replace")[-300:]))
    found = {f: collections.Counter() for f in files}
    for line in p.stdout.decode(errors="replace").splitlines():
        if line.strip():
            f = json.loads(line)
            found[os.path.basename(f["file"])][
                (f["rule"], str(f.get("level", "")), score.device_key(f.get("device")))] += 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--faultd", required=True)
    ap.add_argument("--rules", required=True, help="directory of the rule packs")
    ap.add_argument("--only", help="comma-separated envelope names (default: all)")
    ap.add_argument("--show", type=int, default=10, help="differing samples listed per envelope")
    ap.add_argument("--table", help="also write the table (Markdown) to this file")
    ap.add_argument("--max-differing", type=int, default=0,
                    help="differing samples allowed per envelope (a floor lowered to 0 as the "
                         "envelopes left are covered; false alarms are never allowed)")
    ap.add_argument("corpus")
    args = ap.parse_args()
    score.FAULTD, score.RULES = os.path.abspath(args.faultd), os.path.abspath(args.rules)
    with open(os.path.join(args.corpus, "expected.tsv"), newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
                if r["file"] and not r["file"].startswith("#")
                and r["input_kind"].strip() in LOG_KINDS]
    envelopes = ENVELOPES
    if args.only:
        envelopes = collections.OrderedDict((k, v) for k, v in ENVELOPES.items()
                                            if k in args.only.split(","))
    work = tempfile.mkdtemp(prefix="faultd-metamorphic-")
    try:
        config = os.path.join(work, "replay.yaml")
        with open(config, "w") as fh:
            fh.write(score.replay_config(work))
        samples = {}
        for r in rows:
            with open(os.path.join(args.corpus, "logs", r["file"]), "rb") as fh:
                samples[r["file"]] = (lines_of(fh.read()), r["input_kind"].strip(),
                                      r["negative"].strip().lower() == "yes")

        def write_set(name, wrap):
            d = os.path.join(work, name)
            os.makedirs(d)
            for f, (lines, kind, _) in samples.items():
                with open(os.path.join(d, f), "wb") as fh:
                    fh.write(b"".join(l + b"\n" for l in wrap(lines, kind)))
            return replay_all(config, d)

        base = write_set("untouched", lambda lines, kind: lines)
        counted = lambda c: sum(n for (rule, level, dev), n in c.items()
                                if level.lower() != "nothandlefault")
        table = ["| envelope | samples | same findings | differing | false alarms |",
                 "|---|---|---|---|---|"]
        failed = False
        for i, (name, wrap) in enumerate(envelopes.items()):
            got = write_set("e%02d" % i, wrap)
            differ = [f for f in samples if got[f] != base[f]]
            alarms = [f for f in samples if samples[f][2] and counted(got[f]) > 0]
            table.append("| %s | %d | %d | %d | %d |" % (name, len(samples),
                                                         len(samples) - len(differ), len(differ),
                                                         len(alarms)))
            for f in differ[:args.show]:
                print("%s: %s\n   untouched: %s\n   enveloped: %s" % (
                    name, f, sorted(base[f].items()), sorted(got[f].items())))
            failed = failed or len(differ) > args.max_differing or bool(alarms)
        print("\n".join(table))
        if args.table:
            with open(args.table, "w") as fh:
                fh.write("\n".join(table) + "\n")
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError) as e:
        print("metamorphic: FAIL: %s" % e)
        sys.exit(1)
