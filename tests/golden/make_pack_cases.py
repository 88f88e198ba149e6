#!/usr/bin/env python3
"""Writes the golden cases tests/golden/ascend-*, tests/golden/nvidia-* and tests/golden/probe-*
of etc/faultd/rules.d/ascend-runtime.yaml, etc/faultd/rules.d/nvidia-xid.yaml and the other
packs they name (ascend-npu-health.yaml, probe-health.yaml, ...).

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


def write_case(name, source, path, path_fields, parts, note, source_type=None):
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
    lines = [source] + ([path] if path or source_type else []) + ([source_type] if source_type else [])
    open(os.path.join(d, "source"), "w").write("".join(l + "\n" for l in lines))
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
# docs/log-formats.md §2 and §4 plus the same shapes with varying numbers, and two lines of the
# project's corpus (tests/corpus: a DRV memory statistics EVENT line of PaddlePaddle/
# PaddleCustomDevice#690 and torch_npu's CPU fallback warning of opendatalab/MinerU#1695). The
# RUNTIME "Task exception!" line and MindSpore's "retcode: 507011" line, noise here before, are
# fault reports (ascend.runtime.task-exception, ascend.runtime.error-code).
PLOG_NOISE = [
    "[INFO] RUNTIME(10972,python):2023-09-23-05:41:41.001.%03d [stream.cc:%d]49835 StreamSynchronize: stream_id=%d, sync succeeded",
    "[EVENT] DRV(3536113,python):2023-07-14-20:36:01.130.059 [ascend][curpid: 3536113, 3536113][drv][devmm][_devmm_mem_stats_show 152]DEV_MEM dev2 mem stats(Bytes): module_name=RUNTIME, module_id=7 current_alloced_size=27332608, alloced_peak_size=65650688.",
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
    "[W compiler_depend.ts:51] Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)",
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
RTC, OPC, TEX, AICPU = ("ascend.runtime.error-code", "ascend.operator.error-code",
                        "ascend.runtime.task-exception", "ascend.aicpu.error")
COMM, RTE, DRVE, CPUE, OPE = ("ascend.cann.comm-error", "ascend.cann.runtime-error",
                              "ascend.cann.driver-error", "ascend.cann.aicpu-error",
                              "ascend.cann.operator-error")
write_case("ascend-aicore-error", "training", "/var/log/training/job-7/rank-0.log", None,
    mix(TRAIN_NOISE, 150, [
        # hw-native-sys/PTOAS#482 (an aclrtSynchronizeStream failure on an A5 board)
        ("[ERROR] aclrtSynchronizeStream(stream) failed: 507015 (/tmp/ptoas-board-monitor-a5/runs/20260415_111512_manual_pr482/npu_validation/Qwen3Tilelet/qwen3_decode_layer_incore_17/main.cpp:108)",
         [(RTC, "", RBUS, "")]),
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
        ("EZ9999: 2024-05-17-18:46:14.721.067  Op Equal does not has any binary.", [(OPE, "", NOT, "")]),
        none("        Kernel Run failed. opType: 88, Equal"),
        none("[ERROR] 2024-05-17-18:46:14 (PID:40093, Device:0, RankID:-1) ERR01005 OPS internal error"),
        # vLLM-Ascend engine log with its launcher prefix (quoted in a public repository found by
        # code search): "exception of fftsplus aicore error", device(chipId:0
        ("(EngineCore_0 pid=1440043) ERROR 09-02 03:32:24 [core.py:714] EZ9999: [PID: 1440043] 2025-09-02-03:32:24.130.271 The error from device(chipId:0, dieId:0), serial number is 3, there is an exception of fftsplus aicore error, core id is 2, error code = 0x800000, dump info: pc start: 0x124000cd0280, current: 0x124000cd10d8, vec error info: 0, mte error info: 0x41030000ed, ifu error info: 0x719fb20d89900, ccu error info: 0x4694fd483906733d, cube error info: 0, biu error info: 0, aic error mask: 0x6500020bd00028c, para base: 0x12c100340080.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:303]",
         [(AIC, "0", RBUS, "")]),
        # torch_npu (vLLM rank prefix "[rank0]:"): the tuple line carries the device, the
        # "[Error]:" line the fault; the engine reads single lines, so the latter has none.
        ("[rank0]:[E1028 10:45:49.568958992 compiler_depend.ts:429] operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:34 NPU function error: call aclnnRmsNorm failed, error code is 507015",
         [(RTC, "", RBUS, "")]),
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
        ("RuntimeError: ACL stream synchronize failed, error code:507014", [(RTC, "", RBUS, "")]),
        ("[Error]: The aicore execution times out.", [(AIC, "", RBUS, "")]),
        ("EZ9999: Kernel task happen error, retCode=0x25, [aicore timeout]", [(AIC, "", RBUS, "")]),
        ("[ERROR] 2026-07-07-07:20:43 (PID:163686, Device:1, RankID:-1) ERR00100 PTA call acl api failed.", []),
        # the CANN block names only the process; the tuple line above named its device
        ("EZ9999[PID: 163686] 2026-07-07-07:20:43.817.613 (EZ9999):  Kernel task happen error, retCode=0x25, [aicore timeout].[FUNC:PreCheckTaskErr][FILE:davinci_kernel_task.cc][LINE:1493]",
         [(OPE, "1", NOT, ""), (AIC, "1", RBUS, "")]),  # the operator's report and the AI Core timeout
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
Equal does not has any binary", a software error: recorded by ascend.cann.operator-error at
NotHandleFault); a vLLM-Ascend engine log quoted in
a public repository (fftsplus aicore error, fftsplus aivector error, "[Error]: The aicore
execution is abnormal.", "reason=[aicore exception]"); an Ascend operator troubleshooting
document (the RUNTIME "GetError ... [vector core exception]." and "module_name=EZ9999" plog
lines); CANN and torch_npu logs quoted in other public repositories found by code search,
whose index does not name them ("Kernel task happen error ... [vector core exception]",
"Aicore kernel execute failed, device_id=2", "[Error]: The vector core execution is
abnormal.", "[aicore timeout]", "reason=aicore timeout", "AICORE Kernel task happen error"). The torch_npu tuple line "(PID:n, Device:N, RankID:n)
ERR00100 PTA call acl api failed" alone is not a fault. The return codes 507014/507015 in
"failed: 507015", "error code is 507015" and "error code:507014" are ascend.runtime.error-code's
(RestartBusiness, no device on those lines); the EZ9999 "Kernel task happen error ... [aicore
timeout]" report in the newest form gives the operator family's record and the AI Core
timeout; a report of "The error from device(...)" is left to the AI Core rule.
Composed: the last line (rank prefix + tuple + the aicore text on one line) shows the tuple
winning as the device.""")

write_case("ascend-runtime-dumps", "training", "/var/log/training/job-7/rank-0.log", None,
    [
        none("DEVICE[0] PID[358]: "),
        none("EXCEPTION STREAM:"),
        none("  Exception info:TGID=196191, model id=65535, stream id=3, stream phase=3"),
        ("  Message info[0]:RTS_HWTS: aicore exception, slot_id=31, stream_id=3",
         [(AIC, "0", RBUS, "")]),
        none("    Other info[0]:time=2024-05-10-10:44:52.267.860, function=int_process_hwts_task_exception, line=296, error code=0x26"),
        none("[INFO]  acl init success"),
        ("[ERROR]  acl set device 0 failed, errorCode = 507033", [(RTC, "0", RBUS, "")]),
        none("[ERROR]  sample init resource failed"),
    ],
    note="""
Quoted from public issue threads (tests/corpus/expected.tsv gives each): torch_npu's dump of a
device's exception stream (hiyouga/LlamaFactory#3670): "RTS_HWTS: aicore exception" is the AI
Core exception, its device the "DEVICE[0]" header three lines above (context); and an ACL
sample's "acl set device 0 failed, errorCode = 507033" (Ascend/samples#16), a 5070xx runtime
code in the samples' spelling, naming the device it could not set. The lines around them give
nothing of their own.""")

write_case("ascend-device-os-lockup", "device-os",
    "/var/log/npu/hisi_logs/device-1/20241204162140-590391000/log/kernel.log",
    r"device-(?P<device>\d+)/",
    [
        ("[1310493.343613] NMI watchdog: Watchdog detected core LOCKUP on cpu1",
         [("ascend.device.os-lockup", "1", SUB, "")]),
    ],
    note="""
The device OS kernel log of a black-box dump, verbatim from MindCluster FaultDiag's fixtures
(tests/corpus/expected.tsv gives the commit and line): a core of the device's OS locked up.
The device is the dump's device-N/ directory.""")

write_case("ascend-ts-exception-print", "device-os",
    "/var/log/npu/slog/dev-os-0/device-0/device-0_20201224011054112.log", None,
    [
        none("[ERROR] TSCH(-1,null):2020-12-23-17:10:54.083.518 17 (cpuid:0) ../../../../../../../tsch/firmware/feature/src/bs/ai_core_dispatcher.c:1193 bs_done_exception_proc: slot_id=0, TSC_TERM_CODE=0x1"),
        ("<exception_print>TIME:2020-12-23-17:10:54.083.569, device_id=0, stream_id=517, task_id=3, exception_code=0xb4060006, magic_type=0xaa776",
         [("ascend.device.system-exception", "0", RBUS, "B4060006")]),
        none("<exception_print>SLOT_INFO_START: slot_id=0"),
    ],
    note="""
The TS firmware's own log of an AI Core task exception, verbatim from the fixtures of the
msaicerr tool (tests/corpus/expected.tsv gives the commit and lines): the exception_print
record carries the exception code (B4060006) and the device; the golden run loads no
catalogue, so its level is the rule's default, RestartBusiness. The lines around it give
nothing of their own.""")

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
         [(HAL, "7", RBUS, "")]),
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
writes "device_id 7" without "=", a device form like "device_id=7", so device 7); a public dmesg
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
         [(COMM, "3", RBUS, ""), (NT, "3", RBUS, "")]),  # the EI report and the notify timeout in it
        # vllm-project/vllm-ascend#2800 (vLLM worker prefix)
        none("(VllmWorker TP1 pid=961) ERROR 09-07 01:11:09 [multiproc_executor.py:596] [ERROR] 2025-09-07-01:11:09 (PID:961, Device:1, RankID:-1) ERR00100 PTA call acl api failed"),
        ("(VllmWorker TP1 pid=961) ERROR 09-07 01:11:09 [multiproc_executor.py:596] EH9999: [PID: 961] 2025-09-07-01:11:09.333.567 synchronize stream failed, runtime result = 507048[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
         [(COMM, "1", RBUS, ""), (TT, "1", RBUS, "")]),  # context: the tuple line above named the process's device
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
Ascend/pytorch#54 (EI9999 hccl fftsplus task timeout, device(chipId:3): the EI report is
ascend.cann.comm-error's too, as is the EH9999 report of vllm-project/vllm-ascend#2800);
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
order "[drv_soft_fault] [ERROR]"; an INFO line and a line without "(device=" (no match).""", source_type="kernel_log")

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
    (F + ", device_id: 3, stream_id: 14", "3"),  # MindSpore's "device_id: 0, retcode: ..." form
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
matched), #1230 (RPC history lines), #1064 (the module loading line: no match).""", source_type="kernel_log")

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
do for other GSP messages): nvidia.gsp.rpc-timeout with device GPU4.""", source_type="kernel_log")

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
ascend.host.oom (no device); oom_reaper and oom-kill constraint lines do not match.""", source_type="kernel_log")

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
fault text is constructed): the device is still the BDF.""", source_type="kmsg")

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
        ("Mar 21 21:42:01 kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: 0 @ kernel_gsp.c:1446",
         [("nvidia.driver.assert", "GPU0", SUB, "")]),
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
ublue-os/bazzite#4449 (_kgspIsHeartbeatTimedOut for GPU0; the driver's assertion is a warning
on GPU0, nvidia.driver.assert; the RPC event and _kgspRpcRecvPoll lines do not match); stas00/ml-engineering (Xid 63 row remapping pending).
Composed: the newer three-line fallen-off-the-bus message (docs/log-formats.md §10, NVSentinel#155)
behind a syslog prefix: the engine matches single lines, so only the last line matches, without
a device; the first line alone is also the start of the driver's "not supported" message
(constructed here), which must stay silent.""", source_type="kernel_log")

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
        # torch's NCCL heartbeat monitor is no device heartbeat: it finds the job's watchdog stuck
        # (constructed from ProcessGroupNCCL's message)
        ("[rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1370] [PG 0 (default_pg) Rank 3] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
         [("nvidia.nccl.watchdog-timeout", "", RBUS, "")]),
        ("[rank3]:[E909 09:55:46.996701349 ProcessGroupNCCL.cpp:621] [Rank 3] Some NCCL operations have failed or timed out.",
         [("nvidia.nccl.watchdog-timeout", "", RBUS, "")]),
    ], rng),
    note="""
NVIDIA k8s device plugin log. Constructed from the plugin's format strings
(internal/rm/health.go "XidCriticalError: Xid=%d on Device=%s; marking device as unhealthy.",
older "..., the device will go unhealthy." and "XidCriticalError: Xid=%d, All devices will go
unhealthy."): the device is the GPU UUID, the code XID<n>, the level SubHealthFault (the kernel
line of the same event carries the Xid table's level). "Xid=94 on Device=GPU-d23d91a3" is
quoted from a public incident note. The torch ProcessGroupNCCL "Heartbeat monitor timed out!"
(a communication watchdog, docs/log-formats.md §10) is not a device heartbeat: it finds the
job's NCCL watchdog stuck in a collective, and like its NCCL timeout line "Some NCCL operations
have failed or timed out." it is the job's collective failure (nvidia.nccl.watchdog-timeout,
RestartBusiness, no device: "[Rank 3]" is a rank). Both constructed from torch's messages; milabench#269 quotes the second one.""")

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
         [(XRST, "0000:c6:00", RNPU, "XID109")]),
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
Constructed from the catalogue's descriptions (no real line found): Xid 120, 62, 140, 109 (reset),
45, 68 (application), 92 and 8 (other, warning only; 8 with a five-digit PCI domain),
an unknown future Xid 1790 (other); and look-alikes: the "GPU at PCI:...: GPU-<uuid>" line that
precedes the first Xid, gpud's non-numeric "NVRM: Xid error: xyz", an Xid number in prose.
tests/unit/rules_packs_nvidia_test.cpp checks every number 0-999 against the table.""", source_type="kernel_log")

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
separator and the heartbeat counter reset INFO line (no match).""", source_type="kernel_log")

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
timeout (ublue-os/bazzite#4449, for GPU6); the module loading line at <3> does not match.""", source_type="kmsg")



# ---- etc/faultd/rules.d/ascend-npu-health.yaml
HF, HR = "ascend.npu-smi.health-fault", "ascend.npu-smi.health-recovered"
CF, CR = "ascend.deviceinfo.fault", "ascend.deviceinfo.recovered"
EF, ER, EN = ("ascend.device-plugin.event-fault", "ascend.device-plugin.event-recovery",
              "ascend.device-plugin.event-notice")
SWF, SWR = "ascend.device-plugin.switch-fault", "ascend.device-plugin.switch-recovery"
ND, NN = "ascend.noded.npu-fault-event", "ascend.noded.node-fault-event"


def rec(rule, dev, code):
    """A recovery finding (no catalogue in golden runs: codes resolve to NotHandleFault)."""
    return {"rule": rule, "device": dev, "level": NOT, "code": code, "recovery": True}


def write_case_rec(name, source, path, parts, note, source_type=None):
    """write_case for cases with recovery findings: expected items may be dicts."""
    plain = [(line, [e for e in exp if not isinstance(e, dict)]) for line, exp in parts]
    write_case(name, source, path, None, plain, note, source_type)
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
80818C00 is SeparateNPU), and the ConfigMap's own fault_level wins. Look-alikes: a healthy status without "recovered", prose, the nvidia-smi map.""",
    source_type="command")

write_case(
    "ascend-npu-smi-records-forged", "training", "/var/log/training/job/worker.log", None,
    [
        none('npu-smi health: device=3 chip=0 status=Warning code=80818C00 info="node type=SoC, '
             'sensor type=Check Sensor, event state=check fail"'),
        none("npu-smi health: device=3 status=OK recovered"),
        none("npu-smi info: device=1 chip=1 status=Alarm"),
        none("deviceinfo: device=2 status=Fault code=8C084E00 fault_level=RestartBusiness"),
        none("deviceinfo: device=2 status=OK recovered"),
    ],
    note="""
The command source's record lines printed into a training job's log (security audit F2): a job
is less trusted than faultd, so the record rules accept them only from a `command` source
(`source_types: [command]`). None of them raises or clears a fault here; each is counted in
faultd_rule_refused_values_total{field="source_type"}. Constructed: the records are faultd's
own format.""")

write_case(
    "kernel-lines-forged", "training", "/var/log/training/job/worker.log", None,
    [
        # the kernel's own lines, as kernel-log-forms and kmsg-records hold them, printed by a job
        none("[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> "
             "Heartbeat lost! (device=1; old_count=1104; new_count=1104)"),
        none("Jan 21 04:41:44 gpu-node-a kernel: NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', "
             "name=<unknown>, GPU has fallen off the bus."),
        none("[ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 48, pid=1850, name=python3, An "
             "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer"),
        none("NVRM: GPU at PCI:0000:01:00: GPU has fallen off the bus."),
        none("NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 322227881"),
    ],
    note="""
The kernel's driver lines printed into a training job's log (security audit N6): the host
driver's heartbeat loss and NVRM's Xids, fallen-off-bus and GSP lines are the kernel's, so their
rules accept them only from a `kmsg` source or a file source declared `kernel_log: true`
(`source_types: [kmsg, kernel_log]`). Printed by a job, none raises a fault (each is counted in
faultd_rule_refused_values_total{field="source_type"}) and none can join a storm that would hide
the genuine line. Constructed from the quoted lines of kernel-log-forms, kmsg-records and
nvidia-dmesg.""")

PU, PR = "probe.unresponsive", "probe.recovered"
write_case_rec(
    "probe-health-records", "npu-health", "npu-smi info -t health -i {device}",
    [
        ('probe: device=5 status=unresponsive failures=3 reason="timed out after 3s"',
         [(PU, "5", SUB, "PROBE-UNRESPONSIVE")]),
        ("probe: device=5 status=OK recovered", [rec(PR, "5", "PROBE-UNRESPONSIVE")]),
        ('probe: device=6 status=unresponsive failures=3 reason="exit status 1: Error: device '
         'not found or permission denied"', [(PU, "6", SUB, "PROBE-UNRESPONSIVE")]),
        # a command not run per device: the node's finding; the NPU its error names is not taken
        ('probe: status=unresponsive failures=4 reason="unparsable output: NPU 3 is not ready"',
         [(PU, "", SUB, "PROBE-UNRESPONSIVE")]),
        ("probe: status=OK recovered", [rec(PR, "", "PROBE-UNRESPONSIVE")]),
        ('probe: device=0000:3b:00 status=unresponsive failures=1 reason=killed',
         [(PU, "0000:3b:00", SUB, "PROBE-UNRESPONSIVE")]),
        # look-alikes: prose about the probe, a status that is not the record's
        none("the probe: device=5 status=unresponsive failures=3 reason=x was seen"),
        none("probe: device=5 status=unresponsive since boot"),
    ],
    note="""
The probe records of the command source (format: collectors/command/records.hpp), as
CommandSource writes them for a card whose npu-smi hung three runs in a row and answered again,
a card whose npu-smi failed, a command not run per device (no device=: the finding has no device,
even when the reason names one) and a GPU's bus id. Constructed: the records are faultd's own
format. The golden run loads no catalogue, so the level is the rule's default_level
(SubHealthFault); the recovery carries the code, so it clears only the probe's own warning.""",
    source_type="command")

