#!/usr/bin/env python3
"""What a log writer can make faultd's state hold, reproduced the way the security audit did (the
writer is `nobody` through setpriv when the test runs as root) against one real faultd with the
shipped packs, and measured by counting (VmRSS, VmHWM, rows, series, reply bytes), never by
timing.

- N2: Device Plugin fault events with a new code on every line (the audit's 250,000) open at
  most 256 incidents per device and rule; the rest are counted into one TOO_MANY_CODES incident
  per device and rule (faultd_incidents_folded_total), every device still reaches warning, and
  faultd's peak memory stays bounded, during the flood and after a restart on that state.
- F12: `incidents` and `history` are served a page at a time: a request for 100,000 rows gets
  at most 1000 and a cursor; faultctl reads the pages.
- N6: a job printing the driver's heartbeat loss for devices 0, 1 and 2 neither warns them nor
  hides the kernel log's genuine line for device 5 in a node-level storm.
- F6: without an inventory, 20,000 forged device ids add at most 64 devices; the rest are
  counted as outside the inventory."""
import json
import os
import socket

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for
from test_log_writer import as_writer, writer_dir
from test_log_writer_costs import proc_field, query, vm_rss_kib

FLOOD_LINES = int(os.environ.get("FAULTD_E2E_FLOOD_LINES", 250_000))  # the audit's count
PER_RULE_CAP = 256  # LifecycleSettings::Limits::open_per_device_rule
PEAK_BOUND_MIB = 96  # the shipped unit's MemoryMax is 256M; the audit measured 370 MB
PAGE_ROWS = 1000

PLUGIN_EVENT = ("Warning Occur pod/ascend-device-plugin device fault, nodeName:n, assertion:Occur, "
                "cardID:%d, deviceID:0, faultCodes:%08X, faultLevelName:SubHealthFault, "
                "alarmRaisedTime:2023-11-21 05:36:53\n")
HEARTBEAT = ("[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> "
             "Heartbeat lost! (device=%d; old_count=1104; new_count=1104)\n")


def config(args, work, port, sources, inventory='inventory: { devices: "0-7" }'):
    return f"""
node: bounds
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{os.path.abspath(args.source_dir)}/etc/faultd/rules.d/*.yaml"]
sources:
{sources}
{inventory}
policy:
  levels:
    RestartNPU: {{ state: warning }}
    SubHealthFault: {{ state: warning }}
"""


def metric(port, name, labels=None):
    return metric_value(scrape(port), name, labels or {}) or 0.0


def lines_read(port, source):
    return metric(port, "faultd_source_lines_total", {"source": source})


def state_of(port, device):
    return harness.device_state(port, device)


def peak_mib(pid):
    return proc_field(pid, "status", "VmHWM") / 1024.0


