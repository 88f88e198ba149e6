#!/usr/bin/env python3
"""`faultctl compare --replicas --report` with the real faultd: four data-parallel replicas of one
step, dumped in tensor mode, where rank2's weight differs in one element ([1, 2, 3, 5] against
[1, 2, 3, 4]: Cosine 34 / sqrt(39 * 30) = 0.993999088548, MaxAbsErr 1, MaxRelativeErr 0.25,
worked out by hand). The report becomes a compare.replica-divergence finding on device 2: a
warning (SubHealthFault, no hook), in `faultctl events` with the tensor and its metrics, on
/metrics and in `faultctl status`. Reporting it again adds no fault; replicas that agree report
nothing; a report without a device, a hostile request, a peer outside the control group and a
stopped faultd record nothing (the comparison is printed all the same)."""
import json
import os
import socket
import stat
import struct
import subprocess

import harness
from harness import Faultd, free_port, metric_value, scrape

WEIGHT = "Module.fc.Linear.forward.0.parameters.weight"


def npy(values):
    """A float32 .npy (v1.0) of `values`, written from the format's definition."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode()
            + struct.pack("<%df" % len(values), *values))


def leaf(name, values):
    norm = sum(v * v for v in values) ** 0.5
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [len(values)],
            "Max": max(values), "Min": min(values), "Mean": sum(values) / len(values),
            "Norm": norm, "requires_grad": False, "data_name": name + ".npy"}


def write_rank(path, weight, activation):
    """A msprobe tensor-mode rank folder: the layer's input and output are the rank's own (each
    replica sees its own data), its weight must be the same on every replica."""
    tensors = {"Module.fc.Linear.forward.0.input.0": activation,
               WEIGHT: weight,
               "Module.fc.Linear.forward.0.output.0": [2 * v for v in activation]}
    os.makedirs(os.path.join(path, "dump_tensor_data"), exist_ok=True)
    for name, values in tensors.items():
        with open(os.path.join(path, "dump_tensor_data", name + ".npy"), "wb") as f:
            f.write(npy(values))
    entry = {"input_args": [leaf("Module.fc.Linear.forward.0.input.0", activation)],
             "parameters": {"weight": leaf(WEIGHT, weight)},
             "output": [leaf("Module.fc.Linear.forward.0.output.0", tensors[
                 "Module.fc.Linear.forward.0.output.0"])]}
    with open(os.path.join(path, "dump.json"), "w") as f:
        json.dump({"task": "tensor", "level": "L0", "framework": "pytorch",
                   "dump_data_dir": os.path.join(path, "dump_tensor_data"),
                   "data": {"Module.fc.Linear.forward.0": entry}}, f, indent=1)


def write_step(step, corrupt_rank):
    for rank in range(4):
        weight = [1.0, 2.0, 3.0, 5.0 if rank == corrupt_rank else 4.0]
        write_rank(os.path.join(step, "rank%d" % rank), weight, [0.5 * (rank + 1), 0.25, -1.0, 2.0])


def raw_request(path, request):
    """One request line straight to the socket (what a client other than faultctl could send)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(harness.scaled(10))
        s.connect(path)
        s.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def run(args, check, work):
    os.chmod(work, 0o755)  # a peer of another user must reach the socket and the dumps
    step = os.path.join(work, "step3")
    write_step(step, corrupt_rank=2)
    agree = os.path.join(work, "step4")
    write_step(agree, corrupt_rank=None)
    port = free_port()
    hook_log = os.path.join(work, "isolate-ran")
    hook = os.path.join(work, "isolate.sh")
    with open(hook, "w") as f:
        f.write("#!/bin/sh\necho \"$FAULTD_DEVICE\" >> %s\n" % hook_log)
    os.chmod(hook, stat.S_IRWXU)
    rules = os.path.join(args.source_dir, "etc", "faultd", "rules.d")
    d = Faultd(args, work, f"""
node: e2e-node
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{rules}/*.yaml"]
sources: []
actions:
  isolate: {{ argv: [{hook}], timeout: 30s }}
""")
    d.start()

    def compare(*argv, user=None):
        kw = {}
        if user is not None:
            kw["preexec_fn"] = lambda: (os.setgroups([]), os.setgid(user), os.setuid(user))
        return subprocess.run([args.faultctl, "--socket", d.socket, "compare", "--replicas",
                               *argv], capture_output=True, text=True,
                              timeout=harness.scaled(60), **kw)

    def faults():
        return d.ctl_json("events", "--verbose")["faults"]

    # Without a device for the suspect: exit 2, the comparison printed, nothing recorded.
    r = compare(step, "--report")
    check(r.returncode == 2, "no device for the suspect exits 2 (%d: %s)" % (r.returncode, r.stderr))
    check("suspect: rank2 disagrees with the majority, first at Module.fc.Linear.forward.0"
          in r.stdout, "the comparison is printed all the same: %r" % r.stdout)
    check("give --device rank2=DEVICE" in r.stderr, "the error says what to add: %r" % r.stderr)
    check(faults() == [], "nothing was recorded")

    # With it: recorded on device 2, exit 1 (a suspect was found).
    r = compare(step, "--report", "--device", "rank2=2")
    check(r.returncode == 1, "a recorded suspect exits 1 (%d: %s)" % (r.returncode, r.stderr))
    check("against rank0 (3 of 4 agree): Cosine 0.993999088548, EucDist 1.0, MaxAbsErr 1.0, "
          "MaxRelativeErr 0.25, One Thousandth Err Ratio 0.75, Five Thousandths Err Ratio 0.75"
          in r.stdout, "the summary measures rank2's weight against rank0's: %r" % r.stdout)
    check("reported to faultd: rank2 on device 2 (recorded, fault " in r.stdout
          and "device warning)" in r.stdout, "the summary says it was recorded: %r" % r.stdout)

    found = faults()
    check(len(found) == 1, "one fault in the journal (%d)" % len(found))
    f = found[0] if found else {}
    a = f.get("annotations", {})
    check((f.get("rule"), f.get("device"), f.get("level"), f.get("code"), f.get("source")) ==
          ("compare.replica-divergence", "2", "SubHealthFault", "REPLICA_DIVERGENCE", "faultctl"),
          "rule, device, level, code, source: %r" % f)
    check((f.get("file"), f.get("line")) == ("rank2", 2),
          "where: rank2's dump, data row 2 (%r:%r)" % (f.get("file"), f.get("line")))
    check(a.get("tensor") == WEIGHT and a.get("api") == "Module.fc.Linear.forward.0",
          "the tensor and the API: %r" % a)
    check((a.get("replica"), a.get("reference"), a.get("replicas"), a.get("majority"),
           a.get("mode")) == ("rank2", "rank0", "4", "3", "tensor"), "the replicas: %r" % a)
    check((a.get("Cosine"), a.get("MaxAbsErr"), a.get("MaxRelativeErr"),
           a.get("One Thousandth Err Ratio")) == ("0.993999088548", "1.0", "0.25", "0.75"),
          "the metrics, as worked out by hand: %r" % a)
    check("replica rank2 disagrees with the majority (3 of 4 replicas) at %s" % WEIGHT
          in f.get("text", ""), "the finding's text: %r" % f.get("text"))
    plain = d.ctl("events")
    check("compare.replica-divergence" in plain.stdout and "Cosine: 0.993999088548" in plain.stdout,
          "faultctl events shows it with its evidence")

    status = {x["device"]: x for x in d.ctl_json("status")["devices"]}
    check(status.get("2", {}).get("state") == "warning"
          and status.get("2", {}).get("rule") == "compare.replica-divergence",
          "faultctl status: device 2 warning by compare.replica-divergence (%r)" % status.get("2"))
    text = scrape(port)
    check(metric_value(text, "faultd_device_state", {"device": "2", "state": "warning"}) == 1.0,
          "faultd_device_state says warning")
    check(metric_value(text, "faultd_faults_total", {"device": "2", "level": "SubHealthFault",
                                                     "code": "REPLICA_DIVERGENCE"}) == 1.0,
          "faultd_faults_total counts it")
    check(metric_value(text, "faultd_rule_matches_total",
                       {"rule": "compare.replica-divergence"}) == 1.0,
          "faultd_rule_matches_total counts the rule")
    # The level's policy decides the actions, and SubHealthFault's asks for none: the decision is
    # made before the reply, so no action journaled now means none will run.
    check(d.ctl_json("events")["actions"] == [], "no hook was asked for (a warning, no isolation)")
    check(not os.path.exists(hook_log), "the isolate hook did not run")

    # The same report again is no new fault.
    r = compare(step, "--report", "--device", "rank2=2", "-o", "json")
    rep = json.loads(r.stdout).get("report", {}) if r.stdout else {}
    check(r.returncode == 1 and rep.get("recorded") is True
          and rep.get("result") in ("grouped", "duplicate"),
          "reporting again is taken, as part of the open incident (%r)" % rep)
    check(len(faults()) == 1, "and the journal still holds one fault")

    # Replicas that agree: nothing to report.
    r = compare(agree, "--report", "--device", "rank2=2")
    check(r.returncode == 0 and "the replicas agree: nothing to report" in r.stdout,
          "agreeing replicas report nothing (%d: %r)" % (r.returncode, r.stdout))
    check(len(faults()) == 1, "the journal is unchanged")

    # Hostile requests straight to the socket: refused with a reason, nothing recorded.
    good = {"cmd": "report", "check": "replica-divergence", "device": "3", "replica": "rank3",
            "reference": "rank0", "api": "A", "tensor": "A.output.0", "mode": "tensor",
            "data_row": 1, "replicas": 4, "majority": 3, "disagreements": 1, "rows_checked": 1,
            "metrics": [["Cosine", "0.5"]]}
    for change, why in [({"level": "SeparateNPU"}, "unknown field 'level'"),
                        ({"device": "../3"}, "invalid device id"),
                        ({"tensor": "t" * 4096}, "tensor must be 1 to 512 bytes"),
                        ({"majority": 2}, "majority must be a whole number from 3 to 3")]:
        reply = raw_request(d.socket, dict(good, **change))
        check(reply.get("ok") is False and why in reply.get("error", ""),
              "%s is refused: %r" % (sorted(change), reply))
    check(len(faults()) == 1, "no hostile request was recorded")

    # A peer that is neither root nor in the control group (a training job's process): refused
    # even when the socket's mode lets it connect, and counted.
    before = metric_value(scrape(port), "faultd_control_refusals_total",
                          {"reason": "permission"}) or 0
    os.chmod(d.socket, 0o666)
    r = compare(step, "--report", "--device", "rank2=2", user=65534)
    check(r.returncode == 2 and "permission denied" in r.stderr,
          "an unprivileged peer's report is refused (%d: %s)" % (r.returncode, r.stderr.strip()))
    check("suspect: rank2" in r.stdout, "its comparison is printed all the same")
    after = metric_value(scrape(port), "faultd_control_refusals_total", {"reason": "permission"})
    check(after is not None and after >= before + 1, "the refusal is counted (%s)" % after)
    check(len(faults()) == 1, "nothing was recorded for it")

    # A module name that is not ASCII (Python identifiers may be Unicode) and one longer than a
    # report field: faultctl cuts and '?'-replaces them, so the report is recorded, not refused.
    odd = os.path.join(work, "step5")
    write_step(odd, corrupt_rank=1)
    long_api = "Module." + "\u00f1" + "x" * 600 + ".Linear.forward.0"
    for rank in range(4):
        path = os.path.join(odd, "rank%d" % rank, "dump.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('"Module.fc.Linear.forward.0": {', '"%s": {' % long_api))
    os.chmod(d.socket, 0o660)
    r = compare(odd, "--report", "--device", "rank1=1")
    check(r.returncode == 1 and "reported to faultd: rank1 on device 1 (recorded" in r.stdout,
          "a Unicode, over-long API name is still recorded (%d: %s %s)"
          % (r.returncode, r.stdout.strip(), r.stderr.strip()))
    recorded = [x for x in faults() if x.get("device") == "1"]
    api = recorded[0].get("annotations", {}).get("api", "") if recorded else ""
    check(api.startswith("Module.??xxx") and len(api) == 512 and api.isascii(),
          "its API is kept, made printable and cut to 512 bytes (%r)" % api[:40])

    # faultd stopped: exit 2, the comparison printed, the error says so.
    d.stop()
    r = compare(step, "--report", "--device", "rank2=2")
    check(r.returncode == 2 and "cannot reach faultd" in r.stderr,
          "a stopped faultd is a clear error, exit 2 (%d: %s)" % (r.returncode, r.stderr.strip()))
    check("suspect: rank2" in r.stdout, "the comparison is printed all the same")


if __name__ == "__main__":
    harness.main(run)
