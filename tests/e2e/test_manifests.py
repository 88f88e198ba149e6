#!/usr/bin/env python3
"""The Grafana dashboard and the Kubernetes manifests, checked against the real faultd.

Dashboard: the JSON model is well formed (unique ids, titles, layout, targets, variables), every
PromQL expression names only series and labels that a real faultd exports after a fault and a
hook run, and a real Prometheus scraping that faultd evaluates every expression without error and
with data, including a finding whose counter series appeared only after Prometheus started. The
faultd has an inventory of 8 devices where 9 are expected and a health command that fails for
device 7: the inventory and probe panels show it, and the same Prometheus, with the shipped alert
rules, has FaultdDeviceLost, FaultdHealthyDevicesBelowExpected and FaultdProbeDown pending for it.

Kubernetes (no kubectl or cluster here, so the structure is checked with PyYAML): every document
is well formed; the DaemonSet's mounts, ports, probes, resources and security settings hang
together; RBAC binds only the service account; and the ConfigMap's faultd.yaml, passed through the
container's own start command and with every path mapped through the DaemonSet's mounts, passes
`faultd --check-config` and detects a fault in a CANN device log, with the node name in the hooks.
"""
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import harness
from harness import Faultd, free_port, metric_value, scrape, wait_for

try:
    import yaml
except ImportError:  # scripts/deps installs python3-yaml: a missing module is a setup error
    yaml = None

ASD_PLOG = ("[ERROR] ASCENDCL(59420,python3):2025-01-24-11:24:07.908.526 [silent_check.cc:88]107630 "
            "AsdCheck: accuracy sensitivity feature abnormal, device_id=5\n")
L1_LINE = ("[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.403 [silent_check_v3.cc:250]"
           "[ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], "
           "avg=[1.128970e-09], step=[5], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], "
           "beta1 = [9.900000e-01], npu_asd_detect = [1].\n")
NOISE = ("[INFO] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 [engine.cc:1263]163618 "
         "SyncStream: stream_id=17 ok\n")

# Families the dashboard must show (the issue's list); others exported are reported, not required.
REQUIRED_FAMILIES = {
    "faultd_device_state", "faultd_faults_total", "faultd_rule_matches_total",
    "faultd_actions_total", "faultd_action_duration_seconds", "faultd_source_lag_bytes",
    "faultd_source_bytes_total", "faultd_source_lines_total", "faultd_source_errors_total",
    "faultd_source_rotations_total", "faultd_detection_latency_seconds",
    "faultd_config_reloads_total", "faultd_build_info", "faultd_isolation_budget_remaining",
    "faultd_isolation_budget_exhausted", "faultd_device_incident_start_timestamp_seconds",
}
# Series Prometheus itself makes for every target, and the labels it adds to every series.
PROMETHEUS_SERIES = {"up": {"instance", "job"}}
TARGET_LABELS = {"instance", "job"}
GRAFANA_BUILTINS = {"__rate_interval": "1m", "__range": "1h", "__interval": "15s"}
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
                   "or", "unless", "offset", "inf", "nan"}

K8S_DIR = os.path.join("etc", "kubernetes")
MANIFESTS = ["faultd-rbac.yaml", "faultd-configmap.yaml", "faultd-daemonset.yaml",
             "faultd-servicemonitor.yaml", "faultd-networkpolicy.yaml"]
API_VERSIONS = {
    "Namespace": "v1", "ServiceAccount": "v1", "ConfigMap": "v1", "Service": "v1",
    "DaemonSet": "apps/v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ClusterRoleBinding": "rbac.authorization.k8s.io/v1", "Role": "rbac.authorization.k8s.io/v1",
    "RoleBinding": "rbac.authorization.k8s.io/v1", "ServiceMonitor": "monitoring.coreos.com/v1",
    "NetworkPolicy": "networking.k8s.io/v1",
}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
# Namespaces the manifests use without creating them: Kubernetes' own and MindCluster's.
EXTERNAL_NAMESPACES = {"kube-system", "mindx-dl"}
HOSTPATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket",
                  "CharDevice", "BlockDevice"}
# Where the image keeps what `cmake --install` / the .deb puts there, relative to the source tree.
IMAGE_PATHS = {"/etc/faultd/rules.d": os.path.join("etc", "faultd", "rules.d"),
               "/etc/faultd/hooks": os.path.join("etc", "faultd", "hooks")}
NODE_NAME = "ascend-node-17"


def require_yaml(check):
    return check(yaml is not None, "python3 module yaml is importable "
                                   "(Debian package python3-yaml, installed by scripts/deps)")


# ---------------------------------------------------------------------------------------------
# PromQL and the exposition format, just enough to name series and labels.

def parse_exposition(text):
    """{sample name: set of label names} and {family: type} from /metrics."""
    samples, families = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            families[name] = kind.strip()
        elif line and not line.startswith("#"):
            m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s', line)
            if m:
                labels = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
                samples.setdefault(m.group(1), set()).update(labels)
    return samples, families


def family_of(sample, families):
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample[: -len(suffix)]
        if sample.endswith(suffix) and families.get(base) in ("histogram", "summary"):
            return base
    return sample


