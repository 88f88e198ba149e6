#!/usr/bin/env python3
"""Writes the golden cases tests/golden/ascend-* and tests/golden/nvidia-* of
etc/faultd/rules.d/ascend-runtime.yaml and etc/faultd/rules.d/nvidia-xid.yaml.

The expected findings are declared by hand next to each line below, never computed by the
engine; the noise is seeded, so re-running this rewrites the same files. Each case's README
(the `note`) says where its lines come from: "quoted" lines are verbatim from the public source
named there (a "..." inside a quoted line is the source's own elision or marks where a long
line was cut), "composed" lines put a quoted message behind a quoted prefix, and
"constructed" lines follow a documented format or a format string for which no real line was
found. Edit the cases here, run `python3 tests/golden/make_pack_cases.py`, review the diff."""
import json, os, random

ROOT = os.path.dirname(os.path.abspath(__file__))
NOT, SUB, RREQ, RBUS = "NotHandleFault", "SubHealthFault", "RestartRequest", "RestartBusiness"
RNPU, SEP = "RestartNPU", "SeparateNPU"


def write_case(name, source, path, path_fields, parts, note):
    """parts: list of (line, [expected findings as (rule, device, level, code)])"""
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    data = b""
    expected = []
    for i, (line, exp) in enumerate(parts, start=1):
        raw = line.encode("utf-8") if isinstance(line, str) else line
        assert b"\n" not in raw, (name, i)
        data += raw + b"\n"
        for rule, dev, level, code in exp:
            expected.append({"rule": rule, "device": dev, "level": level, "code": code, "line": i})
    open(os.path.join(d, "input.log"), "wb").write(data)
    open(os.path.join(d, "source"), "w").write(source + "\n" + (path + "\n" if path else ""))
    pf = os.path.join(d, "path_fields")
    if path_fields:
        open(pf, "w").write(path_fields + "\n")
    elif os.path.exists(pf):
        os.remove(pf)
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for e in expected:
            f.write(json.dumps(e) + "\n")
    open(os.path.join(d, "README"), "w").write(note.strip() + "\n")


def fill(t, rng):
    n = t.count("%")
    return t % tuple(rng.randrange(1, 900) for _ in range(n)) if n else t


def mix(noise_pool, count, positives, rng):
    """Spreads `positives` (kept in order) among `count` noise lines drawn from the pool. A
    positive that is a list of lines stays together (a multi-line message)."""
    parts = [[(fill(rng.choice(noise_pool), rng), [])] for _ in range(count)]
    slots = sorted(rng.sample(range(len(parts) + 1), len(positives)))
    for offset, (slot, pos) in enumerate(zip(slots, positives)):
        parts.insert(slot + offset, pos if isinstance(pos, list) else [pos])
    return [line for group in parts for line in group]


def none(line):
    return (line, [])


rng = random.Random(11)

# Ordinary lines of each kind of log, none of which may match. Verbatim lines from
# docs/log-formats.md §2 and §4 plus the same shapes with varying numbers.
PLOG_NOISE = [
    "[INFO] RUNTIME(10972,python):2023-09-23-05:41:41.001.%03d [stream.cc:%d]49835 StreamSynchronize: stream_id=%d, sync succeeded",
    "[ERROR] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 [engine.cc:1263]163618 ReportExceptProc:Task exception! device_id=0, stream_id=17, task_id=43, type=13, retCode=0x91, [the model stream execute failed].",
    "[ERROR] RUNTIME(10972,python):2023-09-23-05:41:40.256.365 [npu_driver.cc:1100]49835 DevMemAllocHugePageManaged:[INIT][DEFAULT][drv api] halMemAlloc failed:size=2097152(Byte), ... device_id=0!",
    "[ERROR] HCCL(59420,python3):2025-01-24-11:24:07.908.526 [comm_base.cc:968][107626]   |  comm error, device[0] num[1] ",
    "[TRACE] HCCL(10972,python3):2023-01-31-02:48:31.222.202 [status:init] [hcom.cc:196][hccl-10972-0-1675133310-hccl_world_group][3]hcom init by file success,...",
    "[INFO] DRV(10972,python):2023-09-23-05:41:39.697.570 [ascend][curpid: 98, 98][drv][devmm][_svm_mem_stats_show 154]DEV_MEM dev0 mem stats(Bytes): ...",
    "[ERROR] ASCENDCL(162844,python):2022-12-01-00:26:58.086.834 [tensor_data_transfer.cpp:899]168498 acltdtSendTensor: ... device is 1, ...",
    "[EVENT] HCCL(10972,python3):2023-09-23-05:41:43.%03d.000 [hccl_communicator.cc:%d][10972]Entry-HcclAllReduce: tag[AllReduce_%d], count[1024], dataType[float32]",
    "[WARNING] GE(10972,python):2023-09-23-05:41:42.100.%03d [graph_manager.cc:%d]49835 OptimizeGraph: fusion pass skipped for node %d",
]
TRAIN_NOISE = [
    "[WARNING] ME(573:281473062022496,MainProcess):2023-05-23-03:52:26.782.379 [mindspore/train/model.py:1079] ...",
    "- INFO - { Epoch:[  1/  2], step:[    %d/ 6500], loss: 0.000, per_step_time: 166756ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: [44.313248], train_throughput_per_npu: 2.849T",
    "[ERROR] DEVICE(118114,ffff4effd1e0,python):2021-09-11-16:48:31.511.290 [mindspore/ccsrc/runtime/device/ascend/ascend_kernel_runtime.cc:679] DumpTaskExceptionInfo] Task fail infos task_id: 13, stream_id: 14, tid: 118198, device_id: 0, retcode: 507011 ( model execute failed)",
    "(train pid=8464)   File \"/usr/local/python3.10.16/lib/python3.10/site-packages/torch_npu/npu/utils.py\", line 60, in synchronize",
    "[rank7]:   File \"/home/wepsdl/conda/lib/python3.10/site-packages/llamafactory/launcher.py\", line %d, in <module>",
    "[INFO] ME(2950752:281473062022496,MainProcess):2025-08-26-10:46:%02d.000.000 [mindspore/train/callback/_loss_monitor.py:%d] epoch: 1 step: %d, loss is 2.30",
]
KERNEL_NOISE = [
    "[%d.%06d] nvidia 0000:05:00.0: Enabling HDA controller",
    "[%d.%06d] clocksource: Long readout interval, skipping watchdog check: cs_nsec: 1584036171 wd_nsec: 1584036160",
    "[%d.%06d] nvidia-nvlink: Nvlink Core is being initialized, major device number 239",
    "[%d.%06d] [drm] [nvidia-drm] [GPU ID 0x00000100] Loading driver",
    "[%d.%06d] PM: suspend exit",
    "[%d.%06d] oom_reaper: reaped process %d (vector), now anon-rss:0kB, file-rss:0kB, shmem-rss:0",
]

# ---------------------------------------------------------------------------------------------
# Ascend

