#!/usr/bin/env python3
"""The shipped hook recipes (etc/faultd/hooks/) run as faultd runs them: real child processes,
argv only, a clean environment with the FAULTD_* variables and the fault as JSON on stdin, with a
PATH that puts the fakes of tests/support/tools/ (kubectl with a ConfigMap and node store, scontrol,
ascend-dmi, systemctl) first. Each recipe: what it changes, that a second run changes nothing,
release, dry run, and the exit statuses for errors a cluster really returns."""
import json
import os
import signal
import subprocess
import sys

import harness
from harness import wait_for

NODE = "worker-1"
FAULT_TIME = "2025-03-01T10:20:30.456Z"
FAULT_TIME_MS = 1740824430456
# A log line an attacker controls: it must never reach a tool's argv or a shell.
HOSTILE_TEXT = "ERROR accuracy sensitivity feature abnormal $(touch /tmp/faultd-pwned) `id`; rm -rf"


class Recipes:
    def __init__(self, args, work):
        self.hooks = os.path.join(args.source_dir, "etc", "faultd", "hooks")
        self.tools = os.path.join(args.source_dir, "tests", "support", "tools")
        self.state = os.path.join(work, "tools")
        os.makedirs(os.path.join(self.state, "kube"))

    def run(self, hook, device="3", action="isolate", argv=(), dry_run=False, path=None,
            code="80818C00", fault_id="42", extra_env=None):
        env = {
            "PATH": path or self.tools + os.pathsep + os.environ["PATH"],
            "FAKE_TOOL_DIR": self.state,
            "FAULTD_ACTION": action, "FAULTD_NODE": NODE, "FAULTD_DEVICE": device,
            "FAULTD_RULE": "ascend.asd.feature-abnormal", "FAULTD_CODE": code,
            "FAULTD_LEVEL": "SeparateNPU", "FAULTD_FAULT_ID": fault_id,
            "FAULTD_DRY_RUN": "1" if dry_run else "0",
        }
        env.update(extra_env or {})
        fault = {"rule": env["FAULTD_RULE"], "source": "device-log", "device": device,
                 "level": "SeparateNPU", "code": code, "file": "/var/log/device-3.log",
                 "line": 7, "offset": 4096, "text": HOSTILE_TEXT, "time": FAULT_TIME,
                 "id": int(fault_id), "action": action, "node": NODE, "dry_run": dry_run,
                 "evidence": [HOSTILE_TEXT]}
        return subprocess.run([os.path.join(self.hooks, hook)] + list(argv), env=env,
                              input=json.dumps(fault) + "\n", capture_output=True, text=True,
                              timeout=60)

    def calls(self, tool=None):
        try:
            with open(os.path.join(self.state, "calls.jsonl")) as f:
                calls = [json.loads(line) for line in f]
        except FileNotFoundError:
            return []
        return [c for c in calls if tool is None or c["tool"] == tool]

    def writes(self):
        return [c for c in self.calls("kubectl") if c["argv"][0] in ("patch", "create", "delete")]

    def obj(self, kind, namespace, name):
        try:
            with open(os.path.join(self.state, "kube", kind, namespace, name + ".json")) as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def put(self, kind, namespace, name, obj):
        obj.setdefault("metadata", {}).update(name=name, resourceVersion="7")
        d = os.path.join(self.state, "kube", kind, namespace)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(obj, f)

    def fail_next(self, tool, message, on="next"):
        """The tool's next call (with `on` in its argv) fails with `message`."""
        with open(os.path.join(self.state, "%s.fail-%s" % (tool, on)), "w") as f:
            f.write(message)


def said(r):
    return (r.stdout + r.stderr).strip().replace("\n", " | ")[:300]


def no_hostile_text(check, rec):
    leaked = [c for c in rec.calls() if "pwned" in json.dumps(c)]
    check(not leaked and not os.path.exists("/tmp/faultd-pwned"),
          "the log line never reaches a tool's argv or a shell (%s)" % leaked[:1])


DEVICE_INFO = {"DeviceInfo": {"DeviceList": {
    "huawei.com/Ascend910": ",".join("Ascend910-%d" % i for i in range(8)),
    "huawei.com/Ascend910-Fault": "[]", "huawei.com/Ascend910-NetworkUnhealthy": "",
    "huawei.com/Ascend910-Recovering": "", "huawei.com/Ascend910-Unhealthy": ""},
    "UpdateTime": 1763713955}, "SuperPodID": 5, "ServerIndex": 0, "RackID": 6,
    "TopoCheck": "OK", "CheckCode": "e5cc7a2c30df99b05fb3415484369006515105b0228fc26b097744dc"}