write_case(
    "probe-health-records-forged", "training", "/var/log/training/job/worker.log", None,
    [
        none('probe: device=5 status=unresponsive failures=3 reason="timed out after 3s"'),
        none("probe: device=5 status=OK recovered"),
        none('probe: status=unresponsive failures=3 reason="timed out after 3s"'),
    ],
    note="""
The probe records printed into a training job's log: the probe rules accept them only from a
`command` source (`source_types: [command]`), so a job can neither raise a probe fault on a
device nor clear one. Each is counted in faultd_rule_refused_values_total{field="source_type"}.
Constructed: the records are faultd's own format.""")

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
        # the plugin's own log of NPU switch fault events (the project's corpus: MindCluster
        # FaultDiag fixture devicePlugin-2024-01-10T03-30-45.197.log): Assertion:0x1 occurred,
        # no device (a switch port), the code from AssembledFaultCode
        ('[WARN]     2024/01/10 03:28:38.643290 17      deviceswitch/ascend_switch.go:190    switch subscribe got fault:deviceswitch.SwitchFaultEvent{EventType:0x4, FaultID:0xf1ff09, AssembledFaultCode:"[0x00f1ff09,155912,cpu,na]", PeerPortDevice:0x0, PeerPortId:0x2, SwitchChipId:0x0, SwitchPortId:0x0, Severity:0x0, Assertion:0x1, EventSerialNum:0, NotifySerialNum:0, AlarmRaisedTime:0, AdditionalParam:"", AdditionalInfo:""}, faultCode:[0x00f1ff09,155912,cpu,na]',
         [(SWF, "", SUB, "00F1FF09")]),
        ('[WARN]     2024/01/10 03:28:38.643290 17      deviceswitch/ascend_switch.go:190    switch subscribe got fault:deviceswitch.SwitchFaultEvent{EventType:0x4, FaultID:0xf1ff09, AssembledFaultCode:"[0x00f1ff09,155912,npu,na]", PeerPortDevice:0x1, PeerPortId:0x2, SwitchChipId:0x0, SwitchPortId:0x0, Severity:0x0, Assertion:0x1, EventSerialNum:0, NotifySerialNum:0, AlarmRaisedTime:0, AdditionalParam:"", AdditionalInfo:""}, faultCode:[0x00f1ff09,155912,npu,na]',
         [(SWF, "", SUB, "00F1FF09")]),
        # constructed: a one-off notice (Assertion:0x2) of another code
        ('[WARN]     2024/01/10 03:29:38.643290 17      deviceswitch/ascend_switch.go:190    switch '
         'subscribe got fault:deviceswitch.SwitchFaultEvent{EventType:0x4, FaultID:0xf103b0, '
         'AssembledFaultCode:"[0x00f103b0,155907,na,na]", Severity:0x0, Assertion:0x2}',
         [(SWF, "", SUB, "00F103B0")]),
        # the same log's recovery of a switch fault (Assertion:0x0), then look-alikes:
        # kubelet's unhealthy-device message, an event of another component
        ('[INFO]     2023/11/21 05:36:53.123456 18 devmanager/dcmi.go:512    switch subscribe '
             'got fault:deviceswitch.SwitchFaultEvent{EventType:0x4, FaultID:0xf1ff09, '
             'AssembledFaultCode:"[0x00f1ff09,155912,npu,na]", Assertion:0x0}',
         [rec(SWR, "", "00F1FF09")]),
        ("Allocate failed due to no healthy devices present; cannot allocate unhealthy "
         "devices huawei.com/Ascend910B4-1", [("kubelet.unhealthy-devices", "", SUB, "")]),
        none("Warning   BackOff   pod/train-0   Back-off restarting failed container, device "
             "fault, nodeName:k8smaster"),
    ],
    note="""
The Ascend Device Plugin's Kubernetes fault events as `kubectl get events -n kube-system`
prints them, and its own log of NPU switch fault events. Quoted: the Occur event of
docs/log-formats.md §6 (MindCluster common_operations.md); the two switch fault lines
(Assertion:0x1) of the project's corpus, asc_device_plugin_switch_fault_0x00f1ff09_*.log
(xiaobingling93-pixel/Ascend-mind-cluster@6a9e7fab, component/ascend-faultdiag/test/
st_module_testcase/kg_parse/dl_log/devicePlugin/devicePlugin-2024-01-10T03-30-45.197.log, lines
1-2). Constructed from them: the Recovery and Notice assertions of the k8s events (values from
dcmi_interface_api.h and the plugin's constants.go, docs/log-formats.md §6), a 0x-prefixed code,
another card; a switch notice (Assertion:0x2) and a switch recovery (Assertion:0x0). The device
of a k8s event is cardID (the card npu-smi -i takes); its own faultLevelName is its level (the
Notice's NotHandleFault too). A switch event names a switch port, not an NPU: no device; the
golden run loads no catalogue, so its level is the rule's default_level, SubHealthFault.
kubelet's unhealthy-device message (quoted, §6) names a resource, not a device: a warning of the
node with no device. Look-alike: another event with the phrase.""")

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
        ("[INFO]     2999/10/01 03:31:35.462040 305     ipmimonitor/ipmi_monitor.go:206    "
         "get fault event, [device type: CPU]-[device id: 0]-[error code: 2C000003]",
         [(NN, "", SUB, "2C000003")]),
        # the project's corpus (MindCluster FaultDiag fixture, via Ascend-mind-cluster): a BMC event
        ("[INFO]     2999/10/01 03:39:17.760916 305     ipmimonitor/ipmi_monitor.go:206    get fault event, [device type: BMC]-[device id: 255]-[error code: 2C000031]",
         [(NN, "", SUB, "2C000031")]),
    ],
    note="""
NodeD's log. Quoted: the NPU fault event of docs/log-formats.md §6 (MindCluster fixture) and
the BMC event of the project's corpus, asc_noded_ipmi_fault_event_bmc_2c000031.log
(xiaobingling93-pixel/Ascend-mind-cluster@6a9e7fab, component/ascend-faultdiag/test/
st_module_testcase/kg_parse/dl_log/noded/noded-2999-10-01T03-39-17.760.log, line 1).
Constructed from them: a second event with a 0x-prefixed code, the routine heartbeat INFO line
(documented in §6 as not a fault; wording constructed, no match) and an event of another device
type (CPU). An NPU's event names the device; an event of the node's other hardware (CPU, BMC)
is ascend.noded.node-fault-event, without a device (no NPU is at fault). The golden run loads
no catalogue, so the level is the rules' default_level: SubHealthFault (an IPMI fault event
marks the device warning).""")


# ---------------------------------------------------------------------------------------------
# Families of the packs ascend-cann-codes.yaml, ascend-runtime.yaml (return codes, task
# exceptions, AI CPU, HCCL set-up, device memory) and nvidia-training.yaml. Most lines are
# quoted from the project's corpus (tests/corpus/logs, whole samples kept together in order,
# each under its file name; tests/corpus/expected.tsv names each sample's public source, and
# each case's README lists them); the others are constructed from the formats named next to
# them. A generator of its own keeps the cases above byte for byte as they were.
rng = random.Random(29)
COMM, RTE, DRVE, CPUE, OPE = ("ascend.cann.comm-error", "ascend.cann.runtime-error",
                              "ascend.cann.driver-error", "ascend.cann.aicpu-error",
                              "ascend.cann.operator-error")
SA, API, LNK, HWD = ("ascend.device.status-abnormal", "ascend.hccl.api-failed",
                     "ascend.hccl.link-error", "ascend.hccl.watchdog-timeout")
SYS = "ascend.device.system-exception"
CALL = "ascend.hccl.call-failed"

write_case("ascend-cann-codes", "training", "/var/log/training/job-11/rank-0.log", None,
    mix(TRAIN_NOISE, 120, [
        # asc_torch_npu_ei0009_transport_init_create_dest_link_error_rank1.log
        [
            ('[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. Reason: [Create][DestLink]Create Dest error! createLink para:rank[1]-localUserrank[1]-localIpAddr[172.16.0.114], dst_rank[0]-remoteUserrank[0]-remote_ip_addr[172.16.0.114]',
             [(COMM, "", RBUS, "")]),
            none("[rank1]:         Solution: Check other NPUs that are not reporting errors, or check if there are any abnormalities on the other end's NPU."),
        ],
        # asc_torch_npu_hccl_get_root_info_ej0003_port_already_bound_device0.log
        [
            ('[rank0]: RuntimeError: createHCCLComm:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:1479 HCCL function error: HcclGetRootInfo(&hcclID), error code is 11',
             [(API, "", RBUS, "")]),
            ('[rank0]: [ERROR] 2025-03-26-17:01:03 (PID:159, Device:0, RankID:-1) ERR02200 DIST call hccl api failed.',
             [(API, "0", RBUS, "")]),
            ('[rank0]: EJ0003: [PID: 159] 2025-03-26-17:01:02.816.428 Failed to bind the IP port. Reason: The IP address and port have been bound already.',
             [(COMM, "0", RBUS, "")]),  # context: process 159
            none('[rank0]:         TraceBack (most recent call last):'),
            none('[rank0]:         host nic listen start failed, port[60000], return[11][FUNC:StartListenSocket][FILE:network_manager.cc][LINE:1163]'),
        ],
        # asc_torch_npu_ej0001_hccp_init_failed_last_process_running_device3.log
        [
            ('RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64',
             [(API, "", RBUS, "")]),
            ('[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.',
             [(API, "3", RBUS, "")]),
            ('EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.',
             [(COMM, "", RBUS, "")]),  # names no process: no context
        ],
        # asc_pdsh_worker1_eh9999_107020_device_synchronize_task_timeout.log
        [
            ('worker-1: EH9999: 2024-07-03-11:28:40.450.757  wait for compute device to finish failed, runtime result = 107020.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]',
             [(COMM, "", RBUS, ""), (RTC, "", RBUS, "")]),
            none('worker-1:         TraceBack (most recent call last):'),
            none('worker-1:  (function npuSynchronizeDevice)'),
            ('worker-1: [W NPUStream.cpp:365] Warning: NPU warning, error code is 107020[Error]: .',
             [(RTC, "", RBUS, "")]),
            none('worker-1: EH9999: Inner Error!'),
            none('worker-1:         rtDeviceSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]'),
            ('worker-1: EH9999: 2024-07-03-11:28:40.451.641  wait for compute device to finish failed, runtime result = 107020.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]',
             [(COMM, "", RBUS, ""), (RTC, "", RBUS, "")]),
            none('worker-1:         TraceBack (most recent call last):'),
            none('worker-1:  (function npuSynchronizeDevice)'),
        ],
        # asc_torch_npu_hccl_comm_init_err02200_device_id_error_device0_phy1.log
        [
            ('[rank0]: RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 15',
             [(API, "", RBUS, "")]),
            ('[rank0]: [ERROR] 2025-04-27-03:11:08 (PID:540988, Device:0, RankID:0) ERR02200 DIST call hccl api failed.',
             [(API, "0", RBUS, "")]),
            none('[rank0]: EE9999: Inner Error!'),
            ('[rank0]: EE9999: [PID: 540988] 2025-04-27-03:11:08.089.335 get error: phyid:1 realDeviceId:1 is err:0x7010003[FUNC:GetDeviceIndexByPhyId][FILE:api_error.cc][LINE:1918]',
             [(RTE, "0", RBUS, "")]),  # context: process 540988
            none('[rank0]:         TraceBack (most recent call last):'),
            none('[rank0]:        rtGetDeviceIndexByPhyId execute failed, reason=[device id error][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]'),
        ],
        # asc_torch_npu_107020_event_wait_timeout_ee9999_device5.log
        [
            ('(Worker_DP0_TP5_EP5 pid=818) ERROR 08-13 15:31:21 [multiproc_executor.py:945] RuntimeError: synchronize:../torch_npu/csrc/core/npu/NPUEvent.cpp:212 NPU function error: aclrtSynchronizeEvent(event_), error code is 107020',
             [(RTC, "", RBUS, "")]),
            none('(Worker_DP0_TP5_EP5 pid=818) ERROR 08-13 15:31:21 [multiproc_executor.py:945] [ERROR] 2026-08-13-15:31:21 (PID:818, Device:5, RankID:-1) ERR00100 PTA call acl api failed.'),
            none('(Worker_DP0_TP5_EP5 pid=818) ERROR 08-13 15:31:21 [multiproc_executor.py:945] EE9999: Inner Error!'),
            ('(Worker_DP0_TP5_EP5 pid=818) ERROR 08-13 15:31:21 [multiproc_executor.py:945] EE9999[PID: 818] 2026-08-13-15:31:21.888.208 (EE9999):  The error from device(chipId:5, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:44, sq_id:5, task_id:61293, event_id=55, timeout=234s.[FUNC:ProcessStarsWaitTimeoutErrorInfo][FILE:device_error_proc.cc][LINE:1593]',
             [(RTE, "5", RBUS, "")]),
        ],
        # asc_el0001_device_lost_heartbeat_507010_device1.log
        [
            ('[PID: 389] 2026-05-01-10:59:14.702.326 Device_Absent/Abnormal(EL0001): Device not found or invalid.',
             [(DRVE, "", RBUS, "")]),
            none('        Possible Cause: Device does not exist or is abnormal.'),
            none('        Solution: Check the error messages in the log.'),
            none('        TraceBack (most recent call last):'),
            none('        [drv api] halCqReportRecv failed: device_id=1, ts_id=0, type=2, logic_cq=4, drv_ret_code=33[FUNC:LogicCqReportV2][FILE:npu_driver_res.cc][LINE:2103]'),
            ('        Device[1] lost heartbeat.[FUNC:SyncTask][FILE:direct_hwts_engine.cc][LINE:407]',
             [(HB, "1", RNPU, "")]),
            none('        rtDeviceSynchronizeWithTimeout execution failed, reason=lost heartbeat[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:65]'),
            ('        wait for compute device to finish failed, runtime result = 507010.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]',
             [(RTC, "", RBUS, "")]),
            none('        Device not found or invalid.'),
            none('        Init device error msg handler failed, retCode=0x7020012.[FUNC:GetDevErrMsg][FILE:api_impl.cc][LINE:6135]'),
            none('        rtGetDevMsg execution failed, reason=driver error:no valid device[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:65]'),
        ],
        # asc_torch_npu_507011_el0003_fftsplus_aicore_error_device9_chip4_die1.log
        [
            ('[758] [2026-05-08 03:20:32:000] torch.distributed: [ERROR] [859] Find exception when finishedNPUExecutionInternal, query:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:61 NPU function error: acl::AclQueryEventRecordedStatus(event_, &currStatus), error code is 507011',
             [(RTC, "", RBUS, "")]),
            none('[ERROR] 2026-05-08-03:20:31 (PID:758, Device:9, RankID:-1) ERR00100 PTA call acl api failed'),
            none('[Error]: Model execution failed.'),
            none('        Rectify the fault based on the error information in the ascend log.'),
            ('[PID: 758] 2026-05-08-03:20:31.532.507 Invalid_Argument(EL0003): The argument is invalid.',
             [(DRVE, "9", RBUS, "")]),  # context: process 758
            none('        Solution: Try again with a valid argument.'),
            none('        TraceBack (most recent call last):'),
            ('        The error from device(chipId:4, dieId:1), serial number is 3, there is an exception of fftsplus aicore error, core id is 0, error code = 0x800000, dump info: pc start: 0x12c0c131862c, current: 0x12c0c1318780, vec error info: 0, mte error info: 0x61060000c3, ifu error info: 0x14d703420a700, ccu error info: 0xae5fd18f370a0fc7, cube error info: 0, biu error info: 0, aic error mask: 0x6500020bd00028c, para base: 0x12c1458b20',
             [(AIC, "4", RBUS, "")]),
            none('[rank9]:[E508 03:20:31.678676591 compiler_depend.ts:1693] [Rank 9] HCCL watchdog thread terminated with exception:'),
            none('[ERROR] 2026-05-08-03:20:32 (PID:758, Device:9, RankID:-1) ERR02005 DIST internal error'),
        ],
        # asc_torch_npu_ez9903_507015_fftsplus_aivector_error_device7_chip3_die1.log
        [
            none('[ERROR] 2026-07-21-14:15:02 (PID:47745, Device:7, RankID:-1) ERR00100 PTA call acl api failed'),
            ('[Error]: The aicore execution is abnormal.',
             [(AIC, "", RBUS, "")]),
            none('Rectify the fault based on the error information in the ascend log.'),
            ('[PID: 47745] 2026-07-21-14:15:02.161.605 AclNN_Runtime_Error(EZ9903): aclrtLaunchKernelWithHostArgs failed, return: 507015',
             [(OPE, "7", NOT, "")]),  # context: process 47745
            none('Solution: In this scenario, collect the plog when the fault occurs and locate the fault based on the plog.'),
            none('TraceBack (most recent call last):'),
            ('The error from device(chipId:3, dieId:1), serial number is 3, there is an exception of fftsplus aivector error, core id is 0, error code = 0x800000, dump info: pc start: 0x12c0de8f6864, current: 0x12c0de8fa14c, vec error info: 0x7b1271c61d, mte error info: 0xe60600001f, ifu error info: 0x5caefc03c42c0, ccu error info: 0x906791ca0fd70008, cube error info: 0, biu error info: 0, aic error mask: 0x6500020bd00028c, para base: 0x12c140000080.[FUNC:PrintCoreInfo][FILE:device_error_core_proc.cc][LINE:645]',
             [(AIC, "3", RBUS, "")]),
        ],
        # asc_torch_npu_ez1001_addmm_k_axis_mismatch_device0.log
        [
            ('(EngineCore_DP0 pid=172866) ERROR 12-23 12:56:15 [core.py:868] RuntimeError: addmm:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:112 NPU function error: call aclnnAddmm failed, error code is 161002',
             [(OPC, "", NOT, "")]),
            none('(EngineCore_DP0 pid=172866) ERROR 12-23 12:56:15 [core.py:868] [ERROR] 2025-12-23-12:56:15 (PID:172866, Device:0, RankID:-1) ERR00100 PTA call acl api failed.'),
            ('(EngineCore_DP0 pid=172866) ERROR 12-23 12:56:15 [core.py:868] [PID: 172866] 2025-12-23-12:56:15.164.100 AclNN_Parameter_Error(EZ1001): The k-axis of the two inputs are different.',
             [(OPE, "0", NOT, "")]),  # context: process 172866
        ],
        # asc_torch_npu_ez9999_parse_dynamic_kernel_config_fail_561103_device0.log
        [
            ('RuntimeError: arange_out_op_api:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:36 NPU function error: call aclnnArange failed, error code is 561103',
             [(OPC, "", NOT, "")]),
            none('[ERROR] 2025-09-19-14:34:08 (PID:5625, Device:0, RankID:-1) ERR00100 PTA call acl api failed.'),
            none('EZ9999: Inner Error!'),
            ('EZ9999: [PID: 5625] 2025-09-19-14:34:08.166.059 Parse dynamic kernel config fail.',
             [(OPE, "0", NOT, "")]),  # context: process 5625
            none('        TraceBack (most recent call last):'),
            none('       AclOpKernelInit failed opType'),
            none('       ArangeAiCore ADD_TO_LAUNCHER_LIST_AICORE failed.'),
        ],
        # asc_mindspore_e39999_aicpu_exception_errcode21008_device0.log
        [
            none('E39999: Inner Error!'),
            ('E39999: 2024-10-20-22:34:40.965.193  The error from device(chipId:0, dieId:0), serial number is 3, an exception occurred during AICPU execution, stream_id:2, task_id:19016, errcode:21008, msg:inner error.[FUNC:ProcessStarsAicpuErrorInfo][FILE:device_error_proc.cc][LINE:1232][THREAD:123358]',
             [(CPUE, "0", RBUS, ""), (AICPU, "0", RBUS, "")]),
            none('        TraceBack (most recent call last):'),
            ('        Kernel task happen error, retCode=0x2a, [aicpu exception].[FUNC:PreCheckTaskErr][FILE:task_info.cc][LINE:1776][THREAD:123358]',
             [(AICPU, "", RBUS, "")]),
            none('        AICPU Kernel task happen error, retCode=0x2a.[FUNC:GetError][FILE:stream.cc][LINE:1512][THREAD:123358]'),
            ('        Aicpu kernel execute failed, device_id=0, stream_id=2, task_id=19016, errorCode=2a.[FUNC:PrintAicpuErrorInfo][FILE:task_info.cc][LINE:1579][THREAD:123358]',
             [(AICPU, "0", RBUS, "")]),
            ('        Aicpu kernel execute failed, device_id=0, stream_id=2, task_id=19016, fault op_name=[FUNC:GetError][FILE:stream.cc][LINE:1512][THREAD:123358]',
             [(AICPU, "0", RBUS, "")]),
            ('        rtMemcpyAsync execute failed, reason=[aicpu exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53][THREAD:123358]',
             [(AICPU, "", RBUS, "")]),
        ],
        # asc_e39009_device_status_abnormal_failed_to_connect_tsdopen_devid2.log
        [
            ('[ERROR] aclrtSetDevice(deviceId) failed: 507033 (/home/zhongxuan/ptoas-board-monitor/runtime/runs/20260420_192004_manual_pr523/npu_validation/Qwen3DecodeA3/qwen3_decode_incore_0/main.cpp:80)',
             [(RTC, "", RBUS, "")]),
            ('[ERROR] RecentErrMsg: [PID: 726962] 2026-04-20-19:23:08.682.108 Inner_Error_Device_Status_Abnormal(E39009): Failed to connect the device.',
             [(SA, "", RBUS, "")]),
            none('        Possible Cause: 1. Heartbeats are missing on the device. 2. The underlying channel is disconnected.'),
            none('        Solution: 1. Obtain the device log and contact technical support at https://www.hiascend.com/support. 2. Restart the device.'),
            none('        TraceBack (most recent call last):'),
            none('        TsdOpen failed. devId=2, tdt error=34[FUNC:PrintfTsdError][FILE:runtime.cc][LINE:2638]'),
            none('        Check param failed, dev can not be NULL![FUNC:DeviceRetain][FILE:runtime.cc][LINE:3547]'),
            none('        Check param failed, dev can not be NULL![FUNC:PrimaryContextRetain][FILE:runtime.cc][LINE:3171]'),
            none('        Check param failed, ctx can not be NULL![FUNC:PrimaryContextRetain][FILE:runtime.cc][LINE:3202]'),
            none('        Check param failed, context can not be null.[FUNC:SetDevice][FILE:api_impl.cc][LINE:3278]'),
            none('        rtSetDevice execution failed, reason=device retain error[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:65]'),
        ],
        # constructed: MindSpore's older "Ascend Error Message:" block with a non-inner code, a
        # code behind "=" (a reference to the report, not the report), the header forms, a
        # lint message and prose that name codes
        ("[ERROR] SESSION(150840,ffff2effd1e0,python):2024-05-21-11:57:54.200.001 [mindspore/ccsrc/backend/session/ascend_session.cc:1857] ReportErrorMessage] Ascend Error Message:EJ0001: Failed to initialize the HCCP process. Reason: Maybe the last training process is running.",
         [(COMM, "", RBUS, "")]),
        none("[ERROR] RUNTIME(160186,python):2023-01-10-09:25:45.324.711 [stream.cc:1044]163618 GetError:report error module_type=7, module_name=EE9999"),
        none("EE9999: Internal error!"),
        none("[rank0]: EI9999: Inner Error!"),
        none("src/train.py:10:4: E1101: Instance of 'Trainer' has no 'step' member (no-member)"),
        none("See the CANN error code EI0009 in the documentation: [PID: 1] is the process id."),
    ], rng),
    note="""
CANN error-report codes by family (etc/faultd/rules.d/ascend-cann-codes.yaml) in a training log
(no path fields), behind the launcher prefixes the samples have.

Quoted: whole samples of the project's corpus (tests/corpus/logs), each in order:
asc_torch_npu_ei0009_* (vllm-project/vllm-ascend#3162, EI0009 in the "[PID: n]" form),
asc_torch_npu_hccl_get_root_info_ej0003_* (vllm-project/vllm-ascend#405, EJ0003; the tuple line
before it names process 159's device), asc_torch_npu_ej0001_* (hiyouga/LlamaFactory#3839, first
three lines: EJ0001 in the older timestamp form, which names no process), asc_pdsh_worker1_eh9999_*
(Ascend/pytorch#43, EH9999 behind pdsh's "worker-1: ", with the return code 107020),
asc_torch_npu_hccl_comm_init_err02200_* (vllm-project/vllm-ascend#672, EE9999 device id error),
asc_torch_npu_107020_event_wait_timeout_ee9999_* (vllm-project/vllm-ascend#14214, EE9999 in the
newest form, device(chipId:5)), asc_el0001_* (vllm-project/vllm-ascend#8186, the titled EL0001
and the heartbeat loss in its traceback), asc_torch_npu_507011_el0003_* (vllm-project/
vllm-ascend#8360, the titled EL0003), asc_torch_npu_ez9903_* (vllm-project/vllm-ascend#12461,
AclNN_Runtime_Error(EZ9903)), asc_torch_npu_ez1001_* (vllm-project/vllm-ascend#5297,
AclNN_Parameter_Error(EZ1001) and aclnn's 161002), asc_torch_npu_ez9999_parse_dynamic_* (vllm-project/
vllm-ascend#3046, EZ9999 and 561103), asc_mindspore_e39999_* (candle-org/MindAct#1752, E39999: an
AI CPU exception), asc_e39009_* (hw-native-sys/PTOAS#523, E39009 "Failed to connect the device").
The header lines ("EZ9999: Inner Error!", "EH9999: Inner Error!") and the tracebacks do not match;
a device-reported exception inside an EZ report is the AI Core rule's.
Constructed: MindSpore's "Ascend Error Message:" with EJ0001 (the form of docs/log-formats.md §4
with a non-inner code), the RUNTIME "module_name=EE9999" reference (the shape of §2's
"module_name=EZ9999"), the "Internal error!" header, an EI9999 header behind a rank prefix, a
lint message and prose (no match).""")

