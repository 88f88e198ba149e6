#!/usr/bin/env python3
"""What an operator must be able to trust, with the real faultd and faultctl:

- `faultctl clear` while the isolate hook still runs sticks: faultctl says the hook is running
  and its result will be ignored; when it succeeds the device stays healthy, the result is
  journaled as ignored, the dependent resume hook is skipped (never run) and the clear hook
  undoes the isolation.
- An operator's isolation does not spend the automatic isolation budget: after an operator's
  isolate (and clear), a real fault is still isolated with `max_isolations: 1`; `faultctl budget`
  shows the operator's isolation apart.
- A busy metrics or webhook port is a clear error naming the address and how to find its
  holder, and exit 1 (no crash).
- A second faultd on the same state_dir exits 73 naming the first one's pid; the lock the first
  holds is not inherited by its hooks (close-on-exec).
- `faultd --check-config` refuses (78) a config that loads but cannot work: no rule (a missing
  rules directory), no source, a hook that is not there; each at its file:line:column.
"""
import os
import re
import socket
import stat
import subprocess

import harness
from harness import Faultd, free_port, metric_value, scrape, scaled, wait_for, write_audit_rules

# Each run leaves "<action> <device> <fault id>" in the log; the isolate hook then waits for
# the release file, so the test can act while it runs.
HOOK = """#!/bin/sh
log="$1"; release="$2"
echo "$FAULTD_ACTION $FAULTD_DEVICE $FAULTD_FAULT_ID" >> "$log"
if [ -n "$release" ]; then
  i=0
  while [ ! -e "$release" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
fi
exit 0
"""


def write_hook(work):
    hook = os.path.join(work, "hook.sh")
    with open(hook, "w") as f:
        f.write(HOOK)
    os.chmod(hook, stat.S_IRWXU)
    return hook


def runs(log):
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [line.split() for line in f if line.strip()]


def base_config(work, port, rules, extra=""):
    return f"""
node: e2e-node
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}"]
sources:
  - {{ name: app, type: file, paths: ["{work}/logs/*.log"] }}
{extra}"""


