#!/usr/bin/env python3
"""The Alertmanager webhook of the real faultd: a firing alert with faultd_action="isolate" for
this node runs the isolate hook once, however often Alertmanager repeats it; alerts for other
nodes, resolved alerts and bad tokens change nothing; faultd_action="clear" clears the device;
`faultd --check-config` refuses a missing token file. Security audit F10: one client holding
connections with one byte each does not lock Alertmanager out, and a flood of bad requests is
counted in full but logged only a few times."""
import http.client
import json
import math
import os
import socket
import stat
import subprocess
import time
import urllib.error
import urllib.request

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

HOOK = """#!/bin/sh
echo "$FAULTD_ACTION $FAULTD_DEVICE $FAULTD_RULE $FAULTD_LEVEL" >> "$1"
cat > /dev/null
"""


def payload(alerts, status="firing"):
    return {"version": "4", "groupKey": "{}:{alertname=\"FaultdIsolationRequested\"}",
            "truncatedAlerts": 0, "status": status, "receiver": "faultd-webhook",
            "groupLabels": {}, "commonLabels": {}, "commonAnnotations": {},
            "externalURL": "http://alertmanager:9093", "alerts": alerts}


def alert(device, node="e2e-node", action="isolate", status="firing", fp="f00d", starts="2026-01-01T00:00:00Z"):
    labels = {"alertname": "FaultdIsolationRequested", "faultd_action": action, "device": device,
              "node": node, "severity": "critical"}
    return {"status": status, "labels": labels, "annotations": {"summary": "isolate " + device},
            "startsAt": starts, "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "", "fingerprint": fp}


def post(port, body, token="s3cret"):
    req = urllib.request.Request("http://127.0.0.1:%d/api/v1/alerts" % port, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer " + token}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def config_with_webhook(work, mport, wport, extra=""):
    """A config with the webhook on, and its token file ("s3cret") written: (text, token path)."""
    token = os.path.join(work, "webhook.token")
    with open(token, "w") as f:
        f.write("s3cret\n")
    os.chmod(token, 0o600)
    return f"""
node: e2e-node
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{mport}" }}
control: {{ socket: {work}/control.sock, group: "" }}
webhook: {{ listen: "127.0.0.1:{wport}", token_file: {token} }}
include: []
sources: [{{ name: s, paths: ["{work}/*.log"] }}]
{extra}""", token


def run(args, check, work):
    hook = os.path.join(work, "hook.sh")
    with open(hook, "w") as f:
        f.write(HOOK)
    os.chmod(hook, stat.S_IRWXU)
    runs = os.path.join(work, "runs.log")
    mport, wport = free_port(), free_port()
    config, token = config_with_webhook(work, mport, wport, extra=f"""actions:
  isolate: {{ argv: [{hook}, {runs}], timeout: 10s }}
""")
    d = Faultd(args, work, config)
    d.start()

    def hook_runs():
        return open(runs).read().splitlines() if os.path.exists(runs) else []

    code, body = post(wport, payload([alert("4")]))
    check(code == 200 and body["results"][0]["result"] == "started",
          "an isolation request for this node is accepted (%s %s)" % (code, body))
    wait_for("device 4 isolated", lambda: metric_value(scrape(mport), "faultd_device_state",
                                                       {"device": "4", "state": "isolated"}) == 1.0)
    check(hook_runs() == ["isolate 4 alertmanager.isolate SeparateNPU"],
          "the isolate hook ran for device 4 with the contract's variables (%s)" % hook_runs())
    code, body = post(wport, payload([alert("4")]))
    check(code == 200 and body["results"][0]["result"] == "duplicate",
          "Alertmanager's repeat of the same alert is recognised (%s)" % body)
    code, body = post(wport, payload([alert("5", node="other-node")]))
    check(body["results"][0]["result"] == "ignored", "an alert for another node is ignored")
    code, body = post(wport, payload([alert("6", status="resolved")], status="resolved"))
    check(body["results"][0]["result"] == "recorded", "a resolved alert is recorded, nothing runs")
    code, _ = post(wport, payload([alert("7")]), token="wrong")
    check(code == 401, "a wrong token gets 401 (%s)" % code)
    code, _ = post(wport, {"version": "3", "alerts": []})
    check(code == 400, "a malformed payload gets 400 (%s)" % code)
    check(len(hook_runs()) == 1, "nothing else ran a hook (%s)" % hook_runs())
    code, body = post(wport, payload([alert("4", action="clear", fp="c1ea")]))
    check(body["results"][0]["result"] == "done", "faultd_action=clear clears the device (%s)" % body)
    check(metric_value(scrape(mport), "faultd_device_state", {"device": "4", "state": "healthy"}) == 1.0,
          "device 4 is healthy again")
    text = scrape(mport)
    check(metric_value(text, "faultd_webhook_requests_total", {"result": "unauthorized"}) == 1.0,
          "webhook rejections are counted by result")
    check(metric_value(text, "faultd_webhook_requests_total", {"result": "accepted"}) == 5.0,
          "accepted webhook requests are counted")
    events = d.ctl_json("events", "--device", "4")
    check(len(events["faults"]) == 1 and events["faults"][0]["source"] == "alertmanager",
          "the request is journaled once as a fault from alertmanager")

    # The token is rotated and faultd reloaded: the new token works at once, the old no more.
    with open(token, "w") as f:
        f.write("r0tated\n")
    r = d.ctl("reload")
    check(r.returncode == 0, "reload after the token's rotation (%s)" % r.stderr.strip())
    code, _ = post(wport, payload([alert("5", action="clear", fp="c1eb")]))
    check(code == 401, "the old token gets 401 after the reload (%s)" % code)
    code, _ = post(wport, payload([alert("5", action="clear", fp="c1eb")]), token="r0tated")
    check(code == 200 or code == 202, "the new token is accepted after the reload (%s)" % code)
    # A token file that cannot serve fails the reload; the token in force stays.
    with open(token, "w") as f:
        f.write("\n")
    r = d.ctl("reload")
    check(r.returncode == 1 and "token" in (r.stdout + r.stderr),
          "an empty token file fails the reload (%s)" % (r.stdout + r.stderr).strip())
    code, _ = post(wport, payload([alert("5", action="clear", fp="c1ec")]), token="r0tated")
    check(code == 200 or code == 202, "the token in force still works (%s)" % code)
    with open(token, "w") as f:
        f.write("s3cret\n")
    check(d.stop() == 0, "faultd stops cleanly")

    os.remove(token)
    r = subprocess.run([args.faultd, "--check-config", "--config", d.config], capture_output=True, text=True)
    check(r.returncode == 78 and "cannot read a token" in r.stderr,
          "--check-config refuses a missing token file (%s)" % r.stderr.strip())


def post_from(source, port, body, token="s3cret"):
    """A POST from another source address (any 127.x.y.z is this host on Linux): status, or the
    error the connection ended with."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=harness.scaled(10),
                                      source_address=(source, 0))
    try:
        conn.request("POST", "/api/v1/alerts", body=json.dumps(body),
                     headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
        return conn.getresponse().status
    except OSError as e:
        return repr(e)
    finally:
        conn.close()


def webhook_warnings(d):
    return [l for l in d.read_log().splitlines() if "[warning] webhook:" in l]


def run_hostile_clients(args, check, work):
    mport, wport = free_port(), free_port()
    d = Faultd(args, work, config_with_webhook(work, mport, wport)[0])
    d.start()

    # The audit's R10, part 1: a flood of bad requests. Every one is counted, a few are logged.
    n = 500
    start = time.monotonic()
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", wport), timeout=10) as s:
            s.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(4096)
    minutes = math.ceil((time.monotonic() - start) / 60) + 1
    not_found = lambda: metric_value(scrape(mport), "faultd_webhook_requests_total",
                                     {"result": "not_found"})
    check(wait_for("the 404s to be counted", lambda: not_found() == n),
          "every one of %d bad requests is counted (%s)" % (n, not_found()))
    # At most 10 lines a minute, plus a summary line per minute.
    added = len(webhook_warnings(d))
    check(0 < added <= 11 * minutes, "the flood of %d bad requests added %d warning lines "
          "(at most %d)" % (n, added, 11 * minutes))

    # Part 2: 64 clients from one address send one byte each and then nothing.
    held = []
    for _ in range(64):
        s = socket.create_connection(("127.0.0.1", wport), timeout=5)
        s.sendall(b"P")
        held.append(s)
    status = post_from("127.0.0.2", wport, payload([alert("4", action="clear")]))
    check(status == 200, "Alertmanager from another address gets 200 while one client holds 64 "
          "one-byte connections (%s)" % status)
    over = lambda: metric_value(scrape(mport), "faultd_webhook_requests_total",
                                {"result": "over_capacity"})
    check(wait_for("the refused connections to be counted", lambda: over() >= 56),
          "the connections over the per-client cap are closed on accept and counted (%s)" % over())
    for s in held:
        s.close()
    check(d.stop() == 0, "faultd stops cleanly")
    lines = webhook_warnings(d)
    check(any("more refusal(s) in the last 1m were not logged" in l for l in lines),
          "the refusals not logged are summed up in one line (at the latest when faultd stops)")


if __name__ == "__main__":
    harness.main(run, run_hostile_clients)