write_case("ascend-runtime-codes", "training", "/var/log/training/job-12/rank-0.log", None,
    mix(TRAIN_NOISE, 120, [
        # asc_ez9999_507034_aivec_vector_core_timeout_chip1.log
        [
            ('[ERROR] aclrtSynchronizeStream(stream) failed: 507034 (/home/zhongxuan/ptoas-board-monitor/runtime/runs/20260624_114108_manual_pr862/npu_validation/Colexpandmul/colexpandmul/main.cpp:122)',
             [(RTC, "", RBUS, "")]),
            none('[ERROR] RecentErrMsg: EZ9999: Inner Error!'),
            ('EZ9999[PID: 636125] 2026-06-24-12:44:08.922.071 (EZ9999):  The error from device(chipId:1, dieId:0), serial number is 167, there is an exception of aivec error, core id is 11, error code = 0, dump info: pc start: 0x124400000000, current: 0x124400000a9c, vec error info: 0xd200000035, mte error info: 0x2606000065, ifu error info: 0x212c0856006c0, ccu error info: 0x40c00d0003800086, cube error info: 0, biu error info: 0, aic error mask: 0x6500020bd00028c, para base: 0x12c100000000.[FUNC:PrintCoreInfo][FILE:device_error_core_proc.cc][LINE:645]',
             [(AIC, "1", RBUS, "")]),
            none('        TraceBack (most recent call last):'),
            none('       The extend info: errcode:(0, 0, 0) errorStr: timeout or trap error. fixp_error0 info: 0x6000065, fixp_error1 info: 0x26, fsmId:1, tslot:0, thread:0, ctxid:0, blk:0, sublk:0, subErrType:4.[FUNC:PrintCoreInfo][FILE:device_error_core_proc.cc][LINE:658]'),
            ('       Kernel task happen error, retCode=0x30, [vector core timeout].[FUNC:PreCheckTaskErr][FILE:davinci_kernel_task.cc][LINE:1729]',
             [(AIC, "", RBUS, "")]),
            none('       AIV Kernel happen error, retCode=0x30.[FUNC:GetError][FILE:stream.cc][LINE:1475]'),
        ],
        # asc_torch_npu_507018_aicpu_exception_ep_w8a8_two_ranks.log
        [
            none('EH9999: Inner Error!'),
            ('        rtDeviceSynchronizeWithTimeout execute failed, reason=[aicpu exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]',
             [(AICPU, "", RBUS, "")]),
            ('EH9999: [PID: 56178] 2025-07-30-06:16:22.730.302 wait for compute device to finish failed, runtime result = 507018.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]',
             [(COMM, "", RBUS, ""), (RTC, "", RBUS, "")]),
            none('        TraceBack (most recent call last):'),
            none(' (function npuSynchronizeDevice)'),
            ('[W730 06:16:22.869118032 compiler_depend.ts:526] Warning: NPU warning, error code is 507018[Error]: ',
             [(RTC, "", RBUS, "")]),
            ('[Error]: The aicpu execution is abnormal. ',
             [(AICPU, "", RBUS, "")]),
            none('        Rectify the fault based on the error information in the ascend log.'),
            none('EH9999: Inner Error!'),
            ('        rtDeviceSynchronizeWithTimeout execute failed, reason=[aicpu exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]',
             [(AICPU, "", RBUS, "")]),
            ('EH9999: [PID: 56185] 2025-07-30-06:16:22.730.327 wait for compute device to finish failed, runtime result = 507018.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]',
             [(COMM, "", RBUS, ""), (RTC, "", RBUS, "")]),
            none('        TraceBack (most recent call last):'),
            none(' (function npuSynchronizeUsedDevices)'),
        ],
        # asc_vllm_engine_core_worker_failed_acl_stream_sync_507035.log
        [
            ("(EngineCore_0 pid=702) ERROR 09-04 09:50:12 [core.py:702] RuntimeError: Worker failed with error 'ACL stream synchronize failed, error code:507035', please check the stack trace above for the root cause",
             [(RTC, "", RBUS, "")]),
            none('(VllmWorker TP0 pid=838) INFO 09-04 09:50:12 [multiproc_executor.py:520] Parent process exited, terminating worker'),
        ],
        # asc_mindspore_getnext_task_fail_507011_device0_slow_data.log
        [
            ('[ERROR] DEVICE(2420702,fffe06ffd1e0,python):2023-11-20-15:34:32.886.561 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:761] DumpTaskExceptionInfo] Task fail infos task_id: 2, stream_id: 45, tid: 2420702, device_id: 0, retcode: 507011 ( model execute failed)',
             [(RTC, "0", RBUS, "")]),
            none('[ERROR] DEVICE(2420702,fffe06ffd1e0,python):2023-11-20-15:34:32.887.652 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:770] DumpTaskExceptionInfo] Dump node (Default/GetNext-op18) task error input/output data to: ./rank_0/node_dump'),
            none('The function call stack:'),
            none('In file /home/ma-user/anaconda3/envs/MindSpore/lib/python3.7/site-packages/mindspore/train/dataset_helper.py:106/        outputs = self.get_next()/'),
            none(''),
            none('[WARNING] DEVICE(2420702,fffe06ffd1e0,python):2023-11-20-15:34:32.887.680 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:777] DumpTaskExceptionInfo] GetNext error may be caused by slow data processing (bigger than 20s / batch) or transfer data to device error.'),
        ],
        # asc_torch_npu_507001_task_scheduler_internal_error_task_exception.log
        [
            none('EH9999: Inner Error!'),
            none('        rtDeviceSynchronizeWithTimeout execute failed, reason=[task exception][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]'),
            ('EH9999: [PID: 1162] 2025-02-20-02:16:09.485.837 wait for compute device to finish failed, runtime result = 507001.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]',
             [(COMM, "", RBUS, ""), (RTC, "", RBUS, "")]),
            none('        TraceBack (most recent call last):'),
            none(' (function empty_cache)'),
            ('[W220 02:16:09.547051339 NPUWorkspaceAllocator.cpp:122] Warning: NPU warning, error code is 507001[Error]: ',
             [(RTC, "", RBUS, "")]),
            none('[Error]: An internal error occurs in the task scheduler module on the device. '),
            none('        Rectify the fault based on the error information in the ascend log.'),
        ],
        # asc_torch_npu_aclnncast_ez9999_no_binary_561000_device0.log
        [
            none('RuntimeError: call aclnnCast failed, detail:EZ9999: Inner Error!'),
            ('EZ9999: 2024-06-28-13:05:55.631.066  Parse dynamic kernel config fail.',
             [(OPE, "", NOT, "")]),
            none('        TraceBack (most recent call last):'),
            none('        AclOpKernelInit failed opType'),
            none('        Op Cast does not has any binary.'),
            none('        Kernel Run failed. opType: 3, Cast'),
            ('        launch failed for Cast, errno:561000.',
             [(OPC, "", NOT, "")]),
            none(''),
            none('[ERROR] 2024-06-28-13:05:55 (PID:11591, Device:0, RankID:-1) ERR01005 OPS internal error'),
        ],
        # asc_plog_task_run_failed_sq_sw_status_reduce_scatter_dispatch_timeout_device3.log
        [
            ('[ERROR] RUNTIME(1365,python3.8):2025-08-06-23:09:35.772.604 [stars_engine.cc:1551]6219 ProcLogicCqReport:[FINAL][FINAL]Task run failed, device_id=3, stream_id=2, task_id=8885, sqe_type=3(place holder), errType=0x20(sq sw status error), sqSwStatus=0x105',
             [(TEX, "3", RBUS, "")]),
            ('[ERROR] APP(1365,python3.8):2025-08-06-23:09:42.725.168 [log_inner.cpp:76]6124 build/CMakeFiles/torch_npu.dir/compiler_depend.ts:checkDispatch:685: "[PTA]:"Process group work REDUCE_SCATTER, seq_num 32716847 dispatch timeout. device 3: the current working event is 0xaaab40f5c5d0. ""',
             [(HWD, "3", RBUS, "")]),
        ],
        # asc_hccl_plog_init_ok_then_notify_wait_task_failed_remote_rank3_dev0.log
        [
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:53.134.675 [op_base.cc:314][69395]Entry-HcclGetRootInfo:rootInfo[0x7ffc5d59ba40], deviceLogicId[0]'),
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:53.144.403 [op_base.cc:339][69395][HCCL_TRACE]HcclGetRootInfo success, take time [9747]us, identifier[10.136.181.175%enp179s0f0_60000_0_1712529353144389]'),
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:53.144.546 [op_base.cc:413][69395]Entry-HcclCommInitRootInfo:ranks[4], rank[0], rootinfo: host ip[10.136.181.175] port[60000] nicDeploy[1] identifier[10.136.181.175%enp179s0f0_60000_0_1712529353144389], deviceLogicId[0]'),
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:53.327.288 [topoinfo_detect.cc:208][69395][HCCL_TRACE]SetupAgent rankNum[4], rank[0], rootInfo identifier[10.136.181.175%enp179s0f0_60000_0_1712529353144389], server[10.136.181.175%enp179s0f0], logicDevId[0], phydevId[0], deviceIp[192.168.10.9]'),
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:55.126.093 [ccl_buffer_manager.cc:38][69395][HCCL_TRACE][CreateCCLbuffer]Create ccl buffer success. buffer ptr[0x124140400000], size[209715200]'),
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:55.126.279 [ccl_buffer_manager.cc:38][69395][HCCL_TRACE][CreateCCLbuffer]Create ccl buffer success. buffer ptr[0x12414cc00000], size[209715200]'),
            none('[INFO] HCCL(69395,python3):2024-04-07-18:35:55.126.321 [op_base.cc:489][69395][HCCL_TRACE]HcclCommInitRootInfo success,take time [1981783]us, rankNum[4], rank[0],rootInfo identifier[10.136.181.175%enp179s0f0_60000_0_1712529353144389], server[10.136.181.175%enp179s0f0], logicDevId[0]'),
            ('[ERROR] HCCL(69395,python3):2024-04-08-02:55:04.903.469 [task_exception_handler.cc:449][69395][TaskExceptionHandler][Callback]Task from HCCL run failed.',
             [(TEX, "", RBUS, "")]),
            ('[ERROR] HCCL(69395,python3):2024-04-08-02:55:04.903.511 [task_exception_handler.cc:452][69395][TaskExceptionHandler][Callback]Task run failed, base information is streamID:[3], taskID[77726298], taskType[Notify Wait], tag[AllReduce_10.136.181.175%enp179s0f0_60000_0_1712529353144389], index[3], AlgType(level 0-1-2):[null-null-ring].',
             [(TEX, "", RBUS, "")]),
            ('[ERROR] HCCL(69395,python3):2024-04-08-02:55:04.903.554 [task_exception_handler.cc:454][69395][TaskExceptionHandler][Callback]Task run failed, para information is notify id:[0x0000000000000050], stage:[ffffffff], remote rank:[3].',
             [(TEX, "", RBUS, "")]),
            ('[ERROR] HCCL(69395,python3):2024-04-08-02:55:04.903.554 [task_exception_handler.cc:454][69395][TaskExceptionHandler][Callback]Task run failed, groupRank information is group:[10.136.181.175%enp179s0f0_60000_0_1712529353144389], rankSize[4], rankId[0].',
             [(TEX, "", RBUS, "")]),
        ],
        # asc_hccl_device_log_aicpu_sdma_task_exception_sendrecv_devid1.log
        [
            ('[ERROR] HCCL(3496,aicpu_scheduler):2025-08-06-22:39:11.763.467 [aicpu_hccl_sqcq.cc:330] [3896]Task {devId: 1 streamId: 149 sqId: 153 cqId: 259 type: 2} run failed of exception, idx:[0], info:[streamId :149 taskId :26063 errorCode :10 errorType :1 sqeType :11 sqId :153 sqHead :1487 matchFlag :0 dropFlag :0 errorBit :1 accError :0]',
             [(TEX, "1", RBUS, "")]),
            none('[ERROR] HCCL(3496,aicpu_scheduler):2025-08-06-22:39:11.764.381 [aicpu_communicator.cc:3737] [3896][HcclCommAicpu][PrintTaskExceptionByTaskId]streamId:149 tail:127 cqeType:11'),
            none('[ERROR] HCCL(3496,aicpu_scheduler):2025-08-06-22:39:11.764.416 [aicpu_communicator.cc:3750] [3896][TaskException][AICPU]base information is streamId:149, sqid:153, head:1487, tail:127, type:SDMA, localRank:1, remoteRank:2, taskId:26063, notifyId:0, addr1High:0x12eb, addr1Low:0x50000000, addr2High:0x12d6, addr2Low:0xc2c04000.'),
            none('[ERROR] HCCL(3496,aicpu_scheduler):2025-08-06-22:39:11.764.449 [aicpu_communicator.cc:3806] [3896][TaskException]opData information is tag:worldCommSendRecv_2_1_group_name_17271ReceiveExecutor_device, group:group_name_17271, opIndex:39013693, count:1048576, dataType:11, opType:5, rootId:4294967295, dstAddr:0x12d6c2c04000, srcAddr:0x12d6c2c04000.'),
        ],
        # docs/log-formats.md §2 (the RUNTIME example line, MindSpore docs): a task exception
        [("[ERROR] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 [engine.cc:1263]163618 ReportExceptProc:Task exception! device_id=0, stream_id=17, task_id=43, type=13, retCode=0x91, [the model stream execute failed].",
          [(TEX, "0", RBUS, "")])],
        # docs/log-formats.md §2 (the KERNEL example line of the device OS): a TS exception
        [("[EVENT] KERNEL(6843,sklogd):2023-06-10-13:16:14.096.793 [klogd.c:253][251681.794072] [ascend] [ERROR] [tsdrv] [tsdrv_hb_cq_callback 319] <swapper/30:0> receive ts exception msg, call excep_code=0xb4060007, time=1686374174.94000000s, devid=1 tsid=0",
          [(SYS, "1", RBUS, "B4060007")])],
        # constructed from the runtime's PrintErrorInfo formats (task.cc)
        ("[ERROR] RUNTIME(20011,python):2024-02-02-10:00:01.000.001 [task.cc:92]20013 PrintErrorInfo:Task execute failed, base info: device_id=2, stream_id=5, task_id=9, flip_num=0, task_type=3.",
         [(TEX, "2", RBUS, "")]),
        ("[ERROR] RUNTIME(20011,python):2024-02-02-10:00:02.000.001 [task.cc:1582]20013 PrintErrorInfo:Memory async copy failed, device_id=4, stream_id=3, task_id=2, flip_num=0, copy_type=10, memcpy_type=0, copy_data_type=0, length=4096.",
         [(TEX, "4", RBUS, "")]),
        # look-alikes: codes that are ids or sizes, a return code with more digits, a successful
        # call, the registration of HCCL's task exception handler
        none("[EVENT] HCCL(10972,python3):2023-09-23-05:41:43.100.000 [hccl_communicator.cc:1200][10972]Entry-HcclAllReduce: tag[AllReduce_5], count[1024], dataType[float32], taskID[507015]"),
        none("rtStreamSynchronize:ErrCode=0, desc=[success], stream_id=507011"),
        none("aclrtMalloc failed: 5070112 bytes requested, retrying with a smaller block"),
        none("[INFO] HCCL(10972,python3):2023-09-23-05:41:40.000.001 [task_exception_handler.cc:80][10972][TaskExceptionHandler][Init]register task exception callback success"),
    ], rng),
    note="""
Runtime return codes, task exceptions and AI CPU failures (etc/faultd/rules.d/ascend-runtime.yaml:
ascend.runtime.error-code, ascend.operator.error-code, ascend.runtime.task-exception,
ascend.aicpu.error, ascend.device.system-exception) in a training log (no path fields).

Quoted: whole samples of the project's corpus (tests/corpus/logs), each in order:
asc_ez9999_507034_* (hw-native-sys/PTOAS, "failed: 507034" and the vector core timeout),
asc_torch_npu_507018_* (vllm-project/vllm-ascend#2105, AI CPU exceptions of two processes),
asc_vllm_engine_core_worker_failed_acl_stream_sync_507035.log (vllm-project/vllm-ascend#2763),
asc_mindspore_getnext_task_fail_507011_* (mindspore-lab/mindocr#615, "retcode: 507011"; its
GetNext warning does not match), asc_torch_npu_507001_* (vllm-project/vllm-ascend#116),
asc_torch_npu_aclnncast_ez9999_no_binary_561000_* (hiyouga/LlamaFactory#4610, EZ9999 and
"errno:561000": recorded), asc_plog_task_run_failed_sq_sw_status_* (MindCluster FaultDiag fixture
plog-1365: "Task run failed, device_id=3" and torch_npu's dispatch timeout of "device 3"),
asc_hccl_plog_init_ok_then_notify_wait_task_failed_* (MindCluster FaultDiag fixture plog-parser-
69395: HCCL's task exception callback; its INFO set-up lines do not match, and their
deviceLogicId[0] is not a documented device spelling, so the failures have no device),
asc_hccl_device_log_aicpu_sdma_task_exception_* (MindCluster FaultDiag fixture device-1382: "Task
{devId: 1 ...} run failed of exception"); docs/log-formats.md §2's RUNTIME "Task exception!" and
device OS "receive ts exception msg" examples (the code B4060007 is the exception's; the golden
run loads no catalogue, so the level is the rule's default_level, RestartBusiness).
Constructed: the runtime's "Task execute failed, base info:" and "Memory async copy failed"
PrintErrorInfo lines; look-alikes (a task id, an ErrCode of 0, a seven-digit number after
"failed: ", the handler's registration) that must not match.""")