AIC = "ascend.aicore.error"
write_case("ascend-aicore-error", "training", "/var/log/training/job-7/rank-0.log", None,
    mix(TRAIN_NOISE, 150, [
        # hw-native-sys/PTOAS#482 (an aclrtSynchronizeStream failure on an A5 board)
        none("[ERROR] aclrtSynchronizeStream(stream) failed: 507015 (/tmp/ptoas-board-monitor-a5/runs/20260415_111512_manual_pr482/npu_validation/Qwen3Tilelet/qwen3_decode_layer_incore_17/main.cpp:108)"),
        none("[ERROR] RecentErrMsg: EZ9999: Inner Error!"),
        ("EZ9999[PID: 110830] 2026-04-15-11:19:38.491.647 (EZ9999):  The error from device(chipId:0, dieId:0), serial number is 11, there is an aicore error exception, core id is 0, error code = 95, dump info: pc start: 0x100040800008, current: 0x100040800188, sc error info: 0xffffffffffff, su error info: 0xfefffeec1efe9387,0x7fddfebff8007fff, mte error info: 0x22601000002005d, vec error info: 0, cube error info: 0, l1 error info: 0xffbf0017f6ee, aic error mask: 0x395856, para base: 0x100040200000, mte error: 0x80000000.[FUNC:ProcessDavidStarsCoreErrorInfo][FILE:device_error_proc_c.cc][LINE:580]",
         [(AIC, "0", RBUS, "")]),
        none("        TraceBack (most recent call last):"),
        none("       The extend info: errcode:(95) errorStr: The DDR address of the MTE instruction is out of range. subErrType: 0x4.[FUNC:ProcessDavidStarsCoreErrorInfo][FILE:device_error_proc_c.cc][LINE:583]"),
        ("       The error from device(chipId:0, dieId:0), serial number is 12, there is an aivec error exception, core id is 0, error code = 0, dump info: pc start: 0x100040800764, current: 0x1000408008b8, sc error info: 0xffffffffffff, ...",
         [(AIC, "0", RBUS, "")]),
        # mindspore-lab/mindone#269
        none("        The extend info from device(0), serial number is 111, there is aicore error, core id is 20, aicore int: 0x1, aicore error2: 0, axi clamp ctrl: 0, axi clamp state: 0x1717, biu status0: 0x101e44800000000, biu status1: 0x940002092a0000, clk gate mask: 0, dbg addr: 0, ecc en: 0, mte ccu ecc 1bit error: 0x1000, vector cube ecc 1bit error: 0, run stall: 0x1, dbg data0: 0, dbg data1: 0, dbg data2: 0, dbg data3: 0x15, dfx data: 0x1[FUNC:PrintCoreErrorInfo][FILE:device_error_proc.cc][LINE:541]"),
        ("        The error from device(0), serial number is 111, there is an aicore error, core id is 19, error code = 0x800000, dump info: pc start: 0x1000120040134000, current: 0x120040134198, vec error info: 0x1ffb34ff, mte error info: 0x33362, ifu error info: 0x2f9773e7aff80, ccu error info: 0, cube error info: 0x5c, biu error info: 0, aic error mask: 0x65000200d000288, para base: 0x1200032c7000, errorStr: The DDR address of the MTE instruction is out of range.[FUNC:PrintCoreErrorInfo][FILE:device_error_proc.cc][LINE:510]",
         [(AIC, "0", RBUS, "")]),
        # hiyouga/LlamaFactory#3796: EZ9999 for a missing operator binary, a software error
        none("[E OpParamMaker.cpp:273] call aclnnEqScalar failed, detail:EZ9999: Inner Error!"),
        none("EZ9999: 2024-05-17-18:46:14.721.067  Op Equal does not has any binary."),
        none("        Kernel Run failed. opType: 88, Equal"),
        none("[ERROR] 2024-05-17-18:46:14 (PID:40093, Device:0, RankID:-1) ERR01005 OPS internal error"),
        # vLLM-Ascend engine log with its launcher prefix (quoted in a public repository found by
        # code search): "exception of fftsplus aicore error", device(chipId:0
        ("(EngineCore_0 pid=1440043) ERROR 09-02 03:32:24 [core.py:714] EZ9999: [PID: 1440043] 2025-09-02-03:32:24.130.271 The error from device(chipId:0, dieId:0), serial number is 3, there is an exception of fftsplus aicore error, core id is 2, error code = 0x800000, dump info: pc start: 0x124000cd0280, current: 0x124000cd10d8, vec error info: 0, mte error info: 0x41030000ed, ifu error info: 0x719fb20d89900, ccu error info: 0x4694fd483906733d, cube error info: 0, biu error info: 0, aic error mask: 0x6500020bd00028c, para base: 0x12c100340080.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:303]",
         [(AIC, "0", RBUS, "")]),
        # torch_npu (vLLM rank prefix "[rank0]:"): the tuple line carries the device, the
        # "[Error]:" line the fault; the engine reads single lines, so the latter has none.
        none("[rank0]:[E1028 10:45:49.568958992 compiler_depend.ts:429] operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:34 NPU function error: call aclnnRmsNorm failed, error code is 507015"),
        none("[ERROR] 2025-10-28-10:45:49 (PID:3859350, Device:0, RankID:-1) ERR00100 PTA call acl api failed"),
        ("[Error]: The aicore execution is abnormal.", [(AIC, "", RBUS, "")]),
        none("        Rectify the fault based on the error information in the ascend log."),
        ("        The error from device(chipId:2, dieId:0), serial number is 8, there is an exception of fftsplus aivector error, core id is 20, error code = 0x800000, dump info: pc ...",
         [(AIC, "2", RBUS, "")]),
        ("        rtKernelLaunchWithHandleV2 execute failed, reason=[aicore exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
         [(AIC, "", RBUS, "")]),
        # CANN runtime plog lines of a vector core exception (Huawei operator troubleshooting doc)
        ("[ERROR] RUNTIME(539029,python3):2024-03-25-11:22:02.462.276 [stream.cc:1509]539029 GetError:[INIT][DEFAULT]Stream Synchronize failed, stream_id=2, retCode=0x31, [vector core exception].",
         [(AIC, "", RBUS, "")]),
        none("[ERROR] RUNTIME(539029,python3):2024-03-25-11:22:02.462.315 [stream.cc:1512]539029 GetError:[INIT][DEFAULT]report error module_type=5, module_name=EZ9999"),
        ("        Kernel task happen error, retCode=0x31, [vector core exception].[FUNC:PreCheckTaskErr][FILE:davinic_kernel_task.cc][LINE:1220]",
         [(AIC, "", RBUS, "")]),
        none("        AIV Kernel happen error, retCode=0x31.[FUNC:GetError][FILE:stream.cc][LINE:1082]"),
        ("        Aicore kernel execute failed, device_id=2, stream_id=2, report_stream_id=2, task_id=3802, flip_num=0, fault kernel_name=te_rotatediou_43b14...",
         [(AIC, "2", RBUS, "")]),
        ("[Error]: The vector core execution is abnormal. Kernel task happen error, retCode=0x31, [vector core exception].",
         [(AIC, "", RBUS, "")]),
        # timeouts: 507014 "[aicore timeout]", "reason=aicore timeout", "AICORE Kernel task happen error"
        none("RuntimeError: ACL stream synchronize failed, error code:507014"),
        ("[Error]: The aicore execution times out.", [(AIC, "", RBUS, "")]),
        ("EZ9999: Kernel task happen error, retCode=0x25, [aicore timeout]", [(AIC, "", RBUS, "")]),
        ("[ERROR] 2026-07-07-07:20:43 (PID:163686, Device:1, RankID:-1) ERR00100 PTA call acl api failed.", []),
        # the CANN block names only the process; the tuple line above named its device
        ("EZ9999[PID: 163686] 2026-07-07-07:20:43.817.613 (EZ9999):  Kernel task happen error, retCode=0x25, [aicore timeout].[FUNC:PreCheckTaskErr][FILE:davinci_kernel_task.cc][LINE:1493]",
         [(AIC, "1", RBUS, "")]),
        ("       rtMemcpyAsync execution failed, reason=aicore timeout[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:61]",
         [(AIC, "", RBUS, "")]),
        ("        AICORE Kernel task happen error, retCode=0x25.[FUNC:GetError][FILE:stream.cc][LINE:1191]",
         [(AIC, "", RBUS, "")]),
        # composed: a LLaMA-Factory rank prefix ("[rank7]: ", Ascend/pytorch#62) before a
        # quoted torch_npu line with the tuple on the same line
        ("[rank7]: [ERROR] 2025-10-28-10:45:49 (PID:3859350, Device:7, RankID:7) ERR00100 PTA call acl api failed, The aicore execution is abnormal.",
         [(AIC, "7", RBUS, "")]),
    ], rng),
    note="""
AI Core / vector core errors in a training log (no path fields), with launcher prefixes
("(EngineCore_0 pid=N) ERROR ... [core.py:714] ", "[rank0]:", "[rank7]: ").

Quoted: hw-native-sys/PTOAS#482 (EZ9999 "there is an aicore error exception" and the "aivec
error exception" continuation, device(chipId:0); the bare "EZ9999: Inner Error!" must not
match); mindspore-lab/mindone#269 (device(0) "there is an aicore error"; its "extend info ...
there is aicore error" companion line is not matched); hiyouga/LlamaFactory#3796 (EZ9999 "Op
Equal does not has any binary", a software error: no match); a vLLM-Ascend engine log quoted in
a public repository (fftsplus aicore error, fftsplus aivector error, "[Error]: The aicore
execution is abnormal.", "reason=[aicore exception]"); an Ascend operator troubleshooting
document (the RUNTIME "GetError ... [vector core exception]." and "module_name=EZ9999" plog
lines); CANN and torch_npu logs quoted in other public repositories found by code search,
whose index does not name them ("Kernel task happen error ... [vector core exception]",
"Aicore kernel execute failed, device_id=2", "[Error]: The vector core execution is
abnormal.", "[aicore timeout]", "reason=aicore timeout", "AICORE Kernel task happen error"). The torch_npu tuple line "(PID:n, Device:N, RankID:n)
ERR00100 PTA call acl api failed" alone is not a fault.
Composed: the last line (rank prefix + tuple + the aicore text on one line) shows the tuple
winning as the device.""")

DOOM, HOOM, HAL = "ascend.memory.device-oom", "ascend.host.oom", "ascend.memory.hal-alloc-oom"
DRV = "ascend.memory.driver-oom"
write_case("ascend-oom-device-vs-host", "training", "/var/log/training/job-8/worker_2.log", None,
    mix(TRAIN_NOISE + PLOG_NOISE, 150, [
        ("Malloc device memory failed, size[32212254720], ret[207001], Device 6 may be other processes occupying this card",
         [(DOOM, "6", RBUS, "")]),
        ("Malloc device memory failed, free memory size is less than half of total memory size.Device 0 ...",
         [(DOOM, "0", RBUS, "")]),
        ("Out of Memory!!! total[3212254720] (dynamic[0] memory poll[524288000]) malloc[32611480064] failed!",
         [(DOOM, "", RBUS, "")]),
        ("[EXCEPTION] DEVICE(118114,ffff4effd1e0,python):2025-03-01-10:00:01.000.001 [mindspore/ccsrc/runtime/device/ascend/ascend_memory_manager.cc:128] MallocDynamicMem] Out of memory!!! total[32212254720] (dynamic[0] memory pool[3221225472]) malloc [65536] failed!",
         [(DOOM, "", RBUS, "")]),
        ("RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total capacity; ...)",
         [(DOOM, "2", RBUS, "")]),
        ("[rank2]: RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total capacity; ...)",
         [(DOOM, "2", RBUS, "")]),
        ("EL0004: [PID: 14004] 2025-11-06-01:17:59.527.855 Failed to allocate memory.", [(DRV, "", RBUS, "")]),
        ("(EngineCore_DP0 pid=6903) ERROR 10-09 01:31:16 [core.py:718] EL0004: [PID: 6903] 2025-10-09-01:31:15.131.349 Failed to allocate memory.",
         [(DRV, "", RBUS, "")]),
        none("mmap: Failed to allocate memory."),
        none("(EngineCore_DP0 pid=6903) ERROR 10-09 01:31:16 [core.py:718]         Possible Cause: Available memory is insufficient."),
        ("[ERROR] RUNTIME(27271,ker_DP7_EP7) :2026-02-27-16:24:15.595.677 [npu_driver.cc:1534]34603 DevMemAllocHugePageManaged:[drv api] halMemAlloc failed:size=2122688(bytes), type=2, moduleId=3, drvFlag=216172782123369479, drvRetCode=6, device_id 7, ErrCode=207001, desc=[driver error:out of memory], InnerCode=0x7020016",
         [(HAL, "", RBUS, "")]),
        ("[ERROR] RUNTIME(10972,python):2023-09-23-05:41:40.256.370 [npu_driver.cc:1100]49835 DevMemAllocHugePageManaged:[drv api] halMemAlloc failed:size=2097152(bytes), type=2, moduleId=3, drvFlag=216172782123369479, drvRetCode=6, device_id=3, ErrCode=207001, desc=[driver error:out of memory], InnerCode=0x7020016",
         [(HAL, "3", RBUS, "")]),
        none("[WARNING] RUNTIME(10972,python):2023-09-23-05:41:40.256.371 [npu_driver.cc:1110]49835 DevMemAllocHugePageManaged:[drv api] halMemAlloc failed:size=2097152(bytes), type=2, moduleId=3, drvFlag=216172782123369479, drvRetCode=6, device_id=3!"),
        # look-alikes: the kernel's host OOM in the same log goes to the host rule only
        ("[  142.890123] [ oom-killer ] Memory cgroup out of memory: Killed process 28914 (llama-server) ",
         [(HOOM, "", NOT, "")]),
        none("Memory consumption is more than 80%, which may cause OOM. Please reduce ..."),
        none("torch.OutOfMemoryError: NPU stream synchronize timeout misclassified"),
    ], rng),
    note="""
Device memory exhaustion against host OOM in one training log (no path fields).

Quoted: docs/log-formats.md §4 (the two "Malloc device memory failed" lines, "NPU out of memory
... (NPU 2; ...)"); MindSpore's FAQ (mindspore-ai/docs) "Out of Memory!!! total[...] ...
failed!"; vllm-project/vllm-ascend#4026 (EL0004 ... Failed to allocate memory.:
ascend.memory.driver-oom); a vLLM-Ascend
engine log quoted in a public repository (EL0004 with the "(EngineCore_DP0 pid=N) ERROR ..."
prefix and its "Possible Cause" continuation); hicann/hixl troubleshooting guide
(.agents/skills/hixl-troubleshoot/references/guides.md: the halMemAlloc out-of-memory line;
the guide shows it as "ERR0R] RUNTIME(...", restored here to "[ERROR] RUNTIME(..."; it
writes "device_id 7" without "=", which is not a device form, so no device); a public dmesg
excerpt with "Memory cgroup out of memory: Killed process" (host OOM).
Constructed: MindSpore's "Out of memory!!!" (lower-case m, from the MS_LOG(EXCEPTION) format
string of its Ascend memory manager) must be a device OOM, not a host OOM; a halMemAlloc
failure with device_id=3 and the out-of-memory description (matches) and the same failure as
the runtime's WARNING for a retried allocation (no description: no match); "[rank2]: "
before the torch_npu OOM line; a host program's "Failed to allocate memory." without EL0004
and two more lines that only look like OOMs (no match).""")

