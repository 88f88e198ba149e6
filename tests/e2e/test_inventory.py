#!/usr/bin/env python3
"""The node's inventory, end to end with the stand-in npu-smi (tests/sim/fake-npu-smi) in both
table layouts, against one real faultd each:

- every device is visible from the start: faultd_device_state healthy, faultd_device_info,
  faultd_devices{state}, faultd_devices_expected, and `faultctl status` lists them all;
- a card that leaves `npu-smi info` is a device.lost finding on that device, isolated through
  the usual lifecycle (the isolate hook runs); listed again, its return is journaled as a
  recovery (an isolated device stays isolated until an operator clears it); in dry-run mode the
  warning clears by itself;
- 100,000 forged lines naming devices the node does not have (the security audit's R6, written
  by `nobody`) create no device, no series and no action, leave a few rows in the journal and
  keep RSS under 64 MiB;
- a discoverer runs as a hook does (the security audit's N12): with PATH alone in its
  environment, none of faultd's, and a bare program name is looked up in the system's
  directories, never in faultd's PATH; the program it runs is logged.

The stand-in gets its script through env(1) in its argv, as a tool that needs a variable is
configured."""
import json
import os
import sqlite3

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for
from test_log_writer import as_writer, writer_dir

RSS_BOUND_MIB = 64
FORGED_LINES = 100_000

HOOK = """#!/bin/sh
echo "$FAULTD_ACTION $FAULTD_DEVICE $FAULTD_RULE" >> "$1"
"""


def write_script(path, script):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(script, f)
    os.replace(tmp, path)


def fake_npu_smi(args, work):
    """The stand-in's argv, its script and state passed as a discoverer needs them."""
    fake = os.path.join(args.source_dir, "tests/sim/fake-npu-smi")
    return ["/usr/bin/env", "FAKE_NPU_SMI_SCRIPT=" + script_path(work),
            "FAKE_NPU_SMI_STATE=" + os.path.join(work, "npu-smi-state"), fake]


def script_path(work):
    return os.path.join(work, "npu-smi.json")


def config(args, work, port, dry_run=False, extra="", npu_smi=None, nvidia_smi=()):
    npu_smi = npu_smi or fake_npu_smi(args, work) + ["info"]
    return f"""
node: inventory
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{args.source_dir}/etc/faultd/rules.d/*.yaml"{extra}]
sources:
  - {{ name: logs, type: file, paths: ["{work}/logs/*.log"], scan_interval: 100ms }}
inventory:
  npu_smi: {json.dumps(npu_smi)}
  nvidia_smi: {json.dumps(list(nvidia_smi))}
  dev_dir: ""
  interval: 1s
  timeout: 1s
actions:
  isolate: {{ argv: ["{work}/hook.sh", "{work}/hooks.log"], timeout: 10s }}
policy: {{ dry_run: {"true" if dry_run else "false"} }}
"""


def start(args, work, script, **kw):
    port = free_port()
    write_script(script_path(work), script)
    with open(os.path.join(work, "hook.sh"), "w") as f:
        f.write(HOOK)
    os.chmod(os.path.join(work, "hook.sh"), 0o755)
    writer_dir(os.path.join(work, "logs"))
    d = Faultd(args, work, config(args, work, port, **kw))
    d.start()
    return d, port


def states(port):
    """device → state, from faultd_device_state."""
    out = {}
    for line in scrape(port).splitlines():
        if line.startswith("faultd_device_state{") and line.endswith(" 1"):
            labels = dict(kv.split("=", 1) for kv in line[line.index("{") + 1:line.index("}")].split(","))
            out[labels["device"].strip('"')] = labels["state"].strip('"')
    return out


def series_count(text):
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


def events(d, device):
    return [f for f in d.ctl_json("events", "--device", device, "--limit", "100")["faults"]]


def wait_rule(d, device, rule):
    wait_for("%s on device %s" % (rule, device),
             lambda: any(f["rule"] == rule for f in events(d, device)), timeout=harness.scaled(20))