write_case("ascend-hccl-setup", "plog", "/root/ascend/log/debug/plog/plog-114654_20250619092834191.log", None,
    mix(PLOG_NOISE, 120, [
        # asc_hccl_plog_link_error_socket_timeout_p2p_timeout_device2.log
        [
            ('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.662 [hccl_socket_manager.cc:778] [116451][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[10] timeout[130]',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.839 [hccl_socket_manager.cc:591] [116451]   _________________________LINK_ERROR_INFO___________________________',
             [(LNK, "", RBUS, "")]),
            none('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.843 [hccl_socket_manager.cc:592] [116451]   |  comm error, device[2] '),
            none('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.846 [hccl_socket_manager.cc:594] [116451]   |  dest_ip(user_rank)  |   dest_port   |  src_ip(user_rank)   |   src_port   |   MyRole   |   Status   |'),
            none('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.849 [hccl_socket_manager.cc:596] [116451]   |--------------------|--------------------|----------|------------|-----------------|-----------------|'),
            none('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.858 [hccl_socket_manager.cc:553] [116451]   |  192.168.2.199(8)   |  16666  |   192.168.2.197(10)   |  0  |  client  | time out |  '),
            none('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.864 [hccl_socket_manager.cc:600] [116451]   ___________________________________________________________________  '),
            ('[ERROR] HCCL(114654,python3):2025-06-19-09:28:34.062.867 [hccl_socket_manager.cc:601] [116451]Wait links establish completed failed, local role is client. ret[9]',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(114654,python3):2025-06-19-09:28:35.062.066 [p2p_mgmt.cc:305] [115867][Wait][P2PConnected]connected p2p timeout, timeout:130 s. local logicDevid:2, remote physic id:1.',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(114654,python3):2025-06-19-09:28:35.062.086 [transport_manager.cc:741] [115867][Create][DestSockets]Wait Enable P2P Failed, src devicePhyId[2], dst devicePhyId[1], ret[16]',
             [(LNK, "", RBUS, "")]),
        ],
        # asc_hccl_plog_links_establish_completed_failed_two_node_moe.log
        [
            ('[ERROR] HCCL(55694,):2026-06-03-06:04:59.040.451 [hccl_socket_manager.cc:860] [60446][Wait][LinksEstablishCompleted] is failed. ret[9].',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(55694,):2026-06-03-06:04:59.040.458 [hccl_socket_manager.cc:399] [60446][Create][Sockets]Wait links establish completed failed, local role is client. ret[9]',
             [(LNK, "", RBUS, "")]),
        ],
        # asc_hccl_plog_listen_port_fail_then_socket_establish_timeout_rank12.log
        [
            none('[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288][HcclSocket][Listen] socket type[1], listen on ip[192.168.20.160] and specific port[16666] fail. Please check the port status and whether the port is been using by other process.'),
            ('[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.466 [hccl_socket_manager.cc:54] [2717288][ServerInit]call trace: hcclRet -> 19',
             [(CALL, "", RBUS, "")]),
            ('[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.472 [hccl_communicator.cc:2307] [2717288][InitNic]call trace: hcclRet -> 19',
             [(CALL, "", RBUS, "")]),
            ('[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2734049][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.265 [hccl_socket_manager.cc:830] [2734049][Wait][LinksEstablishCompleted] is failed. ret[9].',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.269 [hccl_socket_manager.cc:393] [2734049][Create][Sockets]Wait links establish completed failed, local role is client. ret[9]',
             [(LNK, "", RBUS, "")]),
        ],
        # asc_hccl_plog_root_info_socket_recv_timeout_firewall_logic2_phy6.log
        [
            none('[INFO] HCCL(123,python):2024-03-28-10:23:47.960.557 [op_base.cc:413][123]Entry-HcclCommInitRootInfo:ranks[8], rank[6], rootinfo: host ip[51.38.67.143] port[60004] nicDeploy[1] identifier[51.38.67.143%enp189s0f0_60004_4_1711621428426055], deviceLogicId[2]'),
            none('[INFO] HCCL(123,python):2024-03-28-10:23:50.588.335 [topoinfo_detect.cc:208][123][HCCL_TRACE]SetupAgent rankNum[8], rank[6], rootInfo identifier[51.38.67.143%enp189s0f0_60004_4_1711621428426055], server[51.38.67.141%enp189s0f0], logicDevId[2], phydevId[6], deviceIp[192.168.102.203]'),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.610 [adapter_hccp.cc:872][123][Recv][RaSocket]errNo[0x0000000005000013] Wait timeout for sockets recv, data[0xffffec55c7bc], size[4], recvSize[0], The most common cause is that the firewall is incorrectly configured. Check the firewall configuration or try to disable the firewall.',
             [(LNK, "", RBUS, "")]),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.705 [topoinfo_exchange_base.cc:137][123]call trace: hcclRet -> 9',
             [(CALL, "", RBUS, "")]),
            none('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.711 [topoinfo_exchange_base.cc:104][123][Recv][ClusterInfoMsg]receive msg length from fdhandle failed, ret[9]'),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.715 [topoinfo_exchange_agent.cc:270][123]call trace: hcclRet -> 4',
             [(CALL, "", RBUS, "")]),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.720 [topoinfo_exchange_agent.cc:71][123]call trace: hcclRet -> 4',
             [(CALL, "", RBUS, "")]),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.726 [topoinfo_exchange_agent.cc:43][123]call trace: hcclRet -> 4',
             [(CALL, "", RBUS, "")]),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.730 [topoinfo_detect.cc:214][123]call trace: hcclRet -> 4',
             [(CALL, "", RBUS, "")]),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.589.738 [op_base.cc:434][123][Init][CommRootInfo]errNo[0x0000000005000004] setup topo detect error',
             [(API, "", RBUS, "")]),
            ('[ERROR] HCCL(123,python):2024-03-28-10:25:50.599.958 [op_base.cc:481][123][HCCL_TRACE]HcclCommInitRootInfo failed, return[0x0000000005000004], rankNum[8], rank[6], rootInfo identifier[51.38.67.143%enp189s0f0_60004_4_1711621428426055], server[51.38.67.141%enp189s0f0], logicDevId[-1]',
             [(API, "", RBUS, "")]),
            none('[ERROR] HCCL(123,python):2024-03-28-10:25:50.600.001 [op_base.cc:1352][123][HcclCommDestroy] comm is not exist, comm=0x50addc00, group=51.38.67.143%enp189s0f0_60004_4_1711621428426055, deviceLogicId=2'),
        ],
        # asc_hccl_comm_init_root_info_failed_mindie_atb_rank1.log
        [
            ('[ERROR] HCCL(36035,mindie_llm_backend_connector):2025-05-13-02:25:58.068.817 [op_base.cc:974][36818][Init][CommRootInfoConfig]errNo[0x0000000005000002]HcclCommInitRootInfo failed.',
             [(API, "", RBUS, "")]),
            ('[2025-05-13 02:25:58.64217] [error] [36815] [hccl_runner.cpp:132] AllGatherHcclRunner:0 HcclCommInitRootInfo fail, error:2, rank:1, rankSize:4',
             [(API, "", RBUS, "")]),
            none('[2025-05-13 02:25:58.64259] [error] [36815] [comm_pool.h:43] CommPool commCreateFunc fail'),
            none('[2025-05-13 02:25:58.64262] [error] [36815] [hccl_runner.cpp:72] AllGatherHcclRunner:0 get hccl comm fail by rank:1'),
            none('[2025-05-13 02:25:58.70257] [error] [38031] [all_gather_hccl_runner.cpp:38] hcclComm is null, rank: 1'),
            none('[2025-05-13 02:25:58.70282] [error] [38031] [runner.cpp:115] AllGatherHcclRunner_1_1:1 Execute Failed. st: 3'),
            none('[2025-05-13 02:25:58.70293] [error] [38031] [graph_runner.cpp:906] WordEmbeddingRunner_1:0  node[1] execute fail, runner name:AllGatherHcclRunner'),
            none('[2025-05-13 02:25:58.70299] [error] [38031] [runner.cpp:115] WordEmbeddingRunner_1:1 Execute Failed. st: 3'),
        ],
        # asc_torch_npu_hccl_comm_init_error_code4_multinode_device0_rank0.log
        [
            ('(TaskRunner pid=30188) RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 4',
             [(API, "", RBUS, "")]),
            ('(TaskRunner pid=30188) [ERROR] 2025-10-29-02:17:03 (PID:144556, Device:0, RankID:0) ERR02200 DIST call hccl api failed.',
             [(API, "0", RBUS, "")]),
        ],
        # asc_torch_npu_hccl_watchdog_allreduce_timeout_3600s_rank1.log
        [
            ('[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.',
             [(HWD, "", RBUS, "")]),
            ('[rank1]:[E324 13:00:25.428092542 compiler_depend.ts:628] Some HCCL operations have failed or timed out. Due to the asynchronous nature of ASCEND kernels, subsequent NPU operations might run on corrupted/incomplete data.',
             [(HWD, "", RBUS, "")]),
            none('[rank1]:[E324 13:00:25.428107952 compiler_depend.ts:634] To avoid data inconsistency, we are taking the entire process down.'),
            ('[rank1]:[E324 13:00:25.429344265 compiler_depend.ts:1020] [Rank 1] HCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.',
             [(HWD, "", RBUS, "")]),
            none("terminate called after throwing an instance of 'std::runtime_error'"),
            ('  what():  [Rank 1] HCCL watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.',
             [(HWD, "", RBUS, "")]),
        ],
        # asc_neg_hccl_event_connect_timeout_env_set_600.log
        [
            none('[EVENT] HCCL(6615,python3):2023-01-29-10:14:37.306.833 [externalinput.cc:374][6615][6615]environmental variable HCCL_CONNECT_TIMEOUT is set, timeOut[600]'),
        ],
        # look-alikes: the advice of a troubleshooting guide quoted in a log, timeout variables
        none('Check the peer first: grep -r "wait socket establish timeout" $ASCEND_PROCESS_LOG_PATH'),
        none("export HCCL_CONNECT_TIMEOUT=1200; export HCCL_EXEC_TIMEOUT=1800"),
    ], rng),
    note="""
HCCL link and communicator set-up failures and torch_npu's ProcessGroupHCCL timeouts
(etc/faultd/rules.d/ascend-runtime.yaml: ascend.hccl.link-error, ascend.hccl.api-failed,
ascend.hccl.watchdog-timeout) in a host plog (no path fields).

Quoted: whole samples of the project's corpus (tests/corpus/logs), each in order:
asc_hccl_plog_link_error_socket_timeout_p2p_timeout_* (Ascend/mind-cluster FaultDiag fixture
st_transport_timeout_testcase plog-114654: "wait socket establish timeout", the LINK_ERROR_INFO
table, "Wait links establish completed failed", "connected p2p timeout", "Wait Enable P2P Failed";
the table's rows do not match, its header does), asc_hccl_plog_links_establish_completed_* (vllm-
project/vllm-ascend#9872), asc_hccl_plog_listen_port_fail_* (vllm-project/vllm-ascend#1955; the
listen failure itself does not match), asc_hccl_plog_root_info_socket_recv_timeout_* (MindCluster
FaultDiag fixture plog-parser-123: the RaSocket receive timeout, "setup topo detect error",
"HcclCommInitRootInfo failed"), asc_hccl_comm_init_root_info_failed_mindie_* (gpustack/gpustack#2021:
MindIE's "HcclCommInitRootInfo fail"), asc_torch_npu_hccl_comm_init_error_code4_* (verl-project/
verl#3947: torch_npu's "HCCL function error" and ERR02200 with the tuple's device),
asc_torch_npu_hccl_watchdog_allreduce_timeout_* (vllm-project/vllm-ascend#382: WorkHCCL watchdog;
"[Rank 1]" is a rank, not a device), asc_neg_hccl_event_connect_timeout_env_set_600.log (MindCluster
FaultDiag fixture: an HCCL_CONNECT_TIMEOUT setting, no match). The HCCL lines name no device in a
documented spelling ("device[2]", "logicDevid:2" and "deviceLogicId=2" are not), so their findings
have none.
Constructed: a troubleshooting guide's grep advice and timeout variables (no match).""")

write_case("ascend-oom-families", "training", "/var/log/training/job-13/worker_0.log", None,
    mix(TRAIN_NOISE, 100, [
        # asc_el0004_ge_module_rtmalloc_fail_page_caching_device0.log
        [
            ('ERROR 04-09 21:56:46 [diffusion_engine.py:82] [PID: 210907] 2026-04-09-21:56:40.384.694 Memory_Allocation_Failure(EL0004): Failed to allocate memory requested by GE module.',
             [(DRV, "", RBUS, "")]),
            none('ERROR 04-09 21:56:46 [diffusion_engine.py:82]         Possible Cause: Available memory is insufficient.'),
            none('ERROR 04-09 21:56:46 [diffusion_engine.py:82]         Solution: Close applications not in use.'),
            none('ERROR 04-09 21:56:46 [diffusion_engine.py:82]         TraceBack (most recent call last):'),
            ('ERROR 04-09 21:56:46 [diffusion_engine.py:82]         Call rtMalloc fail, purpose: page caching, type = 2, size:3221291008, device_id:0[FUNC:Alloc][FILE:device_allocator.cc][LINE:72]',
             [(DOOM, "0", RBUS, "")]),
            ('ERROR 04-09 21:56:46 [diffusion_engine.py:82]         Call rtMalloc fail, purpose: page caching, type = 2, size:1610678272, device_id:0[FUNC:Alloc][FILE:device_allocator.cc][LINE:72]',
             [(DOOM, "0", RBUS, "")]),
            none('ERROR 04-09 21:56:46 [diffusion_engine.py:82]         [Exec][Op]Execute op failed. op type = Conv2D, ge result = 4294967295[FUNC:ReportCallError][FILE:acl_op_executor_log_inner.cpp][LINE:124]'),
        ],
        # asc_el0004_memory_allocation_failure_set_device_507033_device2.log
        [
            ('[ERROR] aclrtSetDevice(deviceId) failed: 507033 (/tmp/ptoas-board-monitor/runs/20260324_120504_merged_pr341/npu_validation/PyPTOIRParser/orchestration_example_kernel_mul/main.cpp:72)',
             [(RTC, "", RBUS, "")]),
            ('[ERROR] RecentErrMsg: [PID: 1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.',
             [(DRV, "", RBUS, "")]),
            none('        Possible Cause: Available memory is insufficient.'),
            none('        Solution: Close applications not in use.'),
            none('        TraceBack (most recent call last):'),
            none('        allocate device memory failed.[FUNC:Init][FILE:memory_pool_manager.cc][LINE:50]'),
            none('        Fail to init MemoryPoolManager, retCode=0x711000e.[FUNC:Init][FILE:raw_device.cc][LINE:670]'),
            none('        Check param failed, dev can not be NULL![FUNC:DeviceRetain][FILE:runtime.cc][LINE:3547]'),
            none('        Check param failed, dev can not be NULL![FUNC:PrimaryContextRetain][FILE:runtime.cc][LINE:3171]'),
            none('        Check param failed, ctx can not be NULL![FUNC:PrimaryContextRetain][FILE:runtime.cc][LINE:3202]'),
            none('        Check param failed, context can not be null.[FUNC:SetDevice][FILE:api_impl.cc][LINE:3278]'),
            none('        rtSetDevice execution failed, reason=device retain error[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:65]'),
            ('        open device 2 failed, runtime result = 507033.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]',
             [(RTC, "2", RBUS, "")]),
        ],
        # asc_mindspore_pre_act_total_used_mem_exceeds_total_mem_size.log
        [
            ('[ERROR] PRE_ACT(54175,fffdbcff91e0,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlockAndMemBufByEagerFree] TotalUsedMemStatistics : 29356337664 plus TotalUsedByEventMemStatistics : 0 and plus alloc size : 301990400 is more than total mem size : 29464985600.',
             [(DOOM, "", RBUS, "")]),
        ],
        # asc_torch_npu_el0004_ftsplus_launch_driver_out_of_memory_device2_rank2.log
        [
            none('[ERROR] 2024-08-28-16:15:00 (PID:15597, Device:2, RankID:2) ERR00100 PTA call acl api failed'),
            ('EL0004: 2024-08-28-16:15:00.358.141 Failed to allocate memory.',
             [(DRV, "", RBUS, "")]),
            none('        Possible Cause: Available memory is insufficient.'),
            none('        Solution: Close applications not in use.'),
            none('        TraceBack (most recent call last):'),
            ('        rtFftsPlusTaskLaunch execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]',
             [(HAL, "", RBUS, "")]),
            none('        Init device error msg handler failed, retCode=0x7020016.[FUNC:GetDevErrMsg][FILE:api_impl.cc][LINE:4924]'),
            ('        rtGetDevMsg execute failed, reason=[driver error:out of memory][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]',
             [(HAL, "", RBUS, "")]),
        ],
        # asc_plog_halmemalloc_failed_hugepage_drvretcode6_device0.log
        [
            ('[ERROR] RUNTIME(10972,python):2023-09-23-05:41:40.256.365 [npu_driver.cc:1100]49835 DevMemAllocHugePageManaged:[INIT][DEFAULT][drv api] halMemAlloc failed:size=2097152(Byte), type=2, moduleId=7, drvFlag=18374686479671772161, drvRetCode=6, device_id=0!',
             [(HAL, "0", RBUS, "")]),
        ],
        # constructed from MindSpore's format strings (its runtime actors' device memory
        # failure; the CPU device's upper-case "Memory isn't enough" is host memory)
        ("[ERROR] RUNTIME_FRAMEWORK(3321,ffff8a7fc120,python):2025-01-02-10:00:00.000.001 [mindspore/ccsrc/runtime/graph_scheduler/actor/memory_manager_actor.cc:318] SetOpContextMemoryAllocFail] Device(id:3) memory isn't enough and alloc failed, kernel name: Default/MatMul-op1, alloc size: 1073741824B.",
         [(DOOM, "3", RBUS, "")]),
        none("[ERROR] RUNTIME_FRAMEWORK(3321,ffff8a7fc120,python):2025-01-02-10:00:01.000.001 [mindspore/ccsrc/runtime/graph_scheduler/actor/memory_manager_actor.cc:312] SetOpContextMemoryAllocFail] Memory isn't enough and alloc failed, kernel name: Default/Add-op2, alloc size: 4096B."),
        # constructed: a compiler log's memory plan, torch_npu's OOM raised as torch.OutOfMemoryError
        none("[INFO] ATC compile.log: Total mem size 1160 MB, TmpTensor 88 MB"),
        ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity; 58.02 GiB already allocated; 58.02 GiB current active; 412.85 MiB free)",
         [(DOOM, "0", RBUS, "")]),
    ], rng),
    note="""
Device memory exhaustion in the forms other than those of ascend-oom-device-vs-host, in a training
log (no path fields).

Quoted: whole samples of the project's corpus (tests/corpus/logs), each in order:
asc_el0004_ge_module_rtmalloc_fail_* (PKU-YuanGroup/Helios#62: the titled
Memory_Allocation_Failure(EL0004) "Failed to allocate memory requested by GE module." and GE's
"Call rtMalloc fail, ... device_id:0"), asc_el0004_memory_allocation_failure_set_device_* (hw-
native-sys/PTOAS#341: EL0004, "failed: 507033" and "open device 2 failed, runtime result =
507033"), asc_mindspore_pre_act_total_used_mem_* (candle-org/MindAct#1761: MindSpore's dynamic
pool "is more than total mem size"), asc_torch_npu_el0004_ftsplus_launch_* (hiyouga/
LlamaFactory#5322: EL0004 in the older form and "reason=[driver error:out of memory]"; the tuple
line before it names process 15597, the EL0004 line names none), asc_plog_halmemalloc_failed_
hugepage_drvretcode6_device0.log (MindCluster FaultDiag fixture plog-10972: an ERROR halMemAlloc
failure with drvRetCode=6, DRV_ERROR_OUT_OF_MEMORY).
Constructed: MindSpore's "Device(id:3) memory isn't enough and alloc failed" (its format string)
and the CPU device's upper-case "Memory isn't enough" (host memory: no match); a compiler log's
"Total mem size" (no match); torch_npu's OOM raised as torch.OutOfMemoryError (a device OOM of the
NPU, not CUDA's).""")