write_case("ascend-host-oom", "messages", "/var/log/messages", None,
    mix(KERNEL_NOISE, 80, [
        # gpud components/memory/testdata/dmesg.decode.iso.log
        none("kern  :warn  : 2025-01-21T08:41:30,287197+00:00 oom_reaper: reaped process 345646 (vector), now anon-rss:0kB, file-rss:0kB, shmem-rss:0"),
        none("kern  :warn  : 2025-01-21T08:42:30,287197+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"),
        ("kern  :warn  : 2025-01-21T08:43:30,287197+00:00 Out of memory: Killed process 123, UID 48, (httpd)", [(HOOM, "", NOT, "")]),
        ("kern  :warn  : 2025-01-21T08:44:30,287197+00:00 Out of memory: Kill process 456 (python) score 50 or sacrifice child", [(HOOM, "", NOT, "")]),
        # public dmesg excerpt (memory cgroup)
        none("[337533.314408] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),oom_memcg=/leaker,task_memcg=/leaker,task=leaker,pid=23793,uid=0"),
        ("[337533.314412] Memory cgroup out of memory: Killed process 23793 (leaker) total-vm:2623712kB, anon-rss:506500kB, file-rss:1268kB, shmem-rss:0kB",
         [(HOOM, "", NOT, "")]),
        none("[337533.418036] oom_reaper: reaped process 23793 (leaker), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"),
        # constructed: journald prefix; the older allocating-task wording
        ("Mar  3 10:00:01 node1 kernel: Out of memory (oom_kill_allocating_task): Kill process 2811 (python3) score 0 or sacrifice child",
         [(HOOM, "", NOT, "")]),
        # the framework's device OOM, if it ever reached this log, is still a device OOM
        ("Mar  3 10:00:02 node1 python3[2811]: Out of Memory!!! total[3212254720] (dynamic[0] memory poll[524288000]) malloc[32611480064] failed!",
         [(DOOM, "", RBUS, "")]),
    ], rng),
    note="""
Host OOM killer lines in an OS log (/var/log/messages, no path fields): recorded by
ascend.host.oom at NotHandleFault without a device; oom_reaper / oom-kill constraint lines
are not matched.
Quoted: leptonai/gpud components/memory/testdata/dmesg.decode.iso.log (iso-prefixed "Out of
memory: Killed process" and "Kill process ... or sacrifice child", oom_reaper, oom-kill); a
public dmesg excerpt of a memory cgroup OOM (found by code search).
Constructed: a journald-prefixed "Out of memory (oom_kill_allocating_task): Kill process"
(older kernels' wording) and the MindSpore device-OOM line (quoted from its FAQ) behind a
syslog prefix, which stays a device OOM: the case of "Memory" is what separates them.""")

NT, ST, TT = "ascend.hccl.notify-timeout", "ascend.hccl.socket-timeout", "ascend.hccl.task-timeout"
write_case("ascend-hccl-timeouts", "training", "/var/log/training/job-9/rank-8.log", None,
    mix(TRAIN_NOISE, 150, [
        # vllm-project/vllm-ascend#1443, with the Ray launcher prefix "(train pid=8464) "
        ("(train pid=8464) RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048",
         [(TT, "", RBUS, "")]),
        none("(train pid=8464) [ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:8) ERR00100 PTA call acl api failed"),
        none("(train pid=8464) [Error]: The execution of the internal task times out. "),
        none("(train pid=8464)         Rectify the fault based on the error information in the ascend log."),
        ("(train pid=8464) EI0002: [PID: 13075] 2025-06-25-10:45:23.586.187 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [unknown]. base information: [streamID:[1], taskID[8318285], tag[AllReduce_group_name_710], A...",
         [(NT, "0", RBUS, "")]),  # context: the tuple line above named the process's device
        # vllm-project/vllm-ascend#3413
        none("[ERROR] 2025-10-11-15:09:34 (PID:2969, Device:0, RankID:101) ERR00100 PTA call acl api failed."),
        ("EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [24]. base information: [streamID:[109], taskID[38], taskType[Notify Wait], tag[AllReduce_group_name_1654NHRAllReduceComm_device], AlgType(level 0-1-2):[ring-NHR-NHR].]. task information: [notify id:[0x0000000000000213], stage:[0], remote rank:[24]]. group information: [group:[group_name_1654], user define information[Unspecified], rankSize[32], rankId[25 24]]",
         [(NT, "0", RBUS, "")]),  # context: the tuple line above named the process's device
        none("        Possible Cause: 1. An exception occurs during the execution on some NPUs in the cluster. As a result, collective communication operation failed.2. The execution speed on some NPU in the cluster is too slow to complete a communication operation within the timeout interval. (default 1800s, You can set the interval by using HCCL_EXEC_TIMEOUT.)3. The number of training samples of each NPU is inconsistent.4. Packet loss or other connectivity problems occur on the communication link."),
        # InternLM/lmdeploy#3354
        ("        synchronize stream failed, runtime result = 507048[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
         [(TT, "", RBUS, "")]),
        none("        Solution: 1. If this error is reported on part of these ranks, check other ranks to see whether other errors have been reported earlier.2. If this error is reported for all ranks, check whether the error reporting time is consistent (the maximum difference must not exceed 1800s). If not, locate the cause or adjust the locate the cause or set the HCCL_EXEC_TIMEOUT environment variable to a larger value.3. Check whether the completion queue element (CQE) of the error exists in the plog(grep -rn 'error cqe'). If so, check the network connection status. (For details, see the TLS command and HCCN connectivity check examples.)4. Ensure that the number of training samples of each NPU is consistent. For details:https://www.hiascend.com/document"),
        ("        The error from device(chipId:5, dieId:0), serial number is 17, hccl fftsplus task timeout occurred during task execution, stream_id:7, sq_id:7, task_id:9865, stuck notify num:3, timeout:1836.[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1657]",
         [(NT, "5", RBUS, "")]),
        none("        The 0 stuck notify wait context info:(context_id=13, notify_id=17).[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1664]"),
        # Ascend/pytorch#54
        ("EI9999: 2024-10-21-10:42:00.358.410  The error from device(chipId:3, dieId:0), serial number is 9, hccl fftsplus task timeout occurred during task execution, stream_id:5, sq_id:5, task_id:38827, stuck notify num:1, timeout:30min(default).[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1435]",
         [(NT, "3", RBUS, "")]),
        # vllm-project/vllm-ascend#2800 (vLLM worker prefix)
        none("(VllmWorker TP1 pid=961) ERROR 09-07 01:11:09 [multiproc_executor.py:596] [ERROR] 2025-09-07-01:11:09 (PID:961, Device:1, RankID:-1) ERR00100 PTA call acl api failed"),
        ("(VllmWorker TP1 pid=961) ERROR 09-07 01:11:09 [multiproc_executor.py:596] EH9999: [PID: 961] 2025-09-07-01:11:09.333.567 synchronize stream failed, runtime result = 507048[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
         [(TT, "1", RBUS, "")]),  # context: the tuple line above named the process's device
        # EI0006: MindSpore "Ascend Error Message" block (public training log), and the newer
        # "Communication_Error_Get_Socket" wording (public benchmark notes)
        none("- Ascend Error Message:"),
        ("EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request. some NPUs in the cluster are abnormal.    2. The remote does not initiate a connect request because the collective communication operator is started too late or is not started by some NPU in the cluster.    3. The communication link is dis...",
         [(ST, "", RBUS, "")]),
        ("        EI0006 Communication_Error_Get_Socket: Getting socket times out.", [(ST, "", RBUS, "")]),
        # constructed from kg-config.json patterns (no real line found)
        ("[ERROR] HCCL(59420,python3):2025-01-24-11:30:07.908.526 [topoinfo_exchange_server.cc:300][107626][Get][Connection]topo exchange server get socket timeout! timeout[120 s]",
         [(ST, "", RBUS, "")]),
        ("[ERROR] RUNTIME(59420,python3):2025-01-24-11:31:07.908.526 [stream.cc:1400]107626 TaskFailCallBack: Notify wait execute failed, device_id=4, stream_id=3, task_id=12",
         [(NT, "4", RBUS, "")]),
        ("[rank7]: [ERROR] HCCL(59420,python3):2025-01-24-11:32:07.908.526 [hccl_impl.cc:900][107626] notify wait timeout, remote rank[3], deviceId[6]",
         [(NT, "6", RBUS, "")]),
        # look-alikes
        none("[ERROR] HCCL(5375,aicpu_scheduler):2025-08-06-23:09:01.834.041 [aicpu_communicator.cc:3083] [5792][TaskException]base information is ... type:NOTIFY WAIT, localRank:1, remoteRank:0 ..."),
        none("export HCCL_EXEC_TIMEOUT=1800; export HCCL_CONNECT_TIMEOUT=1200"),
        none("[EVENT] HCCL(10972,python3):2023-09-23-05:41:43.100.000 [hccl_communicator.cc:1200][10972]Entry-HcclAllReduce: tag[AllReduce_5], count[1024], dataType[float32], taskID[507048]"),
    ], rng),
    note="""
HCCL timeouts in a training log (no path fields), with launcher prefixes "(train pid=8464) ",
"(VllmWorker TP1 pid=961) ERROR ... ", "[rank7]: ".

Quoted: vllm-project/vllm-ascend#1443 (507048 "error code is 507048", EI0002 "The wait
execution of the Notify register times out"; the tuple line before it names the device, the
EI0002 line does not, and the engine matches single lines); vllm-project/vllm-ascend#3413
(EI0002 with rankId[...], the "Possible Cause" advice naming HCCL_EXEC_TIMEOUT: no match);
InternLM/lmdeploy#3354 ("runtime result = 507048", "hccl fftsplus task timeout" with
device(chipId:5, the "Solution" advice that mentions 'error cqe': no match);
Ascend/pytorch#54 (EI9999 hccl fftsplus task timeout, device(chipId:3);
vllm-project/vllm-ascend#2800 (prefixed "runtime result = 507048"); EI0006 "Getting socket
times out" from a MindSpore Ascend Error Message block and from public benchmark notes.
Constructed (kg-config.json patterns, no real line found): "[Get][Connection]topo exchange
server get socket timeout", "Notify wait execute failed, device_id=4", "notify wait timeout"
with deviceId[6] behind a rank prefix. Look-alikes: the device log's "type:NOTIFY WAIT"
(verbatim, docs/log-formats.md §2), HCCL timeout variables, a task id that happens to be 507048.""")