def control(d, request):
    """One request on the control socket as faultctl sends it: the raw reply line and its JSON."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(harness.scaled(30))
        s.connect(d.socket)
        s.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    return data, json.loads(data)


def code_flood(args, check, work):
    """N2 (and F12 on its incidents): the audit's reproduction with the shipped packs."""
    train = writer_dir(os.path.join(work, "train"))
    port = free_port()
    d = Faultd(args, work, config(args, work, port, f"""\
  - {{ name: training, type: file, paths: ["{train}/**/*.log"], scan_interval: 200ms }}"""))
    d.start()
    idle = vm_rss_kib(d.proc.pid) / 1024.0
    as_writer('mkdir -p "$1/job1" && python3 -c "$2" "$1/job1/a.log" "$3"', train,
              "import sys\n"
              "with open(sys.argv[1], 'w') as f:\n"
              "    for i in range(int(sys.argv[2])):\n"
              "        f.write(%r %% (i %% 8, 0x10000000 + i))\n" % PLUGIN_EVENT,
              str(FLOOD_LINES))
    peak = [0.0]

    def read_all():
        peak[0] = max(peak[0], vm_rss_kib(d.proc.pid) / 1024.0)
        return lines_read(port, "training") >= FLOOD_LINES

    wait_for("every line read", read_all, timeout=300, interval=0.2)
    hwm = peak_mib(d.proc.pid)
    rss = vm_rss_kib(d.proc.pid) / 1024.0
    print("# %d lines of distinct codes: RSS %.1f MiB idle, %.1f after, VmHWM %.1f MiB"
          % (FLOOD_LINES, idle, rss, hwm), flush=True)
    sanitized = harness.sanitizer_of(d.proc.pid)
    if sanitized:
        print("# %s build: memory figures are not checked" % sanitized)
    else:
        check(hwm < PEAK_BOUND_MIB, "N2: peak memory stays bounded (VmHWM %.1f MiB < %d)"
              % (hwm, PEAK_BOUND_MIB))
    check(all(state_of(port, str(dev)) == "warning" for dev in range(8)),
          "N2: every device the flood names still reaches warning")
    rule = "ascend.device-plugin.event-fault"
    opened = metric(port, "faultd_incidents_open")
    check(opened <= 8 * (PER_RULE_CAP + 1),
          "N2: at most %d codes and one fold per device are open (%d)"
          % (PER_RULE_CAP, opened))
    folded = metric(port, "faultd_incidents_folded_total", {"rule": rule})
    check(folded == FLOOD_LINES - 8 * PER_RULE_CAP,
          "N2: every other code is counted as folded (%d)" % folded)
    db = os.path.join(work, "state", "state.db")
    check(query(db, "SELECT count(*) FROM incidents WHERE open = 1 AND code = 'TOO_MANY_CODES'")
          == 8, "N2: one TOO_MANY_CODES incident per device and rule")
    check(query(db, "SELECT count(*) FROM faults") <= 8 * (PER_RULE_CAP + 1),
          "N2: the folded findings add no journal rows")

    # F12: a request for 100,000 incidents gets one page and a cursor; faultctl reads them all.
    raw, reply = control(d, {"cmd": "incidents", "all": True, "limit": 100000})
    check(len(reply["incidents"]) == PAGE_ROWS and "next_before" in reply,
          "F12: incidents: one page of %d rows and a cursor (%d bytes)" % (PAGE_ROWS, len(raw)))
    listed = d.ctl_json("incidents", "--all", "--limit", "100000")["incidents"]
    check(len(listed) == opened and len({i["id"] for i in listed}) == len(listed),
          "F12: faultctl incidents reads every page (%d incidents)" % len(listed))
    raw, reply = control(d, {"cmd": "history", "device": "0", "limit": 100000})
    check(len(reply["incidents"]) <= PAGE_ROWS and "next_incidents_before" not in reply
          and len(reply["incidents"]) == PER_RULE_CAP + 1,
          "F12: history: at most a page per journal (%d incidents, %d bytes)"
          % (len(reply["incidents"]), len(raw)))
    _, reply = control(d, {"cmd": "history", "device": "0", "limit": 100})
    check(len(reply["incidents"]) == 100 and "next_incidents_before" in reply,
          "F12: a longer history says where its next page starts")
    history = d.ctl_json("history", "0", "--limit", "300")
    check(len(history["incidents"]) == PER_RULE_CAP + 1 and len(history["transitions"]) == 1,
          "F12: faultctl history reads the pages (%d incidents)" % len(history["incidents"]))
    check(d.stop() == 0, "faultd stops cleanly")

    # What a restart loads from that state is bounded too.
    d.start()
    wait_for("the state to be loaded", lambda: state_of(port, "0") == "warning")
    restarted = peak_mib(d.proc.pid)
    print("# restart on that state: VmHWM %.1f MiB" % restarted, flush=True)
    if not sanitized:
        check(restarted < PEAK_BOUND_MIB / 2,
              "N2: a restart on that state stays small (VmHWM %.1f MiB)" % restarted)
    check(d.stop() == 0, "faultd stops cleanly after the restart")