write_case("ascend-device-system-exception", "device-log",
    "/var/log/npu/hisi_logs/device-0/history.log", r"device-(?P<device>\d+)/",
    [
        # constructed from the black box's history.log record format (MindCluster FaultDiag
        # documentation of hisi_logs); the device is the directory's
        ("[2023-07-13-16:20:44.081811] system exception code [0xB4060007]: ModuleName [TS], ExceptionReason [TS_EXCEPTION], TimeStamp [20230713162044-070000011].",
         [(SYS, "0", RBUS, "B4060007")]),
        ("[2021-10-05-23:07:08.656411] system exception code [0xA8028802]: ModuleName [DRIVER], ExceptionReason [DRIVER_EXCEPTION], TimeStamp [20211005230708-651408009].",
         [(SYS, "0", RBUS, "A8028802")]),
        none("[2021-10-05-23:07:09.000000] system start, boot count [12]"),
    ],
    note="""
The device's black box record (hisi_logs/device-N/history.log): "system exception code
[0x...]" with the module and reason; the device comes from the directory (path_fields). Constructed
from the record format (no line of this file is in the project's corpus). The golden run loads
no catalogue, so the level is ascend.device.system-exception's default_level (RestartBusiness);
with MindCluster's faultCode.json the code's own level applies. A record that is not an exception
does not match.""")

APP, LF, UNK, ECC, NVL, COOM = ("nvidia.cuda.application-error", "nvidia.cuda.launch-failure",
                                "nvidia.cuda.unknown-error", "nvidia.cuda.uncorrectable-ecc",
                                "nvidia.cuda.nvlink-uncorrectable", "nvidia.cuda.out-of-memory")
