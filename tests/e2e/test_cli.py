#!/usr/bin/env python3
"""The faultd command line per the contract: --version, --check-config (0 or 78 with
file:line:column errors), --replay (JSON findings on stdout, a summary on stderr, exit 1 for an
unreadable file), and the install target with a unit that systemd-analyze accepts."""
import json
import os
import re
import shutil
import subprocess

import harness


L1_LINE = ("[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.403 [silent_check_v3.cc:250]"
           "[ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan]\n")
NORMAL_LINE = ("[INFO] AICPU(26559,aicpu_scheduler):2025-02-25-18:46:51.678.981 [silent_check_v3.cc:240]"
               "[SilentCheck][tid:26572]SilentCheckV3 normal case, val=[3.350337e-08]\n")
OS_EVENT = ("[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811]"
            "[RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x80818c00.\n")


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def cli(args, check, work):
    r = run([args.faultd, "--version"])
    check(r.returncode == 0 and r.stdout.startswith("faultd "), "--version prints the version")

    rules = os.path.join(args.source_dir, "etc", "faultd", "rules.d")
    good = os.path.join(work, "good.yaml")
    with open(good, "w") as f:
        f.write(f"""include: ["{rules}/*.yaml"]
sources:
  - {{ name: device-log, paths: ["/logs/device-*/device-*.log"], path_fields: 'device-(?P<device>\\d+)/' }}
""")
    r = run([args.faultd, "--check-config", "--config", good])
    check(r.returncode == 0, "--check-config accepts a good config (%s)" % r.stderr.strip())

    bad = os.path.join(work, "bad.yaml")
    with open(bad, "w") as f:
        f.write("node: x\nsources:\n  - { name: a, paths: [x], bogus: 1 }\npolicy: { dry_run: maybe }\n")
    r = run([args.faultd, "--check-config", "--config", bad])
    check(r.returncode == 78, "--check-config exits 78 on errors (got %d)" % r.returncode)
    check(bad + ":3:28: unknown key 'bogus'" in r.stderr, "errors name file:line:column")
    check(bad + ":4:20: 'dry_run' must be true or false" in r.stderr, "all errors are reported")
    r = run([args.faultd, "--check-config", "--config", os.path.join(work, "missing.yaml")])
    check(r.returncode == 78, "a missing config file is a config error")

    # Replay: files routed by glob, so path_fields give the device.
    logdir = os.path.join(work, "logs", "device-6")
    os.makedirs(logdir)
    log = os.path.join(logdir, "device-1_1.log")
    with open(log, "w") as f:
        f.write("noise\n" * 5 + NORMAL_LINE + L1_LINE + OS_EVENT + L1_LINE.strip())
    replay_cfg = os.path.join(work, "replay.yaml")
    with open(replay_cfg, "w") as f:
        f.write(f"""include: ["{rules}/*.yaml"]
state_dir: {work}/must-not-exist
sources:
  - {{ name: device-log, paths: ["{work}/logs/device-*/device-*.log"], path_fields: 'device-(?P<device>\\d+)/' }}
  - {{ name: plog, paths: ["{work}/logs/plog/*.log"] }}
""")
    r = run([args.faultd, "--replay", "--config", replay_cfg, log])
    check(r.returncode == 0, "--replay exits 0 (%s)" % r.stderr.strip())
    findings = [json.loads(line) for line in r.stdout.splitlines()]
    lines = [(f["rule"], f["line"], f["device"]) for f in findings]
    check(lines == [("ascend.asd.silent-check-l1", 7, "6"), ("ascend.asd.device-os-event", 8, "6"),
                    ("ascend.asd.silent-check-l1", 9, "6")],
          "replay finds the L1 error, the device-OS event and the unterminated last line (%s)" % lines)
    f0 = findings[0] if findings else {}
    for key in ("rule", "source", "device", "level", "code", "file", "line", "text"):
        check(key in f0, "a finding has '%s'" % key)
    check(f0.get("source") == "device-log" and f0.get("file") == log and f0.get("code") == "80818C00",
          "the finding names its source, file and code")
    check("replay:" in r.stderr and "3 finding(s)" in r.stderr, "a summary line goes to stderr")
    check(not os.path.exists(os.path.join(work, "must-not-exist")), "replay writes no state")

    # A relative path reaches the source whose glob matches it, not every source.
    r = run([args.faultd, "--replay", "--config", replay_cfg, os.path.relpath(log, work)], cwd=work)
    sources = sorted({json.loads(line)["source"] for line in r.stdout.splitlines()})
    check(r.returncode == 0 and sources == ["device-log"] and len(r.stdout.splitlines()) == 3,
          "a relative path is routed like an absolute one (%s)" % sources)

    r = run([args.faultd, "--replay", "--config", replay_cfg, log, os.path.join(work, "nope.log")])
    check(r.returncode == 1, "--replay exits 1 when a file cannot be read")
    check(len(r.stdout.splitlines()) == 3, "the readable file is still replayed")

    # --parser: a command's saved output goes through its parser and the record rules; the
    # command line the capture starts with names the device.
    health = os.path.join(work, "health.txt")
    with open(health, "w") as f:
        f.write("$ npu-smi info -t health -i 2 -c 0\n"
                "\tHealth Status                  : Alarm\n"
                "\tError Code                     : A4025021 8C084E00\n"
                "\tError Information              : NA\n")
    r = run([args.faultd, "--replay", "--config", replay_cfg, "--parser", "npu_smi_health", health])
    check(r.returncode == 0, "--replay --parser exits 0 (%s)" % r.stderr.strip())
    found = [json.loads(l) for l in r.stdout.splitlines()]
    check([(f["rule"], f["device"], f["code"]) for f in found] ==
          [("ascend.npu-smi.health-fault", "2", "A4025021"),
           ("ascend.npu-smi.health-fault", "2", "8C084E00")],
          "one finding per code, on the device the command line names (%s)" % r.stdout.strip())
    # Output the parser refuses is said, and its own lines go through the rules as a failed
    # run's output would: nvidia-smi's words for a lost GPU are a fault report.
    lost = os.path.join(work, "nvidia-smi.txt")
    with open(lost, "w") as f:
        f.write("Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  "
                "Reboot the system to recover this GPU\n")
    r = run([args.faultd, "--replay", "--config", replay_cfg, "--parser", "nvidia_smi_bus", lost])
    found = [json.loads(l) for l in r.stdout.splitlines()]
    check(r.returncode == 0 and "not nvidia_smi_bus output" in r.stderr and "1 not parsed" in r.stderr,
          "a file that is not the parser's output is said and counted (%s)" % r.stderr.strip())
    check([(f["rule"], f["device"], f["source"]) for f in found] ==
          [("nvidia.gpu.lost", "0000:C1:00", "replay-nvidia_smi_bus")],
          "its own lines are matched: the lost GPU (%s)" % r.stdout.strip())
    r = run([args.faultd, "--replay", "--config", replay_cfg, "--parser", "nope", health])
    check(r.returncode == 64 and "unknown parser" in r.stderr, "an unknown parser is a usage error")


