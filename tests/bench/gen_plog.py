#!/usr/bin/env python3
"""Deterministic generator of a training node's logs for the benchmark suite.

  gen_plog.py OUTDIR [--mib 1024] [--fault-every 100000] [--seed 1] [--aux-mib 8]

Writes, under OUTDIR:
  plog/plog-59420_20250124112400.log   the big CANN host plog (--mib MiB): RUNTIME, HCCL, GE,
                                        DRV, ASCENDCL, AICPU, TDT... lines at the usual level mix
  device-3/device-26533_20250124.log   a device-side CANN log (the device comes from its path)
  training/worker_5.log                 a training log: step lines, framework warnings
  kernel/kern.log                       a kernel log: dmesg lines, NVIDIA driver messages

and into each, about once every --fault-every lines, one fault line of a shipped rule (every
rule of etc/faultd/rules.d has a template below, placed in the log it is printed to). The same
seed gives the same bytes.

Prints the manifest (JSON) on stdout and writes it to OUTDIR/manifest.json:
  files:   {kind: {path, bytes, lines, path_fields}}
  faults:  [{file, line, offset, rule, device}]   one per expected finding, in file order
  sources: the faultd `sources:` entries that read these files
Each template declares the findings its line must give (rule and device); the runner checks
every tool against them, so a template that starts matching another rule fails the run."""
import argparse
import json
import os
import random

TS = "2025-01-24-11:24:{s:02d}.{ms:03d}.{us:03d}"

# Ordinary lines, with weights: what a busy training job prints. None of them may match a rule.
PLOG_NOISE = [
    (30, "[INFO] RUNTIME({pid},python3):" + TS + " [stream.cc:1234]{tid} SyncStream: stream_id={n} sync ok"),
    (20, "[INFO] HCCL({pid},python3):" + TS + " [hcom.cc:196][{tid}]hcom allreduce tag=grad_{n} count=4194304 dataType=float16 op=sum"),
    (15, "[INFO] GE({pid},python3):" + TS + " [graph_manager.cc:3310]{tid} RunGraph: graph_id=3 step={n}, session_id=0"),
    (10, "[DEBUG] RUNTIME({pid},python3):" + TS + " [task.cc:88]{tid} TaskLaunch: device_id={r}, stream_id=17, task_id={n}, type=0"),
    (5, "[WARNING] RUNTIME({pid},python3):" + TS + " [device.cc:567]{tid} GetDeviceStatus: device_id={r} temperature 71C"),
    (8, "[INFO] DRV({pid},python):" + TS + " [ascend][curpid: 98, 98][drv][devmm][_svm_mem_stats_show 154]DEV_MEM dev{r} mem stats(Bytes): alloc {n}"),
    (2, "[EVENT] HCCL({pid},python3):" + TS + " [status:init] [hcom.cc:196][hccl-10972-0-1675133310-hccl_world_group][3]hcom init by file success,rankNum[8],rank[{r}]"),
    (6, "[INFO] ASCENDCL({pid},python3):" + TS + " [tensor_data_transfer.cpp:899]{tid} acltdtSendTensor: send tensor success, device is {r}"),
    (3, "[INFO] AICPU(26559,aicpu_scheduler):" + TS + " [silent_check_v3.cc:240][SilentCheck][tid:26572]SilentCheckV3 normal case, val=[3.350337e-08], max=[1.2e-07]"),
    (1, "[ERROR] HCCL({pid},python3):" + TS + " [comm_base.cc:968][{tid}]   |  comm error, device[{r}] num[1] "),
    (2, "[INFO] PROFILING({pid},python3):" + TS + " [prof_acl_mgr.cpp:1520]{tid} MsprofResultCallback: device_id={r} step={n}"),
    (1, "[WARNING] GE({pid},python3):" + TS + " [op_desc.cc:412]{tid} GetInputDesc: op MatMul_{n} input 2 not set, use default"),
]
DEVICE_NOISE = [
    (40, "[INFO] AICPU(26533,aicpu_scheduler):" + TS + " [aicpusd_event_process.cpp:178][ProcessHWTSEvent][tid:26552]stream_id={n} task done"),
    (20, "[INFO] AICPU(26533,aicpu_scheduler):" + TS + " [silent_check_v3.cc:240][SilentCheck][tid:26552]SilentCheckV3 normal case, val=[3.35e-08], max=[1.2e-07], step=[{n}]"),
    (10, "[INFO] TDT(4717,tsdaemon):" + TS + " [tsdaemon.cpp:903][HeartBeat][tid:4717] host heartbeat ok, seq={n}"),
    (5, "[EVENT] KERNEL(6843,sklogd):" + TS + " [klogd.c:253][251681.794072] [ascend] [INFO] [dms] temperature {r}4C"),
]
TRAINING_NOISE = [
    (40, "[INFO] epoch 3 step {n}: loss=2.{us:03d}{ms:03d}, lr=1.0e-04, grad_norm=0.{ms:03d}, tokens/s=5{us:03d}.{r}"),
    (10, "[WARNING] DEBUG({pid},fffee7e591e0,python):" + TS + " [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:109] SilentDetect] no strike, value: 0.{ms:03d}"),
    (10, "(train pid={pid}) [rank{r}]: iteration {n} / 100000 | consumed samples: {n}0 | elapsed time per iteration (ms): {ms}.{us}"),
    (2, "[INFO] checkpoint saved to /ckpt/step_{n}.ckpt in {ms} ms"),
]
KERNEL_NOISE = [
    (30, "[{n:6d}.{us:03d}{ms:03d}] audit: type=1400 audit({n}.{ms}:{us}): apparmor=\"ALLOWED\" operation=\"open\" pid={pid}"),
    (20, "[{n:6d}.{us:03d}{ms:03d}] nvidia-nvswitch{r}: open (major=508)"),
    (10, "[{n:6d}.{us:03d}{ms:03d}] NVRM: GPU at PCI:0000:{bus}:00: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae"),
    (5, "[{n:6d}.{us:03d}{ms:03d}] EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode."),
]