NCW, NCE, NCN = "nvidia.nccl.watchdog-timeout", "nvidia.nccl.error", "nvidia.nccl.network-error"
NCF = "nvidia.nccl.call-failed"
GPU_TRAIN_NOISE = [
    "[rank3]: Epoch 1 | step %d | loss 2.%03d | lr 3.0e-04 | grad_norm 0.%03d",
    "node-7:2345:2345 [3] NCCL INFO Channel %02d/32 :    0   1   2   3   4   5   6   7",
    "node-7:2345:2345 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>",
    "node-7:2345:2345 [3] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "[W Utils.hpp:135] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function operator())",
]
write_case("nvidia-training", "training", "/var/log/training/job-14/rank-3.log", None,
    mix(GPU_TRAIN_NOISE, 120, [
        # CUDA runtime error strings (cudaGetErrorString) as PyTorch raises them
        ("RuntimeError: CUDA error: an illegal memory access was encountered", [(APP, "", NOT, "")]),
        none("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."),
        none("For debugging consider passing CUDA_LAUNCH_BLOCKING=1."),
        none("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."),
        ("[rank3]: RuntimeError: CUDA error: device-side assert triggered", [(APP, "", NOT, "")]),
        # each failing thread's own assertion before it: recorded too
        ("/opt/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [32,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.",
         [(APP, "", NOT, "")]),
        ("RuntimeError: CUDA error: misaligned address", [(APP, "", NOT, "")]),
        ("RuntimeError: CUDA error: an illegal instruction was encountered", [(APP, "", NOT, "")]),
        ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`",
         [(LF, "", RBUS, "")]),
        ("RuntimeError: CUDA error: unspecified launch failure", [(LF, "", RBUS, "")]),
        ("RuntimeError: CUDA error: unknown error", [(UNK, "", SUB, "")]),
        ("RuntimeError: CUDA error: uncorrectable ECC error encountered", [(ECC, "", RNPU, "")]),
        ("RuntimeError: CUDA error: an uncorrectable NVLink error was detected during the execution", [(NVL, "", RNPU, "")]),
        # PyTorch's caching allocator, newer and older wording; a CUDA call's own OOM
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 15.41 GiB. GPU 3 has a total capacity of 79.10 GiB of which 15.40 GiB is free. Including non-PyTorch memory, this process has 63.69 GiB memory in use.",
         [(COOM, "3", RBUS, "")]),
        ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 3.44 MiB free; 14.75 GiB reserved in total by PyTorch)",
         [(COOM, "0", RBUS, "")]),
        ("[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 79.15 GiB total capacity; 76.20 GiB already allocated; 1.01 GiB free; 77.00 GiB reserved in total by PyTorch)",
         [(COOM, "1", RBUS, "")]),
        ("RuntimeError: CUDA error: out of memory", [(COOM, "", RBUS, "")]),
        none("If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."),
        # PyTorch's ProcessGroupNCCL and NCCL results
        ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.",
         [(NCW, "", RBUS, "")]),
        ("[rank0]:[E1105 10:00:00.000000000 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
         [(NCW, "", RBUS, "")]),
        ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3",
         [(NCE, "", RBUS, "")]),
        ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
         [(NCE, "", RBUS, "")]),
        ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, remote process exited or there was a network error, NCCL version 2.19.3",
         [(NCE, "", RBUS, "")]),
        ("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
         [(NCE, "", RBUS, "")]),
        ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3",
         [(NCE, "", RBUS, "")]),
        ("ncclInternalError: Internal check failed.", [(NCE, "", RBUS, "")]),
        ("NCCL communicator was aborted on rank 3. Original reason for failure was: NCCL error: unhandled system error",
         [(NCE, "", RBUS, "")]),
        # NCCL's own WARN lines of its IB and socket transports ([3] is the CUDA device)
        ("node-7:2345:2367 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<55914> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGid ::ffff:10.0.0.2 hca mlx5_0",
         [(NCN, "3", RBUS, "")]),
        ("node-7:2345:2367 [3] NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
         [(NCN, "3", RBUS, "")]),
        ("node-7:2345:2370 [3] NCCL WARN socketProgress: Connection closed by remote peer node-8<41266>",
         [(NCN, "3", RBUS, "")]),
        ("node-7:2345:2370 [3] NCCL WARN socketStartConnect: Connect to 10.0.0.2<43521> failed : Software caused connection abort",
         [(NCN, "3", RBUS, "")]),
        ("node-7:2345:2370 [3] NCCL WARN Net : Connection closed by remote peer 10.0.0.2<55914>",
         [(NCN, "3", RBUS, "")]),
        # look-alikes: the application's NCCL errors, NCCL INFO lines naming a result, retries
        none("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, invalid usage, NCCL version 2.14.3"),
        none("ncclInvalidUsage: This usually reflects invalid usage of NCCL library."),
        none("node-7:2345:2370 [3] NCCL INFO misc/socket.cc:484 -> 6 (ncclRemoteError)"),
        none("node-7:2345:2370 [3] NCCL WARN socketStartConnect: Connect to 10.0.0.2<43521> failed : Connection refused, retrying"),
        none("node-7:2345:2370 [3] NCCL WARN Bootstrap : no socket interface found"),
        # Quoted (NVIDIA/nccl#1653, #1283, #1610, #1618; hiyouga/LlamaFactory#3698): NCCL's own
        # CUDA failures, its service threads, a connect that NCCL gives up on and one it retries
        # (the retry is announced on the next line), a communicator set-up timeout.
        ("DESKTOP-1CE5APL:1689:2800 [0] include/alloc.h:112 NCCL WARN Cuda failure 999 'unknown error'",
         [(UNK, "0", SUB, "")]),
        ("(train_rft pid=2657296) 2024-05-11 14:10:52.227 n176-080-198:2657296:2658232 [0] include/alloc.h:102 NCCL WARN Cuda failure 1 'invalid argument'",
         [("nvidia.nccl.cuda-failure", "0", NOT, "")]),
        none(" 2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:173:3266 [0] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Resource temporarily unavailable"),
        none(" 2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:173:3266 [0] proxy.cc:1521 NCCL WARN [Proxy Service 0] Failed to execute operation Close from rank 0, retcode 3"),
        ("rank_604.s12gn3064.4031852.log:[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events",
         [(NCN, "", RBUS, "")]),
        none("[03/16][2025-02-25 15:46:48,389] [misc/socket.cc:602] [s11gn1268:pid=3987720] NCCL WARN socketPollConnect poll() failed, ret 1, error Connection timed out, revents 8, connect to 172.16.30.229:39953"),
        ("torch.distributed.DistBackendError: [4] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
         [("nvidia.nccl.setup-timeout", "", RBUS, "")]),
        # Quoted (espnet/espnet#1940): older NCCL's retries, then the connect it gives up on,
        # named by the socket header before NCCL WARN; its result's trace follows.
        none("tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO Call to connect returned Connection refused, retrying"),
        ("tj1-asr-train-v100-13:941227:943077 [0] include/socket.h:390 NCCL WARN Connect to 10.38.10.112<21724> failed : Connection refused",
         [(NCN, "0", RBUS, "")]),
        none("tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO bootstrap.cc:100 -> 2"),
        ("tj1-asr-train-v100-13:941227:943077 [0] NCCL INFO init.cc:695 -> 2", [(NCF, "0", RBUS, "")]),
        # Quoted (NVIDIA/nccl#1099): a failure that prints no WARN, only its result's trace up
        # to the API's frames; inner frames and a teardown's "-> 3" are no verdict
        # (aws/aws-k8s-tester#524), nor a CUDA call's "-> 1" (NVIDIA/nccl#1488).
        none("nd20-01:191191:219889 [0] NCCL INFO misc/socket.cc:564 -> 2"),
        ("nd20-01:191191:219889 [0] NCCL INFO init.cc:1303 -> 2", [(NCF, "0", RBUS, "")]),
        ("nd20-01:191191:219889 [0] NCCL INFO group.cc:64 -> 2 [Async thread]", [(NCF, "0", RBUS, "")]),
        none("[1,16]<stdout>:bert-training-worker-2:21:585 [0] NCCL INFO proxy.cc:984 -> 3"),
        none("node23:12098:12141 [2] NCCL INFO group.cc:75 -> 1 [Async thread]"),
    ], rng),
    note="""
CUDA and NCCL failures as a PyTorch training job prints them (etc/faultd/rules.d/
nvidia-training.yaml), in a training log (no path fields). The project's corpus holds no NVIDIA
sample yet: every line is constructed from a documented format: the CUDA runtime's error
strings (cudaGetErrorString: cudaErrorIllegalAddress, cudaErrorAssert, cudaErrorMisalignedAddress,
cudaErrorIllegalInstruction, cudaErrorLaunchFailure, cudaErrorUnknown, cudaErrorECCUncorrectable,
cudaErrorNvlinkUncorrectable, cudaErrorMemoryAllocation) behind PyTorch's "CUDA error: ", cuBLAS's
CUBLAS_STATUS_EXECUTION_FAILED, PyTorch's caching allocator messages (the older "(GPU 0; ...
total capacity ...)" and the newer "GPU 3 has a total capacity of ..."), ProcessGroupNCCL's
watchdog and "NCCL error in: <file>:<line>, <reason>, NCCL version <v>" exceptions with the
ncclResult name line after them, NCCL's WARN lines of its IB ("Got completion from peer ... with
status=", older "Got completion with error") and socket transports ("host:pid:tid [cudaDev] NCCL
WARN ..."). The device is "GPU N" of the out-of-memory messages and NCCL's [cudaDev]; "[Rank N]"
is a rank. Levels: the application's errors are recorded, a launch failure (CUBLAS's execution
failure is one) and every NCCL failure are job-level, an unknown error is a warning, uncorrectable ECC and NVLink errors reset
the GPU. Look-alikes: the advice lines that follow a CUDA error, NCCL's invalid usage (the
application's), a result name inside an NCCL INFO line, a socket WARN that goes on retrying, a
missing socket interface (configuration). Quoted from public issue threads (tests/corpus/
expected.tsv gives each): NCCL's "Cuda failure" WARNs (NVIDIA/nccl#1653, #1283), its proxy and
service threads' teardown warnings behind a collector's time (#1610: look-alikes, which fault
classifiers of the field list as benign), a connect given up on with "no POLLOUT
events" in grep output and one NCCL retries (#1618), PyTorch's NCCL communicator set-up timeout
(hiyouga/LlamaFactory#3698), older NCCL's connect given up on behind its socket header
(espnet/espnet#1940), NCCL results traced up to the API's frames (init.cc, group.cc) with no
WARN (#1099), and look-alikes: the inner frames' traces, a teardown's "-> 3"
(aws/aws-k8s-tester#524) and a CUDA call's "-> 1" (#1488).""")


write_case("nvidia-gpu-lost", "dmesg", "/var/log/syslog", None,
    [
        ("Dec  2 11:49:53 worker4 kernel: [  885.242168] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)",
         [("nvidia.driver.init-failed", "0000:0a:00", SUB, "")]),
        none("Dec  2 11:49:53 worker4 kernel: [  885.242457] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5"),
        ("Unable to determine the device handle for GPU0000:03:00.0: Unknown Error",
         [("nvidia.gpu.lost", "0000:03:00", RNPU, "")]),
        ("XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00",
         [("nvidia.gpud.xid", "0000:ae:00", SUB, "XID79")]),
        ("failed to get remapped rows for GPU-ac896b35-5782-c478-4b2a-a661de07770f: failed to get device remapped rows: ERROR_GPU_IS_LOST",
         [("nvidia.gpu.lost", "", RNPU, "")]),
        none("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024"),
    ],
    note="""
A GPU the driver or NVML cannot reach. Quoted from public issue threads (tests/corpus/expected.tsv
gives each): the syslog's "RmInitAdapter failed!" (NVIDIA/gpu-operator#1146), nvidia-smi's
"Unable to determine the device handle ... Unknown Error" (rwth-i6/returnn#1486), gpud's Xid
event and NVML's ERROR_GPU_IS_LOST (leptonai/gpud#604). The driver-load banner is constructed
from its documented form. The second RmInitAdapter line (rm_init_adapter failed) is the same
event and gives nothing of its own.""", source_type="kernel_log")

write_case_rec("ascend-driver-fault-events", "device-log",
    "/var/log/npu/slog/dev-os-0/system/run/event/event_1.log",
    [
        ("[EVENT] DRV(3423,dms_poll_task):2025-05-08-04:23:58.786.543 [dms_event.c:1399][fault_manager][30561.377842] event_id=0x80cb8009; device_id=0; node_type=0x65[AIV]; node_id=18; sub_node_id=0; event_type=0x9[bus error, probably caused by software]; severity=1[Warning]; assertion=1[Event occur]; description=[AIV 0x1706]; os_id=0; event_serial_num=66763; notify_serial_num=0; event_raised_time=1746678237786 ms.",
         [("ascend.driver.fault-event", "0", SUB, "80CB8009")]),
        none("[EVENT] DRV(3423,dms_poll_task):2025-05-08-04:23:58.877.475 [dms_event.c:1399][fault_manager][30561.468773] event_id=0x80f38003; device_id=0; node_type=0x79[HBMA]; node_id=2; sub_node_id=0; event_type=0x3[internal config error]; severity=0[OK]; assertion=1[Event occur]; description=[decoding error]; os_id=0; event_serial_num=66764; notify_serial_num=0; event_raised_time=1746678237877 ms."),
        ("[EVENT] DRV(3423,dms_poll_task):2025-05-08-04:23:58.877.740 [dms_event.c:1399][fault_manager][30561.469039] event_id=0x80cb8009; device_id=0; node_type=0x65[AIV]; node_id=18; sub_node_id=0; event_type=0x9[bus error, probably caused by software]; severity=1[Warning]; assertion=0[Event resume]; description=[AIV 0x1706]; os_id=0; event_serial_num=66763; notify_serial_num=0; event_raised_time=1746678237786 ms.",
         [rec("ascend.driver.fault-event-resume", "0", "80CB8009")]),
    ],
    note="""
The driver fault manager's event log of the device OS (dms_event), verbatim from the test data of
hicann/oam-tools (tests/corpus/expected.tsv gives the commit and lines): an AI Vector bus error
occurring (severity Warning: a fault event), an event of severity OK (nothing), and the bus
error's resume (a recovery for its code).""")

write_case("nvidia-oom-ib-gpu-lost-forms", "training", "/var/log/training/job-15/rank-0.log", None,
    [
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 0",
         [("nvidia.cuda.out-of-memory", "0", RBUS, "")]),
        ("VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
         [("nvidia.cuda.out-of-memory", "2", RBUS, "")]),
        ("VM-0-16-ubuntu:392:494 [2] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'",
         [("nvidia.nccl.cuda-failure", "2", NOT, "")]),
        ("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error",
         [("nvidia.nccl.network-error", "0", RBUS, "")]),
        none("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : port active"),
        none("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : SM change"),
        ("Aug 10 22:40:59.893888 anthill kernel: NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 10 sequence 800!",
         [("nvidia.gpu.lost", "GPU0", RNPU, "")]),
        none("Aug 10 22:40:59.893916 anthill kernel: NVRM: GPU0 rpcRmApiFree_GSP: GspRmFree failed: hClient=0xc1d00018; hObject=0x5c000008; paramsStatus=0x00000000; status=0x0000000f"),
        none("Aug 10 22:40:59.893888 anthill kernel: NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed with status 0x00000065 for fn 10 sequence 800!"),
    ],
    note="""
Out-of-memory, InfiniBand and lost-GPU forms of other tools than PyTorch's. Quoted (the
sources are in tests/corpus/expected.tsv): XLA's RESOURCE_EXHAUSTED allocation failure with
"device ordinal 0" (ecmwf-lab/ai-models-graphcast#18); NCCL's "Cuda failure 'out of memory'"
(an OOM, the device its "[2]" prefix) and "'invalid resource handle'" (recorded) from
NVIDIA/TensorRT-LLM#1670; an mpirun-prefixed "Got async event : local catastrophic error"
without the HCA's name (NVIDIA/nccl#230); the driver's "rpcSendMessage failed with status
0x0000000f" (NV_ERR_GPU_IS_LOST) and the GspRmFree line after it, which is the same event
(Neroued/ninfer#12). Constructed look-alikes: the same async-event line with the verbs
library's "port active" and "SM change" (no failures), and rpcSendMessage with another status
(no lost GPU).""")

write_case("ascend-bbox-driver-exception", "device-log",
    "/var/log/npu/hisi_logs/device-0/20230713162044-070000011/bbox/driver.txt", None,
    [
        none("driver info:"),
        none("devid: 2, module: 1 2021-10-05 15:07:08 651408 devid: 2 device manager current status: working."),
        ("excep_id: 0xa8028802 .", [("ascend.device.system-exception", "2", RBUS, "A8028802")]),
        none("device_id = 2, fail info: device_id-2 appeared multi ecc err, the physical address is 0x400cd8d202e0"),
    ],
    note="""
A black-box driver record (hisi_logs/device-N/.../bbox/driver.txt), verbatim from the
MindCluster FaultDiag test data (tests/corpus/expected.tsv gives the commit and lines): the
exception code of "excep_id: 0x..." is the device's system exception (no catalogue in golden
runs: the rule's default level). The code's line names no device: its neighbours do
("devid: 2" before it, "device_id = 2" after it), so the device is 2. (The dump was filed under
a device-0/ directory; a source whose path_fields read that directory would name 0.)""")

write_case("nvidia-xid-caused-by", "kernel", "/var/log/kern.log", None,
    [
        ("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149",
         [("nvidia.xid.application", "0000:dc:00", NOT, "XID45"),
          ("nvidia.xid.caused-by", "0000:dc:00", SUB, "XID149")]),
        ("kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 145",
         [("nvidia.xid.application", "0000:ed:00", NOT, "XID45"),
          ("nvidia.xid.caused-by", "0000:ed:00", SUB, "XID145")]),
        ("kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 13",
         [("nvidia.xid.application", "0000:ed:00", NOT, "XID45")]),
        ("kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by previous Xid 1",
         [("nvidia.xid.application", "0000:ed:00", NOT, "XID45"),
          ("nvidia.xid.caused-by", "0000:ed:00", SUB, "XID1")]),
    ],
    note="""
Xid 45 (preemptive cleanup, the application's) that the driver says another Xid caused. The
first two lines are quoted from a public issue thread (tests/corpus/expected.tsv gives it):
NVLink Xids 149 and 145 behind the cleanup, a warning on the GPU coded with the cause. The last
two are constructed from them: a cause that is itself an application Xid (13) adds nothing, a
one-digit cause is read whole.""", source_type="kernel_log")

write_case("framework-forms-batch5", "training", "/var/log/training/job-16/rank-0.log", None,
    [
        ("(WorkerDict pid=904548) [E331 20:50:12.688969421 socket.cpp:1011] [c10d] The client socket has timed out after 1800000ms while trying to connect to (10.123.132.218, 38321).",
         [("pytorch.distributed.timeout", "", RBUS, "")]),
        ("[ERROR] HCCL(903,python3.8):2025-07-30-19:36:56.167.730 [transport_manager.cc:777] [16542][Create][DestLink]Transport init error! createLink para:rank[443]-localUserrank[443]-localIpAddr[], dst_rank[0]-remoteUserrank[0]-remoteIpAddr[2.2.2.2/1], machineType[1], serverId[], linkMode[1], tag[AllGather_group_name_0]",
         [("ascend.hccl.link-error", "", RBUS, "")]),
        ("[ERROR] HCCL(903,python3.8):2025-07-30-19:36:56.168.036 [transport_manager.cc:247] [3639][Create]errNo[0x0000000005000006] transport create fail in thread, local rank[443] remote rank[0]",
         [("ascend.hccl.link-error", "", RBUS, "")]),
        ("[EVENT] GE(370,python3):2023-07-13-07:42:40.517.453 [exception_dumper.cc:255]1432 LogExceptionTvmOpInfo:[AIC_INFO] node_name:GatherV2, node_type:GatherV2, stream_id:2, task_id:6",
         [("ascend.aicore.error", "", RBUS, "")]),
        none("[EVENT] GE(370,python3):2023-07-13-07:42:40.517.968 [exception_dumper.cc:260]1432 LogExceptionTvmOpInfo:[AIC_INFO] input:0;shape:[64];format:ND;dtype:DT_FLOAT;addr:0x124080044000"),
        ("Out of memory error on GPU 0. Cannot allocate 25.002197MB memory on GPU 0, available memory is only 15.187500MB.",
         [("nvidia.cuda.out-of-memory", "0", RBUS, "")]),
        ("[20:01:42] /home/travis/build/dmlc/mxnet-distro/mxnet-build/dmlc-core/include/dmlc/./logging.h:300: [20:01:42] src/storage/./pooled_storage_manager.h:80: cudaMalloc failed: out of memory",
         [("nvidia.cuda.out-of-memory", "", RBUS, "")]),
    ],
    note="""
Forms of other frameworks and tools, quoted (tests/corpus/expected.tsv gives each source): the
c10d store connect timeout behind a Ray worker prefix (verl-project/verl#849), the rank's pid
prefix peeled; HCCL's transport creation failures (MindCluster FaultDiag fixture, a plog); GE's
exception dump naming the failed AI Core kernel, whose later [AIC_INFO] lines add nothing
(hicann/oam-tools test data); PaddlePaddle's allocator (PaddlePaddle/PaddleOCR#1505) and
MXNet's (apache/mxnet#5340) running out of GPU memory.""")

write_case("nvidia-smi-inforom", "kernel", "/var/log/nvidia-smi.log", None,
    [
        none("|   7  Tesla V100-SXM2...  Off  | 00000008:00:00.0 Off |                    0 |"),
        ("WARNING: infoROM is corrupted at gpu 0008:00:00.0",
         [("nvidia.gpu.inforom-corrupted", "0008:00:00", SUB, "")]),
    ],
    note="""
nvidia-smi's warning under its table that a GPU's InfoROM is corrupted, quoted from a public
issue thread (tests/corpus/expected.tsv gives it), with a healthy row of the same table before
it (nothing).""")

write_case("nvidia-nccl-nvls", "training", "/var/log/training/job-17/rank-5.log", None,
    [
        ("[2026-06-23 15:45:07] gpu-stress-dgc86-xfpt6:420:437 [5] transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation cannot be performed in the present state'.",
         [("nvidia.nccl.nvls-failure", "5", SUB, "")]),
        none("gpu-stress-dgc86-xfpt6:420:437 [5] NCCL INFO NVLS multicast support is not available on dev 5"),
    ],
    note="""
NCCL failing to bind NVLink SHARP (NVLS) multicast memory, quoted from a public issue thread
(tests/corpus/expected.tsv gives it; a bracketed time before NCCL's own prefix, which names the
device). The INFO line after it is constructed from NCCL's wording about a GPU without NVLS
support: no failure.""")

write_case("ascend-lccl-init", "training", "/var/log/training/job-18/worker_3.log", None,
    [
        none("[2025-09-28 20:14:33.202731] [info] [710583] [lcal_comm.cpp:372] rank 3/4 running devId:3uid: 0"),
        ("[2025-09-28 20:14:33.202901] [error] [710583] [lcal_comm.cpp:375] init common failed!",
         [("ascend.lccl.init-failed", "3", RBUS, "")]),
    ],
    note="""
ATB's LCCL failing to set up its communicator, quoted from a public issue thread (xLLM-AI/xllm#215): the
runner's line names its device, the failure line after it (same process) takes it.""")

write_case("nvidia-nccl-ib-verbs", "training", "/var/log/training/job-19/rank-5.log", None,
    [
        none("host-01:2741:2790 [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>"),
        ('[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:xxx.xx.xx.xx, remote GID ::ffff:xxx.xx.xxx.xx',
         [("nvidia.nccl.ib-verbs-failure", "5", RBUS, "")]),
    ],
    note="""
NCCL's IB verbs wrapper failing to move a queue pair to ready-to-receive, quoted from a public
issue thread (NVIDIA/nccl#2013; tests/corpus/expected.tsv gives it; the [5] before NCCL WARN is
the process's CUDA device). The INFO line before it is constructed: no failure.""")

write_case("nvidia-nccl-blocking-wait", "training", "/var/log/training/job-20/rank-3.log", None,
    [
        none("[rank3]:[W1002 18:06:40.100000000 ProcessGroupNCCL.cpp:1250] Warning: TORCH_NCCL_BLOCKING_WAIT is enabled, the timeout of each collective is 600000 ms"),
        ('[rank3]:[E1002 18:16:40.711756918 ProcessGroupNCCL.cpp:756] [Rank 3] Work WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, NumelIn=160672064, NumelOut=160672064, Timeout(ms)=600000) timed out in blocking wait.',
         [("nvidia.nccl.watchdog-timeout", "", RBUS, "")]),
    ],
    note="""
PyTorch's blocking-wait form of a collective timeout, quoted from a public issue thread
(huggingface/diffusers#12422; [Rank 3] is a rank). The notice before it is constructed.""")

write_case("ascend-hccl-cluster-exception", "training", "/var/log/training/job-21/worker.log", None,
    [
        none('(RayWorkerWrapper pid=11394, ip=10.0.1.4) there are 8 abnormal device(s), only the first 3 devices are listed:                                                                                                                                                                          '),
        ('(RayWorkerWrapper pid=11394, ip=10.0.1.4)       Cluster Exception Location[IP/ID]:[10.0.1.3/0], Arrival Time:[Thu Jun 12 09:37:34 2025], ExceptionType:[Stuck Occurred], Possible Reason:1.Host process is stuck, 2.Device task is stuck                                                ',
         [("ascend.hccl.cluster-exception", "", RBUS, "")]),
        ('(RayWorkerWrapper pid=11394, ip=10.0.1.4)       Cluster Exception Location[IP/ID]:[10.0.1.3/1], Arrival Time:[Thu Jun 12 09:37:34 2025], ExceptionType:[Stuck Occurred], Possible Reason:1.Host process is stuck, 2.Device task is stuck                                                ',
         [("ascend.hccl.cluster-exception", "", RBUS, "")]),
        ('(RayWorkerWrapper pid=11394, ip=10.0.1.4)       Cluster Exception Location[IP/ID]:[10.0.1.3/7], Arrival Time:[Thu Jun 12 09:37:34 2025], ExceptionType:[Stuck Occurred], Possible Reason:1.Host process is stuck, 2.Device task is stuck                                                ',
         [("ascend.hccl.cluster-exception", "", RBUS, "")]),
        none('(RayWorkerWrapper pid=11394, ip=10.0.1.4) ]. group information: [group:[group_name_59], user define information[Unspecified], rankSize[2], rankId[1].]'),
    ],
    note="""
HCCL's cluster diagnosis behind a Ray worker prefix, quoted from a public issue thread
(tests/corpus/expected.tsv gives it): each listed location is a finding without a device (the
IP/ID names the abnormal device where it is); the header and the closing group line are none.""")

write_case("nvidia-gpu-lost-words", "kernel", "/var/log/nvidia-smi.log", None,
    [
        ('Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot the system to recover this GPU',
         [("nvidia.gpu.lost", "0000:C1:00", RNPU, "")]),
        none("Unable to determine the device handle for GPU 0000:C2:00.0: Insufficient Permissions"),
    ],
    note="""
nvidia-smi saying in words that a GPU is lost, quoted from a public issue thread
(NVIDIA/k8s-device-plugin#231); the permission error after it is constructed: no lost GPU.""")

write_case("nvidia-nvml-gpu-lost", "plog", "/var/log/kubelet/events.log", None,
    [
        none("Message:        Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: error creating nvml.Device 4: nvml: Insufficient Permissions"),
        ('Message:        Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown desc = Unable to retrieve list of available devices: error creating nvml.Device 5: nvml: GPU is lost, which is unexpected',
         [("nvidia.gpu.lost", "5", RNPU, "")]),
    ],
    note="""
NVML's Go binding naming a lost GPU in the kubelet's event, quoted from a public issue thread
(kubernetes/kubernetes#97131): the device is the NVML index ("nvml.Device 5"). The permission
error before it is constructed: no lost GPU.""")

write_case("xla-allocator-oom", "training", "/var/log/training/job-22/train.log", None,
    [
        none('2022-08-05 10:00:26.833817: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 9.00MiB (rounded to 9437184)requested by op '),
        none('2022-08-05 10:00:26.835182: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:491] *********************************************************************************x**************x***'),
        ('2022-08-05 10:00:26.835281: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/pjrt_stream_executor_client.cc:2130] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 9437184 bytes.',
         [("nvidia.cuda.out-of-memory", "0", RBUS, "")]),
    ],
    note="""
XLA's allocator of GPU 0 running out of memory, quoted from a public issue thread
(google-research/l2p#20): the allocator's line names the device ("GPU_0_bfc"), the
RESOURCE_EXHAUSTED line two lines later is the finding and takes it (replica 0 is no device).""")

write_case("fault-record-json", "plog", "/var/log/faultd/kubectl-describe-cm.log", None,
    [
        ('[{"FaultDeviceList":[{"fault_type":"CardNetworkUnhealthy","npu_name":"Ascend910-0","fault_level":"PreSeparateNPU","fault_handling":"PreSeparateNPU","large_model_fault_level":"PreSeparateNPU","fault_code":"81078603"},{"fault_type":"CardUnhealthy","npu_name":"Ascend910-4","fault_level":"SeparateNPU","fault_handling":"SeparateNPU","large_model_fault_level":"SeparateNPU","fault_code":"A8028801,A4028801,80E18402,80E18401"}],"NodeName":"node133","UnhealthyNPU":["Ascend910-4"],"NetworkUnhealthyNPU":["Ascend910-0"],"NodeDEnable":true,"NodeHealthState":"CardUnhealthy","UpdateTime":1744182212}]',
         [("ascend.fault-record.json", "0", "PreSeparateNPU", "")]),
        none('[{"FaultDeviceList":[],"NodeName":"node133","UnhealthyNPU":[],"NetworkUnhealthyNPU":[],"NodeDEnable":true,"NodeHealthState":"Healthy","UpdateTime":1744182212}]'),
        (r'{"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-1,Ascend910-2","huawei.com/Ascend910-Fault":"[{\"fault_type\":\"CardUnhealthy\",\"npu_name\":\"Ascend910-2\",\"large_model_fault_level\":\"SeparateNPU\",\"fault_level\":\"SeparateNPU\",\"fault_handling\":\"SeparateNPU\",\"fault_code\":\"80E18402\"}]"},"UpdateTime":1744182212},"CheckCode":"0"}',
         [("ascend.fault-record.json", "2", SEP, "")]),
        (r'[{"fault_type":"CardUnhealthy","npu_name":"Ascend910-6","fault_level":"NotHandleFault","fault_code":"80C98009"}]',
         [("ascend.fault-record.json", "6", NOT, "")]),
    ],
    note="""
MindCluster's JSON fault records in text: the first line is Volcano's vcjob-fault-npu-cm as
`kubectl describe cm` prints it (quoted from MindCluster's scheduling documentation,
tests/corpus/expected.tsv gives it; two records, the first on the line wins); the others are
constructed in the Device Plugin's DeviceInfoCfg shape (a fault list as a JSON string inside
JSON: escaped quotes, another key between npu_name and fault_level) and a record whose own level
is NotHandleFault (recorded, no alarm). The record with an empty fault list gives nothing.""")

write_case("nvidia-cuda-driver-names", "training", "/var/log/training/job-22/worker.log", None,
    [
        ('E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 cuMemAllocAsync failed to allocate 1225195446464 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory',
         [("nvidia.cuda.out-of-memory", "", RBUS, "")]),
        none('2018-11-06 11:32:27.452152: E tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:706] failed to record completion event; therefore, failed to create inter-stream dependency'),
        ('2018-11-06 11:32:27.452227: E tensorflow/stream_executor/stream.cc:325] Error recording event in stream: error recording CUDA event on stream 0x7f51f5847720: CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was terminated; not marking stream as bad, as the Event object may be at fault. Monitor for further errors.',
         [("nvidia.cuda.launch-timeout", "", RBUS, "")]),
        ('2018-11-06 11:32:27.452268: E tensorflow/stream_executor/cuda/cuda_event.cc:48] Error polling for event status: failed to query event: CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was terminated',
         [("nvidia.cuda.launch-timeout", "", RBUS, "")]),
        none('2018-11-06 11:32:27.452292: F tensorflow/core/common_runtime/gpu/gpu_event_mgr.cc:274] Unexpected Event status: 1'),
        none("2018-11-06 11:31:02.120345: I tensorflow/stream_executor/cuda/cuda_driver.cc:300] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"),
        none("E0000 00:00:1700000000.000000 1 cuda_executor.cc:1001] could not open file to read NUMA node: CUDA_ERROR_NOT_SUPPORTED"),
        none("2020-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory"),
        none("2020-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to alloc 2304 bytes on host: CUDA_ERROR_UNKNOWN"),
    ],
    note="""
The CUDA driver API's error names (CUDA_ERROR_*) as the stream executors of XLA and TensorFlow
print them, quoted from public issue threads (tests/corpus/expected.tsv gives each): XLA's async
allocator failing with CUDA_ERROR_OUT_OF_MEMORY (NovaSky-AI/SkyRL#624) and TensorFlow's event
polling after CUDA_ERROR_LAUNCH_TIMEOUT (hkust-vgd/pointwise#9; the first line, a failed event
record, and the last, the fatal "Unexpected Event status", name no error). The last four lines
are constructed look-alikes: no GPU present, a feature not supported, and TensorFlow's pinned
host allocator failing on host memory (out of memory, unknown error), which it retries.""")

write_case("nvidia-nccl-flight-recorder", "training", "/var/log/training/job-23/rank-0.log", None,
    [
        none('[rank0]:[E804 23:05:54.816499929 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.'),
        ("[rank0]:[E804 23:05:54.817424543 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 13 and we will try our best to dump the debug info. Last enqueued NCCL work: 1261, last completed NCCL work: 1259.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
         [("nvidia.nccl.watchdog-timeout", "", RBUS, "")]),
        none('[rank0]:[E804 23:05:54.818690144 ProcessGroupNCCL.cpp:1628] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1, only active collectives: 0'),
    ],
    note="""
A rank that did not time out itself learns of another rank's collective timeout through the
store and dumps its flight recorder, quoted from a public issue thread (PrimeIntellect-ai/
prime-rl#3186; "rank 13" is a rank, not a device). Only the line that says a collective timed
out is a finding.""")

write_case("ascend-aicpu-exception-task", "training", "/var/log/training/job-24/predict.log", None,
    [
        none('EXCEPTION TASK:'),
        ('  Exception info:TGID=1134286, model id=65535, stream id=21, stream phase=SCHEDULE, task id=3377, task type=aicpu kernel, recently received task id=3377, recently send task id=3376, task phase=RUN',
         [("ascend.aicpu.error", "", RBUS, "")]),
        none('  Message info[0]:aicpu=0,slot_id=0,report_mailbox_flag=0x5a5a5a5a,state=0x5210'),
        none('    Other info[0]:time=2024-06-19-23:19:23.004.854, function=proc_aicpu_task_done, line=970, error code=0x2a'),
        none("  Exception info:TGID=196191, model id=65535, stream id=3, stream phase=3"),
    ],
    note="""
The device's record of a failed AI CPU task in torch_npu's exception dump, quoted from a public
issue thread (hiyouga/LlamaFactory#4372; the DEVICE[N] header was not printed with it, so no
device). The task type names the AI CPU; the last line, an exception record of another dump
that names no task type (hiyouga/LlamaFactory#3670), is left to the message line after it.""")

write_case("nvidia-gke-node-condition", "kubernetes", "/var/log/nodes/describe-node.txt", None,
    [
        ('  XidCriticalError     True    Mon, 23 Jun 2025 18:45:43 +0000   Mon, 23 Jun 2025 18:44:57 +0000   {"31":true}                  6e43a052-e544-467b-a972-63d7cd2ce80a',
         [("nvidia.gke.xid-node-condition", "", NOT, "XID31")]),
        none("  XidCriticalError     False   Mon, 23 Jun 2025 18:40:00 +0000   Mon, 23 Jun 2025 18:40:00 +0000   {}                           6e43a052-e544-467b-a972-63d7cd2ce80a"),
        none("  MemoryPressure       False   Mon, 23 Jun 2025 18:45:43 +0000   Mon, 23 Jun 2025 18:44:57 +0000   KubeletHasSufficientMemory   kubelet has sufficient memory available"),
    ],
    note="""
GKE's GPU device plugin sets a node condition XidCriticalError, its message the Xids as JSON;
`kubectl describe node` prints it as a row of the conditions table, quoted from a public issue
thread (GoogleCloudPlatform/container-engine-accelerators#497; an Xid 31 the reporter
triggered). The node's, no GPU named, and recorded: an Xid 31 is the application's, and the
kernel's Xid line carries the device and the level. The other two rows are constructed in the
same table's shape: the condition False, and another condition.""")

write_case("framework-forms-batch9", "training", "/var/log/training/job-25/worker.log", None,
    [
        ('horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: unhandled cuda error',
         [("nvidia.nccl.error", "", RBUS, "")]),
        none("horovod.common.exceptions.HorovodInternalError: ncclAllReduce failed: invalid usage"),
        ('[ERROR] TSCH(-1,null):2020-06-04-10:51:09.520.395 28 (cpuid:0) ai_core_dispatcher.c:1012 bs_done_exception_proc_timeout: slot_id=1,TS_ctrl=0x4,exception_core_list=0x0,current core usage=0x1,AI_CORES_COUNT=2, fault_task=0',
         [("ascend.aicore.error", "", RBUS, "")]),
        ('[PID: 3448331] 2025-12-04-21:59:08.232.310 Execution Error ROCE CQE(EI0013): An error CQE occurred during operator execution. Local information: server 127.0.0.1, device ID 0, device IP 127.10.0.1. Peer information: server 127.0.0.2, device ID 1, device IP 127.10.0.2.',
         [("ascend.network.rdma-cqe-error", "0", SUB, "")]),
        none("Possible Cause: 1. The network between two devices is abnormal. For example, the network port is intermittently disconnected.2. The peer process exits abnormally in advance. As a result, the local end cannot receive the response from the peer end."),
    ],
    note="""
Quoted from public sources (tests/corpus/expected.tsv gives each): Horovod naming the NCCL call
that failed with an unhandled CUDA error (horovod/horovod#3618), the device TS scheduler's AI
Core task timeout (the Ascend case library), and HCCL's EI0013 report of an error CQE, whose
local device is the first "device ID" (the HCCL user guide; its "Possible Cause" line after it
is no report). The invalid-usage line is constructed: the application's, no fault.""")

write_case("nvidia-ggml-current-device", "training", "/var/log/training/job-26/server.log", None,
    [
        ('1.35.381.106 E CUDA error: the launch timed out and was terminated',
         [("nvidia.cuda.launch-timeout", "0", RBUS, "")]),
        none('1.35.381.108 E   current device: 0, in function ggml_backend_cuda_synchronize at /home/mukmckenzie/Documents/GitHub/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2530'),
    ],
    note="""
llama.cpp's ggml reports a CUDA error and, on the next line, "current device: 0", quoted from a
public issue thread (ggml-org/llama.cpp#27102): the device comes from the neighbouring line.""")

write_case("ascend-npu-smi-table-in-log", "training", "/var/log/training/job-27/launch.log", None,
    [
        none("| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|"),
        ('| 0     Ascend910           | Alarm         | 161.8       34                0    / 0             |',
         [("ascend.npu-smi.table-health-in-log", "0", SUB, "")]),
        none("| 0     0                   | 0000:9D:00.0  | 0           0    / 0          3165 / 65536         |"),
        none("| 1     Ascend910           | OK            | 158.2       35                0    / 0             |"),
        ('| 6     910B3               | Critical      | 95.5        40                0    / 0             |',
         [("ascend.npu-smi.table-health-in-log", "6", SUB, "")]),
        none("| 3     sda                 | Warning       | SMART: reallocated sectors                          |"),
    ],
    note="""
An npu-smi info table a job's launch script printed into its log. The header and the Alarm row
of card 0 with its chip row are quoted from a public issue thread (vllm-project/vllm-ascend#9824,
an A3 node); the OK and Critical rows are constructed in the same shape, and the last row is
another tool's table: its second cell names no Ascend chip.""")

write_case("command-output-of-a-failed-run", "gpu-health", "nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader", None,
    [
        ("Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.  Reboot the system to recover this GPU",
         [("nvidia.gpu.lost", "0000:C1:00", RNPU, "")]),
        none("npu-smi health: device=3 status=OK recovered"),
        none('probe: device=5 status=unresponsive failures=3 reason="timed out after 3s"'),
        none("deviceinfo: device=2 status=Fault code=8C084E00 fault_level=RestartBusiness"),
    ],
    note="""
What a command printed when its run failed (source type command_output): its error message goes
to the rules like a log's line, so nvidia-smi's "GPU is lost" (quoted from a public issue thread,
NVIDIA/k8s-device-plugin#231) is a finding, but it is never taken for one of faultd's own records:
the record lines, were a tool to print them, raise and clear nothing (the record rules take
`source_types: [command]`). The record lines are constructed in faultd's own format.""",
    source_type="command_output")

write_case("framework-forms-batch10", "training", "/var/log/training/job-28/worker.log", None,
    [
        ("FloatingPointError: Loss became infinite or NaN at iteration=137!",
         [("training.framework.numerics-stop", "", SUB, "")]),
        ("[rank2]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
         [("pytorch.distributed.timeout", "", RBUS, "")]),
        ("slurmstepd: error: NVML: Failed to get usage(15): GPU is lost",
         [("nvidia.gpu.lost", "", RNPU, "")]),
        none("2020-11-28 09:40:14.792808: W tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed at image_resizer_state.h:142 : Resource exhausted: OOM when allocating tensor with shape[1,416,416,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu"),
        ("RuntimeError: Malloc for kernel output failed, Memory isn't enough, node:Default/Cast-op446",
         [("ascend.memory.device-oom", "", RBUS, "")]),
        ("[2025-11-25 17:23:11,888] [249] [281471718846752] [llm] [ERROR] [logging.py-348] : Warmup failed, because of multimodal model inference out of memory when `maxInputTokenLen` set to 8192. Please try to decrease `maxPrefillTokens` in config.json of mindie-service.",
         [("ascend.memory.device-oom", "", RBUS, "")]),
        ("/root/ascend/log/debug/plog/plog-1012_20260714155522356.log:158:[ERROR] RUNTIME(1012,):2026-07-14-15:55:27.012.914 [device_error_core_proc.cc:399]1093 CheckSmmuFault:Get isSmmuFault is 1.",
         [("ascend.aicore.error", "", RBUS, "")]),
        none("EH9999: [PID: 1439] 2025-04-28-02:50:24.965.356 [Init][PlatformInfo]init runtime platform info failed, SocVersion = Ascend910B2[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]"),
    ],
    note="""
Lines of a tenth and an eleventh batch of public samples, each verbatim from its issue thread
(tests/corpus/expected.tsv gives each): detectron2 stopping for a NaN loss
(youngwanLEE/centermask2#9), a gloo barrier timing out (meta-pytorch/torchtune#2676), Slurm's
step daemon reading NVML's GPU-is-lost status (LSSI-ETH/plmfit#40), MindSpore's PyNative
runner and MindIE's warm-up out of device memory (mindspore-lab/mindone#465,
gpustack/gpustack#3541), the runtime finding an SMMU fault behind an AI Core exception
(vllm-project/vllm-ascend#11859). Two look-alikes: TensorFlow's CPU allocator out of host RAM
(tensorflow/tensorflow#45238) and CANN failing to initialise for a SoC it was not installed for
(vllm-project/vllm-ascend#692).""")


write_case("framework-forms-batch12", "training", "/var/log/training/job-29/worker.log", None,
    [
        ('thread \'main\' panicked at \'Unable to warmup model: Generation("Allocation on device 0 would exceed allowed memory. (out of memory)\\nCurrently allocated     : 16.08 GiB\\nRequested               : 4.83 GiB\\nDevice limit            : 22.20 GiB\\nFree (according to CUDA): 11.12 MiB\\nPyTorch limit (set by user-supplied memory fraction)\\n                        : 22.20 GiB")\', router/src/main.rs:216:18',
         [("nvidia.cuda.out-of-memory", "0", RBUS, "")]),
        ("worker0-0d9gnb:15:91 [3] include/socket.h 398 NCCL WARN Call to write failed : Connection reset by peer.",
         [("nvidia.nccl.network-error", "3", RBUS, "")]),
        none("worker0-0d9gnb:15:91 [3] transport.cu:153 NCCL WARN transport.cu:153 ->2 [Proxy thread error]"),
        ("node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
         [("nvidia.nccl.nvls-failure", "2", SUB, "")]),
        ("[rank15]:[E423 18:59:04.197939154 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 15] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang. ",
         [("nvidia.nccl.watchdog-timeout", "", RBUS, "")]),
        ("Exception: Skipped 50 iterations in a row due to Overflow - Exiting training.",
         [("training.framework.numerics-stop", "", SUB, "")]),
    ],
    note="""
Lines of a twelfth and a thirteenth batch of public samples, each verbatim from its issue thread
(tests/corpus/expected.tsv gives each): PyTorch's allocator over its per-process memory fraction
as TGI's router reports it (huggingface/text-generation-inference#563), an NCCL socket write
reset by the peer and the proxy thread's follow-up (NVIDIA/nccl#193; the second line is the
same event, none), a CUDA call of NCCL's NVLS transport failing after a fabric-manager restart
(NVIDIA/nccl#1488), ProcessGroupNCCL's watchdog itself stuck (modelscope/ms-swift#9191), and
GPT-NeoX's overflow monitor stopping the job (EleutherAI/gpt-neox#482).""")


write_case("ascend-hccl-call-rejected", "plog", "/var/log/npu/slog/plog/plog-3729526_20251023173040.log", None,
    [
        none('[ERROR]HCCL(3729526,python3.11):2025-10-23-17:30:40.098.973 [externalinput.cc:963] [3729526][Parse][rdmaServerLevel]HCCL_RDMA_SL[1000] is invalid. except: [0, 7]'),
        none('[ERROR]HCCL(3729526,python3.11):2025-10-23-17:30:40.099.058 [externalinput.cc:169] [3729526][InitGroupStage][EnvConfig]errNo[0x0000000005000001] In init env variable param, parse HCCL_RDMA_SL failed. errno[1]'),
        ('[ERROR]HCCL(3729526,python3.11):2025-10-23-17:30:40.099.063 [externalinput.cc:47] [3729526][InitExternalInput]call trace: hcclRet -> 1',
         [("ascend.hccl.call-rejected", "", NOT, "")]),
        ('[ERROR]HCCL(3729526,python3.11):2025-10-23-17:30:40.099.068 [op_base.cc:866] [3729526][HcclGetRootInfo]call trace: hcclRet -> 1',
         [("ascend.hccl.call-rejected", "", NOT, "")]),
    ],
    note="""
HCCL refusing an environment variable at communicator set-up, verbatim from the HCCL guide's
EI0001 example (hicann/hccl@1bb23ddbf917ff2cb534f52456e649e7dabaacfa:docs/zh/user_guide/fault_diagnosis/hccl_rdma_sl_config_error_EI0001.md#L30-L33): the call trace's result 1 is HCCL_E_PARA, a parameter the caller gave
wrong, so the job's configuration, recorded; not a failed collective.""")


write_case("ascend-hccl-alloc-transports", "plog", "/var/log/npu/slog/plog/plog-72_20250217125340.log", None,
    [
        none('[INFO] HCCL(42,python):2025-02-20-16:27:32.540.044 [hcom.cc:454][42]Entry-HcomAllReduce:tag[HcomAllReduce_6629421139219749105_1], inputPtr[0x12c3bcb06c00], outputPtr[0x12c39e106000], count[22348800], dataType[float32], op[sum], group[hccl_world_group1], streamId[13], deviceLogicId[0]'),
        ('[ERROR] HCCL(72,python):2025-02-17-12:53:40.935.776 [hccl_socket_manager.cc:627][92026]the connection failure between this device and target device may be due to the following reasons:',
         [("ascend.hccl.link-error", "", RBUS, "")]),
        ('[ERROR] HCCL(72,python):2025-02-17-12:53:41.036.530 [hccl_communicator.cc:5007][2682][AllocAlgResource]Alloc transports failed, tag[HcomAllReduce_6629421139219749105_0_host]',
         [("ascend.hccl.link-error", "", RBUS, "")]),
        none('[ERROR] HCCL(72,python):2025-02-17-12:53:41.036.583 [hcom.cc:476][2682][AllReduce][Result]errNo[0x0000000005010006] hcclComm all reduce error, tag[HcomAllReduce_6629421139219749105_1], input_ptr[0x12c3bcb06c00], output_ptr[0x12c39e106000], count[22348800], data_type[float32], op[sum]'),
    ],
    note="""
HCCL failing to build the links of an all-reduce, verbatim from a MindCluster FaultDiag fixture
(xiaobingling93-pixel/Ascend-mind-cluster@6a9e7fabfb68e226ef3ff532b08e2e0ccab7bf01:component/ascend-faultdiag/test/st_module_testcase/rc_parse/socket_timeout.log#L1-L5,
tests/corpus/expected.tsv): the socket manager's "connection failure between this device and
target device" advice and the communicator's "Alloc transports failed" are the link failure;
the operation's own error line after them (errNo ...0006, "hcclComm all reduce error") is the
same event and gives nothing more.""")


write_case("ascend-kbox-hbm-multi-bit-ecc", "device-log", "/var/log/npu/bundle/kbox-grep.txt", None,
    [
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2014[2454.830692] {6}[Hardware Error] Hardware error from APEI Generic Hardware Error Source: 0'),
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2015[2454.830693] {6}[Hardware Error]event severity: recoverable'),
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2016[2454.830694] {6}[Hardware Error] Error 0, type: recoverable'),
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2017[2454.830696] {6}[Hardware Error]  section_type: memory error'),
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2018[2454.830697] {6}[Hardware Error]  physical_address: 0x0000101efe36d3c0'),
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2019[2454.830699] {6}[Hardware Error]  node: 2 card: 259 module: 51 rank: 1 bank: 10 row: 30691  column: 56'),
        ('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2020[2454.830701] {6}[Hardware Error]  error_type: 3, multi-bit ECC',
         [("ascend.device.system-exception", "2", RBUS, "")]),
        none('/hisi_logs/device-2/20240420162417-271713000/bbox/kbox.txt:2024[2454.830702] {6}[Hardware Error]  DIMM location: not present. DMI handle: 0x0000'),
    ],
    note="""
A device's black box searched with grep -rn, verbatim from the CANN troubleshooting guide's HBM
multi-bit ECC case (https://www.hiascend.com/document/detail/en/canncommercial/800/maintenref/troubleshooting/troubleshooting_0008.html, tests/corpus/expected.tsv): the kernel's APEI memory record of the
device OS, "error_type: 3, multi-bit ECC", is an uncorrectable HBM error; the device is the
hisi_logs/device-2/ directory the grep envelope names. The record's other lines say nothing
more.""")


write_case("ascend-hccl-glog-check", "training", "/var/log/xllm/xllm.INFO", None,
    [
        none('I20251111 12:28:58.490254 215011 worker_server.cpp:72] Create worker server with device: 0'),
        ('F20251111 12:28:58.504206 214989 collective_service.cpp:37] Check failed: status == HCCL_SUCCESS (1 vs. 0) HCCL get root info failed.',
         [("ascend.hccl.api-failed", "0", RBUS, "")]),
        none('*** Check failure stack trace: ***'),
        none('    @           0x7ccb7f  google::LogMessage::SendToLog()'),
        none('    @           0x7c94e2  google::LogMessage::Flush()'),
        none('    @           0x7cd289  google::LogMessageFatal::~LogMessageFatal()'),
        none('    @          0x29206c4  xllm::CollectiveService::CollectiveService()'),
        none('    @           0xd2502c  xllm::DistManager::setup_multi_node_workers()'),
        none('    @           0xd25d62  xllm::DistManager::DistManager()'),
        none('    @           0xc58c6f  xllm::LLMEngine::setup_workers()'),
    ],
    note="""
An inference engine's glog check of an HCCL call failing while it sets up its workers, verbatim
from a public issue thread (xLLM-AI/xllm#350, tests/corpus/expected.tsv): "Check failed: status
== HCCL_SUCCESS (1 vs. 0)" is a failed HCCL call; the worker line before it, from another thread
of the same process, names device 0.""")


write_case("held-out-18-forms-kernel", "kernel", "/var/log/kern.log", None,
    [
        ("[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
         [("nvidia.gpu.lost", "0000:03:00", RNPU, "")]),
        none("[  +0.000001] snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)"),
        none('[  +0.000008] pcieport 0000:00:03.0: AER: device recovery failed'),
        none('[  +0.000001] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0'),
        none('[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)'),
        none('[  +0.000898] pcieport 0000:00:03.0:   device [8086:6f08] error status/mask=00004020/00000000'),
        none('[  +0.000889] pcieport 0000:00:03.0:    [ 5] SDES                  '),
        none('[  +0.000894] pcieport 0000:00:03.0:    [14] CmpltTO                (First)'),
        ("[  +0.000921] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
         [("nvidia.gpu.lost", "0000:03:00", RNPU, "")]),
        none("[  +0.000002] snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)"),
        none('[  +1.050439] pcieport 0000:00:03.0: AER: Root Port link has been reset (0)'),
        none('[  +0.000041] pcieport 0000:00:03.0: AER: device recovery failed'),
    ],
    note="""
The kernel's PCIe error recovery giving a GPU up after an uncorrectable (fatal) error, verbatim
from a public issue thread (rwth-i6/returnn#1500, tests/corpus/expected.tsv): "nvidia
0000:03:00.0: AER: can't recover" is the GPU lost until it is reset (nvidia.gpu.lost, on the
bus the line names, each time it is said); the root port's own lines and the GPU's audio
function say nothing of a GPU.""")


write_case("held-out-18-forms-training", "training", "/var/log/training/job-33/train.log", None,
    [
        ('Call aclrtSynchronizeStream(reinterpret_cast<aclrtStream>(stream)) failed : 507015 at file /workspace/PaddleCustomDevice/backends/npu/runtime/runtime.cc line 408',
         [("ascend.runtime.error-code", "", RBUS, "")]),
        none('E10404: Output indexed [0] requires a 18446744073709551615 buffer, but 589856 (aligned) are allocated.'),
        ('[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory (/data/TensorRT-LLM/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)',
         [("nvidia.cuda.out-of-memory", "", RBUS, "")]),
        none('1       0x5601283f70e5 void tensorrt_llm::common::check<cudaError>(cudaError, char const*, char const*, int) + 149'),
        none('2       0x7ff6ff543918 virtual thunk to tensorrt_llm::runtime::GenericTensor<tensorrt_llm::runtime::CudaAllocatorAsync>::reshape(nvinfer1::Dims32 const&) + 456'),
    ],
    note="""
Two spellings of an eighteenth batch of public samples (tests/corpus/expected.tsv gives each):
PaddlePaddle's custom device printing a CANN return code after "failed :" with a blank before
the colon (PaddlePaddle/PaddleCustomDevice#706; the E10404 line after it is the operator's),
and TensorRT-LLM's check of a CUDA call that ran out of device memory, "CUDA runtime error in
::cudaMallocAsync(...): out of memory" (NVIDIA/TensorRT-LLM#498); the stack frames after it
give nothing.""")


write_case("ascend-hccn-link-stat", "plog", "/var/log/npu/env-check/npu_info_after.txt", None,
    [
        none('/usr/local/Ascend/driver/tools/hccn_tool -i 0 -link_stat -g'),
        none('[devid 0]current time        : Wed Aug  2 03:36:43 2022'),
        none('[devid 0]link up count       : 2'),
        none('[devid 0]link change records :'),
        ('[devid 0]    Tue Aug  1 14:44:40 2022    LINK DOWN',
         [("ascend.network.link-down", "0", SUB, "")]),
        none('[devid 0]    Tue Aug  1 14:43:40 2022    LINK UP'),
        none('[devid 0]    Tue Aug  1 14:43:40 2022    LINK DOWN'),
        none('[devid 0]    Tue Aug  1 14:43:26 2022    LINK UP'),
        none(''),
        none('/usr/local/Ascend/driver/tools/hccn_tool -i 1 -link_stat -g'),
        none('[devid 1]current time        : Wed Aug  2 03:36:43 2022'),
        none('[devid 1]link up count       : 2'),
        none('[devid 1]link change records :'),
        none('[devid 1]    Tue Aug  1 14:43:40 2022    LINK UP'),
        none('[devid 1]    Tue Aug  1 14:43:40 2022    LINK DOWN'),
        none('[devid 1]    Tue Aug  1 14:43:26 2022    LINK UP'),
        none(''),
        none('/usr/local/Ascend/driver/tools/hccn_tool -i 2 -link_stat -g'),
        none('[devid 2]current time        : Wed Aug  2 03:36:44 2022'),
        none('[devid 2]link up count       : 2'),
        none('[devid 2]link change records :'),
        none('[devid 2]    Tue Aug  1 14:43:40 2022    LINK UP'),
        none('[devid 2]    Tue Aug  1 14:43:40 2022    LINK DOWN'),
        none('[devid 2]    Tue Aug  1 14:43:26 2022    LINK UP'),
        none(''),
        none('/usr/local/Ascend/driver/tools/hccn_tool -i 3 -link_stat -g'),
        none('[devid 3]current time        : Wed Aug  2 03:36:44 2022'),
        none('[devid 3]link up count       : 2'),
        none('[devid 3]link change records :'),
        ('[devid 3]    Tue Aug  1 14:44:40 2022    LINK DOWN',
         [("ascend.network.link-down", "3", SUB, "")]),
        none('[devid 3]    Tue Aug  1 14:43:40 2022    LINK UP'),
        none('[devid 3]    Tue Aug  1 14:43:40 2022    LINK DOWN'),
        none('[devid 3]    Tue Aug  1 14:43:26 2022    LINK UP'),
    ],
    note="""
hccn_tool's link history of four NPUs' RoCE ports, verbatim from a MindCluster FaultDiag
fixture (xiaobingling93-pixel/Ascend-mind-cluster@6a9e7fabfb68e226ef3ff532b08e2e0ccab7bf01:component/ascend-faultdiag/test/st_testcase/modelarts-job-testdt/ascend/environment_check/worker-0/npu_info_after.txt, tests/corpus/expected.tsv): the changes are listed newest first, so devid 0 and
devid 3, whose newest record is LINK DOWN, are down now; devid 1 and 2 went down once and came
back up (a flap that recovered), and an older LINK DOWN in any history says nothing.""")


write_case("held-out-19-nccl-watchdog-failure", "training", "/var/log/sglang/node0.log", None,
    [
        none('distributed-sglang-0:206:10697 [1] NCCL INFO Connected all trees'),
        none('distributed-sglang-0:206:10723 [1] NCCL INFO [Proxy Progress] Device 1 CPU core 19'),
        ('[rank1]:[E909 08:45:30.126335825 ProcessGroupNCCL.cpp:2252] [PG ID 2 PG GUID 3 Rank 1]  failure detected by watchdog at work sequence id: 40231 PG status: last enqueued work: 40267, last completed work: 40230',
         [("nvidia.nccl.watchdog-timeout", "1", RBUS, "")]),
        none('[rank1]:[E909 08:45:30.126354868 ProcessGroupNCCL.cpp:732] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.'),
        none('distributed-sglang-0:206:10697 [1] NCCL INFO threadThresholds 8/8/64 | 128/8/64 | 512 | 512'),
        none('distributed-sglang-0:206:10697 [1] NCCL INFO 16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer'),
        none('distributed-sglang-0:206:10697 [1] NCCL INFO ncclCommInitRankConfig comm 0x7f6d407d2450 rank 1 nranks 16 cudaDev 1 nvmlDev 1 busId 2a000 commId 0xb7dbcefd01419470 - Init COMPLETE'),
        none('distributed-sglang-0:206:10697 [1] NCCL INFO Init timings - ncclCommInitRankConfig: rank 1 nranks 16 total 2.14 (kernels 0.00, alloc 0.00, bootstrap 0.07, allgathers 0.15, topo 0.05, graphs 1.41, connections 0.42, rest 0.03)'),
    ],
    note="""
PyTorch's newer ProcessGroupNCCL watchdog wording, verbatim from a public issue thread
(sgl-project/sglang#10216, tests/corpus/expected.tsv): "failure detected by watchdog at work
sequence id" is a collective that failed; the rank's GPU is cudaDev 1, the "[1]" of the NCCL
lines of the same process around it.""")


write_case("held-out-19-torch-npu-inner-error", "training", "/var/log/lmdeploy/engine.log", None,
    [
        ('2024-09-20 07:49:24,787 - lmdeploy - ERROR - Engine loop failed with error: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is aclnnFlashAttentionVarLenScore.',
         [("ascend.runtime.task-exception", "0", RBUS, "")]),
        none('Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want to get the accurate stacktrace, pleace set the environment variable ASCEND_LAUNCH_BLOCKING=1.'),
        none('[ERROR] 2024-09-20-07:49:24 (PID:759, Device:0, RankID:-1) ERR00100 PTA call acl api failed'),
    ],
    note="""
torch_npu reporting the runtime's inner error of an operator and exiting, verbatim from a public
issue thread (InternLM/lmdeploy#2471, tests/corpus/expected.tsv): "The process exits for this
inner error" is the failed task (the job's level; an operator the card does not support is as
likely as the device); the torch_npu tuple printed after it names device 0.""")


write_case("held-out-19-msaicerr-report", "device-log", "/var/log/npu/msaicerr/info.txt", None,
    [
        none('***********************1. Basic information********************'),
        none('error time : 2020-08-26-11:24:07'),
        none('device id : 0'),
        none('core id : 0'),
        none('task id : 60'),
        none('stream id : 517'),
        none('node name : trans_TransData_167'),
        none('kernel name : te_transdata_16b6e15e2a5cc7f70_33e5fb7ae8478ddb'),
        none('op address : 0x101000120000'),
        none('args address : 0X101000053000'),
        ('***********************2. AICERROR code***********************',
         [("ascend.aicore.error", "0", RBUS, "")]),
        none('code : 0x10'),
        none('CCU_ERR_INFO: 0xb166486200070074'),
        none('ccu_err_addr bit[22:8]=000011100000000 meaning:CCU Error Address [17:3] approximate:0x3800'),
    ],
    note="""
The CANN AI Core error analyser's (msaicerr) report, verbatim from its documentation
(https://www.hiascend.com/document/detail/zh/canncommercial/601/devtools/auxiliarydevtool/atlasaicoreerr_16_0006.html,
tests/corpus/expected.tsv): its "AICERROR code" section is an AI Core error; the device is the
report's "device id : 0" above it.""")


# NVIDIA families of issue #32: nvidia-smi values in error, the driver's reset-required and
# assert lines, THC-era CUDA errors, NCCL's IB async fatal events.
SMI_ERR, SMI_RESET = "nvidia.smi.value-error", "nvidia.smi.requires-reset"
write_case("nvidia-smi-values-in-error", "training", "/var/log/training/job-40/healthcheck.log", None,
    [
        none("| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |"),
        none("|-------------------------------+----------------------+----------------------+"),
        none("| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |"),
        none("| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |"),
        none("|                               |                      |               MIG M. |"),
        none("|===============================+======================+======================|"),
        none("|   2  NVIDIA A30          Off  | 00000000:41:00.0 Off |                    0 |"),
        none("| N/A   42C    P0   141W / 165W |  14992MiB / 24576MiB |     33%      Default |"),
        none("|                               |                      |             Disabled |"),
        none("+-------------------------------+----------------------+----------------------+"),
        ("|   3  ERR!                Off  | 00000000:61:00.0 Off |                 ERR! |",
         [(SMI_ERR, "00000000:61:00", SUB, "")]),
        ("|ERR!  ERR! ERR!    ERR! / ERR! |  23025MiB / 24576MiB |    ERR!      Default |",
         [(SMI_ERR, "", SUB, "")]),
        none("|                               |                      |                 ERR! |"),
        none("+-------------------------------+----------------------+----------------------+"),
        none("|   1  Tesla V100-PCIE...  On   | 00008ED0:00:00.0 Off |                    0 |"),
        none("| N/A   29C    P0   ERR! / 250W |    593MiB / 16160MiB |      0%      Default |"),
        none("index, temperature.gpu, utilization.gpu [%], memory.used [MiB]"),
        ("0, [GPU requires reset], [GPU requires reset], 0 MiB", [(SMI_RESET, "", RNPU, "")]),
        ("3, 00000000:61:00.0, [Unknown Error], [Unknown Error]", [(SMI_ERR, "00000000:61:00", SUB, "")]),
        none("the launcher refuses a device whose utilisation reads `[N/A]` or `[GPU requires reset]`,"),
        none("                print(colored(text=f'Failed: [Unknown Error] | [{result}]', color='red'))"),
    ],
    note="""
nvidia-smi values NVML could not read, printed into a job's health-check log. Quoted: the table
(its header, GPU 2 and GPU 3 rows, the separators) from NVIDIA/open-gpu-kernel-modules#446 (turn
by fighterhit, driver 525.85.12, an A30 lost after Xid 119 GSP timeouts): GPU 3's first row
names its bus id and gives a finding with that device, its second row (all ERR!) one without a
device, its third row (one ERR!, the MIG mode) none; the V100 rows with one transient ERR! power
reading from Azure/azhpc-diagnostics#77 (no fault, the issue says so). Constructed in the
documented formats (no real line with its source found): the --query-gpu CSV with "[GPU requires
reset]" and with "[Unknown Error]" (its bus id column names the device). Look-alikes:
a runbook sentence quoting the words and a Python line printing "[Unknown Error] |" (no cell).""")

write_case("nvidia-driver-reset-required", "kernel", "/var/log/kern.log", None,
    [
        none("[Mon Jan  1 12:00:00 2024] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; hParent=0x5c000054; hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; paramsStatus=0x00000062; status=0x00000062"),
        ("[Mon Jan  1 12:00:01 2024] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874",
         [("nvidia.driver.reset-required", "", RNPU, "")]),
        ("[Mon Jan  1 12:00:02 2024] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from _kchannelSendChannelAllocRpc(pKernelChannel, pChannelGpfifoParams, pKernelChannelGroup, bFullSriov) @ kernel_channel.c:936",
         [("nvidia.driver.reset-required", "", RNPU, "")]),
        ("Jun 12 16:31:50 fedora-box kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: (status == NV_OK) || (status == NV_ERR_GPU_IN_FULLCHIP_RESET) @ rs_client.c:844",
         [("nvidia.driver.assert", "GPU0", SUB, "")]),
        ("Jun 12 16:31:50 fedora-box kernel: NVRM: nvAssertFailedNoLog: Assertion failed: (status == NV_OK) || (status == NV_ERR_GPU_IN_FULLCHIP_RESET) @ rs_server.c:259",
         [("nvidia.driver.assert", "", SUB, "")]),
        ("NVRM: GPU0 nvCheckOkFailedNoLog: Check failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874",
         [("nvidia.driver.reset-required", "GPU0", RNPU, "")]),
        none("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"),
        none("    case NV_ERR_RESET_REQUIRED:"),
    ],
    note="""
The driver refusing work on a GPU that must be reset (NV_ERR_RESET_REQUIRED, status 0x62) and its
assertions. Quoted: the GspRmAlloc line and the two "Reset required" assertions, dmesg -T form,
from scitix/sichek@006f9e68ad058929760986eafba89dbd8afe5a09
components/dmesg/kmsg_event_cache_test.go (the NvErrResetRequired case: the RPC failure itself is
no match, the assertions are); the two nvAssertFailedNoLog lines of a GPU in a full-chip reset,
journald form, from NVIDIA/open-gpu-kernel-modules#1045 (turn by bkorpan; "GPU0" is the driver's
GPU instance, the second line names none). Constructed: the nvCheckOkFailedNoLog form with
"GPU0" (the assertion text of the quoted lines behind the check macro's name), the driver's
module loading line and a source line naming the status (no match).""", source_type="kernel_log")

write_case("nvidia-thc-cuda-errors", "training", "/var/log/training/job-41/train.log", None,
    [
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=84 error=74 : misaligned address",
         [("nvidia.cuda.application-error", "", NOT, "")]),
        none("Traceback (most recent call last):"),
        ("RuntimeError: cuda runtime error (74) : misaligned address at /pytorch/aten/src/THC/THCTensorCopy.cu:84",
         [("nvidia.cuda.application-error", "", NOT, "")]),
        ("   THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-7759/cutorch/lib/THC/generic/THCStorage.cu line=40 error=2 : out of memory",
         [("nvidia.cuda.out-of-memory", "", RBUS, "")]),
        ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=30 error=30 : unknown error",
         [("nvidia.cuda.unknown-error", "", SUB, "")]),
        none("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=383 error=11 : invalid argument"),
        none(" Check failed: error == cudaSuccess (74 vs. 0)  misaligned address"),
        none("Error: an unknown error occurred while loading the checkpoint list"),
    ],
    note="""
CUDA errors as old PyTorch (THC, before 1.5) and Lua Torch print them. Quoted: the misaligned
address pair from NVIDIA/apex#124 (the THCudaCheck line and the exception's title); Lua Torch's
out of memory from lingchenmsot/OpenObjectRecognition@3d917cb37ddd0a0e482c04044b41c1da2b1aceda
DeepMask/DeepmaskTrain_ReadMe.md (cutorch's THCStorage.cu, indented as that note shows it);
Caffe's check of the same error 74 from leon-liangwu/MaskYolo_Caffe#55 (not THC's form, no
match here). Constructed from THC's format string ("THCudaCheck FAIL file=%s line=%i error=%i :
%s"): an unknown error (error=30) and the invalid-argument warning of THCGeneral.cpp line 383
that PyTorch 1.0 printed on RTX cards and went on from (no match); a sentence with "unknown
error" in it (no match).""")

write_case("nvidia-nccl-ib-async-fatal", "training", "/var/log/training/job-42/rank-0.log", None,
    [
        none("node-0:5898:6033 [0] NCCL INFO NET/IB: IbDev 0 Port 1 qpn 2740 set_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}"),
        ("node-0:139577:139678 [0] transport/net_ib.cc:154 NCCL WARN NET/IB : mlx5_1:1 async fatal event on QP (0x7309dc3bb338): invalid request local work queue error",
         [("nvidia.nccl.network-error", "0", RBUS, "")]),
        ("2025-11-09 15:39:31.043 +08:00 [2025-11-09 07:39:30] h100-28:238:1219 [0] transport/net_ib.cc:180 NCCL WARN NET/IB : mlx5_ib0:1 async fatal event on QP (0x7f69f01519a8): local access violation work queue error",
         [("nvidia.nccl.network-error", "0", RBUS, "")]),
        ("2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error",
         [("nvidia.nccl.network-error", "0", RBUS, "")]),
        ("gpu-a-07:4120:4188 [6] transport/net_ib.cc:133 NCCL WARN NET/IB : mlx5_3:1 async fatal event on CQ (0x55d1c2a3f0e0): CQ error",
         [("nvidia.nccl.network-error", "6", RBUS, "")]),
        none("gpu-a-07:4120:4188 [6] transport/net_ib.cc:143 NCCL WARN NET/IB : mlx5_3:1 async fatal event on SRQ, unused for now (0x55d1c2a3f1a0): SRQ catastrophic error"),
        none('    r["r1_async_fatal_lav"] = any("async fatal event on QP" in l and "local access violation" in l'),
    ],
    note="""
NCCL's InfiniBand async fatal events. Quoted: the QP events of NVIDIA/nccl#1919 (its first error,
invalid request local work queue error) and NVIDIA/nccl#1905 (local access violation, behind a
log collector's two timestamps), older NCCL's "Got async event : local catastrophic error" behind
Open MPI's --tag-output and a timestamp (NVIDIA/nccl#230), and the INFO line before the failure
in the NCCL tests of NVIDIA/nccl#1919 (no match). The "[N]" is the warning process's CUDA device.
Constructed from NCCL's format strings (net_ib.cc's async thread: "NET/IB : %s:%d async fatal
event on CQ (%p): %s", "... on SRQ, unused for now (%p): %s"): a CQ error (a failure) and an
SRQ event (NCCL uses no SRQ: no match); a script line that looks for the words (no match).""")

write_case_rec(
    "nvidia-smi-query-records", "gpu-memory", "nvidia-smi -q",
    [
        ('nvidia-smi query: device=00000000:10:1C.0 status=Error code=REMAPPED_ROWS_PENDING info="remapped rows pending"',
         [("nvidia.smi.reset-pending", "00000000:10:1C.0", RNPU, "REMAPPED_ROWS_PENDING")]),
        ('nvidia-smi query: device=00000000:86:00.0 status=Error code=VOLATILE_UNCORRECTABLE_ECC info="volatile SRAM Uncorrectable 1"',
         [("nvidia.smi.uncorrectable-ecc", "00000000:86:00.0", SUB, "VOLATILE_UNCORRECTABLE_ECC")]),
        ('nvidia-smi query: device=00000000:86:00.0 status=Error code=RETIRED_PAGES_PENDING info="Pending Page Blacklist Yes"',
         [("nvidia.smi.reset-pending", "00000000:86:00.0", RNPU, "RETIRED_PAGES_PENDING")]),
        ('nvidia-smi query: device=00000000:3B:00.0 status=Error code=ROW_REMAPPING_FAILURE info="row remapping failure occurred"',
         [("nvidia.smi.remap-failure", "00000000:3B:00.0", SEP, "ROW_REMAPPING_FAILURE")]),
        ("nvidia-smi query: device=00000000:10:1C.0 status=OK recovered",
         [rec("nvidia.smi.query-recovered", "00000000:10:1C.0", "")]),
        none("nvidia-smi gpu: index=0 bus_id=00000000:10:1C.0"),
    ],
    note="""
The records a command source running `nvidia-smi -q` hands on (parser nvidia_smi_query,
collectors/command/records.hpp; written here in that format, the parser's own output for the
real -q captures of tests/golden/nvidia-smi-q/): pending rows and pages need a reset, a failed
remap a replacement, uncorrectable counts are a warning; a GPU back to OK is a recovery. The
bus map's record (another parser) is none of these.""", source_type="command")