FAULTCTL_COMMANDS = ("status", "events", "isolate", "clear", "ack", "history", "incidents",
                     "budget", "reload", "decode-overflow", "compare")


def conventions(args, check, work):
    """Issue 28, item 11: per-command help, one-line errors that name what was wrong,
    --version, --opt=value and the exit codes in the help."""
    r = run([args.faultctl, "--version"])
    check(r.returncode == 0 and re.fullmatch(r"faultctl \S+\n", r.stdout) is not None,
          "faultctl --version prints its version (%r)" % r.stdout)
    top = run([args.faultctl, "--help"])
    check(top.returncode == 0 and "exit codes:" in top.stdout and " 69 " in top.stdout,
          "faultctl --help lists the exit codes")
    for command in FAULTCTL_COMMANDS:
        r = run([args.faultctl, command, "--help"])
        first = r.stdout.splitlines()[0] if r.stdout else ""
        check(r.returncode == 0 and r.stdout != top.stdout and command in first
              and first.startswith("usage: faultctl"),
              "faultctl %s --help prints that command's usage (%r)" % (command, first))
    socket = os.path.join(work, "nobody.sock")
    for argv, names in ((["events", "--limit", "ten"], "--limit"),
                        (["events", "--bogus"], "--bogus"),
                        (["isolate", "3"], "--reason"),
                        (["frobnicate"], "frobnicate"),
                        (["status", "--all=yes"], "--all")):
        r = run([args.faultctl, "--socket", socket] + argv)
        lines = r.stderr.splitlines()
        check(r.returncode == 2 and len(lines) == 1 and names in lines[0] and r.stdout == "",
              "faultctl %s: exit 2 with one line naming %s (%r)" % (" ".join(argv), names, r.stderr))
    # --opt=value: parsed as --opt value, so the request gets as far as the (absent) daemon.
    r = run([args.faultctl, "--socket=" + socket, "events", "--limit=5", "--device=3",
             "--since=1h", "-o", "json"])
    check(r.returncode == 69 and "nobody.sock" in r.stderr,
          "--socket=PATH --limit=N --device=D are taken as values (%d: %s)"
          % (r.returncode, r.stderr.strip()))
    r = run([args.faultd, "--help"])
    check(r.returncode == 0 and "exit codes:" in r.stdout and " 78 " in r.stdout,
          "faultd --help lists the exit codes")
    r = run([args.faultd, "--bogus"])
    check(r.returncode == 64 and len(r.stderr.splitlines()) == 1 and "--bogus" in r.stderr,
          "faultd: an unknown argument is one line naming it (%r)" % r.stderr)
    minimal = os.path.join(work, "minimal.yaml")
    with open(minimal, "w") as f:
        f.write('rules:\n  - { id: x, match: { any: ["x"] }, fault: { level: NotHandleFault } }\n')
    r = run([args.faultd, "--replay", "--config=" + minimal, "--parser=nope", os.devnull])
    check(r.returncode == 64 and "unknown parser 'nope'" in r.stderr,
          "faultd --parser=NAME is taken as a value (%r)" % r.stderr.strip())