SS = "ascend.runtime.stream-sync-timeout"
write_case("ascend-stream-sync-timeout", "plog",
    "/root/ascend/log/debug/plog/plog-14163_20251213121500000.log", None,
    mix(PLOG_NOISE, 200, [
        # hicann/hixl troubleshooting guide (the transfer-timeout example)
        ("[ERROR] RUNTIME(14163,python3):2025-12-13 12:15:25.025.554 [stream.cc:1402]14595 SynchronizeExecutedTask:Stream synchronize timeout, device_id=11, stream_id=103, timeout=10000, tryCount=10.",
         [(SS, "11", RBUS, "")]),
        none("[ERROR] RUNTIME(14163,python3):2025-12-13 12:15:25.025.562 [stream.cc:1465]14595 SynchronizeImpl:failed, stream_id=103, error=0x7030010"),
        none("[ERROR] RUNTIME(14163,python3):2025-12-13 12:15:25.080.727 [api_error.cc:960]14595 RtStreamSynchronizeWithTimeout:Failed, stream_id=103, timeout=10000ms."),
        ("[ERROR] RUNTIME(14163,python3):2025-12-13 12:15:25.080.730 [api_error.cc:1783]14595 stream_sync_error:StreamSyncError: code=507046, des=[stream sync timeout], InnerCode=0x7030010",
         [(SS, "11", RBUS, "")]),  # context: process 14163 named device_id=11
        ("[ERROR] RUNTIME(14163,python3):2025-12-13 12:15:25.080.727 [error_message_manage.cc:511]14595 FuncErrorReason:report error module name=EE1002",
         [(SS, "11", RBUS, "")]),  # context: process 14163 named device_id=11
        ("[ERROR] RUNTIME(14163,python3):2025-12-13 12:15:25.080.730 [error_message_manage.cc:511]14595 FuncErrorReason:RtStreamSynchronizeWithTimeout execute failed, reason=[stream sync timeout] (507046)",
         [(SS, "11", RBUS, "")]),  # context: process 14163 named device_id=11
        # a torch_npu job log quoted in a public repository (found by code search)
        none("[rank7]: [ERROR] 2025-03-08-16:21:40 (PID:524, Device:7, RankID:7) ERR00100 PTA call acl api failed"),
        none("[rank7]: [Error]: In the specified timeout waiting event, all tasks in the specified stream are not completed. "),
        ("[rank7]: EE1002: [PID: 524] 2025-03-08-16:21:40.515.589 Stream synchronize timeout. rtDeviceSynchronize execute failed, reason=[stream sync timeout]",
         [(SS, "7", RBUS, "")]),  # context: the tuple line named process 524's device
        none("[rank7]:         Possible Cause: 1. The timeout interval may be improperly set."),
        # composed: docs/log-formats.md §4's older form without "[PID: n]", with the message above
        ("EE1002: 2024-09-26-16:06:40.565.510 Stream synchronize timeout. rtDeviceSynchronize execute failed, reason=[stream sync timeout]",
         [(SS, "", RBUS, "")]),
        # constructed: the newer "[PID: n]" form with the torch_npu tuple before it on one line
        ("[ERROR] 2024-09-26-16:06:40 (PID:2001, Device:5, RankID:5) ERR00100 PTA call acl api failed. EE1002: [PID: 2001] 2024-09-26-16:06:40.565.510 Stream synchronize timeout.",
         [(SS, "5", RBUS, "")]),
        # look-alikes
        none("[INFO] RUNTIME(14163,python3):2025-12-13 12:15:20.000.001 [stream.cc:1300]14595 StreamSynchronize: stream_id=103, sync succeeded, timeout=10000"),
        none("[ERROR] RUNTIME(539029,python3):2024-03-25-11:22:02.462.276 [stream.cc:1509]539029 GetError:[INIT][DEFAULT]Stream Synchronize failed, stream_id=2, retCode=0x91, [the model stream execute failed]."),
        none("BEE1002 AREA DO CIRCULO, Bee1002, assignee1002, commit dfee1002d7"),
    ], rng),
    note="""
Stream synchronize timeouts in a host plog (no path fields).

Quoted: hicann/hixl .agents/skills/hixl-troubleshoot/references/guides.md (the six runtime
lines of a stream sync timeout: "Stream synchronize timeout, device_id=11", "des=[stream sync
timeout]", "report error module name=EE1002", "reason=[stream sync timeout] (507046)"; the
other two lines carry none of the texts); a torch_npu job log with "[rank7]: " prefixes quoted
in a public repository (the EE1002 message "Stream synchronize timeout. ... reason=[stream sync
timeout]"; the tuple line and the "[Error]:" summary do not match).
Composed: docs/log-formats.md §4's older "EE1002: 2024-09-26-16:06:40.565.510 ..." (no "[PID: n]")
with the message of the quoted line in place of the "...".
Constructed: EE1002 in the "[PID: n]" form behind the torch_npu tuple on one line (the tuple
gives the device); a successful sync at INFO, a "Stream Synchronize failed" for another cause,
and words that contain "EE1002" without being the code (the code is not a literal of the
rule; the message text is).""")

HB, DHB = "ascend.device.heartbeat-lost", "ascend.device.drv-heartbeat-lost"
write_case("ascend-heartbeat-plog", "plog",
    "/root/ascend/log/debug/plog/plog-10972_20230923054139000.log", None,
    mix(PLOG_NOISE, 120, [
        # constructed from the runtime's format string "Device[%u] lost heartbeart."
        ("[ERROR] RUNTIME(10973,python):2023-09-23-05:41:45.001.001 [device_error_proc.cc:1200]49835 TaskWait:Device[3] lost heartbeart.",
         [(HB, "3", RNPU, "")]),
        # constructed from the keyword of Huawei's CANN troubleshooting guide; the device comes
        # from the context: the same process (10973) named Device[3] above
        ("[ERROR] RUNTIME(10973,python):2023-09-23-05:41:46.001.001 [engine.cc:1500]49835 ReportHeartBreakProc:Device lost heartbeat.",
         [(HB, "3", RNPU, "")]),
        ("[ERROR] RUNTIME(10973,python):2023-09-23-05:41:47.001.001 [engine.cc:1500]49835 ReportHeartBreakProc:Device lost heartbeart",
         [(HB, "3", RNPU, "")]),
        # look-alikes
        none("[INFO]     2999/10/01 03:31:28.462040 305     hwmonitor/heartbeat.go:88    send heartbeat: node1, heartbeat interval: 5"),
        none("2025-03-01 10:00:00 ERROR ray: Executor lost heartbeat, marking worker dead"),
        ("EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register times out. ... deviceId[3], Heartbeat Lost Occurred",
         [(NT, "3", RBUS, "")]),
    ], rng),
    note="""
The runtime's view of a device heartbeat loss in a host plog (no path fields).
Constructed (no real plog line was found): "Device[3] lost heartbeart." from the CANN runtime's
format string (the device in brackets; "heartbeart" is its spelling), and "Device lost
heartbeat" / "Device lost heartbeart", the keywords of Huawei's CANN troubleshooting guide and
kg-config.json AISW_CANN_Runtime_055, all three from one process (10973, which no noise line
uses): the last two name no device and take device 3 from the first (the context).
Look-alikes: NodeD's routine "send heartbeat" INFO line (docs/log-formats.md §6), another
program's "lost heartbeat", and an EI0002 line with "Heartbeat Lost Occurred" (a collective
timeout: ascend.hccl.notify-timeout's finding, not a heartbeat one; the deviceId there is the
remote device as often as the local one).""")

write_case("ascend-heartbeat-os", "messages", "/var/log/messages", None,
    mix(KERNEL_NOISE, 80, [
        # docs/log-formats.md §8 (kg-config.json 0x40F84E00 example), as in the kernel log
        ("[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=1; old_count=1104; ...)",
         [(DHB, "1", RNPU, "40F84E00")]),
        # composed: syslog prefix + the same message for another device
        ("Mar  3 10:00:05 node1 kernel: [ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=6; old_count=1104; ...)",
         [(DHB, "6", RNPU, "40F84E00")]),
        # constructed: the knowledge base's other order "[drv_soft_fault] [ERROR]"
        ("[251681.794072] [ascend] [drv_soft_fault] [ERROR] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=2; old_count=77;",
         [(DHB, "2", RNPU, "40F84E00")]),
        # look-alikes: not an error, no device
        none("[ascend] [INFO] [drv_soft_fault] [heart_beat_judge 300] <kworker/5:1H:39365> Heartbeat lost count reset (device=1; old_count=0;"),
        none("[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost!"),
    ], rng),
    note="""
The host driver's heartbeat loss in an OS log (/var/log/messages): event 0x40F84E00, device
from "(device=N;".
Quoted: docs/log-formats.md §8 (the kg-config.json 0x40F84E00 example line).
Composed: the same message behind a syslog prefix. Constructed: the knowledge base's second
order "[drv_soft_fault] [ERROR]"; an INFO line and a line without "(device=" (no match).""")

RD = "ascend.network.rdma-cqe-error"
write_case("ascend-rdma-cqe", "plog", "/root/ascend/log/debug/plog/plog-2040034_20250915083800000.log", None,
    mix(PLOG_NOISE, 120, [
        # a public HCCL troubleshooting doc (found by code search)
        none("[ERROR] ROCE(2040034,alltoall_test):2025-09-15-08:38:12.776.612 [hns_roce_lite.c:630]hns_roce_lite_handle_error_cqe(630) : error cqe status: 0x15"),
        none("[ERROR] HCCP(2040034,alltoall_test):2025-09-15-08:38:12.776.650 [ra_hdc_lite.c:794]tid:2040458,ra_hdc_lite_period_poll_cqe : [create][ra_hdc_period_poll]failed CQE status[12], wr[0]"),
        ("[ERROR] HCCL(2040034,alltoall_test):2025-09-15-08:38:13.607.432 [heartbeat.cc:1229] [2040666][TaskExecStage][HeartbeatAbnormal][ROCE CQE ERROR]cqe error status[12], time:[2025-09-15 08:38:12.776654],localInfo{server[127.10.0.1],deviceId[127.10.0.1],deviceIp[127.11.0.1]}, remoteIP{server[127.10.0.2],deviceId[127.10.0.2],deviceIp[127.11.0.2]}",
         [(RD, "", SUB, "")]),
        # constructed from kg-config.json AISW_CANN_HCCL_029 (older wording)
        ("[ERROR] HCCL(10972,python3):2023-09-23-05:41:50.001.001 [heartbeat.cc:1100][49835][Heartbeat]cqe err status[12], device_id=2, remote ip[192.168.1.20]",
         [(RD, "2", SUB, "")]),
        ("[ERROR] HCCL(10972,python3):2023-09-23-05:41:51.001.001 [heartbeat.cc:1100][49835][Heartbeat]cqe error status[5], deviceId[4]",
         [(RD, "4", SUB, "")]),
        none("        Solution: ... 3. Check whether the completion queue element (CQE) of the error exists in the plog(grep -rn 'error cqe'). If so, check the network connection status."),
    ], rng),
    note="""
RDMA completion errors in a host plog (no path fields).
Quoted: a public HCCL troubleshooting document (found by code search): the ROCE driver's
"error cqe status: 0x15" and HCCP's "failed CQE status[12]" (not matched: every error CQE,
flushes of a normal teardown included) and HCCL's "[HeartbeatAbnormal][ROCE CQE ERROR]cqe
error status[12]" (matched; its deviceId[127.10.0.1] is an IP address and gives no device).
Constructed from kg-config.json AISW_CANN_HCCL_029: the older "[Heartbeat]cqe err
status[12]" and "[Heartbeat]cqe error status[...]" with device_id=2 / deviceId[4]; the EI0002
advice that mentions 'error cqe' (no match).""")

# Every device form of docs/log-formats.md §11, one per line, then lines with several forms, which
# show the priority order (the first form of the list that occurs wins, wherever it is).
F = "The aicore execution is abnormal"
forms = [
    ("[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:1, RankID:8) " + F, "1"),
    ("[ERROR] 2025-06-25-10:45:23 (PID: 13075, Device: 11, RankID: 8) " + F, "11"),
    (F + ", device_id=2, stream_id=3", "2"),
    (F + ", device_id: 3, retcode: 507015", "3"),
    (F + ". Device 4 may be other processes occupying this card", "4"),
    (F + " (NPU 5; 60.97 GiB total capacity)", "5"),
    ("The error from device(chipId:6, dieId:0), " + F, "6"),
    ("The device(7), core list[0-0], " + F, "7"),
    (F + ", deviceId[8], Heartbeat Lost Occurred", "8"),
    (F + ", devId: 9", "9"),
    (F + ", device[10] num[1]", "10"),
    (F + ", Device[12] lost", "12"),
    (F + " devid=13 tsid=0", "13"),
    ("[devid-14] " + F, "14"),
    (F + " (device=15; old_count=1104;", "15"),
]
prio = [
    # tuple beats device_id even when device_id comes first in the line
    ("device_id=3, " + F + ", [ERROR] (PID:13075, Device:7, RankID:8)", "7"),
    # device_id= beats Device N, NPU N and device(N) wherever they are
    ("The device(3), core list[0-0], NPU 2, Device 1, " + F + ", device_id=0", "0"),
    # Device N beats device(chipId:
    ("The error from device(chipId:7, dieId:0), " + F + ", Device 6 may be ...", "6"),
    # device(chipId: beats device(N)
    ("The device(3), " + F + ", device(chipId:5, dieId:0)", "5"),
    # an IP address in deviceId[...] is no device; the next form that occurs is taken
    (F + ", localInfo{server[127.10.0.1],deviceId[127.10.0.1]}, devid=9", "9"),
    (F + ", localInfo{server[127.10.0.1],deviceId[127.10.0.1]}", ""),
    # decimals are no device either, an id at the end of a sentence is
    (F + ", Device 1.5 GiB", ""),
    (F + " on Device 3.", "3"),
    # a 65-digit id is refused by validation: the finding stays, without device
    (F + ", device_id=" + "1" * 65, ""),
    # no id at all
    (F, ""),
]
write_case("ascend-device-forms", "training", "/var/log/training/job-10/rank-0.log", None,
    [(line, [(AIC, dev, RBUS, "")]) for line, dev in forms + prio],
    note="""
The device id forms of docs/log-formats.md §11 (training log, no path fields), all constructed
around the AI Core text "The aicore execution is abnormal": one line per form (the torch_npu
tuple with and without blanks, device_id=N, device_id: N, Device N, NPU N, device(chipId:N,
device(N), deviceId[N], devId: N, device[N], Device[N], devid=N, [devid-N], (device=N;), then
lines with several forms, where the first form in §11's order wins wherever it stands in the
line; an IP address in deviceId[...] and a decimal after "Device" are not device ids; a
65-digit id is refused (finding kept without device).""")