def separate_npu(args, check, work):
    rec = Recipes(args, work)
    name = "mindx-dl-deviceinfo-" + NODE
    seed = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": "kube-system", "labels": {"mx-consumer-cim": "true"}},
            "data": {"DeviceInfoCfg": json.dumps(DEVICE_INFO), "SwitchInfoCfg": "{\"x\":1}",
                     "ManuallySeparateNPU": "Ascend910-1"}}
    rec.put("configmap", "kube-system", name, json.loads(json.dumps(seed)))

    def separated():
        return rec.obj("configmap", "kube-system", name)["data"]["ManuallySeparateNPU"]

    r = rec.run("mindcluster-separate-npu", device="3")
    cm = rec.obj("configmap", "kube-system", name)
    check(r.returncode == 0 and separated() == "Ascend910-1,Ascend910-3",
          "isolate adds Ascend910-3 to ManuallySeparateNPU, keeping Ascend910-1 (%s: %s)"
          % (r.returncode, said(r)))
    check(cm["data"]["DeviceInfoCfg"] == seed["data"]["DeviceInfoCfg"]
          and cm["data"]["SwitchInfoCfg"] == seed["data"]["SwitchInfoCfg"]
          and cm["metadata"]["labels"] == seed["metadata"]["labels"],
          "every other key and label of the Device Plugin's ConfigMap is preserved")
    patch = json.loads(rec.writes()[0]["argv"][rec.writes()[0]["argv"].index("-p") + 1])
    check(patch["metadata"].get("resourceVersion") == "7" and list(patch["data"]) ==
          ["ManuallySeparateNPU"], "the patch touches only ManuallySeparateNPU and is "
          "conditional on the resourceVersion read (%s)" % patch)
    writes = len(rec.writes())
    r = rec.run("mindcluster-separate-npu", device="3")
    check(r.returncode == 0 and len(rec.writes()) == writes,
          "a second run for the same NPU writes nothing (%s)" % said(r))
    r = rec.run("mindcluster-separate-npu", device="5", dry_run=True)
    check(r.returncode == 0 and len(rec.writes()) == writes
          and "Ascend910-1,Ascend910-3,Ascend910-5" in r.stdout and "dry run" in r.stdout,
          "dry run prints the patch and changes nothing (%s)" % said(r))
    rec.fail_next("kubectl", "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o "
                  "timeout")
    r = rec.run("mindcluster-separate-npu", device="5")
    check(r.returncode == 75, "an unreachable API server is a retry, exit 75 (%d: %s)"
          % (r.returncode, said(r)))
    r = rec.run("mindcluster-separate-npu", device="9")
    check(r.returncode == 1 and "not one of the Device Plugin's NPUs" in r.stderr,
          "a device the Device Plugin does not list fails clearly (%s)" % said(r))
    r = rec.run("mindcluster-separate-npu", device="3", action="clear")
    check(r.returncode == 0 and separated() == "Ascend910-1",
          "the clear action removes Ascend910-3 again (%s)" % said(r))
    r = rec.run("mindcluster-separate-npu", device="3", action="clear")
    check(r.returncode == 0 and "nothing to do" in r.stdout, "a second clear changes nothing")
    r = rec.run("mindcluster-separate-npu", device="1", action="resume", argv=["--release"])
    check(r.returncode == 0 and separated() == "", "--release works under any action name")
    other = dict(seed, metadata={"namespace": "kube-system"})
    rec.put("configmap", "kube-system", "mindx-dl-deviceinfo-worker-2", other)
    r = rec.run("mindcluster-separate-npu", extra_env={"FAULTD_NODE": "worker-3"})
    check(r.returncode == 75 and "Device Plugin running" in r.stderr,
          "no Device Plugin ConfigMap for the node: retry with a clear message (%s)" % said(r))
    r = rec.run("mindcluster-separate-npu", device="3;reboot")
    check(r.returncode == 1 and "not a valid device id" in r.stderr,
          "an invalid device id is refused (%s)" % said(r))
    no_hostile_text(check, rec)