def replay_rules(args, check, work):
    """Issue 28, item 8: a site tries its own rule pack against lines without a config
    (`--replay --rules FILE -o text`), and a file no source claims gives each finding once,
    however many file sources the config has."""
    rules = os.path.join(work, "site-rules.yaml")
    with open(rules, "w") as f:
        f.write("""rules:
  - id: site.ecc
    description: the site's own ECC line
    match: { any: ["uncorrectable ECC"], regex: 'gpu=(?P<device>\\d+)' }
    device: "{device}"
    fault: { code: SITE01, level: SeparateNPU }
""")
    log = os.path.join(work, "lines.log")
    with open(log, "w") as f:
        f.write("boot ok\nuncorrectable ECC error gpu=3\nall quiet\n")
    r = run([args.faultd, "--replay", "--rules", rules, "-o", "text", log])
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 2
          and lines[0] == "%s:2: site.ecc SeparateNPU code SITE01 device 3" % log
          and lines[1].strip() == "uncorrectable ECC error gpu=3",
          "--replay --rules FILE -o text prints the finding once, without a config (%r, %s)"
          % (r.stdout, r.stderr.strip()))
    r = run([args.faultd, "--replay", "--rules=" + rules, log])
    found = [json.loads(l) for l in r.stdout.splitlines()]
    check(r.returncode == 0 and [(f["rule"], f["device"], f["line"]) for f in found]
          == [("site.ecc", "3", 2)], "--rules=FILE with JSON output (%s)" % r.stdout.strip())
    # A config with three file sources, none of whose globs claims the file: once, not thrice.
    config = os.path.join(work, "three-sources.yaml")
    with open(config, "w") as f:
        f.write("""include: ["%s"]
sources:
  - { name: a, paths: ["/nowhere/a/*.log"] }
  - { name: b, paths: ["/nowhere/b/*.log"] }
  - { name: c, paths: ["/nowhere/c/*.log"] }
""" % rules)
    r = run([args.faultd, "--replay", "--config", config, log])
    found = [json.loads(l) for l in r.stdout.splitlines()]
    check(r.returncode == 0 and len(found) == 1 and "1 finding(s)" in r.stderr,
          "a file no source claims gives each finding once (%d: %s)" % (len(found), r.stderr.strip()))
    bad = os.path.join(work, "bad-rules.yaml")
    with open(bad, "w") as f:
        f.write("rules:\n  - id: x\n    match: { any: [a] }\n    fault: { level: Nope }\n")
    r = run([args.faultd, "--replay", "--rules", bad, log])
    check(r.returncode == 78 and bad + ":" in r.stderr,
          "a rule file with an error: exit 78 naming file:line:column (%s)" % r.stderr.strip())