def promql_names(expr):
    """(selectors, grouping labels, stray identifiers) of a PromQL expression; a selector is
    (metric name or None, [label names in its matchers])."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    s = re.sub(r"'(?:[^'\\]|\\.)*'", "''", s)
    s = re.sub(r'\[[^\]]*\]', ' ', s)
    s = re.sub(r'\boffset\s+\$?\{?[\w.]+\}?', ' ', s)
    grouping = set()
    for m in re.finditer(r'\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)', s):
        grouping.update(x.strip() for x in m.group(1).split(",") if x.strip())
    s = re.sub(r'\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', ' ', s)
    selectors = []
    for m in re.finditer(r'([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}', s):
        labels = re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)', m.group(2))
        selectors.append((m.group(1), labels))
    s = re.sub(r'([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{[^}]*\}', ' ', s)
    s = re.sub(r'(?<![\w:])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?', ' ', s)
    stray = []
    for m in re.finditer(r'[a-zA-Z_:][a-zA-Z0-9_:]*', s):
        if re.match(r'\s*\(', s[m.end():]) or m.group(0) in PROMQL_KEYWORDS:
            continue  # a function or aggregation, or a keyword
        selectors.append((m.group(0), []))
    for m in re.finditer(r'\$\{?\w+\}?', s):
        stray.append(m.group(0))  # a variable outside a string, range or offset
    return selectors, grouping, stray


def variables_in(text):
    return set(re.findall(r'\$\{?(\w+)\}?', text))


def substitute(expr, values):
    for name in sorted(values, key=len, reverse=True):
        expr = expr.replace("${%s}" % name, values[name]).replace("$" + name, values[name])
    return expr


# ---------------------------------------------------------------------------------------------
# The dashboard

def all_panels(panels):
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))


def dashboard_queries(dash):
    """[(where, expr)] for every panel target and annotation, and the variables' queries."""
    exprs = []
    for p in all_panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            exprs.append(("panel '%s' target %s" % (p.get("title"), t.get("refId")),
                          t.get("expr", "")))
    for a in dash.get("annotations", {}).get("list", []):
        if a.get("expr"):
            exprs.append(("annotation '%s'" % a.get("name"), a["expr"]))
    var_queries = []
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            var_queries.append((v["name"], q.get("query") if isinstance(q, dict) else q))
    return exprs, var_queries


def check_dashboard_structure(check, dash):
    check(isinstance(dash.get("schemaVersion"), int) and dash["schemaVersion"] >= 36,
          "dashboard schemaVersion >= 36 (got %r)" % dash.get("schemaVersion"))
    check(bool(dash.get("uid")) and bool(dash.get("title")), "dashboard has a uid and a title")
    panels = list(all_panels(dash.get("panels", [])))
    ids = [p.get("id") for p in panels]
    check(all(isinstance(i, int) for i in ids) and len(ids) == len(set(ids)),
          "panel ids are unique integers (%d panels)" % len(ids))
    bad = [p.get("id") for p in panels if not str(p.get("title", "")).strip()]
    check(not bad, "every panel has a title (missing: %s)" % bad)
    boxes, bad_grid = [], []
    for p in panels:
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24 or \
                g["w"] <= 0 or g["h"] <= 0:
            bad_grid.append(p.get("title"))
        else:
            boxes.append((p.get("title"), g))
    check(not bad_grid, "every panel has a gridPos inside the 24 columns (bad: %s)" % bad_grid)
    overlaps = [(a, b) for i, (a, g) in enumerate(boxes) for b, h in boxes[i + 1:]
                if g["x"] < h["x"] + h["w"] and h["x"] < g["x"] + g["w"]
                and g["y"] < h["y"] + h["h"] and h["y"] < g["y"] + g["h"]]
    check(not overlaps, "no two panels overlap (%s)" % overlaps[:3])
    data_panels = [p for p in panels if p.get("type") != "row"]
    no_target = [p.get("title") for p in data_panels
                 if not p.get("targets")
                 or not all(t.get("expr", "").strip() for t in p["targets"])]
    check(not no_target, "every panel has at least one target with an expression (missing: %s)"
          % no_target)
    dup_ref = [p.get("title") for p in data_panels
               if len({t.get("refId") for t in p.get("targets", [])}) != len(p.get("targets", []))]
    check(not dup_ref, "refIds are unique within each panel (%s)" % dup_ref)
    # The data source is chosen at import time, never pinned to someone's Grafana.
    pinned = [p.get("title") for p in data_panels
              if p.get("datasource", {}).get("uid") != "${datasource}"
              or any(t.get("datasource", {}).get("uid") != "${datasource}" for t in p["targets"])]
    check(not pinned, "panels and targets use the ${datasource} variable (not: %s)" % pinned)
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    check(ds.get("type") == "datasource" and ds.get("query") == "prometheus",
          "a `datasource` variable of type datasource selects a Prometheus data source")
    for name in ("instance", "device"):
        check(variables.get(name, {}).get("type") == "query", "a `%s` query variable exists" % name)
    exprs, var_queries = dashboard_queries(dash)
    used = set()
    for _, e in exprs + var_queries:
        used |= variables_in(e)
    undefined = used - set(variables) - set(GRAFANA_BUILTINS)
    check(not undefined, "every $variable used is defined (undefined: %s)" % sorted(undefined))
    bad_hq = [w for w, e in exprs if "histogram_quantile" in e
              and not re.search(r'by\s*\([^)]*\ble\b', e) or "_bucket" in e and
              "histogram_quantile" not in e]
    check(not bad_hq, "histogram_quantile keeps `le` and _bucket series appear only inside it (%s)"
          % bad_hq)
    return exprs, var_queries


def check_dashboard_names(check, exprs, var_queries, samples, families):
    exported = dict(samples)
    exported.update(PROMETHEUS_SERIES)
    unknown, bad_labels, stray_all, used_families = [], [], [], set()
    for where, expr in exprs + [(n, q) for n, q in var_queries]:
        m = re.match(r'^\s*label_values\((.*),\s*(\w+)\s*\)\s*$', expr)
        if m:
            expr_sel, extra_group = m.group(1), {m.group(2)}
        else:
            expr_sel, extra_group = expr, set()
        selectors, grouping, stray = promql_names(expr_sel)
        grouping |= extra_group
        stray_all += ["%s: %s" % (where, s) for s in stray]
        in_expr = set(TARGET_LABELS)
        for metric, labels in selectors:
            if metric is None or metric not in exported:
                unknown.append("%s: %s" % (where, metric))
                continue
            used_families.add(family_of(metric, families))
            known = exported[metric] | TARGET_LABELS
            in_expr |= known
            bad_labels += ["%s: %s{%s}" % (where, metric, l) for l in labels if l not in known]
        bad_labels += ["%s: by/on (%s)" % (where, l) for l in grouping if l not in in_expr]
    check(not unknown, "every series the dashboard names is exported by faultd (unknown: %s)"
          % unknown)
    check(not bad_labels, "every label the dashboard filters or groups by exists on its series "
                          "(unknown: %s)" % bad_labels)
    check(not stray_all, "no variable outside strings, ranges and offsets (%s)" % stray_all)
    missing = REQUIRED_FAMILIES - used_families
    check(not missing, "the dashboard shows every required family (missing: %s)" % sorted(missing))
    unused = {f for f in families if f.startswith("faultd_")} - used_families
    if unused:
        print("# note: exported but not on the dashboard: %s" % sorted(unused))