def append(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")


def actions_of(d, device):
    return {a["action"]: a for a in d.ctl_json("events", "--device", device)["actions"]}


def clear_during_isolate(args, check, work):
    hook = write_hook(work)
    log = os.path.join(work, "hooks.log")
    release = os.path.join(work, "release")
    port = free_port()
    os.makedirs(os.path.join(work, "logs"))
    app_log = os.path.join(work, "logs", "app.log")
    open(app_log, "w").close()
    d = Faultd(args, work, base_config(work, port, write_audit_rules(work), f"""
actions:
  isolate: {{ argv: [{hook}, {log}, {release}], timeout: 120s }}
  resume:  {{ argv: [{hook}, {log}, ""], timeout: 60s, after: isolate }}
  clear:   {{ argv: [{hook}, {log}, ""], timeout: 60s }}
"""))
    d.start()
    append(app_log, "FAULT-X dev=<3>")
    wait_for("the isolate hook to start for device 3",
             lambda: any(r[0] == "isolate" and r[1] == "3" for r in runs(log)))
    fault_id = next(r[2] for r in runs(log) if r[0] == "isolate")

    r = d.ctl("clear", "3", "--reason", "mistaken: the job's own bug")
    check(r.returncode == 0, "faultctl clear succeeds while the isolate hook runs (%s)" % r.stderr)
    check("note: isolate hook for fault %s is still running" % fault_id in r.stdout
          and "its result will be ignored" in r.stdout,
          "faultctl clear says the isolate hook still runs and its result will be ignored: %r"
          % r.stdout)
    reply = d.ctl_json("clear", "3", "--reason", "again")
    check(any(h["action"] == "isolate" for h in reply.get("running", [])),
          "the clear reply lists the running hook: %s" % reply.get("running"))

    open(release, "w").close()
    wait_for("the isolate hook to finish",
             lambda: actions_of(d, "3").get("isolate", {}).get("status") == "success")
    wait_for("the clear hook to run", lambda: any(r[0] == "clear" for r in runs(log)))
    acts = actions_of(d, "3")
    check("result ignored" in acts["isolate"]["detail"]
          and "went back to healthy" in acts["isolate"]["detail"]
          and "mistaken" in acts["isolate"]["detail"],
          "the isolate's result is journaled as ignored, with why: %r" % acts["isolate"]["detail"])
    check(acts.get("resume", {}).get("status") == "skipped"
          and "result ignored" in acts.get("resume", {}).get("detail", ""),
          "the dependent resume is journaled as skipped: %s" % acts.get("resume"))
    check(not any(r[0] == "resume" for r in runs(log)), "the resume hook never ran: %s" % runs(log))
    status = {x["device"]: x for x in d.ctl_json("status")["devices"]}
    check(status.get("3", {}).get("state") == "healthy",
          "device 3 stays healthy after the hook succeeded: %s" % status.get("3"))
    check(metric_value(scrape(port), "faultd_device_state",
                       {"device": "3", "state": "healthy"}) == 1.0,
          "/metrics shows device 3 healthy")
    check(metric_value(scrape(port), "faultd_actions_total",
                       {"action": "resume", "result": "skipped"}) == 1.0,
          "the skipped resume is counted")
    # A restart does not start the skipped dependent either.
    check(d.stop() == 0, "faultd stops cleanly")
    d.start()
    check(d.ctl_json("status")["actions_in_flight"] == 0
          and actions_of(d, "3")["resume"]["status"] == "skipped",
          "nor does a restart start resume")
    check(d.stop() == 0, "faultd stops cleanly again")


def operator_isolation_spends_no_budget(args, check, work):
    hook = write_hook(work)
    log = os.path.join(work, "hooks.log")
    port = free_port()
    os.makedirs(os.path.join(work, "logs"))
    app_log = os.path.join(work, "logs", "app.log")
    open(app_log, "w").close()
    d = Faultd(args, work, base_config(work, port, write_audit_rules(work), f"""
actions:
  isolate: {{ argv: [{hook}, {log}, ""], timeout: 60s }}
policy:
  max_isolations: {{ count: 1, window: 1h }}
"""))
    d.start()
    r = d.ctl("isolate", "0", "--reason", "mistake")
    check(r.returncode == 0, "the operator isolates device 0")
    wait_for("the operator's isolate hook", lambda: any(x[0] == "isolate" for x in runs(log)))
    d.ctl("clear", "0", "--reason", "the wrong one")
    budget = d.ctl_json("budget")
    check(budget["used"] == 0 and budget["remaining"] == 1 and not budget["exhausted"],
          "the operator's isolation spends nothing of the budget: %s" % budget)
    check(budget.get("operator_isolations") == 1,
          "the budget shows the operator's isolation apart: %s" % budget)
    text = d.ctl("budget").stdout
    check("operator isolations: 1" in text, "faultctl budget prints it: %r" % text)

    append(app_log, "FAULT-X dev=<3>")
    wait_for("device 3 isolated by the policy",
             lambda: {x["device"]: x["state"] for x in d.ctl_json("status")["devices"]}.get("3")
             == "isolated")
    budget = d.ctl_json("budget")
    check(budget["used"] == 1 and budget["exhausted"],
          "the real fault spent the budget: %s" % budget)
    check(metric_value(scrape(port), "faultd_isolation_budget_exhausted", {}) == 1.0,
          "the budget metric counts the automatic isolation only")
    check(d.stop() == 0, "faultd stops cleanly")
    # A restart reads who asked from the journal.
    d.start()
    budget = d.ctl_json("budget")
    check(budget["used"] == 1 and budget.get("operator_isolations") == 1,
          "after a restart: 1 automatic, 1 operator's (%s)" % budget)


def run_faultd(args, config_path):
    """Runs a faultd that is expected to stop at start-up: (exit code, output); the code is
    None when it kept running (killed after a deadline)."""
    proc = subprocess.Popen([os.path.abspath(args.faultd), "--config", config_path],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=scaled(20))
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return None, out


def busy_ports(args, check, work):
    rules = write_audit_rules(work)
    # A discoverer still running when start-up fails: its completion, when the daemon went away
    # under it, freed memory twice (civetweb's message, then `double free detected`, exit 134).
    sleeper = os.path.join(work, "slow-npu-smi")
    with open(sleeper, "w") as f:
        f.write("#!/bin/sh\nexec sleep 30\n")
    os.chmod(sleeper, stat.S_IRWXU)
    inventory = f"inventory: {{ npu_smi: [{sleeper}], nvidia_smi: [], dev_dir: \"\" }}\n"
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    busy = holder.getsockname()[1]
    try:
        config = os.path.join(work, "metrics.yaml")
        with open(config, "w") as f:
            f.write(base_config(work, busy, rules, inventory))
        code, out = run_faultd(args, config)
        check(code == 1, "a busy metrics port exits 1, no crash (got %s)" % code)
        check("metrics.listen 127.0.0.1:%d: address already in use" % busy in out
              and "ss -ltnp 'sport = :%d'" % busy in out,
              "it says the address is in use and how to find the holder: %r" % out[-600:])
        check("double free" not in out and "CivetServer" not in out,
              "no civetweb failure path is taken")

        token = os.path.join(work, "token")
        with open(token, "w") as f:
            f.write("s3cret-token\n")
        os.chmod(token, 0o600)
        config = os.path.join(work, "webhook.yaml")
        with open(config, "w") as f:
            f.write(base_config(work, free_port(), rules, inventory + f"""
webhook: {{ listen: "127.0.0.1:{busy}", token_file: {token} }}
"""))
        code, out = run_faultd(args, config)
        check(code == 1, "a busy webhook port exits 1 (got %s)" % code)
        check("webhook.listen 127.0.0.1:%d: address already in use" % busy in out
              and "ss -ltnp 'sport = :%d'" % busy in out,
              "the webhook says so too: %r" % out[-600:])
    finally:
        holder.close()


def one_daemon_per_state_dir(args, check, work):
    hook = write_hook(work)
    log = os.path.join(work, "hooks.log")
    release = os.path.join(work, "release")
    rules = write_audit_rules(work)
    first_dir = os.path.join(work, "first")
    second_dir = os.path.join(work, "second")
    os.makedirs(first_dir)
    os.makedirs(second_dir)
    os.makedirs(os.path.join(work, "logs"))
    app_log = os.path.join(work, "logs", "app.log")
    open(app_log, "w").close()
    actions = f"""
actions:
  isolate: {{ argv: [{hook}, {log}, {release}], timeout: 120s }}
"""
    # Both share one state_dir (the first one's config names work/state).
    first = Faultd(args, first_dir, base_config(work, free_port(), rules, actions).replace(
        f"{work}/control.sock", f"{first_dir}/control.sock"))
    first.start()
    second = Faultd(args, second_dir, base_config(work, free_port(), rules, actions).replace(
        f"{work}/control.sock", f"{second_dir}/control.sock"))
    code, out = run_faultd(args, second.config)
    check(code == 73, "a second faultd on the same state_dir exits 73 (got %s)" % code)
    check("another faultd (pid %d)" % first.proc.pid in out and os.path.join(work, "state") in out,
          "it names the first one's pid and the state directory: %r" % out[-600:])
    check(first.ctl("status").returncode == 0, "the first one still runs")

    # The lock is close-on-exec: a hook does not hold it.
    append(app_log, "FAULT-X dev=<2>")
    wait_for("the isolate hook to run", lambda: any(x[0] == "isolate" for x in runs(log)))
    lock = os.path.join(work, "state", "faultd.lock")
    lock_ino = os.stat(lock).st_ino
    hook_pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and has_hook(int(p), hook)]
    held_by_hook = any(holds(pid, lock_ino) for pid in hook_pids)
    check(hook_pids and not held_by_hook,
          "the running hook (%s) does not hold the state lock" % hook_pids)
    check(holds(first.proc.pid, lock_ino), "faultd itself holds it")
    open(release, "w").close()
    check(first.stop() == 0, "the first stops cleanly")
    second.start()
    check(second.ctl("status").returncode == 0, "once it stopped, another faultd may start")
    check(second.stop() == 0, "and stop cleanly")


