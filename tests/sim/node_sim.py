#!/usr/bin/env python3
"""A node simulator: writes realistic CANN host (plog) and device-side logs the way a training
job does, at a steady rate, and injects faults on request. Used by the demo and the tests.

  node_sim.py --root DIR [--rate LINES_PER_S] [--seconds N] [--inject KIND --device N]

Kinds: asd (the 'accuracy sensitivity feature abnormal' ERROR in the plog, with device_id),
silent-check (SilentCheckV3 ComputeL1Error in device-N's log), labelled-asd (the asd line
behind srun -l's task label, its level coloured), normal (a SilentCheck INFO
normal-case line that must not alarm), collective-hang (8 ranks' HCCL Flight Recorder dumps in
flight-recorder/ in which device N's rank never entered the last collective, and the other
seven ranks' HCCL timeout lines in the plog), init-hang (a training launcher's start line, job init-hang-N,
and nothing after it: a liveness finding once its window has passed), slow (STEPS MindFormers step lines of a job on each of the
8 devices, training/slow-demo/worker_N.log, device N's 30 % slower than its peers'), nccl-ib-async (NCCL's IB async fatal event in a training
rank's log, with the device).

Hang kinds start a training job: a real process, left running in the background (its pid is
printed), that holds devices in the stand-in npu-smi (tests/sim/fake-npu-smi, through the
holders/ directory of its state, $FAKE_NPU_SMI_STATE, by default <root>/../npu-smi-state) and
writes step lines into device-N's log for --train-seconds, then:
  hang            device N's activity goes flat at 100 % AI Core and its log silent, while the
                  process keeps holding it, asleep: a wedged device;
  data-stall      every held device (--devices, default 0-7) idle, the process busy on the CPU;
  collective-wait every held device idle, the process asleep (waiting on its peers);
  checkpoint      idle for --pause-seconds (shorter than the window), then steps resume;
  compile         held and idle from the start while the process compiles (busy, silent);
  eval            the device keeps computing, the log silent (an evaluation pass);
  gone            the process exits after training (the job is simply gone).
The job ends by itself after --life seconds (it lets go of its devices)."""
import argparse
import json
import os
import random
import sys
import time

PID = 59420


def stamp(t=None):
    t = time.time() if t is None else t
    lt = time.gmtime(t)
    us = int((t % 1) * 1_000_000)
    return time.strftime("%Y-%m-%d-%H:%M:%S", lt) + ".%03d.%03d" % (us // 1000, us % 1000)


NOISE = [
    "[INFO] RUNTIME({pid},python3):{ts} [stream.cc:1234]{tid} SyncStream: stream_id=17 sync ok",
    "[INFO] HCCL({pid},python3):{ts} [hcom.cc:196][{tid}]hcom allreduce tag=grad_{n} count=4194304 dataType=float16",
    "[INFO] GE({pid},python3):{ts} [graph_manager.cc:3310]{tid} RunGraph: graph_id=3 step={n}",
    "[WARNING] RUNTIME({pid},python3):{ts} [device.cc:567]{tid} GetDeviceStatus: device_id=0 temperature 71C",
    "[INFO] DRV({pid},python):{ts} [ascend][curpid: 98, 98][drv][devmm][_svm_mem_stats_show 154]DEV_MEM dev0 mem stats(Bytes): alloc 1048576",
]


def plog_path(root):
    d = os.path.join(root, "plog")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "plog-%d_20250124110314898.log" % PID)


def device_path(root, device):
    d = os.path.join(root, "device-%d" % device)
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "device-299066_20250225184036913.log")


def noise_line(n):
    return random.choice(NOISE).format(pid=PID, ts=stamp(), tid=107626 + n % 7, n=n)