class Prometheus:
    """A real Prometheus scraping one target every second, in `work`."""

    def __init__(self, work, target, rules):
        self.port = free_port()
        self.dir = os.path.join(work, "prometheus")
        os.makedirs(self.dir)
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: { scrape_interval: 1s, evaluation_interval: 1s }\n"
                    "rule_files: ['%s']\n"
                    "scrape_configs:\n"
                    "  - job_name: faultd\n"
                    "    static_configs: [ { targets: ['%s'] } ]\n" % (rules, target))
        self.log = open(os.path.join(self.dir, "prometheus.log"), "wb")
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file=" + config, "--storage.tsdb.path=" + self.dir + "/data",
             "--web.listen-address=127.0.0.1:%d" % self.port, "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)

    def ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("prometheus exited with %s:\n%s" % (self.proc.returncode,
                                                                     self.read_log()))
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % self.port, timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def api(self, path, params):
        url = "http://127.0.0.1:%d/api/v1/%s?%s" % (self.port, path, urllib.parse.urlencode(params))
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return json.loads(r.read().decode())
        except urllib.error.HTTPError as e:  # bad queries answer 400 with a JSON error
            return json.loads(e.read().decode())

    def query(self, expr):
        return self.api("query", {"query": expr})

    def vector(self, expr):
        r = self.query(expr)
        return r.get("data", {}).get("result", []) if r.get("status") == "success" else []

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def read_log(self):
        with open(os.path.join(self.dir, "prometheus.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")


def values_by_labels(rows, **labels):
    return [float(x["value"][1]) for x in rows
            if all(x["metric"].get(k) == v for k, v in labels.items())]


def check_dashboard_in_prometheus(check, prom, dash, exprs, var_queries):
    values = dict(GRAFANA_BUILTINS)
    for v in dash["templating"]["list"]:
        if v.get("type") == "query":
            values[v["name"]] = v.get("allValue") or ".*"  # what "All" sends
    errors, empty, results = [], [], {}
    for where, expr in exprs:
        r = prom.query(substitute(expr, values))
        if r.get("status") != "success":
            errors.append("%s: %s" % (where, r.get("error")))
        elif not r["data"]["result"]:
            # "... > 0" shows only what happened (errors, reloads): nothing did here, but what
            # it filters must exist.
            m = re.match(r'^(.*\S)\s*>\s*0$', expr.strip(), re.S)
            if not m or not prom.vector(substitute(m.group(1), values)):
                empty.append(where)
        results[where] = r.get("data", {}).get("result", [])
    check(not errors, "Prometheus evaluates every dashboard expression (errors: %s)" % errors)
    check(not empty, "every dashboard expression returns data after a fault and a hook run "
                     "(empty: %s)" % empty)
    empty_vars = []
    for name, q in var_queries:
        m = re.match(r'^\s*label_values\((.*),\s*(\w+)\s*\)\s*$', q)
        r = prom.api("label/%s/values" % m.group(2), {"match[]": substitute(m.group(1), values)}) \
            if m else {}
        if r.get("status") != "success" or not r.get("data"):
            empty_vars.append("%s: %s" % (name, r.get("error", "no values")))
    check(not empty_vars, "every variable query lists values (%s)" % empty_vars)

    def panel(title, ref="A"):
        return results.get("panel '%s' target %s" % (title, ref), [])

    # The finding's counter series first appeared with value 1, after Prometheus had started:
    # plain increase() would show nothing here.
    check(values_by_labels(panel("Findings in range by device"), device="5", code="80818C00")
          == [1.0], "the findings table shows device 5's 80818C00 once (%s)"
          % panel("Findings in range by device"))
    check(any(v > 0 for v in values_by_labels(panel("Findings by code"), code="80818C00")),
          "the findings-by-code panel shows the new code")
    check(values_by_labels(panel("Isolated devices")) == [1.0], "one isolated device")
    check(values_by_labels(panel("Hook failures in range")) == [1.0],
          "the failed resume hook is counted once")
    check(any(v > 0 for v in values_by_labels(panel("Hook runs by action and result"),
                                              action="isolate", result="success")),
          "the hook runs panel shows the isolate hook's success")
    check(values_by_labels(panel("Nodes up")) == [1.0], "one node up")
    # The isolated device's incident is the only one: it is the suspect.
    first = panel("First to fail: devices by incident start")
    check([(x["metric"].get("device"), x["metric"].get("role")) for x in first] == [("5", "suspect")],
          "the first-to-fail table names device 5 the suspect (%s)" % first)
    # The duration histogram's series, too, appeared with the hook's first run.
    p50 = values_by_labels(panel("Hook duration"), action="isolate")
    check(len(p50) == 1 and 0 < p50[0] < 60, "the hook duration panel shows the isolate hook's "
                                             "first run (%s)" % p50)
    # The inventory: 8 devices of the 9 expected, device 5 isolated, device 7's probe failing.
    counts = {n: values_by_labels(panel("Devices per node", ref)) for n, ref in
              (("expected", "A"), ("present", "B"), ("healthy", "C"), ("known", "D"))}
    check(counts == {"expected": [9.0], "present": [8.0], "healthy": [7.0], "known": [8.0]},
          "the devices-per-node table: 9 expected, 8 present, 7 healthy, 8 known (%s)" % counts)
    check(values_by_labels(panel("Devices missing")) == [1.0], "one device missing")
    check(values_by_labels(panel("Nodes short of healthy devices")) == [1.0],
          "one node short of healthy devices")
    check(values_by_labels(panel("Probes failing")) == [1.0], "one probe failing")
    inventory = {x["metric"].get("device"): x["metric"].get("state")
                 for x in panel("Device inventory")}
    check(len(inventory) == 8 and inventory.get("5") == "isolated",
          "the inventory table lists the 8 devices, device 5 isolated (%s)" % inventory)


def check_inventory_alerts(check, prom):
    """The shipped inventory alerts, pending against the real faultd's series (their `for:`
    is minutes: pending is the expression holding), with the values of the state after the
    fault (the rules are evaluated every second, a little after the scrape)."""
    want = {"FaultdDeviceLost": ({}, 1.0), "FaultdHealthyDevicesBelowExpected": ({}, 7.0),
            "FaultdProbeDown": ({"source": "probe"}, 1.0)}
    seen = {}

    def as_wanted():
        for a in prom.api("alerts", {}).get("data", {}).get("alerts", []):
            if a["labels"]["alertname"] in want:
                seen[a["labels"]["alertname"]] = a
        return all(name in seen and seen[name]["state"] == "pending"
                   and float(seen[name]["value"]) == value
                   and all(seen[name]["labels"].get(k) == v for k, v in labels.items())
                   for name, (labels, value) in want.items())
    try:
        wait_for("the inventory alerts pending", as_wanted, timeout=30, interval=0.2)
    except AssertionError:
        pass  # the checks below say which one is not
    for name, (labels, value) in want.items():
        a = seen.get(name, {})
        check(a.get("state") == "pending" and float(a.get("value", "nan")) == value
              and all(a["labels"].get(k) == v for k, v in labels.items()),
              "%s pending with the value %g (%s)" % (name, value, {
                  k: a[k] for k in ("state", "labels", "value")} if a else "absent"))
    check(values_by_labels(prom.vector("cluster:faultd_devices:estimate")) == [9.0],
          "the breaker's cluster size is the node's 9 expected devices")


def run_dashboard(args, check, work):
    with open(os.path.join(args.source_dir, "etc", "grafana", "faultd-dashboard.json")) as f:
        text = f.read()
    try:
        dash = json.loads(text)
    except ValueError as e:
        check(False, "the dashboard is valid JSON (%s)" % e)
        return
    check(True, "the dashboard is valid JSON")
    exprs, var_queries = check_dashboard_structure(check, dash)

    logs = os.path.join(work, "logs", "plog")
    os.makedirs(logs)
    plog = os.path.join(logs, "plog-59420_20250124110314898.log")
    with open(plog, "w") as f:
        f.write(NOISE * 3)
    port = free_port()
    rules = os.path.join(os.path.abspath(args.source_dir), "etc", "faultd", "rules.d")
    d = Faultd(args, work, f"""
node: dash-node
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}/*.yaml"]
sources:
  - {{ name: plog, type: file, paths: ["{logs}/plog-*.log"], start_at: end }}
  - {{ name: probe, type: command, argv: [/bin/false, "{{device}}"], devices: "7", interval: 1s,
      timeout: 1s, unresponsive_after: 1000, parser: npu_smi_health }}
inventory: {{ devices: "0-7", expected_devices: 9 }}
actions:
  isolate: {{ argv: [/bin/true], timeout: 10s }}
  resume:  {{ argv: [/bin/false], timeout: 10s, after: isolate }}
""")
    d.start()
    prom = None
    if check(shutil.which("prometheus") is not None,
             "prometheus is installed (Debian package prometheus, from scripts/deps)"):
        prom = Prometheus(work, "127.0.0.1:%d" % port, os.path.join(
            os.path.abspath(args.source_dir), "etc", "prometheus", "faultd-rules.yml"))
    try:
        if prom:
            wait_for("prometheus to be ready", prom.ready, timeout=60, interval=0.1)
            # Two scrapes before the fault, so counters are seen at 0 first.
            wait_for("two scrapes of faultd", lambda: prom.vector(
                'count_over_time(faultd_build_info[1m]) >= 2'), timeout=30, interval=0.2)
        with open(plog, "a") as f:
            f.write(NOISE + ASD_PLOG)
        wait_for("device 5 isolated and the resume hook failed",
                 lambda: metric_value(scrape(port), "faultd_actions_total",
                                      {"action": "resume", "result": "failure"}) == 1.0)
        text = scrape(port)
        check(metric_value(text, "faultd_device_state",
                           {"device": "5", "state": "isolated"}) == 1.0, "faultd isolated device 5")
        samples, families = parse_exposition(text)
        check_dashboard_names(check, exprs, var_queries, samples, families)
        if prom:
            wait_for("prometheus to see the failed resume hook", lambda: prom.vector(
                'faultd_actions_total{action="resume",result="failure"} == 1'),
                timeout=30, interval=0.2)
            check_dashboard_in_prometheus(check, prom, dash, exprs, var_queries)
            check_inventory_alerts(check, prom)
    finally:
        if prom:
            prom.stop()
            if check.failures:
                print(prom.read_log())
    if check.failures:
        print(d.read_log())


# ---------------------------------------------------------------------------------------------
# Kubernetes

def load_manifests(check, source_dir):
    docs = []
    for name in MANIFESTS:
        path = os.path.join(source_dir, K8S_DIR, name)
        try:
            with open(path) as f:
                loaded = [d for d in yaml.safe_load_all(f) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            check(False, "%s parses (%s)" % (name, e))
            continue
        check(bool(loaded), "%s parses (%d documents)" % (name, len(loaded)))
        docs += [(name, d) for d in loaded]
    return docs


def quantity(q):
    units = {"m": 1e-3, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "k": 1e3, "M": 1e6, "G": 1e9}
    m = re.match(r'^(\d+(?:\.\d+)?)([A-Za-z]*)$', str(q))
    if not m or m.group(2) not in units and m.group(2) != "":
        raise ValueError("bad quantity %r" % q)
    return float(m.group(1)) * units.get(m.group(2), 1)


def find(docs, kind, name=None, namespace=None):
    return [d for _, d in docs if d.get("kind") == kind
            and (name is None or d["metadata"].get("name") == name)
            and (namespace is None or d["metadata"].get("namespace") == namespace)]


def check_documents(check, docs):
    bad, wrong_api, ns_issue, keys = [], [], [], []
    for file, d in docs:
        meta = d.get("metadata") if isinstance(d, dict) else None
        if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind") or \
                not isinstance(meta, dict) or not meta.get("name"):
            bad.append(file)
            continue
        kind = d["kind"]
        if API_VERSIONS.get(kind) != d["apiVersion"]:
            wrong_api.append("%s %s %s" % (file, kind, d["apiVersion"]))
        if not re.match(r'^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$', meta["name"]):
            bad.append("%s: name %r" % (file, meta["name"]))
        if (kind in CLUSTER_SCOPED) == ("namespace" in meta):
            ns_issue.append("%s %s" % (kind, meta["name"]))
        keys.append((kind, meta.get("namespace"), meta["name"]))
    check(not bad, "every document has apiVersion, kind and a valid metadata.name (bad: %s)" % bad)
    check(not wrong_api, "every kind has its stable apiVersion (%s)" % wrong_api)
    check(not ns_issue, "namespaced kinds name their namespace, cluster-scoped ones do not (%s)"
          % ns_issue)
    check(len(keys) == len(set(keys)), "no object is declared twice")
    declared = {d["metadata"]["name"] for d in find(docs, "Namespace")}
    used = {d["metadata"]["namespace"] for _, d in docs if d.get("metadata", {}).get("namespace")}
    undeclared = used - declared - EXTERNAL_NAMESPACES
    check(not undeclared, "every namespace used is declared (undeclared: %s)" % undeclared)


def daemonset_parts(docs):
    ds = find(docs, "DaemonSet")[0]
    pod = ds["spec"]["template"]["spec"]
    return ds, pod, pod["containers"][0], {v["name"]: v for v in pod.get("volumes", [])}


def check_daemonset(check, docs, source_dir):
    sets = find(docs, "DaemonSet")
    if not check(len(sets) == 1, "one DaemonSet"):
        return
    ds, pod, c, volumes = daemonset_parts(docs)
    ns = ds["metadata"]["namespace"]
    labels = ds["spec"]["template"]["metadata"].get("labels", {})
    check(ds["spec"]["selector"]["matchLabels"].items() <= labels.items(),
          "the DaemonSet's selector matches its pod template")
    check(len(pod["containers"]) == 1 and c["name"] == "faultd", "one container, faultd")
    check(c.get("image") == "faultd:VERSION", "the image is the documented placeholder")
    check(bool(find(docs, "ServiceAccount", pod.get("serviceAccountName"), ns)),
          "the pod runs as a ServiceAccount declared in its namespace")
    check(pod.get("automountServiceAccountToken", True) is not False,
          "the service account token is mounted (the hooks' kubeconfig uses it)")
    for key in ("hostPID", "hostNetwork", "hostIPC"):
        check(not pod.get(key, False), "%s is off" % key)
    check(isinstance(pod.get("terminationGracePeriodSeconds"), int)
          and pod["terminationGracePeriodSeconds"] > 0, "terminationGracePeriodSeconds is set")
    check(any(t.get("effect") == "NoSchedule" and t.get("operator") == "Exists"
              for t in pod.get("tolerations", [])), "NoSchedule taints are tolerated")
    placement = json.dumps(pod.get("affinity", {})) + json.dumps(pod.get("nodeSelector", {}))
    check('"accelerator"' in placement, "the pods are placed by the accelerator node label")
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "spec.nodeName", "NODE_NAME comes from spec.nodeName")

    mounts = c.get("volumeMounts", [])
    names = [v["name"] for v in pod.get("volumes", [])]
    check(len(names) == len(set(names)), "volume names are unique")
    undeclared = [m["name"] for m in mounts if m["name"] not in volumes]
    check(not undeclared, "every mount refers to a declared volume (undeclared: %s)" % undeclared)
    unused = set(volumes) - {m["name"] for m in mounts}
    check(not unused, "every volume is mounted (unused: %s)" % unused)
    paths = [m["mountPath"] for m in mounts]
    check(len(paths) == len(set(paths)), "mount paths are unique")
    bad_types = [n for n, v in volumes.items()
                 if "hostPath" in v and v["hostPath"].get("type", "") not in HOSTPATH_TYPES]
    check(not bad_types, "hostPath types are valid (%s)" % bad_types)
    for n, v in volumes.items():
        if "configMap" in v:
            cms = find(docs, "ConfigMap", v["configMap"]["name"], ns)
            check(bool(cms), "volume %s refers to a ConfigMap declared in %s" % (n, ns))
            for m in mounts:
                if m["name"] == n and m.get("subPath"):
                    check(bool(cms) and m["subPath"] in cms[0].get("data", {}),
                          "mount %s takes key %s, which the ConfigMap has" % (m["mountPath"],
                                                                             m["subPath"]))
    host = {}
    for m in mounts:
        v = volumes.get(m["name"], {})
        if "hostPath" in v:
            host[v["hostPath"]["path"]] = (m, v["hostPath"].get("type", ""))
    expected = {"/root/ascend/log": True, "/var/log": True, "/usr/local/bin/npu-smi": True,
                "/usr/local/Ascend/driver": True, "/var/lib/faultd": False, "/run/faultd": False}
    for path, read_only in expected.items():
        m = host.get(path, ({}, ""))[0]
        check(bool(m) and bool(m.get("readOnly", False)) == read_only,
              "host %s is mounted %s" % (path, "read-only" if read_only else "writable"))
    check(host.get("/var/lib/faultd", (0, ""))[1] == "DirectoryOrCreate",
          "the state dir is DirectoryOrCreate")
    writable = [p for p, (m, _) in host.items() if not m.get("readOnly") and p not in expected]
    check(not writable, "no other host path is writable (%s)" % writable)

    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    check(9847 in ports.values(), "containerPort 9847 is declared")
    g = c.get("readinessProbe", {}).get("httpGet", {})
    check(g.get("path") == "/metrics" and ports.get(g.get("port"), g.get("port")) == 9847,
          "the readiness probe is an HTTP GET of /metrics on the declared port 9847")
    # Security audit F9: whoever can reach the metrics port can hold its threads; liveness must
    # not depend on it, or they could keep faultd in a restart loop.
    live = c.get("livenessProbe", {})
    command = live.get("exec", {}).get("command", [])
    check(command[:1] == ["/usr/bin/faultctl"] and command[-1:] == ["status"]
          and "httpGet" not in live and "tcpSocket" not in live,
          "the liveness probe asks the main loop through faultctl status, not the network (%s)"
          % live)
    check(live.get("timeoutSeconds", 1) > 10,
          "the liveness probe waits longer than faultctl's own 10 s timeout")
    res = c.get("resources", {})
    try:
        ok = all(quantity(res["requests"][k]) <= quantity(res["limits"][k])
                 for k in ("cpu", "memory"))
    except (KeyError, ValueError, TypeError):
        ok = False
    check(ok, "cpu and memory requests and limits are set, requests <= limits")
    sc = c.get("securityContext", {})
    check(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False,
          "not privileged, no privilege escalation")
    check(sc.get("readOnlyRootFilesystem") is True, "read-only root file system")
    check(sc.get("runAsUser") == 0, "runs as root explicitly (root-owned logs)")
    caps = sc.get("capabilities", {})
    check("ALL" in caps.get("drop", []) and set(caps.get("add", [])) <= {"DAC_READ_SEARCH"},
          "all capabilities dropped but DAC_READ_SEARCH (%s)" % caps.get("add"))
    ann = ds["spec"]["template"]["metadata"].get("annotations", {})
    check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == "9847"
          and ann.get("prometheus.io/path") == "/metrics", "scrape annotations name /metrics:9847")

    # The example isolate hook reads its kubeconfig from a fixed path (unless FAULTD_KUBECONFIG
    # names another): it must be mounted there.
    with open(os.path.join(source_dir, "etc", "faultd", "hooks", "isolate-device")) as f:
        m = re.search(r'kubeconfig=\$\{FAULTD_KUBECONFIG:-([^}]+)\}', f.read())
    kc_mount = [x for x in mounts if m and x["mountPath"] == m.group(1)]
    check(bool(kc_mount) and kc_mount[0].get("subPath") == "kubeconfig",
          "the ConfigMap's kubeconfig is mounted where the isolate hook reads it (%s)"
          % (m and m.group(1)))


