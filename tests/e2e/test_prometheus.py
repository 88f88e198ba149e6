#!/usr/bin/env python3
"""faultd in the real Prometheus and Alertmanager, with the shipped files.

First the static checks: `promtool check rules` and `promtool test rules` on
etc/prometheus/faultd-rules.yml and its tests, `amtool check-config` and the routing of the
shipped etc/prometheus/alertmanager.yml.

Then end to end, all on 127.0.0.1: three faultd nodes whose logs a node simulator writes; node-a
is alone in cluster "single", node-b1 and node-b2 form cluster "storm". Prometheus scrapes them
every second with the shipped rules and alerts a real Alertmanager, which runs a copy of the
shipped config whose webhook points at a stand-in that records each call and routes it, by the
alert's `node` label, to the real webhook of that node's faultd. One ASD fault line on node-a, and four at once on the storm cluster (two devices
per node). Asserted: node-a's isolation request fires in Prometheus, reaches Alertmanager and is
POSTed once to the webhook (payload version 4, the bearer token, faultd_action="isolate" and the
device, node and instance labels); the storm cluster's breaker fires and its isolation requests
are inhibited (none reaches the webhook), without holding back node-a's; node-a's faultd runs its
isolate hook exactly once and no hook runs on the storm nodes. `promtool check metrics`
accepts faultd's /metrics. The time from the fault line to the webhook call is printed."""
import glob
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

import harness
import prom_stack
from harness import Faultd, free_port, scrape, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
import node_sim  # noqa: E402  (tests/sim: the node simulator)

TOOLS = {
    "prometheus": ["prometheus"],
    "promtool": ["promtool"],
    "alertmanager": ["prometheus-alertmanager", "alertmanager"],  # Debian's name, upstream's
    "amtool": ["amtool"],
}
SCRAPE = "1s"
WEBHOOK_PATH = "/api/v1/alerts"
OPERATORS_PATH = "/operators"
ISOLATE = "FaultdIsolationRequested"
STORM = "FaultdFleetIsolationStorm"
QUIET_WINDOW = 4.0  # seconds a held-back notification gets to show up (group_wait+interval: 2s)


def find_tools():
    found = {}
    for name, candidates in TOOLS.items():
        path = next((shutil.which(c) for c in candidates if shutil.which(c)), None)
        if path:
            found[name] = path
    return found


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def check_run(check, argv, message, **kw):
    """Runs a checker; its output is shown only when it fails."""
    r = run(argv, **kw)
    if not check(r.returncode == 0, message):
        print(r.stdout + r.stderr)
    return r


def shipped(args, *parts):
    return os.path.join(args.source_dir, "etc", "prometheus", *parts)


# ---- static checks ---------------------------------------------------------------------------