def public_fault(args, check, work):
    rec = Recipes(args, work)
    name = "faultd-publicfault-%s-npu2" % NODE
    r = rec.run("mindcluster-public-fault", device="2")
    check(r.returncode == 1 and "no public fault code" in r.stderr and not rec.writes(),
          "without a nine-digit public code the recipe fails and says how to give one (%s)"
          % said(r))
    code_args = ["--code", "80818C00=110001001"]
    r = rec.run("mindcluster-public-fault", device="2", argv=code_args, dry_run=True)
    check(r.returncode == 0 and not rec.obj("configmap", "mindx-dl", name)
          and "occur" in r.stdout and "mc-consumer-publicfault" in r.stdout,
          "dry run prints the message, creates "
          "nothing (%s)" % said(r))
    r = rec.run("mindcluster-public-fault", device="2", argv=code_args)
    cm = rec.obj("configmap", "mindx-dl", name)
    check(r.returncode == 0 and cm is not None, "isolate creates %s (%s)" % (name, said(r)))
    if not cm:
        return
    msg = json.loads(cm["data"]["PublicFault"])
    f = msg["faults"][0]
    check(cm["metadata"]["labels"].get("mc-consumer-publicfault") == "true",
          "labelled mc-consumer-publicfault=true")
    check(msg["version"] == "1.0" and msg["resource"] == "faultd" and 8 <= len(msg["id"]) <= 128
          and len(str(msg["timestamp"])) == 13, "message id, 13-digit timestamp, version 1.0, "
          "resource (%s)" % {k: msg[k] for k in ("id", "timestamp", "version", "resource")})
    check(f["faultType"] == "NPU" and f["faultCode"] == "110001001" and f["assertion"] == "occur"
          and f["faultTime"] == FAULT_TIME_MS
          and f["influence"] == [{"nodeName": NODE, "deviceIds": [2]}]
          and 8 <= len(f["faultId"]) <= 128 and "pwned" not in f.get("description", ""),
          "fault: NPU, mapped code, occur, the finding's time in ms, influence (%s)" % f)
    writes = len(rec.writes())
    r = rec.run("mindcluster-public-fault", device="2", argv=code_args, fault_id="43")
    check(r.returncode == 0 and len(rec.writes()) == writes and "already published" in r.stdout,
          "an NPU with an outstanding fault is not published again (%s)" % said(r))
    r = rec.run("mindcluster-public-fault", device="2", action="clear", code="", fault_id="99")
    rec_msg = json.loads(rec.obj("configmap", "mindx-dl", name)["data"]["PublicFault"])
    g = rec_msg["faults"][0]
    check(r.returncode == 0 and g["assertion"] == "recover" and g["faultId"] == f["faultId"]
          and g["faultCode"] == f["faultCode"] and g["faultTime"] == f["faultTime"]
          and rec_msg["id"] != msg["id"],
          "clear publishes recover with the same faultId, faultCode and faultTime and a new "
          "message id (%s)" % said(r))
    writes = len(rec.writes())
    r = rec.run("mindcluster-public-fault", device="2", action="clear")
    check(r.returncode == 0 and len(rec.writes()) == writes, "a second clear writes nothing")
    r = rec.run("mindcluster-public-fault", device="2", argv=["--fault-code", "110001002"],
                code="", fault_id="44")
    f2 = json.loads(rec.obj("configmap", "mindx-dl", name)["data"]["PublicFault"])["faults"][0]
    check(r.returncode == 0 and f2["assertion"] == "occur" and f2["faultId"] != f["faultId"]
          and f2["faultCode"] == "110001002", "a new fault after recovery is a new fault "
          "instance, --fault-code as the default code (%s)" % said(r))
    rec.fail_next("kubectl", 'Error from server (Conflict): Operation cannot be fulfilled on '
                  'configmaps "x": the object has been modified', on="patch")
    r = rec.run("mindcluster-public-fault", device="2", action="clear")
    check(r.returncode == 75 and "patch" in r.stderr and json.loads(rec.obj(
        "configmap", "mindx-dl", name)["data"]["PublicFault"])["faults"][0]["assertion"] ==
        "occur", "a conflicting write is a retry and changes nothing (%d: %s)"
        % (r.returncode, said(r)))
    r = rec.run("mindcluster-public-fault", device="40", argv=code_args)
    check(r.returncode == 1 and "physical id" in r.stderr, "a device id ClusterD cannot take "
          "(not 0-31) fails clearly (%s)" % said(r))
    no_hostile_text(check, rec)


