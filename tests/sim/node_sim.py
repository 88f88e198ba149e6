#!/usr/bin/env python3
"""A node simulator: writes realistic CANN host (plog) and device-side logs the way a training
job does, at a steady rate, and injects faults on request. Used by the demo and the tests.

  node_sim.py --root DIR [--rate LINES_PER_S] [--seconds N] [--inject KIND --device N]

Kinds: asd (the 'accuracy sensitivity feature abnormal' ERROR in the plog, with device_id),
silent-check (SilentCheckV3 ComputeL1Error in device-N's log), labelled-asd (the asd line
behind srun -l's task label, its level coloured), normal (a SilentCheck INFO
normal-case line that must not alarm)."""
import argparse
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


def labelled_asd(root, device):
    """The asd line as Slurm's srun -l delivers it, its level coloured by the job's logger: a
    task label faultd does not know before the record, ANSI colour inside the line."""
    line = ("12: \x1b[31m[ERROR]\x1b[0m ASCENDCL(%d,python3):%s [silent_check.cc:88]107630 AsdCheck: "
            "accuracy sensitivity feature abnormal, device_id=%d" % (PID, stamp(), device))
    return plog_path(root), line


def inject(root, kind, device):
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
    else:
        sys.exit("unknown kind %r" % kind)
    with open(path, "a") as f:
        f.write(line + "\n")
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, help="log root (plog/ and device-N/ go below it)")
    ap.add_argument("--rate", type=float, default=5.0, help="background lines per second")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long (0: forever)")
    ap.add_argument("--inject", help="write one fault line of this kind and exit")
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
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