def plain_layout_lost_isolated_returned(args, check, work):
    d, port = start(args, work, {"npus": 8})
    wait_for("8 devices", lambda: len(states(port)) == 8, timeout=harness.scaled(20))
    text = scrape(port)
    check(set(states(port).values()) == {"healthy"}, "8 NPUs healthy at start")
    check(metric_value(text, "faultd_devices_expected", {}) == 8.0, "faultd_devices_expected 8")
    check(metric_value(text, "faultd_devices", {"state": "healthy"}) == 8.0,
          "faultd_devices{state=healthy} 8")
    check(metric_value(text, "faultd_device_info", {"device": "5", "bus_id": "0000:A7:00.0",
                                                     "model": "Ascend910"}) == 1.0,
          "faultd_device_info names device 5's bus id and model")
    status = d.ctl_json("status")
    check(len(status["devices"]) == 8 and status["inventory"]["expected"] == 8,
          "faultctl status lists the 8 devices")
    check("Ascend910-5" in next(x for x in status["devices"] if x["device"] == "5")["aliases"],
          "status shows device 5's aliases")
    text_status = d.ctl("status").stdout
    check("8 of 8 device(s) present" in text_status, "faultctl status says 8 of 8 present")

    write_script(script_path(work), {"npus": 8, "missing": ["5"]})
    wait_for("device 5 isolated", lambda: states(port).get("5") == "isolated",
             timeout=harness.scaled(30))
    lost = [f for f in events(d, "5") if f["rule"] == "device.lost"]
    check(len(lost) == 1 and lost[0]["level"] == "SeparateNPU", "one device.lost, SeparateNPU")
    with open(os.path.join(work, "hooks.log")) as f:
        check("isolate 5 device.lost" in f.read(), "the isolate hook ran for device 5")
    check(metric_value(scrape(port), "faultd_devices_present", {}) == 7.0, "7 devices present")
    check(all(s == "healthy" for dev, s in states(port).items() if dev != "5"),
          "the other 7 stay healthy")
    check("[missing]" in d.ctl("status").stdout, "faultctl status marks device 5 missing")

    write_script(script_path(work), {"npus": 8})
    wait_rule(d, "5", "device.returned")
    check(metric_value(scrape(port), "faultd_devices_present", {}) == 8.0, "8 present again")
    check(states(port).get("5") == "isolated", "an isolated device stays isolated on its return")
    check(d.ctl("clear", "Ascend910-5", "--reason", "reseated").returncode == 0,
          "an operator clears it under its Device Plugin name")
    check(states(port).get("5") == "healthy", "device 5 healthy once cleared")
    # The inventory survives a restart: still 8 devices before any discovery ran.
    d.stop()
    os.remove(script_path(work))  # the stand-in fails from now on
    d.start()
    check(len(states(port)) == 8, "8 devices shown right after a restart, from the store")