def static_checks(args, check, work):
    tools = find_tools()
    rules = shipped(args, "faultd-rules.yml")
    check_run(check, [tools["promtool"], "check", "rules", rules],
              "promtool check rules faultd-rules.yml")

    tests = sorted(glob.glob(shipped(args, "tests", "*.yml")))
    check(len(tests) >= 3, "a promtool test file per rule group (%d found)" % len(tests))
    check_run(check, [tools["promtool"], "test", "rules"] + tests,
              "promtool test rules " + " ".join(os.path.basename(t) for t in tests))

    # Every alert of the rule file has a unit test where it fires and one where it stays quiet.
    with open(rules) as f:
        alerts = {rule["alert"] for g in yaml.safe_load(f)["groups"] for rule in g["rules"]
                  if "alert" in rule}
    fires, quiet = set(), set()
    for t in tests:
        with open(t) as f:
            for case in yaml.safe_load(f)["tests"]:
                for a in case.get("alert_rule_test", []):
                    (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
    check(not alerts - fires, "every alert has a promtool test where it fires (none: %s)"
          % sorted(alerts - fires))
    check(not alerts - quiet, "every alert has a promtool test where it stays quiet (none: %s)"
          % sorted(alerts - quiet))

    am = shipped(args, "alertmanager.yml")
    check_run(check, [tools["amtool"], "check-config", am], "amtool check-config alertmanager.yml")
    routes = [
        (["alertname=" + ISOLATE, "faultd_action=isolate", "device=3", "instance=n1:9847"],
         "faultd-webhook"),
        (["alertname=FaultdDeviceWarning", "device=3", "instance=n1:9847"], "faultd-operators"),
        (["alertname=" + STORM, "cluster=c1"], "faultd-operators"),
    ]
    for labels, receiver in routes:
        r = run([tools["amtool"], "config", "routes", "test", "--config.file=" + am,
                 "--verify.receivers=" + receiver] + labels)
        check(r.returncode == 0, "%s routes to %s (%s)" % (labels[0], receiver, r.stdout.strip()))


# ---- end to end ------------------------------------------------------------------------------

HOOK = """#!/bin/sh
echo "$FAULTD_ACTION $FAULTD_DEVICE $FAULTD_RULE" >> "$1"
cat > /dev/null
"""


def faultd_config(node_dir, node, port, rules_dir, webhook_port, token_file):
    logs = os.path.join(node_dir, "logs")
    hook = os.path.join(node_dir, "isolate-hook")
    with open(hook, "w") as f:
        f.write(HOOK)
    os.chmod(hook, 0o700)
    return f"""
node: {node}
state_dir: {node_dir}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {node_dir}/control.sock, group: "" }}
webhook: {{ listen: "127.0.0.1:{webhook_port}", token_file: {token_file} }}
include: ["{rules_dir}/*.yaml"]
actions:
  isolate: {{ argv: [{hook}, {node_dir}/isolate-runs.log], timeout: 10s }}
sources:
  - {{ name: plog, type: file, paths: ["{logs}/plog/plog-*.log"], start_at: end }}
  - {{ name: device-log, type: file, paths: ["{logs}/device-*/device-*.log"],
      path_fields: 'device-(?P<device>\\d+)/', start_at: end }}
# Cluster-gated isolation: the node only flags the device; the isolation request goes through
# Prometheus and Alertmanager (where the fleet circuit breaker can hold it back) to the webhook.
policy:
  levels:
    SeparateNPU: {{ state: warning }}
    ManuallySeparateNPU: {{ state: warning }}
"""


def alertmanager_config(args, work, receiver_port, token_file):
    """The shipped config with the webhook pointed at the test's receiver, the operators'
    receiver made observable, and second-scale grouping; everything else as shipped."""
    with open(shipped(args, "alertmanager.yml")) as f:
        cfg = yaml.safe_load(f)
    receivers = {r["name"]: r for r in cfg["receivers"]}
    hooks = receivers["faultd-webhook"]["webhook_configs"]
    assert len(hooks) == 1 and hooks[0]["url"] == "http://127.0.0.1:9848/api/v1/alerts", hooks
    auth = hooks[0]["http_config"]["authorization"]
    assert auth == {"type": "Bearer", "credentials_file": "/etc/faultd/webhook.token"}, auth
    hooks[0]["url"] = "http://127.0.0.1:%d%s" % (receiver_port, WEBHOOK_PATH)
    auth["credentials_file"] = token_file
    receivers["faultd-operators"]["webhook_configs"] = [
        {"url": "http://127.0.0.1:%d%s" % (receiver_port, OPERATORS_PATH), "send_resolved": False}]
    for route in [cfg["route"]] + cfg["route"]["routes"]:
        route["group_wait"] = "1s"
        route["group_interval"] = "1s"
    path = os.path.join(work, "alertmanager.yml")
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    return path


def prometheus_config(args, work, am_port, targets):
    cfg = {
        "global": {"scrape_interval": SCRAPE, "scrape_timeout": SCRAPE,
                   "evaluation_interval": SCRAPE},
        "rule_files": [os.path.abspath(shipped(args, "faultd-rules.yml"))],
        "alerting": {"alertmanagers": [
            {"static_configs": [{"targets": ["127.0.0.1:%d" % am_port]}]}]},
        "scrape_configs": [{
            "job_name": "faultd",
            "static_configs": [
                {"targets": ["127.0.0.1:%d" % port], "labels": {"cluster": cluster, "node": node}}
                for node, cluster, port in targets],
        }],
    }
    path = os.path.join(work, "prometheus.yml")
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    return path


def labels_match(labels, want):
    return all(labels.get(k) == v for k, v in want.items())


def find(alerts, **want):
    return [a for a in alerts if labels_match(a["labels"], want)]


def webhook_alerts(posts, **want):
    """(post, alert) for each alert matching `want` in the POSTs made to the webhook."""
    return [(p, a) for p in posts for a in (p["body"] or {}).get("alerts", [])
            if labels_match(a.get("labels", {}), want)]


def end_to_end(args, check, work):
    tools = find_tools()
    rules_dir = os.path.join(args.source_dir, "etc", "faultd", "rules.d")
    token = secrets.token_hex(16)
    token_file = os.path.join(work, "webhook.token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    os.chmod(token_file, 0o600)

    nodes = [("node-a", "single"), ("node-b1", "storm"), ("node-b2", "storm")]
    services, daemons, targets, roots = [], {}, [], {}
    # The stand-in receiver routes each alert to the webhook of the faultd its `node` label names,
    # as a per-node Alertmanager receiver would (docs/prometheus.md), and records what it saw.
    webhook_ports = {node: free_port() for node, _ in nodes}

    def forward(body, auth):
        status = 200
        for node, port in webhook_ports.items():
            alerts = [a for a in body.get("alerts", []) if a.get("labels", {}).get("node") == node]
            if not alerts:
                continue
            req = urllib.request.Request(
                "http://127.0.0.1:%d%s" % (port, WEBHOOK_PATH),
                data=json.dumps(dict(body, alerts=alerts)).encode(), method="POST",
                headers={"Content-Type": "application/json", "Authorization": auth})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    status = max(status, r.status)
            except urllib.error.HTTPError as e:
                status = max(status, e.code)
        return status

    receiver = prom_stack.Receiver(token, WEBHOOK_PATH, forward)
    receiver.start()
    try:
        for node, cluster in nodes:
            node_dir = os.path.join(work, node)
            root = os.path.join(node_dir, "logs")
            roots[node] = root
            node_sim.plog_path(root)
            for dev in range(8):
                node_sim.device_path(root, dev)
            port = free_port()
            d = Faultd(args, node_dir, faultd_config(node_dir, node, port, rules_dir,
                                                     webhook_ports[node], token_file))
            d.start()
            daemons[node] = (d, port)
            targets.append((node, cluster, port))
            # A training job's background chatter in the plog, all along.
            services.append(prom_stack.Service("sim-" + node, [
                sys.executable, os.path.join(args.source_dir, "tests", "sim", "node_sim.py"),
                "--root", root, "--rate", "20", "--seconds", "300"], work).start())

        am_port = free_port()
        am = prom_stack.Alertmanager(tools["alertmanager"], work, am_port,
                                     alertmanager_config(args, work, receiver.port, token_file))
        services.append(am.start())
        prom_cfg = prometheus_config(args, work, am_port, targets)
        check_run(check, [tools["promtool"], "check", "config", prom_cfg],
                  "promtool check config on the test's Prometheus config")
        prom = prom_stack.Prometheus(tools["prometheus"], work, free_port(), prom_cfg)
        services.append(prom.start())
        wait_for("Alertmanager ready", am.ready, timeout=30, interval=0.1)
        wait_for("Prometheus ready", prom.ready, timeout=30, interval=0.1)
        wait_for("Prometheus to scrape the three faultd",
                 lambda: len(prom.query('up{job="faultd"} == 1')) == 3,
                 timeout=30, interval=0.2)

        scenario(check, tools, prom, am, receiver, daemons, roots, token)
    except AssertionError as e:
        check(False, str(e))
        for s in services:
            if s.name in ("prometheus", "alertmanager"):
                print("# --- %s log (tail) ---\n%s" % (s.name, s.tail()))
        for node, (d, _) in daemons.items():
            print("# --- faultd %s log (tail) ---\n%s" % (node, "\n".join(
                d.read_log().splitlines()[-20:])))
    finally:
        for s in reversed(services):
            s.stop()
        receiver.stop()
        harness.stop_all()


def scenario(check, tools, prom, am, receiver, daemons, roots, token):
    # One ASD fault on node-a; at the same moment four on the storm cluster, two per node.
    t_fault = time.monotonic()
    node_sim.inject(roots["node-a"], "asd", 5)
    for node, devs in (("node-b1", (0, 1)), ("node-b2", (2, 3))):
        for dev in devs:
            node_sim.inject(roots[node], "asd", dev)

    single = {"alertname": ISOLATE, "cluster": "single", "node": "node-a", "device": "5"}
    pending = wait_for("the isolation request for node-a device 5 in Prometheus",
                       lambda: find(prom.alerts(), **single), timeout=20, interval=0.1)
    t_pending = time.monotonic()
    check(pending[0]["state"] == "pending",
          "the isolation request is pending first (for: 30s), got %s" % pending[0]["state"])

    wait_for("the breaker firing for cluster storm",
             lambda: [a for a in find(prom.alerts(), alertname=STORM, cluster="storm")
                      if a["state"] == "firing"], timeout=20, interval=0.1)
    t_storm = time.monotonic()
    wait_for("the breaker to count the storm's 4 devices", lambda: [
        a for a in find(prom.alerts(), alertname=STORM, cluster="storm")
        if float(a["value"]) == 4.0], timeout=10, interval=0.1)

    firing = wait_for("the isolation request for node-a device 5 firing", lambda: [
        a for a in find(prom.alerts(), **single) if a["state"] == "firing"], timeout=60,
        interval=0.1)
    t_firing = time.monotonic()
    labels = firing[0]["labels"]
    check(labels.get("faultd_action") == "isolate", "the request carries faultd_action=isolate")
    check(labels.get("instance") == "127.0.0.1:%d" % daemons["node-a"][1],
          "the request carries the node's instance (%s)" % labels.get("instance"))

    in_am = wait_for("the isolation request in Alertmanager",
                     lambda: find(am.alerts(), **single), timeout=20, interval=0.1)
    t_am = time.monotonic()
    check(in_am[0]["status"]["state"] == "active", "Alertmanager holds it active (not inhibited)")
    check([r["name"] for r in in_am[0]["receivers"]] == ["faultd-webhook"],
          "Alertmanager routes it to faultd-webhook (%s)" % in_am[0]["receivers"])

    hits = wait_for("the webhook call for node-a device 5",
                    lambda: webhook_alerts(receiver.posts(WEBHOOK_PATH), **single),
                    timeout=20, interval=0.02)
    post, alert = hits[0]
    delay = post["t"] - t_fault
    print("# fault line -> isolation request at the webhook: %.1f s (scrape and evaluation "
          "every %s, for: 30s, group_wait 1s); pending after %.1f s, firing after %.1f s, "
          "in Alertmanager after %.1f s; the breaker fired after %.1f s" % (
              delay, SCRAPE, t_pending - t_fault, t_firing - t_fault, t_am - t_fault,
              t_storm - t_fault), flush=True)
    body = post["body"]
    check(body.get("version") == "4", "webhook payload version 4 (%r)" % body.get("version"))
    check(post["auth"] == "Bearer " + token, "the webhook call carries the bearer token")
    check(body.get("receiver") == "faultd-webhook", "receiver faultd-webhook")
    check(alert.get("status") == "firing", "the alert is firing")
    check(alert["labels"].get("faultd_action") == "isolate", "webhook alert: faultd_action=isolate")
    check(alert["labels"].get("device") == "5", "webhook alert: device=5")
    check(alert["labels"].get("node") == "node-a", "webhook alert: node=node-a")
    check(body.get("groupLabels") == {"cluster": "single", "instance": labels["instance"],
                                      "device": "5"},
          "grouped by cluster, instance and device (%s)" % body.get("groupLabels"))
    check(len(body.get("alerts", [])) == 1, "one alert in the notification")

    # The breaker of cluster storm does not hold back cluster single's request: it was active
    # in Alertmanager when the request went out.
    check(any(a["status"]["state"] == "active" for a in find(am.alerts(), alertname=STORM,
                                                              cluster="storm")),
          "the storm cluster's breaker is active in Alertmanager meanwhile")
    check(not find(prom.alerts(), alertname=STORM, cluster="single"),
          "no breaker for the single cluster")

    # The storm cluster's four requests fire in Prometheus, reach Alertmanager, and stay there.
    def leaked():
        return webhook_alerts(receiver.posts(WEBHOOK_PATH), cluster="storm")

    def storm_requests_held_or_leaked():
        if leaked():
            return "leaked"
        held = [a for a in find(am.alerts(), alertname=ISOLATE, cluster="storm")
                if a["status"]["state"] == "suppressed" and a["status"]["inhibitedBy"]]
        return held if len(held) == 4 else None
    held = wait_for("the storm cluster's 4 isolation requests inhibited in Alertmanager",
                    storm_requests_held_or_leaked, timeout=30, interval=0.1)
    if not check(held != "leaked", "the storm cluster's isolation requests are held back, "
                 "not sent to the webhook (sent: devices %s)"
                 % sorted(a["labels"].get("device") for _, a in leaked())):
        return
    t_held = time.monotonic()
    check(sorted(a["labels"]["device"] for a in held) == ["0", "1", "2", "3"],
          "the inhibited requests are devices 0-3 of the storm cluster")
    wait_for("the breaker's notification to the operators",
             lambda: [p for p in receiver.posts(OPERATORS_PATH)
                      if webhook_alerts([p], alertname=STORM, cluster="storm")],
             timeout=20, interval=0.05)

    # metrics quality, while the held-back notifications get their chance to show up
    for node in ("node-a", "node-b1"):
        text = scrape(daemons[node][1])
        r = run([tools["promtool"], "check", "metrics"], input=text)
        check(r.returncode == 0 and not (r.stdout + r.stderr).strip(),
              "promtool check metrics on %s's /metrics: %s" % (node, (r.stdout + r.stderr).strip()
                                                               or "clean"))
        check("faultd_faults_total{" in text, "%s exports its findings" % node)

    # No storm request reaches the webhook, and node-a's went out exactly once: watched until
    # well past the group_wait and group_interval (1s each) of the held-back groups.
    deadline = max(t_held, post["t"]) + QUIET_WINDOW
    while time.monotonic() < deadline and not leaked():
        time.sleep(0.05)
    check(not leaked(), "no isolation request of the storm cluster reached the webhook (%d did)"
          % len(leaked()))
    # Once device 5 is isolated the request resolves; send_resolved adds that notification.
    firing = [a for _, a in webhook_alerts(receiver.posts(WEBHOOK_PATH), **single)
              if a.get("status") == "firing"]
    check(len(firing) == 1, "exactly one firing notification for node-a device 5 (%d)" % len(firing))
    check(all(p["auth"] == "Bearer " + token for p in receiver.posts(WEBHOOK_PATH)),
          "every webhook call carried the token")
    # Through faultd's own webhook, node-a's isolate hook ran exactly once, for device 5; the
    # storm's devices wait in warning and no hook ran there.
    def isolate_runs(node):
        path = os.path.join(os.path.dirname(roots[node]), "isolate-runs.log")
        return open(path).read().splitlines() if os.path.exists(path) else []

    check(isolate_runs("node-a") == ["isolate 5 alertmanager.isolate"],
          "node-a's isolate hook ran once, for device 5, through the webhook (%s)"
          % isolate_runs("node-a"))
    devs = {x["device"]: x["state"] for x in daemons["node-a"][0].ctl_json("status")["devices"]}
    check(devs == {"5": "isolated"}, "node-a: device 5 isolated (%s)" % devs)
    for node in ("node-b1", "node-b2"):
        devs = {x["device"]: x["state"] for x in daemons[node][0].ctl_json("status")["devices"]}
        check(set(devs.values()) == {"warning"} and not isolate_runs(node),
              "%s: the flagged devices wait in warning, no hook ran (%s)" % (node, devs))


def main():
    tools = find_tools()
    missing = sorted(set(TOOLS) - set(tools))
    if missing:
        print("SKIP: %s not installed (Debian packages prometheus and prometheus-alertmanager; "
              "scripts/deps installs them)" % ", ".join(missing))
        print("0 passed, 0 failed")
        sys.exit(0)
    harness.main(static_checks, end_to_end)


if __name__ == "__main__":
    main()