def node_devices(args, check, work):
    rec = Recipes(args, work)
    other_taint = {"key": "example.com/maintenance", "value": "x", "effect": "NoSchedule"}
    rec.put("node", "_", NODE, {"apiVersion": "v1", "kind": "Node",
                                "metadata": {"labels": {"kubernetes.io/hostname": NODE},
                                             "annotations": {"a": "b"}},
                                "spec": {"taints": [other_taint]}})

    def node():
        return rec.obj("node", "_", NODE)

    taint = ["--taint", "NoSchedule"]
    for device in ("3", "1", "10", "3"):
        r = rec.run("kubernetes-node-devices", device=device, argv=taint)
        check(r.returncode == 0, "isolate device %s (%s)" % (device, said(r)))
    n = node()
    key = "faultd.io/isolated-devices"
    check(n["metadata"]["annotations"].get(key) == "1,3,10"
          and n["metadata"]["labels"].get(key) == "1_3_10",
          "annotation and label hold the sorted device set 1,3,10 (%s, %s)"
          % (n["metadata"]["annotations"].get(key), n["metadata"]["labels"].get(key)))
    check(n["spec"]["taints"] == [other_taint, {"key": key, "value": "1_3_10",
                                                "effect": "NoSchedule"}],
          "the node is tainted, other taints kept (%s)" % n["spec"]["taints"])
    check(n["metadata"]["labels"].get("kubernetes.io/hostname") == NODE
          and n["metadata"]["annotations"].get("a") == "b", "other labels and annotations kept")
    check(len(rec.writes()) == 3, "isolating an isolated device again writes nothing (%d "
          "writes)" % len(rec.writes()))
    for w in rec.writes():
        patch = json.loads(w["argv"][w["argv"].index("-p") + 1])
        check(patch["metadata"].get("resourceVersion"), "each patch is conditional on the "
              "resourceVersion read")
        break
    r = rec.run("kubernetes-node-devices", device="1", action="release", argv=taint,
                dry_run=True)
    check(r.returncode == 0 and len(rec.writes()) == 3 and "3,10" in r.stdout,
          "dry run prints the patch, changes nothing (%s)" % said(r))
    rec.fail_next("kubectl", 'Error from server (Conflict): Operation cannot be fulfilled on '
                  'nodes "worker-1": the object has been modified', on="patch")
    r = rec.run("kubernetes-node-devices", device="1", action="release", argv=taint)
    check(r.returncode == 75 and "patch" in r.stderr,
          "a conflicting writer makes it retry, exit 75 (%s)" % said(r))
    for device in ("1", "10", "3"):
        r = rec.run("kubernetes-node-devices", device=device, action="release", argv=taint)
        check(r.returncode == 0, "release device %s (%s)" % (device, said(r)))
    n = node()
    check(key not in n["metadata"]["labels"] and key not in n["metadata"]["annotations"]
          and n["spec"]["taints"] == [other_taint],
          "releasing the last device removes annotation, label and taint (%s)" % n)
    rec.fail_next("kubectl", 'Error from server (Forbidden): nodes "worker-1" is forbidden: '
                  'User "system:serviceaccount:faultd:faultd" cannot patch resource "nodes"')
    r = rec.run("kubernetes-node-devices", device="2")
    check(r.returncode == 1 and "Forbidden" in r.stderr, "missing RBAC is a failure, not a "
          "retry (%d: %s)" % (r.returncode, said(r)))
    no_hostile_text(check, rec)