def check_service(check, docs):
    ds, pod, c, _ = daemonset_parts(docs)
    labels = ds["spec"]["template"]["metadata"]["labels"]
    svcs = find(docs, "Service")
    if not check(len(svcs) == 1, "one Service"):
        return
    svc = svcs[0]
    check(svc["spec"].get("clusterIP") == "None", "the Service is headless (each pod is scraped)")
    check(svc["spec"]["selector"].items() <= labels.items(), "the Service selects the faultd pods")
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    for p in svc["spec"]["ports"]:
        check(ports.get(p.get("targetPort"), p.get("targetPort")) == 9847,
              "Service port %s targets the container's 9847" % p.get("name"))
    for sm in find(docs, "ServiceMonitor"):
        spec = sm["spec"]
        check(spec["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(),
              "the ServiceMonitor selects the Service")
        watched = spec.get("namespaceSelector", {}).get("matchNames", [])
        check(svc["metadata"]["namespace"] in watched,
              "the ServiceMonitor looks in the Service's namespace")
        names = {p.get("name") for p in svc["spec"]["ports"]}
        check(all(e.get("port") in names and e.get("path", "/metrics") == "/metrics"
                  for e in spec["endpoints"]), "ServiceMonitor endpoints use the Service's port")
        relabel = [r for e in spec["endpoints"] for r in e.get("relabelings", [])]
        check(any(r.get("targetLabel") == "instance" and
                  r.get("sourceLabels") == ["__meta_kubernetes_pod_node_name"] for r in relabel),
              "the ServiceMonitor names targets by node (the dashboard's instance variable)")


def check_network_policy(check, docs):
    ds, _, c, _ = daemonset_parts(docs)
    policies = find(docs, "NetworkPolicy")
    if not check(len(policies) == 1, "one NetworkPolicy"):
        return
    spec = policies[0]["spec"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    check(spec["podSelector"]["matchLabels"].items() <= labels.items(),
          "the NetworkPolicy selects the faultd pods")
    check(spec.get("policyTypes") == ["Ingress"], "it restricts incoming traffic only (hooks "
          "call the API server)")
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    allowed = [ports.get(p.get("port"), p.get("port")) for r in spec.get("ingress", [])
               for p in r.get("ports", [])]
    sources = [f for r in spec.get("ingress", []) for f in r.get("from", [])]
    check(allowed == [9847], "only the metrics port is open (%s)" % allowed)
    check(bool(sources) and all(f.get("podSelector", {}).get("matchLabels") and
                                f.get("namespaceSelector", {}).get("matchLabels") for f in sources),
          "only named pods in a named namespace (Prometheus) may connect")


def check_rbac(check, docs):
    ds, pod, _, _ = daemonset_parts(docs)
    sa = (pod["serviceAccountName"], ds["metadata"]["namespace"])
    bindings = find(docs, "ClusterRoleBinding") + find(docs, "RoleBinding")
    check(bool(bindings), "the service account is bound to roles")
    for b in bindings:
        where = "%s %s" % (b["kind"], b["metadata"]["name"])
        subjects = [(s.get("kind"), s.get("name"), s.get("namespace"))
                    for s in b.get("subjects", [])]
        check(subjects == [("ServiceAccount",) + sa], "%s binds only the ServiceAccount %s/%s (%s)"
              % (where, sa[1], sa[0], subjects))
        ref = b["roleRef"]
        ns = b["metadata"].get("namespace") if ref.get("kind") == "Role" else None
        check(ref.get("apiGroup") == "rbac.authorization.k8s.io"
              and bool(find(docs, ref.get("kind"), ref.get("name"), ns)),
              "%s refers to a declared %s %s" % (where, ref.get("kind"), ref.get("name")))
    allowed = {"get", "create", "update", "patch"}
    for role in find(docs, "ClusterRole") + find(docs, "Role"):
        where = "%s %s" % (role["kind"], role["metadata"]["name"])
        for r in role.get("rules", []):
            fields = r.get("apiGroups", []) + r.get("resources", []) + r.get("verbs", [])
            check("*" not in fields, "%s has no wildcards" % where)
            check(not {"secrets", "pods/exec"} & set(r.get("resources", [])),
                  "%s grants no secrets or exec" % where)
            check(set(r.get("verbs", [])) <= allowed, "%s verbs %s are within %s"
                  % (where, r.get("verbs"), sorted(allowed)))
            if "nodes" in r.get("resources", []):
                check(role["kind"] == "ClusterRole" and set(r["verbs"]) == {"get", "patch"},
                      "nodes: get and patch (labels, taints) through a ClusterRole")
            if "configmaps" in r.get("resources", []):
                check(role["kind"] == "Role" and set(r["verbs"]) == allowed,
                      "%s: configmaps get/create/update/patch in one namespace only" % where)
    granted = {(res, role["metadata"].get("namespace"))
               for role in find(docs, "ClusterRole") + find(docs, "Role")
               for r in role.get("rules", []) for res in r.get("resources", [])}
    check(("nodes", None) in granted, "node labels and taints are granted")
    check(("configmaps", "kube-system") in granted,
          "kube-system ConfigMaps (mindx-dl-deviceinfo) are granted")
    check(("configmaps", "mindx-dl") in granted, "mindx-dl public-fault ConfigMaps are granted")


def check_kubeconfig(check, docs):
    cm = find(docs, "ConfigMap", "faultd-config")[0]
    try:
        kc = yaml.safe_load(cm["data"]["kubeconfig"])
    except (KeyError, yaml.YAMLError) as e:
        check(False, "the ConfigMap's kubeconfig parses (%s)" % e)
        return
    contexts = {c["name"]: c["context"] for c in kc.get("contexts", [])}
    ctx = contexts.get(kc.get("current-context"), {})
    clusters = {c["name"]: c["cluster"] for c in kc.get("clusters", [])}
    users = {u["name"]: u["user"] for u in kc.get("users", [])}
    cluster, user = clusters.get(ctx.get("cluster"), {}), users.get(ctx.get("user"), {})
    check(kc.get("kind") == "Config" and bool(cluster) and bool(user),
          "the kubeconfig's current context names a declared cluster and user")
    sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount/"
    check(user.get("tokenFile") == sa_dir + "token" and
          cluster.get("certificate-authority") == sa_dir + "ca.crt" and
          cluster.get("server", "").startswith("https://kubernetes.default.svc"),
          "the kubeconfig uses the pod's service account and the in-cluster API server")


def run_manifests(args, check, work):
    if not require_yaml(check):
        return
    docs = load_manifests(check, args.source_dir)
    check_documents(check, docs)
    check_daemonset(check, docs, args.source_dir)
    check_service(check, docs)
    check_network_policy(check, docs)
    check_rbac(check, docs)
    check_kubeconfig(check, docs)


# ---------------------------------------------------------------------------------------------
# The ConfigMap's configuration, as the container would run it

class Mounts:
    """Maps container paths to a scratch copy of what the DaemonSet mounts there."""

    def __init__(self, docs, work, source_dir):
        _, pod, self.container, volumes = daemonset_parts(docs)
        ns = find(docs, "DaemonSet")[0]["metadata"]["namespace"]
        self.source_dir = source_dir
        self.table = []  # (mountPath, test path, read only)
        for m in self.container["volumeMounts"]:
            v = volumes[m["name"]]
            if "hostPath" in v:
                base = os.path.join(work, "host") + v["hostPath"]["path"]
                if v["hostPath"].get("type") == "File":
                    os.makedirs(os.path.dirname(base), exist_ok=True)
                    open(base, "a").close()
                else:
                    os.makedirs(base, exist_ok=True)
            elif "configMap" in v:
                base = os.path.join(work, "configmap", m["name"])
                os.makedirs(base, exist_ok=True)
                cm = find(docs, "ConfigMap", v["configMap"]["name"], ns)[0]
                for key, value in cm.get("data", {}).items():
                    with open(os.path.join(base, key), "w") as f:
                        f.write(value)
            else:
                base = os.path.join(work, "volume", m["name"])
                os.makedirs(base, exist_ok=True)
            if m.get("subPath"):
                base = os.path.join(base, m["subPath"])
            self.table.append((m["mountPath"], base, bool(m.get("readOnly"))))
        self.table.sort(key=lambda t: len(t[0]), reverse=True)

    def resolve(self, path):
        """(test path, read only) for a container path; None if neither mounted nor in the image."""
        for mount, base, ro in self.table:
            if path == mount or path.startswith(mount.rstrip("/") + "/"):
                return base + path[len(mount):], ro
        for prefix, rel in IMAGE_PATHS.items():
            if path == prefix or path.startswith(prefix + "/"):
                return os.path.join(self.source_dir, rel) + path[len(prefix):], True
        return None


RECORDER = """#!/bin/sh
out="$1"
mkdir -p "$out"
env > "$out/$FAULTD_ACTION-$FAULTD_DEVICE.tmp"
mv "$out/$FAULTD_ACTION-$FAULTD_DEVICE.tmp" "$out/$FAULTD_ACTION-$FAULTD_DEVICE.env"
cat > /dev/null
"""


def start_command(check, mounts, work):
    """Runs the container's command (paths mapped, faultd replaced by a stub that records its
    arguments) and returns the container path of the config faultd is given, or None."""
    cmd = mounts.container.get("command", [])
    if not check(len(cmd) == 3 and cmd[:2] == ["/bin/sh", "-c"],
                 "the container starts through sh -c"):
        return None
    stub = os.path.join(work, "faultd-stub")
    with open(stub, "w") as f:
        f.write('#!/bin/sh\nprintf "%%s\\n" "$@" > %s/stub-args\n' % work)
    os.chmod(stub, stat.S_IRWXU)
    unmapped, back = [], {}

    def repl(m):
        if m.group(0) == "/usr/sbin/faultd":
            return stub
        r = mounts.resolve(m.group(0))
        if r is None:
            unmapped.append(m.group(0))
            return m.group(0)
        back[r[0]] = m.group(0)
        return r[0]
    script = re.sub(r'(?<![\w}@$])/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*', repl, cmd[2])
    check(not unmapped, "every path in the start command is mounted (%s)" % unmapped)
    r = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=30,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                            "NODE_NAME": NODE_NAME})
    if not check(r.returncode == 0, "the start command runs (%s)" % r.stderr.strip()):
        return None
    with open(os.path.join(work, "stub-args")) as f:
        argv = f.read().split("\n")
    check(argv[:1] == ["--config"], "faultd is started with --config (%s)" % argv)
    return back.get(argv[1]) if len(argv) > 1 else None