write_case("ascend-device-log-path", "device-log",
    "/root/ascend/log/debug/device-3/device-299066_20250225184036913.log",
    r"device-(?P<device>\d+)/",
    mix(PLOG_NOISE, 60, [
        # constructed device-side HCCL lines (the device log has the same HCCL module)
        ("[ERROR] HCCL(5375,aicpu_scheduler):2025-08-06-23:09:01.834.051 [aicpu_communicator.cc:3090] [5792][TaskException]notify wait timeout, localRank:1, remoteRank:0",
         [(NT, "3", RBUS, "")]),
        ("[ERROR] HCCL(5375,aicpu_scheduler):2025-08-06-23:09:02.834.051 [aicpu_communicator.cc:3090] [5792][TaskException]notify wait timeout, device_id=5, localRank:1",
         [(NT, "3", RBUS, "")]),
        none("[ERROR] HCCL(5375,aicpu_scheduler):2025-08-06-23:09:01.834.041 [aicpu_communicator.cc:3083] [5792][TaskException]base information is ... type:NOTIFY WAIT, localRank:1, remoteRank:0 ..."),
    ], rng),
    note="""
A device-side CANN log of device 3 (path_fields 'device-(?P<device>\\d+)/'). Constructed lines:
a notify wait timeout without an inline id takes the device from the path (3); so does one
with an inline device_id=5, because docs/log-formats.md §11 puts the device-N/ directory before
inline ids (the engine resolves `device` in that order). The verbatim device-log
"type:NOTIFY WAIT" line (docs/log-formats.md §2) does not match.""")

# ---------------------------------------------------------------------------------------------
# NVIDIA

XSEP, XRST, XNF, XNN, XAPP, XREC, XOTH = ("nvidia.xid.separate", "nvidia.xid.reset",
    "nvidia.xid.nvlink-fatal", "nvidia.xid.nvlink-nonfatal", "nvidia.xid.application",
    "nvidia.xid.recovery-action", "nvidia.xid.other")
FOB, GHB, GRPC, DPX = ("nvidia.gpu.fallen-off-bus", "nvidia.gsp.heartbeat-timeout",
    "nvidia.gsp.rpc-timeout", "nvidia.device-plugin.xid-critical")