def slurm(args, check, work):
    rec = Recipes(args, work)
    slurm_state = os.path.join(rec.state, "slurm.json")

    def nodes(value=None):
        if value is not None:
            with open(slurm_state, "w") as f:
                json.dump(value, f)
        with open(slurm_state) as f:
            return json.load(f)

    nodes({NODE: {"state": "IDLE", "reason": ""}, "gpu-7": {"state": "MIXED", "reason": ""}})
    r = rec.run("slurm-drain", device="3")
    check(r.returncode == 0 and nodes()[NODE] == {"state": "IDLE+DRAIN",
                                                   "reason": "faultd: isolated devices 3"},
          "isolate drains the node with the device in the reason (%s)" % said(r))
    update = [c["argv"] for c in rec.calls("scontrol") if "update" in c["argv"]][0]
    check(update == ["update", "nodename=" + NODE, "state=drain",
                     "reason=faultd: isolated devices 3"], "scontrol argv: %s" % update)
    rec.run("slurm-drain", device="0")
    calls = len(rec.calls("scontrol"))
    r = rec.run("slurm-drain", device="3")
    check(r.returncode == 0 and nodes()[NODE]["reason"] == "faultd: isolated devices 0,3"
          and len(rec.calls("scontrol")) == calls + 1,
          "a second device joins the sorted set; a repeat only reads (%s)" % said(r))
    r = rec.run("slurm-drain", device="3", action="clear")
    check(r.returncode == 0 and nodes()[NODE] == {"state": "IDLE+DRAIN",
                                                   "reason": "faultd: isolated devices 0"},
          "releasing one of two devices keeps the node drained (%s)" % nodes()[NODE])
    r = rec.run("slurm-drain", device="0", action="clear", dry_run=True)
    check(r.returncode == 0 and "state=resume" in r.stdout and "DRAIN" in nodes()[NODE]["state"],
          "dry run prints the resume, changes nothing (%s)" % said(r))
    r = rec.run("slurm-drain", device="0", action="clear")
    check(r.returncode == 0 and nodes()[NODE] == {"state": "IDLE", "reason": ""},
          "releasing the last device resumes the node (%s)" % said(r))
    rec.fail_next("scontrol", "slurm_load_node error: Unable to contact slurm controller "
                  "(connect failure)")
    r = rec.run("slurm-drain", device="0")
    check(r.returncode == 75, "an unreachable controller is a retry (%d)" % r.returncode)
    nodes({NODE: {"state": "IDLE+DRAIN", "reason": "bad DIMM"},
           "gpu-7": {"state": "MIXED", "reason": ""}})
    for action in ("isolate", "clear"):
        r = rec.run("slurm-drain", device="0", action=action)
        check(r.returncode == 0 and nodes()[NODE]["reason"] == "bad DIMM",
              "%s leaves a node drained by someone else alone (%s)" % (action, said(r)))
    r = rec.run("slurm-drain", device="1", argv=["--node", "gpu-7"])
    check(r.returncode == 0 and nodes()["gpu-7"]["state"] == "MIXED+DRAIN",
          "--node names the Slurm node when it differs from FAULTD_NODE")
    r = rec.run("slurm-drain", device="1", argv=["--node", "nope"])
    check(r.returncode == 1 and "give --node" in r.stderr, "an unknown node fails clearly (%s)"
          % said(r))
    no_hostile_text(check, rec)


def write_config(work, text):
    path = os.path.join(work, "resume.conf")
    with open(path, "w") as f:
        f.write(text)
    return ["--config", path]