def has_hook(pid, hook):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return hook.encode() in f.read()
    except OSError:
        return False


def holds(pid, ino):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.stat("/proc/%d/fd/%s" % (pid, fd)).st_ino == ino:
                return True
        except OSError:
            pass
    return False


def check_config_refuses_what_cannot_work(args, check, work):
    config = os.path.join(work, "faultd.yaml")
    with open(config, "w") as f:
        f.write(f"""include: ["{work}/rules.d/*.yaml"]
sources: []
actions:
  isolate: {{ argv: [{work}/hooks/isolate-devcie] }}
""")
    r = subprocess.run([os.path.abspath(args.faultd), "--check-config", "--config", config],
                       capture_output=True, text=True, timeout=scaled(60))
    check(r.returncode == 78, "--check-config exits 78 (got %d)" % r.returncode)
    for where, what in (("1:10", "no rules"), ("2:10", "no sources"),
                        ("4:21", "action 'isolate': hook '%s/hooks/isolate-devcie' does not exist"
                         % work)):
        check("%s:%s: %s" % (config, where, what) in r.stderr,
              "it says %r at %s: %r" % (what, where, r.stderr))


if __name__ == "__main__":
    harness.main(clear_during_isolate, operator_isolation_spends_no_budget, busy_ports,
                 one_daemon_per_state_dir, check_config_refuses_what_cannot_work)