# Fault templates: (rule, kind, line, device). {d} is a device number chosen per injection and
# {bus} its PCI bus (hex); `device` is the device the finding must carry ("{path}" for the
# device of the file's path field).
FAULTS = [
    # CANN host plog
    ("ascend.asd.feature-abnormal", "plog",
     "[ERROR] ASCENDCL({pid},python3):" + TS + " [silent_check.cc:88]{tid} AsdCheck: accuracy sensitivity feature abnormal, device_id={d}", "{d}"),
    ("ascend.runtime.stream-sync-timeout", "plog",
     "[ERROR] RUNTIME({pid},python3):" + TS + " [stream.cc:1402]{tid} SynchronizeExecutedTask:Stream synchronize timeout, device_id={d}, stream_id=103, timeout=10000, tryCount=10.", "{d}"),
    ("ascend.device.heartbeat-lost", "plog",
     "[ERROR] RUNTIME({pid},python):" + TS + " [device_error_proc.cc:1200]{tid} TaskWait:Device[{d}] lost heartbeart.", "{d}"),
    ("ascend.aicore.error", "plog",
     "[ERROR] RUNTIME({pid},python3):" + TS + " [device_error_proc.cc:1163]{tid} ProcessStarsCoreErrorInfo:The error from device(chipId:{d}, dieId:0), serial number is 11, there is an aicore error exception, core id is 0, error code = 95", "{d}"),
    ("ascend.memory.hal-alloc-oom", "plog",
     "[ERROR] RUNTIME({pid},ker_DP7_EP7) :" + TS + " [npu_driver.cc:1534]{tid} DevMemAllocHugePageManaged:[drv api] halMemAlloc failed:size=2122688(bytes), type=2, moduleId=3, drvFlag=216172782123369479, drvRetCode=6, device_id={d}, ErrCode=207001, desc=[driver error:out of memory], InnerCode=0x7020014", "{d}"),
    # A process that names no device on any line: the finding has none (no context to take
    # one from; docs/detection.md).
    ("ascend.network.rdma-cqe-error", "plog",
     "[ERROR] HCCL(70001,alltoall_test):" + TS + " [heartbeat.cc:1229] [{tid}][TaskExecStage][HeartbeatAbnormal][ROCE CQE ERROR]cqe error status[12], time:[2025-09-15 08:38:12.776654],localInfo{{server[127.10.0.1],deviceId[127.10.0.1],deviceIp[127.11.0.1]}}, remoteIP{{server[127.10.0.2],deviceId[127.10.0.2]}}", ""),
    # device-side CANN log: no device in the line, it comes from the path (device-3/)
    ("ascend.asd.silent-check-l1", "device",
     "[ERROR] AICPU(26533,aicpu_scheduler):" + TS + " [silent_check_v3.cc:250][ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], avg=[1.128970e-09], step=[5], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], npu_asd_detect = [1].", "{path}"),
    ("ascend.asd.silent-check-l2", "device",
     "[WARNING] AICPU(26533,aicpu_scheduler):" + TS + " [silent_check_v3.cc:250][ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [2.5e+04], max = [2.5e+04], avg=[1.128970e-09], step=[4], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], npu_asd_detect = [1].", "{path}"),
    ("ascend.asd.device-os-event", "device",
     "[EVENT] TDT(4717,tsdaemon):" + TS + " [tsdaemon.cpp:1811][RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x80818c00.", "{path}"),
    ("ascend.asd.device-os-sensor", "device",
     "[EVENT] KERNEL(6843,sklogd):" + TS + " [klogd.c:253][251681.794072] [ascend] [EVENT] [dms] (Node Type=0x40; Sensor Type=0xc6; event_state=0)", "{path}"),
    # training log (worker_5.log: the device comes from the path)
    ("ascend.asd.silent-detect-strike", "training",
     "[WARNING] DEBUG({pid},fffee7e591e0,python):" + TS + " [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:109] SilentDetect] Silent detect strike detected: StrikeRecord{{timestamp: 1756176386, name: fc1.weight, value: inf, stat: 0}}", "{path}"),
    ("ascend.asd.strikes-out", "training",
     "[WARNING] DEBUG({pid},fffda37fe1e0,python):" + TS + " [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:348] DetectStrikeout] Feature value detection strikes out on rank 5, strikes_num: 3, CheckSum will be enabled globally.", "{path}"),
    ("ascend.asd.checksum-matmul", "training",
     "[WARNING] DEBUG({pid},fffda37fe1e0,python):" + TS + " [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:305] DoCheckSum] CheckSum detects MatMul error on rank 5", "{path}"),
    ("ascend.asd.sdc-error", "training",
     "[WARNING] DEBUG({pid},fffda37fe1e0,python):" + TS + " [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:318] DoCheckSum] SilentCheck detects SDC error, which means training may be unstable. Search 'CheckSum detects MatMul error' in all ranks' logs.", "{path}"),
    # The worker's path names its device, which outranks an inline id (docs/log-formats.md §11).
    ("ascend.memory.device-oom", "training",
     "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 5; 60.96 GiB total capacity; 58.02 GiB already allocated; 58.02 GiB current active; 412.85 MiB free)", "{path}"),
    ("ascend.memory.driver-oom", "training",
     "EL0004: [PID: {pid}] " + TS + " Failed to allocate memory.", "{path}"),
    ("ascend.hccl.notify-timeout", "training",
     "(train pid={pid}) EI0002: [PID: {pid}] " + TS + " The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [unknown].", "{path}"),
    ("ascend.hccl.socket-timeout", "training",
     "EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request. some NPUs in the cluster are abnormal.", "{path}"),
    ("ascend.hccl.task-timeout", "training",
     "(train pid={pid}) RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048", "{path}"),
    # kernel log
    ("ascend.host.oom", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] Out of memory: Killed process {pid} (python3) total-vm:812345678kB, anon-rss:7654321kB", ""),
    ("ascend.device.drv-heartbeat-lost", "kernel",
     "[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device={d}; old_count=1104; new_count=1104)", "{d}"),
    ("nvidia.xid.separate", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (PCI:0000:{bus}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", "0000:{bus}:00"),
    ("nvidia.xid.reset", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (PCI:0000:{bus}:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).", "0000:{bus}:00"),
    ("nvidia.xid.nvlink-fatal", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (PCI:0000:{bus}:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)", "0000:{bus}:00"),
    ("nvidia.xid.nvlink-nonfatal", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (PCI:0000:{bus}:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000000)", "0000:{bus}:00"),
    ("nvidia.xid.application", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (PCI:0000:{bus}:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 8, TPC 5, SM 1): Multiple Warp Errors", "0000:{bus}:00"),
    ("nvidia.xid.recovery-action", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (PCI:0000:{bus}:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)", "0000:{bus}:00"),
    ("nvidia.xid.other", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Xid (0000:{bus}:00): 14, Channel 00000001", "0000:{bus}:00"),
    ("nvidia.gpu.fallen-off-bus", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: GPU 0000:{bus}:00.0: GPU has fallen off the bus.", "0000:{bus}:00"),
    ("nvidia.gsp.heartbeat-timeout", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: GPU{d} _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 3856513292 heartbeat 0 heartbeatWithOffsetMs 0 diff 3856513292 timeout 5200", "GPU{d}"),
    ("nvidia.gsp.rpc-timeout", "kernel",
     "[{n:6d}.{us:03d}{ms:03d}] NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:{bus}:00 (printing 1 of every 30).  The GPU likely needs to be reset.", "0000:{bus}:00"),
    ("nvidia.device-plugin.xid-critical", "kernel",
     "I0523 10:22:31.123456       1 health.go:186] XidCriticalError: Xid=79 on Device=GPU-0b11d014-1685-04bd-26ed-5fc0bc1c{d:04d}; marking device as unhealthy.", "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c{d:04d}"),
]

FILES = {  # kind: (relative path, noise, path_fields regex, device the path gives)
    "plog": ("plog/plog-59420_20250124112400.log", PLOG_NOISE, "", ""),
    "device": ("device-3/device-26533_20250124112400.log", DEVICE_NOISE, r"device-(?P<device>\d+)/", "3"),
    "training": ("training/worker_5.log", TRAINING_NOISE, r"worker_(?P<device>\d+)\.log$", "5"),
    "kernel": ("kernel/kern.log", KERNEL_NOISE, "", ""),
}
SOURCE_NAMES = {"plog": "plog", "device": "device-log", "training": "training", "kernel": "kernel"}


def fill(template, rng, d):
    return template.format(pid=59420 + rng.randrange(8), tid=107000 + rng.randrange(900),
                           s=rng.randrange(60), ms=rng.randrange(1000), us=rng.randrange(1000),
                           n=rng.randrange(100000), r=rng.randrange(8), d=d, bus="%02x" % (0x10 + d))


def write_file(out, kind, target_bytes, fault_every, rng, faults_out):
    rel, noise, _, path_device = FILES[kind]
    templates = [f for f in FAULTS if f[1] == kind]
    weights = [w for w, _ in noise]
    # A pool of pre-formatted lines keeps generation fast; 20,000 distinct lines is enough
    # variety that no cache or branch predictor sees a loop.
    pool = [fill(rng.choices(noise, weights)[0][1], rng, 0) + "\n" for _ in range(20000)]
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    written = lines = k = 0
    with open(path, "w", newline="\n") as f:
        while written < target_bytes:
            block = rng.choices(pool, k=fault_every - 1)
            rule, _, template, device = templates[k % len(templates)]
            d = rng.randrange(8)
            k += 1
            at = rng.randrange(len(block) + 1)
            block.insert(at, fill(template, rng, d) + "\n")
            head = "".join(block[:at])
            faults_out.append({
                "file": rel, "line": lines + at + 1, "offset": written + len(head.encode()),
                "rule": rule,
                "device": path_device if device == "{path}" else device.format(d=d, bus="%02x" % (0x10 + d)),
            })
            data = "".join(block)
            f.write(data)
            written += len(data.encode())
            lines += len(block)
    return {"path": rel, "bytes": written, "lines": lines, "path_fields": FILES[kind][2]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--mib", type=float, default=1024, help="size of the big plog")
    ap.add_argument("--aux-mib", type=float, default=8, help="size of each other log")
    ap.add_argument("--fault-every", type=int, default=100000)
    ap.add_argument("--aux-fault-every", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    manifest = {"files": {}, "faults": [], "sources": []}
    for kind in FILES:
        big = kind == "plog"
        size = int((args.mib if big else args.aux_mib) * 1024 * 1024)
        every = args.fault_every if big else args.aux_fault_every
        manifest["files"][kind] = write_file(args.out, kind, size, every, rng, manifest["faults"])
        src = {"name": SOURCE_NAMES[kind], "paths": [os.path.join(os.path.abspath(args.out), FILES[kind][0])]}
        if FILES[kind][2]:
            src["path_fields"] = FILES[kind][2]
        if kind == "kernel":  # the kernel's driver rules read only the kernel's log
            src["kernel_log"] = True
        manifest["sources"].append(src)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    by_rule = {}
    for x in manifest["faults"]:
        by_rule[x["rule"]] = by_rule.get(x["rule"], 0) + 1
    print(json.dumps({"files": manifest["files"], "faults_by_rule": by_rule}, indent=1))


if __name__ == "__main__":
    main()