def resume(args, check, work):
    rec = Recipes(args, work)
    requests = os.path.join(work, "requests")
    conf = write_config(work, "mode = request\nrequest_dir = %s\n" % requests)
    r = rec.run("resume-from-checkpoint", argv=conf)
    req = os.path.join(requests, "42.json")
    check(r.returncode == 0 and os.path.exists(req), "request mode leaves %s (%s)"
          % (req, said(r)))
    if os.path.exists(req):
        with open(req) as f:
            check(json.load(f).get("device") == "3", "the request holds the fault")

    for i, (node, labels) in enumerate([(NODE, {"app": "train"}), (NODE, {"app": "train"}),
                                        ("worker-2", {"app": "train"}), (NODE, {"app": "x"})]):
        rec.put("pod", "ml", "pod-%d" % i, {"kind": "Pod", "metadata": {"labels": labels},
                                            "spec": {"nodeName": node}})
    conf = write_config(work, "mode = pod\nnamespace = ml\npod_selector = app=train\n")
    r = rec.run("resume-from-checkpoint", argv=conf, dry_run=True)
    check(r.returncode == 0 and rec.obj("pod", "ml", "pod-0"), "dry run deletes no pod")
    r = rec.run("resume-from-checkpoint", argv=conf)
    left = sorted(p for p in os.listdir(os.path.join(rec.state, "kube", "pod", "ml")))
    check(r.returncode == 0 and left == ["pod-2.json", "pod-3.json"],
          "pod mode deletes the job's pods on this node only (left %s; %s)" % (left, said(r)))
    delete = rec.calls("kubectl")[-1]["argv"]
    check("--field-selector" in delete and "spec.nodeName=" + NODE in delete
          and "--wait=false" in delete, "kubectl delete argv: %s" % delete)

    conf = write_config(work, "mode = systemd\nunit = train@1.service\n")
    r = rec.run("resume-from-checkpoint", argv=conf)
    check(r.returncode == 0 and rec.calls("systemctl")[-1]["argv"] == ["restart",
                                                                       "train@1.service"],
          "systemd mode restarts the unit (%s)" % said(r))
    conf = write_config(work, "mode = signal\nsignal = USR2\nunit = train.service\n")
    r = rec.run("resume-from-checkpoint", argv=conf)
    check(r.returncode == 0 and rec.calls("systemctl")[-1]["argv"] == [
        "kill", "--signal=SIGUSR2", "--kill-whom=main", "train.service"],
        "signal mode with a unit uses systemctl kill (%s)" % said(r))

    # A real job: a process that exits 0 when it gets SIGUSR1.
    job = subprocess.Popen([sys.executable, "-c", "import signal, sys\n"
                            "signal.signal(signal.SIGUSR1, lambda *a: sys.exit(0))\n"
                            "print('ready', flush=True)\nsignal.pause()\nsys.exit(3)\n"],
                           stdout=subprocess.PIPE, text=True)
    try:
        job.stdout.readline()
        pidfile = os.path.join(work, "job.pid")
        with open(pidfile, "w") as f:
            f.write("%d\n" % job.pid)
        conf = write_config(work, "mode = signal\npidfile = %s\n" % pidfile)
        r = rec.run("resume-from-checkpoint", argv=conf, dry_run=True)
        check(r.returncode == 0 and job.poll() is None, "dry run sends no signal")
        r = rec.run("resume-from-checkpoint", argv=conf)
        wait_for("the job to get SIGUSR1", lambda: job.poll() is not None, timeout=10)
        check(r.returncode == 0 and job.returncode == 0, "signal mode sends SIGUSR1 to the pid "
              "in the pidfile (%s; job exit %s)" % (said(r), job.returncode))
    finally:
        if job.poll() is None:
            job.send_signal(signal.SIGKILL)
        job.wait()

    conf = write_config(work, "mode = systemd\nunit = a.service\npod_selector = x=y\n")
    r = rec.run("resume-from-checkpoint", argv=conf)
    check(r.returncode == 1 and "unknown key" in r.stderr and "resume.conf" in r.stderr,
          "an unknown key is an error naming the file (%s)" % said(r))
    conf = write_config(work, "mode = systemd\nunit = $(reboot)\n")
    r = rec.run("resume-from-checkpoint", argv=conf)
    check(r.returncode == 1 and "unit" in r.stderr, "an invalid unit name is refused (%s)"
          % said(r))
    r = rec.run("resume-from-checkpoint", argv=["--config", os.path.join(work, "none.conf")])
    check(r.returncode == 1 and "not found" in r.stderr, "a missing --config file is an error")
    no_hostile_text(check, rec)


def diagnose(args, check, work):
    rec = Recipes(args, work)
    result = os.path.join(rec.state, "ascend-dmi.result")
    for verdict, status in (("PASS", 0), ("EMERGENCY_WARN", 1), ("FAIL", 1), ("SKIP", 2),
                            ("Error: the device is busy", 2)):
        with open(result, "w") as f:
            f.write(verdict)
        r = rec.run("diagnose-device", device="5", action="diagnose")
        check(r.returncode == status, "ascend-dmi says %r: exit %d (%d: %s)"
              % (verdict, status, r.returncode, said(r)))
    check(rec.calls("ascend-dmi")[0]["argv"] == ["--dg", "-i", "aicore", "-d", "5", "-q"],
          "the vendor's AI Core diagnosis on the device (%s)" % rec.calls("ascend-dmi")[0])
    calls = len(rec.calls("ascend-dmi"))
    r = rec.run("diagnose-device", device="5", action="diagnose", dry_run=True)
    check(r.returncode == 0 and len(rec.calls("ascend-dmi")) == calls
          and "ascend-dmi" in r.stdout, "dry run prints the command and runs nothing")
    with open(result, "w") as f:
        f.write("PASS")
    r = rec.run("diagnose-device", device="5", action="diagnose", argv=["--rounds", "3"])
    check(r.returncode == 0 and rec.calls("ascend-dmi")[-1]["argv"][-2:] == ["-sc", "3"],
          "--rounds 3 asks for three rounds")
    r = rec.run("diagnose-device", device="5", action="diagnose", path="/usr/bin:/bin")
    check(r.returncode == 2 and "no diagnosis tool" in r.stderr,
          "no ascend-dmi: exit 2, no verdict (%d: %s)" % (r.returncode, said(r)))
    no_hostile_text(check, rec)