def a3_layout_dry_run_recovers(args, check, work):
    d, port = start(args, work, {"npus": 8, "layout": "a3"}, dry_run=True)
    wait_for("16 chips", lambda: len(states(port)) == 16, timeout=harness.scaled(20))
    check(metric_value(scrape(port), "faultd_device_info",
                       {"device": "11", "physical_id": "11", "bus_id": "0000:B3:00.0"}) == 1.0,
          "chip 1 of card 5 is device 11, with its physical id and bus id")
    write_script(script_path(work), {"npus": 8, "layout": "a3", "missing": ["5"]})
    wait_for("devices 10 and 11 warning",
             lambda: states(port).get("10") == "warning" and states(port).get("11") == "warning",
             timeout=harness.scaled(30))
    check(sum(1 for s in states(port).values() if s == "healthy") == 14,
          "the 14 other chips stay healthy (their ids do not move)")
    write_script(script_path(work), {"npus": 8, "layout": "a3"})
    wait_for("devices 10 and 11 healthy again",
             lambda: states(port).get("10") == "healthy" and states(port).get("11") == "healthy",
             timeout=harness.scaled(30))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def forged_devices_are_bounded(args, check, work):
    d, port = start(args, work, {"npus": 8})
    wait_for("8 devices", lambda: len(states(port)) == 8, timeout=harness.scaled(20))
    before = series_count(scrape(port))
    # The audit's R6 lines: a heartbeat loss and Device Plugin faults, each naming a new device.
    logs = os.path.join(work, "logs")
    as_writer(
        'i=0; while [ $i -lt $2 ]; do '
        'echo "[ERROR] Device[$((1000000 + i))] lost heartbeart."; '
        'echo "Warning Occur pod/ascend-device-plugin-daemonset-910-x device fault, '
        'nodeName:n, assertion:Occur, cardID:$((2000000 + i)), deviceID:0, '
        'faultCodes:$((268435456 + i)), faultLevelName:SeparateNPU, alarmRaisedTime:2023-11-21 05:36:53"; '
        'i=$((i + 1)); done > "$1/forged.log"', logs, str(FORGED_LINES // 2))
    wait_for("every forged line read",
             lambda: (metric_value(scrape(port), "faultd_source_lines_total", {"source": "logs"})
                      or 0) >= FORGED_LINES, timeout=harness.scaled(120))
    text = scrape(port)
    outside = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                  if line.startswith("faultd_findings_outside_inventory_total{"))
    after = series_count(text)
    print("# series %d -> %d, findings outside the inventory %d, RSS %d KiB" %
          (before, after, outside, rss_kib(d.proc.pid)), flush=True)
    check(outside >= FORGED_LINES // 2, "the forged findings are counted as outside the inventory")
    check(after - before <= 20, "series grow by a constant (%d -> %d)" % (before, after))
    check(len(states(port)) == 8, "still 8 devices")
    check("1000000" not in text and "2000000" not in text, "no forged device in /metrics")
    db = sqlite3.connect("file:%s/state/state.db?mode=ro" % work, uri=True)
    rows = db.execute("select count(*) from faults").fetchone()[0]
    actions = db.execute("select count(*) from actions").fetchone()[0]
    devices = db.execute("select count(*) from devices").fetchone()[0]
    db.close()
    check(rows <= 200, "a few forged findings journaled (%d rows)" % rows)
    check(actions == 0 and devices == 0, "no action, no device row for a forged id")
    if harness.sanitizer_of(d.proc.pid):
        print("# sanitizer build: RSS not bounded", flush=True)
    else:
        check(rss_kib(d.proc.pid) < RSS_BOUND_MIB * 1024,
              "RSS under %d MiB (%d KiB)" % (RSS_BOUND_MIB, rss_kib(d.proc.pid)))
    # A good line on a real device still works.
    as_writer('echo "[ERROR] Device[3] lost heartbeart." >> "$1/forged.log"', logs)
    wait_for("device 3 warned", lambda: states(port).get("3") in ("warning", "isolated"),
             timeout=harness.scaled(20))


def discoverer_environment(args, check, work):
    """Security audit N12: faultd's environment (a secret, a PATH with a planted tool first) does
    not reach a discoverer, and a bare name found only through faultd's PATH is not run."""
    planted_dir = os.path.join(work, "planted")
    os.makedirs(planted_dir)
    ran = os.path.join(work, "planted-ran")
    with open(os.path.join(planted_dir, "faultd-test-planted-smi"), "w") as f:
        f.write("#!/bin/sh\ntouch %s\n" % ran)
    os.chmod(os.path.join(planted_dir, "faultd-test-planted-smi"), 0o755)
    # The discoverer records its environment, then answers as npu-smi does.
    shows_env = os.path.join(work, "shows-env")
    with open(shows_env, "w") as f:
        f.write('#!/bin/sh\nenv > "$0.env"\nexec "$@"\n')
    os.chmod(shows_env, 0o755)
    saved = dict(os.environ)
    os.environ["PATH"] = planted_dir + os.pathsep + os.environ["PATH"]
    os.environ["FAULTD_TEST_SECRET_ENV"] = "hunter2"
    try:
        port = free_port()
        write_script(script_path(work), {"npus": 4})
        d = Faultd(args, work, config(args, work, port,
                                      npu_smi=[shows_env] + fake_npu_smi(args, work) + ["info"],
                                      nvidia_smi=["faultd-test-planted-smi"]))
        d.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    check(wait_for("4 devices", lambda: len(states(port)) == 4, timeout=harness.scaled(20)),
          "the discoverer ran and its table gave 4 devices")
    with open(shows_env + ".env") as f:
        env = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
    check("FAULTD_TEST_SECRET_ENV" not in env, "faultd's environment is not passed on")
    check(env.get("PATH") == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
          "PATH is the hooks' (%s)" % env.get("PATH"))
    check(set(env) <= {"PATH", "PWD", "SHLVL", "_", "FAKE_NPU_SMI_SCRIPT", "FAKE_NPU_SMI_STATE"},
          "nothing else but what the shell and env(1) set (%s)" % sorted(env))
    check(wait_for("the planted tool's failure logged",
                   lambda: "faultd-test-planted-smi: not found in /usr/local/sbin" in d.read_log()),
          "a bare name only faultd's PATH holds is not found")
    check(not os.path.exists(ran), "the planted tool never ran")
    check("inventory: npu-smi runs %s" % shows_env in d.read_log(), "the program run is logged")
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(plain_layout_lost_isolated_returned, a3_layout_dry_run_recovers,
                 forged_devices_are_bounded, discoverer_environment)