def rebase_config(check, mounts, cfg, port, hook, hooks_out):
    """Maps every path of the effective config through the mounts; hooks become `hook`."""
    def mapped(what, path, writable=False):
        r = mounts.resolve(path)
        check(r is not None, "%s %s is mounted into the container" % (what, path))
        if r and writable:
            check(not r[1], "%s %s is on a writable mount" % (what, path))
        return r[0] if r else path

    cfg["state_dir"] = mapped("state_dir", cfg["state_dir"], writable=True)
    sock = cfg["control"]["socket"]
    cfg["control"]["socket"] = os.path.join(mapped("control socket dir", os.path.dirname(sock),
                                                   writable=True), os.path.basename(sock))
    listen = cfg["metrics"]["listen"]
    check(listen.endswith(":9847"), "faultd listens on the containerPort 9847 (%s)" % listen)
    cfg["metrics"]["listen"] = "127.0.0.1:%d" % port
    cfg["include"] = [mapped("include", p) for p in cfg.get("include", [])]
    for s in cfg.get("sources", []):
        s["paths"] = [mapped("source %s path" % s["name"], p) for p in s.get("paths", [])]
    for name, a in cfg.get("actions", {}).items():
        prog = a["argv"][0]
        r = mounts.resolve(prog)
        check(r is not None and os.access(r[0], os.X_OK),
              "hook %s (%s) ships in the image or is mounted, executable" % (name, prog))
        a["argv"] = [hook, hooks_out]
    return cfg


