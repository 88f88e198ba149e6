#!/usr/bin/env python3
"""Deterministic generator of a large CANN-plog-style log for benchmarks.

  gen_plog.py OUT.log [--mib 1024] [--fault-every 100000] [--seed 1]

Writes realistic host plog lines (RUNTIME, HCCL, GE, DRV, ASCENDCL, AICPU at the usual level mix)
and, about once every --fault-every lines, one fault line of a shipped kind (rotating through
them). Prints a manifest (JSON: total lines, faults by rule) on stdout."""
import argparse
import json
import random

NOISE = [
    "[INFO] RUNTIME({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [stream.cc:1234]{tid} SyncStream: stream_id={n} sync ok",
    "[INFO] HCCL({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [hcom.cc:196][{tid}]hcom allreduce tag=grad_{n} count=4194304 dataType=float16 op=sum",
    "[INFO] GE({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [graph_manager.cc:3310]{tid} RunGraph: graph_id=3 step={n}, session_id=0",
    "[DEBUG] RUNTIME({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [task.cc:88]{tid} TaskLaunch: device_id=0, stream_id=17, task_id={n}, type=0",
    "[WARNING] RUNTIME({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [device.cc:567]{tid} GetDeviceStatus: device_id=1 temperature 71C",
    "[INFO] DRV({pid},python):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [ascend][curpid: 98, 98][drv][devmm][_svm_mem_stats_show 154]DEV_MEM dev0 mem stats(Bytes): alloc {n}",
    "[EVENT] HCCL({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [status:init] [hcom.cc:196][hccl-10972-0-1675133310-hccl_world_group][3]hcom init by file success,rankNum[8],rank[{r}]",
    "[INFO] ASCENDCL({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [tensor_data_transfer.cpp:899]{tid} acltdtSendTensor: send tensor success, device is {r}",
    "[INFO] AICPU(26559,aicpu_scheduler):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [silent_check_v3.cc:240][SilentCheck][tid:26572]SilentCheckV3 normal case, val=[3.350337e-08], max=[1.2e-07]",
    "[ERROR] HCCL({pid},python3):2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d} [comm_base.cc:968][{tid}]   |  comm error, device[0] num[1] ",
]
WEIGHTS = [30, 20, 15, 10, 5, 8, 2, 6, 3, 1]

FAULTS = [
    ("ascend.asd.feature-abnormal",
     "[ERROR] ASCENDCL({pid},python3):2025-01-24-11:24:07.908.526 [silent_check.cc:88]107630 AsdCheck: accuracy sensitivity feature abnormal, device_id={r}"),
    ("ascend.asd.silent-check-l1",
     "[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.403 [silent_check_v3.cc:250][ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], avg=[1.128970e-09], step=[5], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], npu_asd_detect = [1]."),
    ("ascend.asd.device-os-event",
     "[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811][RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x80818c00."),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--fault-every", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    pool = []
    for _ in range(20000):
        t = rng.choices(NOISE, WEIGHTS)[0]
        pool.append(t.format(pid=59420, s=rng.randrange(60), ms=rng.randrange(1000), us=rng.randrange(1000),
                             tid=107000 + rng.randrange(900), n=rng.randrange(100000), r=rng.randrange(8)) + "\n")
    target = args.mib * 1024 * 1024
    written = 0
    lines = 0
    faults = {}
    k = 0
    with open(args.out, "w") as f:
        while written < target:
            block = rng.choices(pool, k=args.fault_every - 1)
            rule, text = FAULTS[k % len(FAULTS)]
            k += 1
            block.insert(rng.randrange(len(block)), text.format(pid=59420, r=k % 8) + "\n")
            faults[rule] = faults.get(rule, 0) + 1
            data = "".join(block)
            f.write(data)
            written += len(data)
            lines += len(block)
    print(json.dumps({"bytes": written, "lines": lines, "faults": faults}))


if __name__ == "__main__":
    main()