def collective_hang(root, device, ranks=8, last=1261):
    """Rank `device` stops before collective `last`; the others enter it and time out."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import flight_recorder_dumps
    d = os.path.join(root, "flight-recorder")
    os.makedirs(d, exist_ok=True)
    flight_recorder_dumps.write_job(os.path.join(d, "hccl_trace_rank_"), list(range(ranks)), last,
                                    {device}, backend="hccl")
    # The device-side HCCL timeout each waiting rank's process prints (the EI9999 form of
    # tests/golden/ascend-hccl-timeouts, InternLM/lmdeploy#3354), naming its own chip.
    path = plog_path(root)
    with open(path, "a") as f:
        for r in range(ranks):
            if r != device:
                f.write("EI9999: %s  The error from device(chipId:%d, dieId:0), serial number is 9, "
                        "hccl fftsplus task timeout occurred during task execution, stream_id:5, "
                        "sq_id:5, task_id:38827, stuck notify num:1, timeout:30min(default)."
                        "[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc]"
                        "[LINE:1435]\n" % (stamp(), r))
    return d


def inject_init_hang(root, device):
    """A training job (`init-hang-N`) whose launcher starts and then prints nothing: torchrun's
    launch line (as in pytorch/pytorch#91943) in logs/training/init-hang-N/launcher.log, and no
    rendezvous after it. The liveness rules turn the silence into a finding (the launcher's
    line names no device)."""
    d = os.path.join(root, "training", "init-hang-%d" % device)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "launcher.log")
    with open(path, "a") as f:
        f.write("INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:\n")
    return path


def inject_slow(root, device, steps=12):
    """Step lines of one job on 8 devices, written step by step; `device` 30 % slower."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import training_log_sim
    d = os.path.join(root, "training", "slow-demo")
    os.makedirs(d, exist_ok=True)
    runs = {r: training_log_sim.Run("mindformers", slowdown=1.3 if r == device else 1.0,
                                    jitter=0.03, seed=r) for r in range(8)}
    files = {r: open(os.path.join(d, "worker_%d.log" % r), "a") for r in range(8)}
    for step in range(1, steps + 1):
        for r in range(8):
            files[r].write(runs[r].line(step) + "\n")
            files[r].flush()
    for f in files.values():
        f.close()
    return os.path.join(d, "worker_%d.log" % device)


def nccl_ib_async(root, device):
    """NCCL's IB async fatal event on a queue pair (NVIDIA/nccl#1919's line, the device and ids
    of this node) in a training job's rank log: nvidia.nccl.network-error with the device."""
    d = os.path.join(root, "training", "job-ib")
    os.makedirs(d, exist_ok=True)
    line = ("node-0:%d:%d [%d] transport/net_ib.cc:154 NCCL WARN NET/IB : mlx5_1:1 async fatal "
            "event on QP (0x7309dc3bb338): invalid request local work queue error"
            % (PID, PID + 101, device))
    return os.path.join(d, "rank-%d.log" % device), line


def labelled_asd(root, device):
    """The asd line as Slurm's srun -l delivers it, its level coloured by the job's logger: a
    task label faultd does not know before the record, ANSI colour inside the line."""
    line = ("12: \x1b[31m[ERROR]\x1b[0m ASCENDCL(%d,python3):%s [silent_check.cc:88]107630 AsdCheck: "
            "accuracy sensitivity feature abnormal, device_id=%d" % (PID, stamp(), device))
    return plog_path(root), line


def inject(root, kind, device):
    if kind == "collective-hang":
        return collective_hang(root, device)
    if kind == "init-hang":
        return inject_init_hang(root, device)
    if kind == "slow":
        return inject_slow(root, device)
    if kind == "asd":
        path = plog_path(root)
        line = ("[ERROR] ASCENDCL(%d,python3):%s [silent_check.cc:88]107630 AsdCheck: "
                "accuracy sensitivity feature abnormal, device_id=%d" % (PID, stamp(), device))
    elif kind == "silent-check":
        path = device_path(root, device)
        line = ("[ERROR] AICPU(26533,aicpu_scheduler):%s [silent_check_v3.cc:250][ComputeL1Error][tid:26552]"
                "SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], avg=[1.128970e-09], step=[5], "
                "c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], "
                "npu_asd_detect = [1]." % stamp())
    elif kind == "labelled-asd":
        path, line = labelled_asd(root, device)
    elif kind == "normal":
        path = device_path(root, device)
        line = ("[INFO] AICPU(26559,aicpu_scheduler):%s [silent_check_v3.cc:240][SilentCheck][tid:26572]"
                "SilentCheckV3 normal case, val=[3.350337e-08], max=[1.2e-07]" % stamp())
    elif kind == "nccl-ib-async":
        path, line = nccl_ib_async(root, device)
    else:
        sys.exit("unknown kind %r" % kind)
    with open(path, "a") as f:
        f.write(line + "\n")
    return path


JOB_KINDS = ("hang", "data-stall", "collective-wait", "checkpoint", "compile", "eval", "gone")


def device_list(spec):
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def npu_smi_state(root):
    return os.environ.get("FAKE_NPU_SMI_STATE") or os.path.join(root, "..", "npu-smi-state")


def start_job(args):
    """Starts the job in its own session, detached from this process; returns its pid."""
    import subprocess
    argv = [sys.executable, os.path.abspath(__file__), "--root", args.root, "--job", args.inject,
            "--device", str(args.device), "--train-seconds", str(args.train_seconds),
            "--pause-seconds", str(args.pause_seconds), "--life", str(args.life)]
    if args.devices:
        argv += ["--devices", args.devices]
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    return child.pid


def run_job(args):
    kind = args.job
    if kind in ("data-stall", "collective-wait"):
        devices = device_list(args.devices or "0-7")
    else:
        devices = device_list(args.devices) if args.devices else [args.device]
    holders = os.path.join(npu_smi_state(args.root), "holders")
    os.makedirs(holders, exist_ok=True)
    pid = os.getpid()
    end = time.monotonic() + args.life

    def hold(mode, only=None):
        for d in devices:
            if only is None or d in only:
                tmp = os.path.join(holders, "%d.%d.tmp" % (d, pid))
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump({"pid": pid, "name": "python3", "mode": mode, "memory_mb": 30784}, f)
                os.replace(tmp, os.path.join(holders, str(d)))

    def release():
        for d in devices:
            try:
                os.unlink(os.path.join(holders, str(d)))
            except OSError:
                pass

    logs = {d: open(device_path(args.root, d), "a", buffering=1) for d in devices}
    n = [0]

    def train(seconds):
        hold("train")
        stop = min(end, time.monotonic() + seconds)
        while time.monotonic() < stop:
            for d, f in logs.items():
                f.write("[INFO] GE(%d,python3):%s [graph_manager.cc:3310]%d RunGraph: graph_id=3 "
                        "step=%d device_id=%d\n" % (pid, stamp(), 107626 + d, n[0], d))
            n[0] += 1
            time.sleep(0.5)

    def busy(until):
        # Compute half of the time, print nothing: 30 CPU seconds a minute, far over the
        # verdict's 5, without taking a whole core from the machine.
        x = 0
        while time.monotonic() < until:
            burst = time.monotonic() + 0.05
            while time.monotonic() < burst:
                x = (x * 31 + 7) % 1000003
            time.sleep(0.05)

    def sleep(until):
        while time.monotonic() < until:
            time.sleep(min(1.0, max(0.0, until - time.monotonic())))

    try:
        if kind == "compile":
            hold("idle")
            busy(end)
        elif kind == "gone":
            train(args.train_seconds)
        else:
            train(args.train_seconds)
            if kind == "hang":
                hold("wedge")
                sleep(end)
            elif kind == "data-stall":
                hold("idle")
                busy(end)
            elif kind == "collective-wait":
                hold("idle")
                sleep(end)
            elif kind == "checkpoint":
                hold("idle")
                with open(os.path.join(args.root, "checkpoint-%d.bin" % pid), "wb") as f:
                    f.write(b"\0" * 65536)
                sleep(time.monotonic() + args.pause_seconds)
                train(end - time.monotonic())
            elif kind == "eval":
                hold("train")
                sleep(end)
    finally:
        release()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, help="log root (plog/ and device-N/ go below it)")
    ap.add_argument("--rate", type=float, default=5.0, help="background lines per second")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long (0: forever)")
    ap.add_argument("--inject", help="write one fault line of this kind and exit")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--devices", help="devices a job holds (\"0-7\"); hang kinds only")
    ap.add_argument("--train-seconds", type=float, default=8.0)
    ap.add_argument("--pause-seconds", type=float, default=4.0)
    ap.add_argument("--life", type=float, default=600.0)
    ap.add_argument("--job", choices=JOB_KINDS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.job:
        run_job(args)
        return
    if args.inject in JOB_KINDS:
        print(start_job(args))
        return
    if args.inject:
        print(inject(args.root, args.inject, args.device))
        return
    path = plog_path(args.root)
    for d in range(8):
        device_path(args.root, d)
    start = time.monotonic()
    n = 0
    with open(path, "a", buffering=1) as f:
        while args.seconds == 0 or time.monotonic() - start < args.seconds:
            f.write(noise_line(n) + "\n")
            n += 1
            time.sleep(1.0 / args.rate)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