write_case("nvidia-dmesg", "dmesg", "/var/log/dmesg", None,
    mix(KERNEL_NOISE, 100, [
        none("[    8.108512] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.58.03  Release Build  (nixbld@)  "),
        # leptonai/gpud pkg/nvidia-query/xid/kmsg_test.go
        ("[171167.620236] NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
         [(XNF, "0009:01:00", RNPU, "XID149")]),
        ("[171167.621162] NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)",
         [(XREC, "0009:01:00", NOT, "XID154")]),
        ("[171167.630899] NVRM: Xid (PCI:0008:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
         [(XNF, "0008:01:00", RNPU, "XID149")]),
        ("[171167.897562] NVRM: Xid (PCI:0019:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)",
         [(XREC, "0019:01:00", NOT, "XID154")]),
        ("[111111111.111] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         [(XSEP, "0000:05:00", SEP, "XID79")]),
        # public Xid write-ups (found by code search)
        ("[449410.332316] NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
         [(XRST, "0003:00:00", RNPU, "XID74")]),
        ("[2397166.923949] NVRM: Xid (PCI:0000:0f:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: (0x00000002eebc4100) - All reserved rows for bank are remapped",
         [(XSEP, "0000:0f:00", SEP, "XID64")]),
        ("[2397166.983093] NVRM: Xid (PCI:0000:0f:00): 94, pid=2503421, name=python3, Ch 00000008",
         [(XRST, "0000:0f:00", RNPU, "XID94")]),
        # NVIDIA/open-gpu-kernel-modules #1230 and #1125
        none("[   84.738339] NVRM: GPU6 RPC event history (CPU <- GSP):"),
        ("[37803.140477] NVRM: _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 3856513292 heartbeat 0 heartbeatWithOffsetMs 0 diff 3856513292 timeout 5200",
         [(GHB, "", RNPU, "")]),
        none("[37803.140481] NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out"),
    ], rng),
    note="""
dmesg output (prefix "[ seconds.micros] "), no path fields.
Quoted: leptonai/gpud pkg/nvidia-query/xid/kmsg_test.go (Xid 149 Fatal, Xid 154, Xid 79 with
pid='<unknown>'); public Xid write-ups found by code search (Xid 74 NVLink fatal error, Xid 64
row remapper error, Xid 94); NVIDIA/open-gpu-kernel-modules#1125 (_kgspIsHeartbeatTimedOut
without "GPU<N>": no device; the _kgspRpcRecvPoll follow-up is the same event and not
matched), #1230 (RPC history lines), #1064 (the module loading line: no match).""")

DMESG_T_119 = r"""[Sun Feb 23 16:24:18 2025] NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d
[Sun Feb 23 16:24:18 2025] NVRM: GPU Board Serial Number: 1650124014249
[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).
[Sun Feb 23 16:24:18 2025] NVRM: GPU4 GSP RPC buffer contains function 103 (GSP_RM_ALLOC) and data 0x0000000000002081 0x0000000000000004.
[Sun Feb 23 16:24:18 2025] NVRM: GPU4 RPC history (CPU -> GSP):
[Sun Feb 23 16:24:18 2025] NVRM:     entry function                   data0              data1              ts_start           ts_end             duration actively_polling
[Sun Feb 23 16:24:18 2025] NVRM:      0    103  GSP_RM_ALLOC          0x0000000000002081 0x0000000000000004 0x00062ed1a6bd61fa 0x0000000000000000          y
[Sun Feb 23 16:24:18 2025] NVRM:     -1    103  GSP_RM_ALLOC          0x0000000000002080 0x0000000000000004 0x00062ed1a6b51c6f 0x00062ed1a6b51f2a    699us
[Sun Feb 23 16:24:18 2025] NVRM:     -2    103  GSP_RM_ALLOC          0x0000000000000080 0x0000000000000038 0x00062ed1a6b51a22 0x00062ed1a6b51c28    518us
[Sun Feb 23 16:24:18 2025] NVRM:     -3    103  GSP_RM_ALLOC          0x0000000000000000 0x000000000000006c 0x00062ed1a6b517d9 0x00062ed1a6b51a20    583us
[Sun Feb 23 16:24:18 2025] NVRM:     -4    76   GSP_RM_CONTROL        0x0000000020802a02 0x0000000000000008 0x00062ed1a6b480ff 0x00062ed1a6b48273    372us
[Sun Feb 23 16:24:18 2025] NVRM:     -5    76   GSP_RM_CONTROL        0x0000000020803039 0x0000000000000020 0x00062ed1a6b47f8a 0x00062ed1a6b480fc    370us
[Sun Feb 23 16:24:18 2025] NVRM:     -6    76   GSP_RM_CONTROL        0x000000002080302a 0x0000000000000004 0x00062ed1a6b476cc 0x00062ed1a6b478d3    519us
[Sun Feb 23 16:24:18 2025] NVRM:     -7    76   GSP_RM_CONTROL        0x0000000020802a02 0x0000000000000008 0x00062ed1a6b47540 0x00062ed1a6b476b3    371us
[Sun Feb 23 16:24:18 2025] NVRM: GPU4 RPC event history (CPU <- GSP):
[Sun Feb 23 16:24:18 2025] NVRM:     entry function                   data0              data1              ts_start           ts_end             duration during_incomplete_rpc
[Sun Feb 23 16:24:18 2025] NVRM:      0    4115 NVLINK_INBAND_RECEIVE 0x0000000000000000 0x0000000000000000 0x00062e099d8f14e7 0x00062e099d8f14eb      4us
[Sun Feb 23 16:24:18 2025] NVRM:     -1    4124 GSP_LOCKDOWN_NOTICE   0x0000000000000000 0x0000000000000000 0x00062e099220bc3a 0x00062e099220bc3a
[Sun Feb 23 16:24:18 2025] NVRM:     -2    4124 GSP_LOCKDOWN_NOTICE   0x0000000000000001 0x0000000000000000 0x00062e09922080cf 0x00062e09922080cf
[Sun Feb 23 16:24:18 2025] NVRM:     -3    4124 GSP_LOCKDOWN_NOTICE   0x0000000000000000 0x0000000000000000 0x00062e0992208089 0x00062e0992208089
[Sun Feb 23 16:24:18 2025] NVRM:     -4    4124 GSP_LOCKDOWN_NOTICE   0x0000000000000001 0x0000000000000000 0x00062e0992207ffb 0x00062e0992207ffb
[Sun Feb 23 16:24:18 2025] NVRM:     -5    4108 UCODE_LIBOS_PRINT     0x0000000000000000 0x0000000000000000 0x00062e09921f64c0 0x00062e09921f64c0
[Sun Feb 23 16:24:18 2025] NVRM:     -6    4108 UCODE_LIBOS_PRINT     0x0000000000000000 0x0000000000000000 0x00062e09921f64ab 0x00062e09921f64ab
[Sun Feb 23 16:24:18 2025] NVRM:     -7    4108 UCODE_LIBOS_PRINT     0x0000000000000000 0x0000000000000000 0x00062e09921f15c0 0x00062e09921f15c0
[Sun Feb 23 16:24:18 2025] CPU: 17 PID: 2024380 Comm: nvidia-smi Tainted: P           OE     5.15.0-112-generic #122-Ubuntu
[Sun Feb 23 16:24:18 2025] Hardware name: Dell Inc. PowerEdge XE9680/0KK0RG, BIOS 2.3.5 09/10/2024
[Sun Feb 23 16:24:18 2025] Call Trace:
[Sun Feb 23 16:24:18 2025]  <TASK>
[Sun Feb 23 16:24:18 2025]  show_stack+0x52/0x5c
[Sun Feb 23 16:24:18 2025]  dump_stack_lvl+0x4a/0x63
[Sun Feb 23 16:24:18 2025]  dump_stack+0x10/0x16
[Sun Feb 23 16:24:18 2025]  os_dump_stack+0xe/0x14 [nvidia]
[Sun Feb 23 16:24:18 2025]  _nv012454rm+0x437/0x4b0 [nvidia]
[Sun Feb 23 16:24:18 2025] WARNING: kernel stack frame pointer at 000000005611dc97 in nvidia-smi:2024380 has bad value 00000000ec717e66
[Sun Feb 23 16:24:18 2025] unwind stack type:0 next_sp:0000000000000000 mask:0x2 graph_idx:0
[Sun Feb 23 16:24:18 2025]  ? entry_SYSCALL_64_after_hwframe+0x67/0xd1
[Sun Feb 23 16:24:18 2025]  </TASK>
[Sun Feb 23 16:24:24 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 10 (FREE) (0xa55a0210 0x0).
[Sun Feb 23 16:24:30 2025] clocksource: Long readout interval, skipping watchdog check: cs_nsec: 1584036171 wd_nsec: 1584036160
[Sun Feb 23 16:24:30 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 10 (FREE) (0xa55a0090 0x0).
[Sun Feb 23 16:24:36 2025] NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.
[Sun Feb 23 16:27:12 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=1263500, name=cache_mgr_main, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801813 0x4c).
[Sun Feb 23 16:30:13 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=1240590, name=gpud, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20803032 0x58c)."""


def classify_119(line):
    if "NVRM: Xid (PCI:0000:9b:00): 119," in line:
        return [(XRST, "0000:9b:00", RNPU, "XID119")]
    if "Rate limiting GSP RPC error prints" in line:
        return [(GRPC, "0000:9b:00", RNPU, "")]
    return []


write_case("nvidia-dmesg-T", "dmesg", "/var/log/dmesg-T.log", None,
    [(line, classify_119(line)) for line in DMESG_T_119.split("\n")] + [
        # constructed: the RPC timeout text outside an Xid line, which names GPU<N> only
        ("[Sun Feb 23 16:31:00 2025] NVRM: GPU4 _kgspLogRpcTimeout: Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20803032 0x58c).",
         [(GRPC, "GPU4", RNPU, "")]),
    ],
    note="""
dmesg -T output (prefix "[Sun Feb 23 16:24:18 2025] "): verbatim leptonai/gpud
components/accelerator/nvidia/error/xid/testdata/dmesg-with-xid-119.log (GSP RPC timeouts on
an H100 of a Dell XE9680), then one constructed line.
Each Xid 119 line is one finding of nvidia.xid.reset with the BDF 0000:9b:00 as the device
(docs/log-formats.md §11: the BDF before GPU<N>); the "Timeout after 6s of waiting for RPC response
from GPU4 GSP!" inside it is not a second finding. The driver's "Rate limiting GSP RPC error
prints ... The GPU likely needs to be reset." is nvidia.gsp.rpc-timeout's, with the BDF. The
RPC history, call trace and "GPU at PCI:...: GPU-<uuid>" lines do not match.
Constructed: the same timeout text printed outside an Xid line (by a GSP function, as drivers
do for other GSP messages): nvidia.gsp.rpc-timeout with device GPU4.""")

DMESG_ISO = r"""kern  :warn  : 2025-01-21T04:41:44,283302+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 8, TPC 5, SM 1): Multiple Warp Errors
kern  :warn  : 2025-01-21T04:41:44,283390+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x546fb0=0x11f000e 0x546fb4=0x24 0x546fa8=0xf81eb60 0x546fac=0x1174
kern  :warn  : 2025-01-21T04:41:44,283575+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 9, TPC 1, SM 1): Out Of Range Address
kern  :warn  : 2025-01-21T04:41:44,283671+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 9, TPC 1, SM 1): Multiple Warp Errors
kern  :warn  : 2025-01-21T04:41:44,283758+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x54cfb0=0x11f000e 0x54cfb4=0x24 0x54cfa8=0xf81eb60 0x54cfac=0x1174
kern  :warn  : 2025-01-21T04:41:44,283937+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 9, TPC 2, SM 0): Out Of Range Address
kern  :warn  : 2025-01-21T04:41:44,284042+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x54d730=0x11c000e 0x54d734=0x20 0x54d728=0xf81eb60 0x54d72c=0x1174
kern  :warn  : 2025-01-21T04:41:44,284250+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 9, TPC 5, SM 0): Out Of Range Address
kern  :warn  : 2025-01-21T04:41:44,284345+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 9, TPC 5, SM 0): Multiple Warp Errors
kern  :warn  : 2025-01-21T04:41:44,284433+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x54ef30=0x117000e 0x54ef34=0x24 0x54ef28=0xf81eb60 0x54ef2c=0x1174
kern  :warn  : 2025-01-21T04:41:44,284616+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 10, TPC 1, SM 1): Out Of Range Address
kern  :warn  : 2025-01-21T04:41:44,284705+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 10, TPC 1, SM 1): Multiple Warp Errors
kern  :warn  : 2025-01-21T04:41:44,284792+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x554fb0=0x119000e 0x554fb4=0x24 0x554fa8=0xf81eb60 0x554fac=0x1174
kern  :warn  : 2025-01-21T04:41:44,284971+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 10, TPC 4, SM 0): Out Of Range Address
kern  :warn  : 2025-01-21T04:41:44,285060+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global Exception on (GPC 10, TPC 4, SM 0): Multiple Warp Errors
kern  :warn  : 2025-01-21T04:41:44,285147+00:00 NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception: ESR 0x556730=0x117000e 0x556734=0x24 0x556728=0xf81eb60 0x55672c=0x1174
kern  :warn  : 2025-01-21T04:41:44,287197+00:00 NVRM: Xid (PCI:0000:38:00): 43, pid=2924364, name=pt_main_thread, Ch 00000008
kern  :warn  : 2025-01-21T08:41:30,287197+00:00 oom_reaper: reaped process 345646 (vector), now anon-rss:0kB, file-rss:0kB, shmem-rss:0
kern  :warn  : 2025-01-21T08:42:30,287197+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),
kern  :warn  : 2025-01-21T08:43:30,287197+00:00 Out of memory: Killed process 123, UID 48, (httpd)
kern  :warn  : 2025-01-21T08:44:30,287197+00:00 Out of memory: Kill process 456 (python) score 50 or sacrifice child
kern  :warn  : 2025-01-21T08:45:30,287197+00:00 Out of memory: Killed process 123, UID 48, (httpd).
kern  :warn  : 2025-01-21T08:46:30,287197+00:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-3fc28fa1c647ceede9f6b340d0b16c9f1f663698972d22a52e296f291638e014.scope,mems_allowed=0-1,oom_memcg=/lxc.payload.ny2g2r5hh3-lxc/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda8697f49_441d_4d4f_90d2_6d8e1fa3bbe7.slice,task_memcg=/lxc.payload.ny2g2r5hh3-lxc/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda8697f49_441d_4d4f_90d2_6d8e1fa3bbe7.slice/cri-containerd-3fc28fa1c647ceede9f6b340d0b16c9f1f663698972d22a52e296f291638e014.scope,task=node,pid=863987,uid=0
kern  :warn  : 2025-01-21T08:47:30,287197+00:00 oom-kill:constraint=OTHER_CONSTRAINT"""


def classify_iso(line):
    if "): 13," in line:
        return [(XAPP, "0000:38:00", NOT, "XID13")]
    if "): 43," in line:
        return [(XAPP, "0000:38:00", NOT, "XID43")]
    if "Out of memory: Kill" in line:
        return [(HOOM, "", NOT, "")]
    return []


write_case("nvidia-dmesg-iso", "dmesg", "/var/log/dmesg-iso.log", None,
    [(line, classify_iso(line)) for line in DMESG_ISO.split("\n")],
    note="""
dmesg --decode --time-format iso output (prefix "kern  :warn  : 2025-01-21T04:41:44,283302+00:00 "):
verbatim leptonai/gpud components/memory/testdata/dmesg.decode.iso.log.
Application Xids 13 (out-of-range address, warp errors) and 43 are recorded at NotHandleFault
with the BDF; the host OOM killer lines of the same file are ascend-runtime.yaml's
ascend.host.oom (no device); oom_reaper and oom-kill constraint lines do not match.""")

write_case("nvidia-kmsg", "kmsg", "/dev/kmsg", None,
    mix(KERNEL_NOISE, 60, [
        # composed: the /dev/kmsg prefix of docs/log-formats.md §10 before quoted messages
        ("<4>[ 1126.635824] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         [(XSEP, "0000:05:00", SEP, "XID79")]),
        ("<4>[ 1126.635901] NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus",
         [(XSEP, "0000:44:00", SEP, "XID79")]),
        none("<3>[    8.108512] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"),
        # MIG instance in the parenthesis (format of a public Xid guide)
        ("<4>[ 1200.000001] NVRM: Xid (PCI:0000:3b:00 GPU-I:00 GPU-CI:00): 63, pid=12345, name=python, Retiring page...",
         [(XRST, "0000:3b:00", RNPU, "XID63")]),
        ("<4>[ 1200.000002] NVRM: Xid (PCI:0000:3b:00 GPU-I:01 GPU-CI:00): 31, pid=12346, name=python, Ch 0000000a, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7fc1_23456000.",
         [(XAPP, "0000:3b:00", NOT, "XID31")]),
    ], rng),
    note="""
/dev/kmsg records (prefix "<priority>[ seconds.micros] ", docs/log-formats.md §10).
Composed: the kmsg prefix before quoted messages: Xid 79 with and without pid/name (gpud
kmsg_test.go, docs/log-formats.md §10), the driver's module loading line logged at <3> (error
priority, no match), and two MIG Xids whose parenthesis also names the GPU instance
("PCI:0000:3b:00 GPU-I:00 GPU-CI:00", the form of a public Xid guide; the 31 line's MMU
fault text is constructed): the device is still the BDF.""")

write_case("nvidia-journald", "messages", "/var/log/messages", None,
    mix(KERNEL_NOISE, 60, [
        # NVIDIA/open-gpu-kernel-modules#1151 (journalctl without host name)
        none("May 18 19:02:39 kernel: NVRM: GPU at PCI:0000:2b:00: GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae"),
        ("May 18 19:02:39 kernel: NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.",
         [(XSEP, "0000:2b:00", SEP, "XID79")]),
        ("May 18 19:02:39 kernel: NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.",
         [(FOB, "0000:2b:00", SEP, "XID79")]),
        # pastebin.com/C4RfJB4y (syslog with host name and dmesg time)
        ("Sep 18 20:58:08 yuri-notebook kernel: [ 1936.510073] NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
         [(FOB, "0000:01:00", SEP, "XID79")]),
        ("Sep 18 20:58:08 yuri-notebook kernel: [ 1936.510087] NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
         [(FOB, "0000:01:00", SEP, "XID79")]),
        none("Sep 18 20:58:08 yuri-notebook kernel: [ 1936.510157] delay: estimated 354, actual 1"),
        # ublue-os/bazzite#4449 (journalctl --no-hostname -k)
        none("Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspProcessRpcEvent: Attempted to process RPC event from GPU0: 0x101a (PFM_REQ_HNDLR_STATE_SYNC_CALLBACK) during bootup without API lock"),
        none("Mar 21 21:42:01 kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: 0 @ kernel_gsp.c:1446"),
        ("Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 322227881 heartbeat 0 heartbeatWithOffsetMs 318098841 diff 4129040 timeout 5200",
         [(GHB, "GPU0", RNPU, "")]),
        none("Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out"),
        # stas00/ml-engineering (BLOOM training chronicles): syslog + dmesg time
        ("Error: May 19 07:08:57 ip-26-0-146-100 kernel: [680111.646286] NVRM: Xid (PCI:0000:10:1c): 63, pid=1850, Row Remapper: New row marked for remapping, reset gpu to activate",
         [(XRST, "0000:10:1c", RNPU, "XID63")]),
        # composed: the newer three-line message (NVSentinel#155) behind a syslog prefix; only its
        # last line matches, without a device
        [none("Jun  2 11:00:01 gpu-node-a kernel: NVRM: The NVIDIA GPU 0000:b3:00.0"),
         none("Jun  2 11:00:01 gpu-node-a kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has"),
         ("Jun  2 11:00:01 gpu-node-a kernel: NVRM: fallen off the bus and is not responding to commands.",
          [(FOB, "", SEP, "XID79")])],
        # the "not supported" message starts with the same line and must stay silent
        [none("Jun  2 11:00:02 gpu-node-a kernel: NVRM: The NVIDIA GPU 0000:65:00.0 (PCI ID: 10de:2684)"),
         none("Jun  2 11:00:02 gpu-node-a kernel: NVRM: installed in this system is not supported by the"),
         none("Jun  2 11:00:02 gpu-node-a kernel: NVRM: NVIDIA 470.xx driver release.")],
    ], rng),
    note="""
journald / syslog output ("Mon DD hh:mm:ss [host] kernel: ", sometimes followed by the dmesg
time).
Quoted: NVIDIA/open-gpu-kernel-modules#1151 (Xid 79, then "NVRM: GPU 0000:2b:00.0: GPU has
fallen off the bus.": two findings for the same device 0000:2b:00, the function ".0" dropped);
pastebin.com/C4RfJB4y (older single-line "NVRM: GPU at 0000:01:00.0 has fallen off the bus.");
ublue-os/bazzite#4449 (_kgspIsHeartbeatTimedOut for GPU0; the assertion, RPC event and
_kgspRpcRecvPoll lines do not match); stas00/ml-engineering (Xid 63 row remapping pending).
Composed: the newer three-line fallen-off-the-bus message (docs/log-formats.md §10, NVSentinel#155)
behind a syslog prefix: the engine matches single lines, so only the last line matches, without
a device; the first line alone is also the start of the driver's "not supported" message
(constructed here), which must stay silent.""")

write_case("nvidia-device-plugin", "device-plugin", "/var/log/nvidia-device-plugin.log", None,
    mix(["I0523 10:20:31.%06d       1 server.go:%d] Registered device plugin for 'nvidia.com/gpu' with Kubelet"], 40, [
        # constructed from k8s-device-plugin internal/rm/health.go format strings (klog)
        ("I0523 10:22:31.123456       1 health.go:186] XidCriticalError: Xid=79 on Device=GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae; marking device as unhealthy.",
         [(DPX, "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae", SUB, "XID79")]),
        # docs/log-formats.md §10 (older wording; the uuid written out here)
        ("XidCriticalError: Xid=69 on Device=GPU-509665ad-b600-ac93-3616-d754b23d636d, the device will go unhealthy.",
         [(DPX, "GPU-509665ad-b600-ac93-3616-d754b23d636d", SUB, "XID69")]),
        # quoted in a public incident note (found by code search)
        ("XidCriticalError: Xid=94 on Device=GPU-d23d91a3; marking device as unhealthy", [(DPX, "GPU-d23d91a3", SUB, "XID94")]),
        # older plugins: an event without a UUID makes every device unhealthy
        ("2019/06/12 08:00:00 XidCriticalError: Xid=48, All devices will go unhealthy.", [(DPX, "", SUB, "XID48")]),
        # torch's NCCL watchdog is not a device heartbeat (constructed from ProcessGroupNCCL's message)
        none("[rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1370] [PG 0 (default_pg) Rank 3] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1"),
        none("[rank3]:[E909 09:55:46.996701349 ProcessGroupNCCL.cpp:621] [Rank 3] Some NCCL operations have failed or timed out."),
    ], rng),
    note="""
NVIDIA k8s device plugin log. Constructed from the plugin's format strings
(internal/rm/health.go "XidCriticalError: Xid=%d on Device=%s; marking device as unhealthy.",
older "..., the device will go unhealthy." and "XidCriticalError: Xid=%d, All devices will go
unhealthy."): the device is the GPU UUID, the code XID<n>, the level SubHealthFault (the kernel
line of the same event carries the Xid table's level). "Xid=94 on Device=GPU-d23d91a3" is
quoted from a public incident note. The torch ProcessGroupNCCL "Heartbeat monitor timed out!"
(a communication watchdog, docs/log-formats.md §10) and its NCCL timeout line must not match
(constructed from torch's messages; milabench#269 quotes the second one).""")

# Every level class of the Xid table, with real lines where they were found.
write_case("nvidia-xid-classes", "dmesg", "/var/log/dmesg-classes.log", None,
    mix(KERNEL_NOISE, 60, [
        ("NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fdf0de80 partition 5, subpartition 1",
         [(XRST, "0000:07:00", RNPU, "XID48")]),
        ("NVRM: Xid (PCI:0000:01:00): 94, pid=7062, Contained: CE User Channel (0x9). RST: No, D-RST: No",
         [(XRST, "0000:01:00", RNPU, "XID94")]),
        ("NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2,0x1). RST: Yes, D-RST: No",
         [(XRST, "0000:01:00", RNPU, "XID95")]),
        ("[ 1843.308145] NVRM: Xid (PCI:0000:37:00): 95, pid=5171, Uncontained: FBHUB. RST: Yes, D-RST: No",
         [(XRST, "0000:37:00", RNPU, "XID95")]),
        # NVIDIA's Xid documentation example: older format, no "PCI:"
        ("[ 1843.308146] NVRM: Xid (0000:03:00): 14, Channel 00000001", [(XOTH, "0000:03:00", SUB, "XID14")]),
        # docs/log-formats.md §10
        ("NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 ...)",
         [(XNN, "0018:01:00", NOT, "XID145")]),
        # constructed from the catalogue's mnemonics (no real line found)
        ("[ 1843.308147] NVRM: Xid (PCI:0000:c6:00): 120, pid=1101, name=python3, GSP task timeout @ pc:0x1f2f3, task: 1",
         [(XRST, "0000:c6:00", RNPU, "XID120")]),
        ("[ 1843.308148] NVRM: Xid (PCI:0000:c6:00): 62, pid=1101, name=python3, 0000(0000) 00000000 00000000",
         [(XRST, "0000:c6:00", RNPU, "XID62")]),
        ("[ 1843.308149] NVRM: Xid (PCI:0000:c6:00): 140, pid=1101, name=python3, An unrecovered ECC error has been detected",
         [(XRST, "0000:c6:00", RNPU, "XID140")]),
        ("[ 1843.308150] NVRM: Xid (PCI:0000:c6:00): 45, pid=1101, name=python3, Ch 00000010",
         [(XAPP, "0000:c6:00", NOT, "XID45")]),
        ("[ 1843.308151] NVRM: Xid (PCI:0000:c6:00): 68, pid=1101, name=ffmpeg, NVDEC0 Exception: Error status 0x1",
         [(XAPP, "0000:c6:00", NOT, "XID68")]),
        ("[ 1843.308152] NVRM: Xid (PCI:0000:c6:00): 109, pid=1101, name=python3, Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x3c046",
         [(XAPP, "0000:c6:00", NOT, "XID109")]),
        ("[ 1843.308153] NVRM: Xid (PCI:0000:c6:00): 92, pid='<unknown>', name=<unknown>, High single-bit ECC error rate",
         [(XOTH, "0000:c6:00", SUB, "XID92")]),
        ("[ 1843.308154] NVRM: Xid (PCI:10000:c6:00): 8, pid=1101, name=python3, Channel 00000010",
         [(XOTH, "10000:c6:00", SUB, "XID8")]),
        ("[ 1843.308155] NVRM: Xid (PCI:0000:c6:00): 1790, pid=1101, name=python3, future Xid",
         [(XOTH, "0000:c6:00", SUB, "XID1790")]),
        # look-alikes: not an Xid event, and the Xid number in other text
        none("[ 1843.308156] NVRM: GPU at PCI:0000:c6:00: GPU-455d8f70-2051-4b5b-8c5e-64c6c4cbf1a9"),
        none("[ 1843.308157] NVRM: Xid error: xyz, invalid data"),
        none("grep Xid /var/log/syslog: nothing found for Xid 79"),
    ], rng),
    note="""
One line per level class of the Xid table, in dmesg form.
Quoted: an NVIDIA/gpu-operator issue via a public Xid sample table (Xid 48 DBE); the error
containment comments of NVIDIA/open-gpu-kernel-modules (Xid 94 contained / 95 uncontained
"RST: Yes"); a public hardware ticket (Xid 95 FBHUB, a dmesg time added); NVIDIA's Xid
documentation (older format "NVRM: Xid (0000:03:00): 14, Channel 00000001", no "PCI:", a dmesg
time added); docs/log-formats.md §10 (Xid 145 Nonfatal).
Constructed from the catalogue's descriptions (no real line found): Xid 120, 62, 140 (reset),
45, 68, 109 (application), 92 and 8 (other, warning only; 8 with a five-digit PCI domain),
an unknown future Xid 1790 (other); and look-alikes: the "GPU at PCI:...: GPU-<uuid>" line that
precedes the first Xid, gpud's non-numeric "NVRM: Xid error: xyz", an Xid number in prose.
tests/unit/rules_packs_nvidia_test.cpp checks every number 0-999 against the table.""")

# The kernel log as the other collectors write it: journalctl -k in its short, short-iso and
# short-precise forms, rsyslog's /var/log/kern.log (traditional and RFC 3339) and
# /var/log/messages. The shipped Xid and heartbeat rules anchor nothing at the line start, so
# each prefix must leave the match (and the device) unchanged.
write_case("kernel-log-forms", "kernel-log", "/var/log/kern.log", None,
    mix(KERNEL_NOISE, 50, [
        # composed: each prefix before a quoted message (docs/log-formats.md §10 Xid 79; §8 the
        # 0x40F84E00 heartbeat example)
        ("Jan 21 04:41:44 gpu-node-a kernel: NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         [(XSEP, "0000:05:00", SEP, "XID79")]),
        ("2025-01-21T04:41:44+0000 gpu-node-a kernel: NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         [(XSEP, "0000:05:00", SEP, "XID79")]),
        ("2025-01-21T04:41:44+00:00 gpu-node-a kernel: NVRM: Xid (PCI:0000:44:00): 48, pid=1850, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
         [(XRST, "0000:44:00", RNPU, "XID48")]),
        ("Jan 21 04:41:44.283302 gpu-node-a kernel: NVRM: Xid (PCI:0000:38:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 9, TPC 1, SM 1): Out Of Range Address",
         [(XAPP, "0000:38:00", NOT, "XID13")]),
        ("2025-01-21T04:41:44.283302+00:00 gpu-node-a kernel: [ 1126.635824] NVRM: Xid (PCI:0000:3b:00): 63, pid=12345, name=python, Row Remapper: New row marked for remapping, reset gpu to activate",
         [(XRST, "0000:3b:00", RNPU, "XID63")]),
        ("Jan 21 04:41:45 npu-node-7 kernel: [ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=1; old_count=1104; ...)",
         [(DHB, "1", RNPU, "40F84E00")]),
        ("2025-01-21T04:41:45+0800 npu-node-7 kernel: [ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=3; old_count=1104; ...)",
         [(DHB, "3", RNPU, "40F84E00")]),
        ("2025-01-21T04:41:45.123456+08:00 npu-node-7 kernel: [251681.794072] [ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=5; old_count=77;",
         [(DHB, "5", RNPU, "40F84E00")]),
        # journald's "-- Boot <id> --" separator and a kernel line of another driver: no match
        none("-- Boot 5f2f8b1f2a5d4c2a9d1f0f6c1f1a2b3c --"),
        none("Jan 21 04:41:46 npu-node-7 kernel: [ascend] [INFO] [drv_soft_fault] [heart_beat_judge 300] <kworker/5:1H:39365> Heartbeat lost count reset (device=1; old_count=0;"),
    ], rng),
    note="""
The kernel log as journald and syslog write it, for the file source: journalctl -k (short:
"Jan 21 04:41:44 host kernel: "; short-iso: "2025-01-21T04:41:44+0000 host kernel: ", newer
systemd "+00:00"; short-precise: "Jan 21 04:41:44.283302 host kernel: "), rsyslog's
/var/log/kern.log and /var/log/messages (traditional, or RFC 3339 with microseconds, sometimes
followed by the dmesg time).
Composed: those prefixes (systemd journalctl(1) output modes, rsyslog's
RSYSLOG_TraditionalFileFormat and RSYSLOG_FileFormat) before quoted messages: Xid 79
(docs/log-formats.md §10), Xid 13 and 63 (gpud testdata, ml-engineering), the host driver's
heartbeat loss (docs/log-formats.md §8). Constructed: the Xid 48 DBE detail text; journald's boot
separator and the heartbeat counter reset INFO line (no match).""")

write_case("kmsg-records", "kernel", "/dev/kmsg", None,
    mix(["<6>[%5d.%06d] nvidia 0000:05:00.0: Enabling HDA controller",
         "<4>[%5d.%06d] clocksource: Long readout interval, skipping watchdog check",
         "<12>[%5d.%06d] systemd[1]: Started Session %d of User root."], 40, [
        # composed: what the kmsg source hands the rules for a record "prio,seq,usec,flags;msg":
        # "<prio>[%5lu.%06lu] msg" (collectors/kmsg/kmsg_source.hpp), with quoted messages
        ("<4>[ 1126.635824] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
         [(XSEP, "0000:05:00", SEP, "XID79")]),
        ("<4>[    8.000001] NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
         [(XNN, "0018:01:00", NOT, "XID145")]),
        ("<3>[251681.794072] [ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> Heartbeat lost! (device=2; old_count=77;",
         [(DHB, "2", RNPU, "40F84E00")]),
        ("<4>[ 2000.000000] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 322227881 heartbeat 0 heartbeatWithOffsetMs 318098841 diff 4129040 timeout 5200",
         [(GHB, "GPU6", RNPU, "")]),
        # the driver's module loading line at error priority: no match
        none("<3>[    8.108512] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"),
    ], rng),
    note="""
The line form the kmsg source hands to the rules: "<prio>[ seconds.micros] message", the
/dev/kmsg or pstore prefix of docs/log-formats.md §10 (seconds right-aligned in 5 columns; <12> is
a user-space record written to /dev/kmsg).
Composed: that prefix before quoted messages: Xid 79 (gpud kmsg_test.go), Xid 145 Nonfatal
(docs/log-formats.md §10), the host driver's heartbeat loss (docs/log-formats.md §8), the GSP heartbeat
timeout (ublue-os/bazzite#4449, for GPU6); the module loading line at <3> does not match.""")



# ---- etc/faultd/rules.d/ascend-npu-health.yaml
HF, HR = "ascend.npu-smi.health-fault", "ascend.npu-smi.health-recovered"
CF, CR = "ascend.deviceinfo.fault", "ascend.deviceinfo.recovered"
EF, ER, EN = ("ascend.device-plugin.event-fault", "ascend.device-plugin.event-recovery",
              "ascend.device-plugin.event-notice")
ND = "ascend.noded.npu-fault-event"


def rec(rule, dev, code):
    """A recovery finding (no catalogue in golden runs: codes resolve to NotHandleFault)."""
    return {"rule": rule, "device": dev, "level": NOT, "code": code, "recovery": True}


def write_case_rec(name, source, path, parts, note):
    """write_case for cases with recovery findings: expected items may be dicts."""
    plain = [(line, [e for e in exp if not isinstance(e, dict)]) for line, exp in parts]
    write_case(name, source, path, None, plain, note)
    expected = []
    for i, (line, exp) in enumerate(parts, start=1):
        for e in exp:
            if isinstance(e, dict):
                expected.append(dict(e, line=i))
            else:
                rule, dev, level, code = e
                expected.append({"rule": rule, "device": dev, "level": level, "code": code,
                                 "line": i})
    with open(os.path.join(ROOT, name, "expected.jsonl"), "w") as f:
        for e in expected:
            f.write(json.dumps(e) + "\n")


write_case_rec(
    "ascend-npu-smi-records", "npu-health", "npu-smi info -t health -i {device} -c 0",
    [
        ('npu-smi health: device=3 chip=0 status=Warning code=80818C00 info="node type=SoC, '
         'sensor type=Check Sensor, event state=check fail"', [(HF, "3", SUB, "80818C00")]),
        ("npu-smi health: device=3 chip=0 status=OK recovered", [rec(HR, "3", "")]),
        ('npu-smi health: device=5 status=Alarm code=A4025021 info="ascend_monitor adda heart '
         'beat lost error; node type=adda, sensor type=Heartbeat Sensor, event state=Heartbeat '
         'Lost."', [(HF, "5", SUB, "A4025021")]),
        ("npu-smi health: device=5 status=Alarm code=8C084E00", [(HF, "5", SUB, "8C084E00")]),
        ('npu-smi health: device=6 status="Not supported"', [(HF, "6", SUB, "")]),
        ("npu-smi health: device=6 status=OKish", [(HF, "6", SUB, "")]),
        ("npu-smi info: device=1 chip=1 status=Alarm", [(HF, "1", SUB, "")]),
        ("npu-smi info: device=1 chip=1 status=OK recovered", [rec(HR, "1", "")]),
        ('deviceinfo: device=2 status=Fault code=8C084E00 fault_level=RestartBusiness',
         [(CF, "2", RBUS, "8C084E00")]),
        ("deviceinfo: device=2 status=OK recovered", [rec(CR, "2", "")]),
        # look-alikes: a healthy status that is not a recovery line, prose about the records,
        # the nvidia-smi map (no rule yet)
        none("npu-smi health: device=3 chip=0 status=OK"),
        none("see docs: lines like npu-smi health: device=N status=... are written on change"),
        none("nvidia-smi gpu: index=0 bus_id=00000000:3B:00.0"),
    ],
    note="""
The record lines of the command source's parsers (format: collectors/command/records.hpp),
as CommandSource writes them for a device flipping to Warning/80818C00 and back (the ASD case
of docs/log-formats.md §7), npu-smi's Alarm fixture of docs/log-formats.md §5 (one line per code), a
status npu-smi may print that is not in the documented set, the table's Health column, and the
DeviceInfoCfg ConfigMap. Constructed: the records are faultd's own format. The golden run loads
no catalogue, so a health fault is SubHealthFault (the rule's default_level; with faultCode.json,
80818C00 is SeparateNPU), and the ConfigMap's own fault_level wins. Look-alikes: a healthy status without "recovered", prose, the nvidia-smi map.""")

write_case_rec(
    "ascend-device-plugin-events", "k8s-events", "/var/log/k8s-events.log",
    [
        ("Warning   Occur   pod/ascend-device-plugin-daemonset-910-dlpmv   device fault, "
         "nodeName:k8smaster, assertion:Occur, cardID:2, deviceID:0, faultCodes:8C084E00, "
         "faultLevelName:RestartBusiness, alarmRaisedTime:2023-11-21 05:36:53",
         [(EF, "2", RBUS, "8C084E00")]),
        ("Normal   Recovery   pod/ascend-device-plugin-daemonset-910-dlpmv   device fault, "
         "nodeName:k8smaster, assertion:Recovery, cardID:2, deviceID:0, faultCodes:8C084E00, "
         "faultLevelName:RestartBusiness, alarmRaisedTime:2023-11-21 05:39:02",
         [rec(ER, "2", "8C084E00")]),
        ("Warning   Notice   pod/ascend-device-plugin-daemonset-910-dlpmv   device fault, "
         "nodeName:k8smaster, assertion:Notice, cardID:5, deviceID:0, faultCodes:0x80E18402, "
         "faultLevelName:NotHandleFault, alarmRaisedTime:2023-11-21 06:01:10",
         [(EN, "5", NOT, "80E18402")]),
        ("Warning   Occur   pod/ascend-device-plugin-daemonset-910-dlpmv   device fault, "
         "nodeName:k8smaster, assertion:Occur, cardID:7, deviceID:1, faultCodes:80818C00, "
         "faultLevelName:SeparateNPU, alarmRaisedTime:2023-11-21 06:02:44",
         [(EF, "7", "SeparateNPU", "80818C00")]),
        # look-alikes: the plugin's own log of a switch fault, kubelet's unhealthy-device
        # message, an event of another component
        none('[INFO]     2023/11/21 05:36:53.123456 18 devmanager/dcmi.go:512    switch subscribe '
             'got fault:deviceswitch.SwitchFaultEvent{EventType:0x4, FaultID:0xf1ff09, '
             'AssembledFaultCode:"[0x00f1ff09,155912,npu,na]", Assertion:0x0}'),
        none("Allocate failed due to no healthy devices present; cannot allocate unhealthy "
             "devices huawei.com/Ascend910B4-1"),
        none("Warning   BackOff   pod/train-0   Back-off restarting failed container, device "
             "fault, nodeName:k8smaster"),
    ],
    note="""
The Ascend Device Plugin's Kubernetes fault events as `kubectl get events -n kube-system`
prints them. Quoted: the Occur event of docs/log-formats.md §6 (MindCluster common_operations.md).
Constructed from it: the Recovery and Notice assertions (values from dcmi_interface_api.h and
the plugin's constants.go, docs/log-formats.md §6), a 0x-prefixed code, another card. The device is
cardID (the card npu-smi -i takes). The event's own faultLevelName is its level (the Notice's
NotHandleFault too). Look-alikes: the plugin's switch-fault log line (quoted, docs/log-formats.md §6, a log
prefix added), kubelet's unhealthy-device message (quoted, §6), another event with the phrase.""")

write_case(
    "ascend-noded-events", "noded", "/var/log/mindx-dl/noded/noded.log", None,
    [
        ("[INFO]     2999/10/01 03:31:28.462040 305     ipmimonitor/ipmi_monitor.go:206    get "
         "fault event, [device type: NPU]-[device id: 15]-[error code: 56000005]",
         [(ND, "15", SUB, "56000005")]),
        ("[INFO]     2999/10/01 03:31:33.462101 305     ipmimonitor/ipmi_monitor.go:206    get "
         "fault event, [device type: NPU]-[device id: 3]-[error code: 0x80818C00]",
         [(ND, "3", SUB, "80818C00")]),
        none("[INFO]     2999/10/01 03:31:30.000112 311     heartbeat/heartbeat.go:88    send "
             "heartbeat: node1, heartbeat interval: 5"),
        none("[INFO]     2999/10/01 03:31:35.462040 305     ipmimonitor/ipmi_monitor.go:206    "
             "get fault event, [device type: CPU]-[device id: 0]-[error code: 2C000003]"),
    ],
    note="""
NodeD's log. Quoted: the NPU fault event of docs/log-formats.md §6 (MindCluster fixture).
Constructed from it: a second event with a 0x-prefixed code, the routine heartbeat INFO line
(documented in §6 as not a fault; wording constructed) and an event of another device type
(CPU), which must not match. The golden run loads no catalogue, so the level is the rule's
default_level: SubHealthFault (an IPMI fault event marks the device warning).""")