def kernel_fault_under_a_forged_storm(args, check, work):
    """N6: the audit's reproduction: a job prints the driver's heartbeat loss for devices 0, 1, 2
    while the kernel log reports it for device 5."""
    kern = os.path.join(work, "kern")
    os.makedirs(kern)
    train = writer_dir(os.path.join(work, "train"))
    port = free_port()
    d = Faultd(args, work, config(args, work, port, f"""\
  - {{ name: host-kernel, type: file, kernel_log: true, paths: ["{kern}/*.log"], scan_interval: 200ms }}
  - {{ name: training, type: file, paths: ["{train}/**/*.log"], scan_interval: 200ms }}"""))
    d.start()
    as_writer('mkdir -p "$1/job1" && printf "%s%s%s" "$2" "$3" "$4" > "$1/job1/job.log"', train,
              HEARTBEAT % 0, HEARTBEAT % 1, HEARTBEAT % 2)
    wait_for("the job's lines read", lambda: lines_read(port, "training") >= 3)
    with open(os.path.join(kern, "kern.log"), "a") as f:
        f.write(HEARTBEAT % 5)
    check(wait_for("device 5 in warning", lambda: state_of(port, "5") == "warning"),
          "N6: the kernel log's heartbeat loss warns device 5")
    check(all(state_of(port, str(dev)) == "healthy" for dev in range(3)),
          "N6: the job's copies of the driver's line warn no device")
    refused = metric(port, "faultd_rule_refused_values_total", {"field": "source_type"})
    check(refused >= 3, "N6: the job's copies are counted as refused (%d)" % refused)
    check("node-level incident" not in d.read_log(), "N6: no node-level storm is declared")
    check(d.stop() == 0, "faultd stops cleanly")


def forged_devices_without_inventory(args, check, work):
    """F6: the audit's 20,000 forged device ids on a node where no discoverer answers."""
    logs = writer_dir(os.path.join(work, "logs"))
    rules = harness.write_audit_rules(work)
    port = free_port()
    d = Faultd(args, work, f"""
node: bounds
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}"]
sources:
  - {{ name: logs, type: file, paths: ["{logs}/*.log"], scan_interval: 200ms }}
inventory: {{ npu_smi: [], nvidia_smi: [], dev_dir: "" }}
policy: {{ dry_run: true }}
""")
    d.start()
    check(not d.ctl_json("status")["inventory"]["known"], "F6: no inventory is known")
    as_writer('python3 -c "$2" "$1/forged.log"', logs,
              "import sys\n"
              "with open(sys.argv[1], 'w') as f:\n"
              "    for i in range(20000): f.write('FAULT-X dev=<%d>\\n' % (1000000 + i))\n")
    wait_for("every line read", lambda: lines_read(port, "logs") >= 20000, timeout=120)
    text = scrape(port)
    devices = {line.split('device="')[1].split('"')[0] for line in text.splitlines()
               if line.startswith("faultd_faults_total{")}
    outside = metric_value(text, "faultd_findings_outside_inventory_total",
                           {"rule": "audit.fault"}) or 0.0
    print("# 20,000 forged ids without an inventory: %d devices in faultd_faults_total, %d "
          "outside, %d bytes of /metrics, VmRSS %.1f MiB"
          % (len(devices), outside, len(text), vm_rss_kib(d.proc.pid) / 1024.0), flush=True)
    check(len(devices) == 64, "F6: 64 device ids are kept (%d)" % len(devices))
    check(outside == 20000 - 64, "F6: the others are counted as outside (%d)" % outside)
    check("no inventory, and more than 64 device ids named" in d.read_log(),
          "F6: the refused ones are logged")
    check(d.stop() == 0, "faultd stops cleanly")


if __name__ == "__main__":
    harness.main(code_flood, kernel_fault_under_a_forged_storm, forged_devices_without_inventory)