def install(args, check, work):
    build_dir = os.path.dirname(os.path.abspath(args.faultd))
    dest = os.path.join(work, "root")
    r = run(["cmake", "--install", build_dir], env=dict(os.environ, DESTDIR=dest))
    check(r.returncode == 0, "cmake --install succeeds (%s)" % r.stderr.strip())
    for path in ("usr/sbin/faultd", "usr/bin/faultctl", "etc/faultd/faultd.yaml",
                 "etc/faultd/rules.d/ascend-asd.yaml", "etc/faultd/hooks/isolate-device",
                 "usr/lib/systemd/system/faultd.service", "usr/share/doc/faultd/README.md",
                 "usr/share/man/man8/faultd.8", "usr/share/man/man8/faultctl.8",
                 "usr/share/man/man5/faultd.yaml.5",
                 "usr/share/bash-completion/completions/faultctl"):
        check(os.path.exists(os.path.join(dest, path)), "installed /" + path)
    for page in ("man8/faultd.8", "man8/faultctl.8", "man5/faultd.yaml.5"):
        path = os.path.join(dest, "usr/share/man", page)
        if shutil.which("man") and os.path.exists(path):
            r = run(["man", "--warnings", "-l", path], env=dict(os.environ, MANPAGER="cat",
                                                                  MANWIDTH="80"))
            check(r.returncode == 0 and "NAME" in r.stdout and "warning" not in r.stderr,
                  "man renders %s without warnings (%s)" % (page, r.stderr.strip()[:300]))
    completion = os.path.join(dest, "usr/share/bash-completion/completions/faultctl")
    if shutil.which("bash") and os.path.exists(completion):
        # The completion offers every command faultctl knows, after sourcing it in bash.
        script = ('source %s; COMP_WORDS=(faultctl ""); COMP_CWORD=1; _faultctl; '
                  'printf "%%s\\n" "${COMPREPLY[@]}"' % completion)
        r = run(["bash", "-c", script])
        offered = set(r.stdout.split())
        check(set(FAULTCTL_COMMANDS) <= offered,
              "the bash completion offers every command (%s)" % sorted(set(FAULTCTL_COMMANDS) - offered))
    check(os.access(os.path.join(dest, "etc/faultd/hooks/isolate-device"), os.X_OK),
          "example hooks stay executable")
    if shutil.which("systemd-analyze") is None:
        print("# systemd-analyze not installed; unit verification skipped")
        return
    # Verify the installed unit with its programs pointed into the staging root, so that
    # systemd-analyze also checks that every command exists and is executable.
    with open(os.path.join(dest, "usr/lib/systemd/system/faultd.service")) as f:
        unit = f.read()
    check("ExecStart=/usr/sbin/faultd --config /etc/faultd/faultd.yaml" in unit,
          "the unit starts the installed binary on the default config")
    staged = os.path.join(work, "faultd.service")
    with open(staged, "w") as f:
        f.write(unit.replace("/usr/sbin/faultd", os.path.join(dest, "usr/sbin/faultd")))
    r = run(["systemd-analyze", "verify", "--man=no", staged])
    problems = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    check(r.returncode == 0 and not problems, "systemd-analyze verify accepts the unit: %s" % problems)
    # The installed config checks out against the installed rules and hooks (its /etc/faultd
    # paths pointed into the staging root: --check-config refuses a config with no rule or a
    # hook that is not there).
    with open(os.path.join(dest, "etc/faultd/faultd.yaml")) as f:
        text = f.read()
    staged_config = os.path.join(work, "installed.yaml")
    with open(staged_config, "w") as f:
        f.write(text.replace("/etc/faultd/", os.path.join(dest, "etc/faultd") + "/"))
    r = run([os.path.join(dest, "usr/sbin/faultd"), "--check-config", "--config", staged_config])
    check(r.returncode == 0, "the installed default config is valid (%s)" % r.stderr.strip())


if __name__ == "__main__":
    harness.main(cli, conventions, replay_rules, install)
