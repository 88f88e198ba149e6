#!/usr/bin/env python3
"""faultd's own log in the forms an operator's tools read: under journald (JOURNAL_STREAM naming
stderr, or log.format: journal) each line carries its sd-daemon priority so that
`journalctl -p warning` shows warnings and errors only; log.format: json is one valid JSON object
a line, with a fault line's fields, whatever bytes a file name holds; and the inventory line is
logged when the inventory changes, not at every discovery."""
import json
import os
import re
import signal

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

RULE = "accuracy sensitivity feature abnormal"


def config(work, port, log="", interval="1s"):
    return f"""node: logs
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{work}/missing-*.yaml"]
{log}
rules:
  - id: test.asd
    match: {{ any: ["{RULE}"] }}
    fault: {{ code: 80818C00, level: SeparateNPU }}
sources:
  - {{ name: plog, paths: ["{work}/logs/*.log"], path_fields: 'device-(?P<device>\\d+)',
      scan_interval: 100ms }}
inventory:
  npu_smi: []
  nvidia_smi: []
  dev_dir: {work}/dev
  interval: {interval}
policy: {{ dry_run: true }}
"""


def prepare(work, devices):
    os.makedirs(os.path.join(work, "logs"))
    os.makedirs(os.path.join(work, "dev"))
    for i in range(devices):
        open(os.path.join(work, "dev", "davinci%d" % i), "w").close()


def log_lines(d):
    return [line for line in d.read_log().split("\n") if line]


def fault_logged(d):
    return any("fault: rule=test.asd" in line for line in log_lines(d))


def write_fault(work, name):
    with open(os.path.join(work, "logs", name), "w") as f:
        f.write("[ERROR] %s\n" % RULE)


def check_journal_lines(check, d, how):
    lines = log_lines(d)
    check(all(re.match(r"<[0-7]>\[(trace|debug|info|warning|error|critical)\] ", line)
              for line in lines), "%s: every line starts with a priority and no timestamp" % how)
    check("<6>[info] ready" in lines, "%s: 'ready' at priority 6 (info)" % how)
    check(any(line.startswith("<4>[warning] config: ") for line in lines),
          "%s: the config's warning at priority 4 (warning)" % how)
    check(any(line.startswith("<4>[warning] fault: rule=test.asd device=1 ") for line in lines),
          "%s: the fault line at priority 4 (warning)" % how)
    # What `journalctl -p warning` keeps: priorities 0 to 4.
    warnings = [line for line in lines if int(line[1]) <= 4]
    check(warnings and not any("[info]" in line for line in warnings),
          "%s: only warnings and worse are at priority 4 or above" % how)


def journal_stream_auto(args, check, work):
    prepare(work, 2)
    d = Faultd(args, work, config(work, free_port()))
    st = os.fstat(d.log.fileno())
    saved = os.environ.get("JOURNAL_STREAM")
    os.environ["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
    try:
        d.start()
    finally:
        if saved is None:
            del os.environ["JOURNAL_STREAM"]
        else:
            os.environ["JOURNAL_STREAM"] = saved
    write_fault(work, "device-1.log")
    wait_for("the fault line", lambda: fault_logged(d))
    check_journal_lines(check, d, "JOURNAL_STREAM")


def journal_by_config(args, check, work):
    prepare(work, 2)
    port = free_port()
    d = Faultd(args, work, config(work, port, "log: { format: journal }"))
    d.start()
    write_fault(work, "device-1.log")
    wait_for("the fault line", lambda: fault_logged(d))
    check_journal_lines(check, d, "log.format: journal")

    # A reload applies a new format at once.
    with open(d.config, "w") as f:
        f.write(config(work, port, "log: { format: json }"))
    d.proc.send_signal(signal.SIGHUP)

    def after_reload():
        lines = log_lines(d)
        first = next((i for i, line in enumerate(lines) if line.startswith("{")), None)
        if first is None:
            return None
        records = [json.loads(line) for line in lines[first:]]
        return records if any(r["message"].startswith("reloaded: ") for r in records) else None
    records = wait_for("the reload's line as JSON", after_reload)
    check(records[0]["level"] == "warning" and records[0]["message"].startswith("config: "),
          "after a reload to json the config's warning is the first JSON line: %s" % records[0])


def json_with_hostile_names(args, check, work):
    prepare(work, 2)
    d = Faultd(args, work, config(work, free_port(), "log: { format: json }"))
    d.start()
    # A file name with a newline, a forged JSON record, a quote, a backslash, ESC and bytes that
    # are not UTF-8.
    hostile = (b"device-1 \"}\n{\"level\":\"critical\",\"message\":\"forged\"}\\\x1b[2K\xff\xc3"
               b" rule=forged device=9.log")
    with open(os.path.join(work, "logs").encode() + b"/" + hostile, "w") as f:
        f.write("[ERROR] %s\n" % RULE)
    wait_for("the fault line", lambda: "fault: rule=test.asd" in d.read_log())
    d.stop()
    raw = open(os.path.join(work, "faultd.log"), "rb").read()
    records = []
    for line in raw.split(b"\n"):
        if not line:
            continue
        try:
            records.append(json.loads(line.decode("utf-8")))
        except ValueError as e:
            check(False, "not a JSON line (%s): %r" % (e, line))
    check(all(set(r) in ({"time", "level", "message"}, {"time", "level", "message", "fields"})
              for r in records), "every line has time, level, message (and fields)")
    check(not any(r["level"] == "critical" for r in records), "no forged critical record")
    faults = [r for r in records if r["message"].startswith("fault: rule=test.asd")]
    check(len(faults) == 1, "one fault record")
    if faults:
        f = faults[0]
        check(f["level"] == "warning", "the fault record is a warning")
        check(f.get("fields") == {"rule": "test.asd", "device": "1", "level": "SeparateNPU",
                                  "code": "80818C00"},
              "the fault record's fields, not the file name's: %s" % f.get("fields"))
        check("\\x0a{\"level\":\"critical\"" in f["message"] and "\\x1b[2K\\xff\\xc3" in f["message"],
              "the file name is in the message, escaped")
    check(any(r["message"] == "ready" and r["level"] == "info" for r in records), "ready, info")


def discoveries(port):
    return metric_value(scrape(port), "faultd_inventory_discoveries_total",
                        {"discoverer": "dev", "result": "ok"}) or 0


def inventory_line_on_change(args, check, work):
    prepare(work, 2)
    port = free_port()
    d = Faultd(args, work, config(work, port))
    d.start()

    def inventory_lines():
        return [line for line in log_lines(d) if "inventory: dev lists" in line]

    base = discoveries(port)
    wait_for("three more discoveries", lambda: discoveries(port) >= base + 3, timeout=30)
    lines = inventory_lines()
    check(len(lines) == 1 and "dev lists 2 device(s); 2 known, 2 expected" in lines[0],
          "the inventory line once for unchanged runs: %s" % lines)
    open(os.path.join(work, "dev", "davinci2"), "w").close()
    wait_for("the changed inventory's line", lambda: len(inventory_lines()) == 2, timeout=30)
    base = discoveries(port)
    wait_for("three more discoveries", lambda: discoveries(port) >= base + 3, timeout=30)
    lines = inventory_lines()
    check(len(lines) == 2 and "dev lists 3 device(s); 3 known, 3 expected" in lines[1],
          "then once more when a device is added: %s" % lines)


if __name__ == "__main__":
    harness.main(journal_stream_auto, journal_by_config, json_with_hostile_names,
                 inventory_line_on_change)