def check_liveness(check, mounts, args, d, port):
    """Runs the DaemonSet's liveness command against the running faultd: it passes while clients
    hold the metrics port's connections open (security audit F9), and fails once faultd's main
    loop stops answering."""
    command = mounts.container.get("livenessProbe", {}).get("exec", {}).get("command", [])
    if not check(command[:1] == ["/usr/bin/faultctl"], "the liveness probe runs faultctl"):
        return
    def mapped(arg):
        r = arg.startswith("/") and mounts.resolve(arg)
        return r[0] if r else arg
    argv = [args.faultctl] + [mapped(a) for a in command[1:]]

    def probe():
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).returncode
    held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(20)]
    check(probe() == 0, "the liveness probe passes while 20 clients hold metrics connections")
    for s in held:
        s.close()
    os.kill(d.proc.pid, signal.SIGSTOP)  # a wedged main loop, as far as a client can tell
    try:
        check(probe() != 0, "the liveness probe fails while faultd does not answer")
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    check(probe() == 0, "and passes again once faultd answers")


def run_configmap(args, check, work):
    if not require_yaml(check):
        return
    docs = load_manifests(check, args.source_dir)
    if not find(docs, "DaemonSet") or not find(docs, "ConfigMap", "faultd-config"):
        check(False, "the DaemonSet and the faultd-config ConfigMap exist")
        return
    mounts = Mounts(docs, work, os.path.abspath(args.source_dir))
    effective = start_command(check, mounts, work)
    r = effective and mounts.resolve(effective)
    if not check(bool(r) and not r[1], "the effective config is written to a writable mount"):
        return
    with open(r[0]) as f:
        cfg = yaml.safe_load(f)
    check(cfg.get("node") == NODE_NAME, "the start command fills in the node name (%r)"
          % cfg.get("node"))

    port = free_port()
    hook = os.path.join(work, "recorder")
    with open(hook, "w") as f:
        f.write(RECORDER)
    os.chmod(hook, stat.S_IRWXU)
    hooks_out = os.path.join(work, "hook-runs")
    cfg = rebase_config(check, mounts, cfg, port, hook, hooks_out)
    rebased = os.path.join(work, "effective-rebased.yaml")
    with open(rebased, "w") as f:
        yaml.safe_dump(cfg, f)
    res = subprocess.run([args.faultd, "--check-config", "--config", rebased],
                         capture_output=True, text=True, timeout=60)
    m = re.search(r'(\d+) rule\(s\) from (\d+) file\(s\)', res.stdout)
    shipped = len([n for n in os.listdir(os.path.join(args.source_dir, "etc", "faultd", "rules.d"))
                   if n.endswith(".yaml")])
    ok = check(res.returncode == 0 and "warning" not in res.stderr,
               "faultd --check-config accepts the ConfigMap's config without warnings (%d: %s)"
               % (res.returncode, res.stderr.strip()))
    check(bool(m) and int(m.group(1)) > 0 and int(m.group(2)) == shipped + 1,
          "it loads the shipped rule packs and the site's (%s)" % res.stdout.strip())
    dev_dir = mounts.resolve("/root/ascend/log/debug/device-2")
    if not ok or not dev_dir:
        return

    # The node's CANN logs, as a training container writes them to the host.
    dev_dir = dev_dir[0]
    os.makedirs(dev_dir)
    dev_log = os.path.join(dev_dir, "device-299066_20250225184036913.log")
    with open(dev_log, "w") as f:
        f.write(NOISE * 5)
    d = Faultd(args, work, open(rebased).read())
    d.socket = cfg["control"]["socket"]
    d.start()
    with open(dev_log, "a") as f:
        f.write(NOISE + L1_LINE)
    wait_for("device 2's finding", lambda: metric_value(
        scrape(port), "faultd_faults_total", {"device": "2", "code": "80818C00"}) == 1.0)
    env_file = os.path.join(hooks_out, "isolate-2.env")
    wait_for("the isolate hook", lambda: os.path.exists(env_file))
    with open(env_file) as f:
        env = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    check(env.get("FAULTD_NODE") == NODE_NAME, "hooks get the Kubernetes node name (%r)"
          % env.get("FAULTD_NODE"))
    check(env.get("FAULTD_RULE") == "ascend.asd.silent-check-l1",
          "the device-log source and shipped rules found the silent-check fault")
    check(os.path.exists(os.path.join(cfg["state_dir"], "state.db")),
          "the state is kept on the host's /var/lib/faultd")
    check(d.ctl("status").returncode == 0, "faultctl reaches faultd through the host's /run/faultd")
    check_liveness(check, mounts, args, d, port)
    check(d.stop() == 0, "faultd stops cleanly")
    if check.failures:
        print(d.read_log())


if __name__ == "__main__":
    harness.main(run_dashboard, run_manifests, run_configmap)