def isolate_label(args, check, work):
    """The example isolate hook labels the node with a key Kubernetes accepts, also for an
    NVIDIA device, whose id is a PCI address (security audit F23)."""
    rec = Recipes(args, work)
    kubeconfig = os.path.join(work, "kubeconfig")
    with open(kubeconfig, "w") as f:
        f.write("apiVersion: v1\n")
    env = {"FAULTD_KUBECONFIG": kubeconfig, "FAULTD_ISOLATED_DIR": os.path.join(work, "isolated")}
    for device, key in (("3", "faultd.io/device-3"), ("0000:3b:00.0", "faultd.io/device-0000.3b.00.0")):
        r = rec.run("isolate-device", device=device, extra_env=env)
        check(r.returncode == 0, "isolate-device %s: exit 0 (%s)" % (device, said(r)))
        label = [c["argv"] for c in rec.calls("kubectl") if "label" in c["argv"]][-1]
        check(key + "=isolated" in label, "isolate-device %s labels %s: %s" % (device, key, label))
        check(os.path.exists(os.path.join(work, "isolated", device + ".json")),
              "isolate-device %s records the fault" % device)


def device_check(args, check, work):
    """A hook run by hand (or by another launcher) checks the device id against faultd's own
    pattern, first character a letter or digit: an id that reads as an option reaches no tool,
    one that names a directory writes no file (security audit N11)."""
    rec = Recipes(args, work)
    isolated = os.path.join(work, "isolated")
    env = {"FAULTD_ISOLATED_DIR": isolated, "FAULTD_KUBECONFIG": os.path.join(work, "none")}
    recipes = [("isolate-device", "isolate"), ("diagnose-device", "diagnose"),
               ("mindcluster-separate-npu", "isolate"), ("mindcluster-public-fault", "isolate"),
               ("kubernetes-node-devices", "isolate"), ("slurm-drain", "isolate"),
               ("resume-from-checkpoint", "resume")]
    for hook, action in recipes:
        for device in ("-sc", ".", "..", "../x", "_3", "3\n", "", "a" * 65):
            r = rec.run(hook, device=device, action=action, extra_env=env)
            check(r.returncode not in (0, 75) and "not a valid device id" in r.stderr,
                  "%s refuses device %r (%d: %s)" % (hook, device, r.returncode, said(r)))
    check(rec.calls() == [], "no tool ran for a bad id (%s)" % rec.calls()[:1])
    check(not os.path.exists(isolated) or os.listdir(isolated) == [],
          "isolate-device wrote nothing (%s)" % (os.listdir(isolated)
                                                 if os.path.exists(isolated) else []))
    check(not os.path.exists(os.path.join(work, "x.json")), "nothing written outside its directory")
    for hook, action in recipes:
        r = rec.run(hook, device="0000:3b:00.0", action=action, dry_run=True, extra_env=env)
        check("not a valid device id" not in r.stderr,
              "%s accepts a PCI address as the device (%s)" % (hook, said(r)))


def example_hooks_dry_run(args, check, work):
    """The hooks the default faultd.yaml names keep working in dry run with no tools at all."""
    rec = Recipes(args, work)
    for hook, action in (("isolate-device", "isolate"), ("resume-from-checkpoint", "resume"),
                         ("diagnose-device", "diagnose")):
        r = rec.run(hook, action=action, dry_run=True, path="/usr/bin:/bin")
        check(r.returncode == 0 and "dry run" in r.stdout, "%s in dry run (%s)" % (hook,
                                                                                  said(r)))


if __name__ == "__main__":
    harness.main(separate_npu, public_fault, node_devices, slurm, resume, diagnose, isolate_label,
                 device_check, example_hooks_dry_run)
