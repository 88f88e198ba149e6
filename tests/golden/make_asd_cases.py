#!/usr/bin/env python3
"""Writes the golden cases tests/golden/asd-* of etc/faultd/rules.d/ascend-asd.yaml.

The expected findings are declared by hand next to each positive line below, never computed by
the engine; the noise is seeded, so re-running this rewrites the same files. Edit the cases
here, run `python3 tests/golden/make_asd_cases.py`, and review the diff."""
import json, os, random

ROOT = os.path.dirname(os.path.abspath(__file__))
SEP, SUB = "SeparateNPU", "SubHealthFault"
NOT = "NotHandleFault"

# Noise. The ATRACE plog line and the TDT "PreInit Success." line are quoted from the project's
# corpus (tests/corpus: MindCluster FaultDiag fixtures, st_aicpu_notify_testcase and
# st_module_testcase); they replaced the RUNTIME "Task exception!" and the device OS "receive ts
# exception msg" lines, which are fault reports (ascend.runtime.task-exception,
# ascend.device.system-exception) and no longer noise.
PLOG_NOISE = [
  b"[INFO] ATRACE(1382,python3.8):2025-08-05-19:46:01.413.984 [trace_attr.c:189](tid:1382) attr init success, timeout=0ms.",
  b"[ERROR] RUNTIME(10972,python):2023-09-23-05:41:40.256.365 [npu_driver.cc:1100]49835 DevMemAllocHugePageManaged:[INIT][DEFAULT][drv api] halMemAlloc failed:size=2097152(Byte), ... device_id=0!",
  b"[ERROR] HCCL(59420,python3):2025-01-24-11:24:07.908.526 [comm_base.cc:968][107626]   |  comm error, device[0] num[1] ",
  b"[TRACE] HCCL(10972,python3):2023-01-31-02:48:31.222.202 [status:init] [hcom.cc:196][hccl-10972-0-1675133310-hccl_world_group][3]hcom init by file success,...",
  b"[INFO] DRV(10972,python):2023-09-23-05:41:39.697.570 [ascend][curpid: 98, 98][drv][devmm][_svm_mem_stats_show 154]DEV_MEM dev0 mem stats(Bytes): ...",
  b"[ERROR] ASCENDCL(162844,python):2022-12-01-00:26:58.086.834 [tensor_data_transfer.cpp:899]168498 acltdtSendTensor: ... device is 1, ...",
  b"[INFO] RUNTIME(10972,python):2023-09-23-05:41:41.001.%03d [stream.cc:%d]49835 StreamSynchronize: stream_id=%d, sync succeeded",
  b"[WARNING] GE(10972,python):2023-09-23-05:41:42.100.%03d [graph_manager.cc:%d]49835 OptimizeGraph: fusion pass skipped for node %d",
  b"[EVENT] HCCL(10972,python3):2023-09-23-05:41:43.%03d.000 [hccl_communicator.cc:%d][10972]Entry-HcclAllReduce: tag[AllReduce_%d], count[1024], dataType[float32]",
]
DEVICE_NOISE = [
  b"[ERROR] HCCL(5375,aicpu_scheduler):2025-08-06-23:09:01.834.041 [aicpu_communicator.cc:3083] [5792][TaskException]base information is ... type:NOTIFY WAIT, localRank:1, remoteRank:0 ...",
  b"[INFO] AICPU(26559,aicpu_scheduler):2025-02-25-18:46:51.678.981 [silent_check_v3.cc:240][SilentCheck][tid:26572]SilentCheckV3 normal case, val=[3.350337e-08], ...",
  b"[INFO] AICPU(26559,aicpu_scheduler):2025-02-25-18:46:52.%03d.981 [silent_check_v3.cc:240][SilentCheck][tid:26572]SilentCheckV3 normal case, val=[%d.350337e-08], step=[%d]",
  b"[INFO] AICPU(2249,aicpu_scheduler):2024-09-13-14:18:53.057.632 [silent_check_v2.cc:122][SilentCheck][tid:2258]val = [0.004220], pre_val = [0.004272], min_val = [0.004189], max_val = [0.004272], step = [4].",
  b"[INFO] AICPU(2249,aicpu_scheduler):2024-09-13-14:18:53.048.647 [silent_check_v2.cc:124][SilentCheck][tid:2257]c_min_steps = [100], c_thresh_l1 = [1000000.000000], c_coeff_l1 = [100000.000000], c_thresh_l2 = [10000.000000], c_coeff_l2 = [5000.000000], npu_asd_detect = [3]",
  b"[INFO] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:%02d.100.000 [aicpu_sd.cc:%d][KernelRun][tid:26552]run kernel SilentCheckV3 task %d done",
]
DEVOS_NOISE = [
  b"[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811][RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x8c17a005.",
  b"[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.405.959 [tsdaemon.cpp:2085][Start][tid:4717] [TsdEVENT] PreInit Success.",
  b"[ERROR] TSCH(-1,null):2023-06-10-13:16:11.401.438 11 (dieid:0,cpuid:0) hwts_plat.c:1931 int_process_hwts_timeout_exception: RTS_HWTS: hwts timeout exception bitmap=0x8000",
  b"[EVENT] TDT(4717,tsdaemon):2023-10-31-16:42:%02d.406.087 [tsdaemon.cpp:1811][RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x8c17a%03d.",
]
MS = b"[WARNING] DEBUG(2950752,fffda37fe1e0,python):2025-08-26-10:47:28.934.305 [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:%d] %s] "
TRAIN_NOISE = [
  b"[WARNING] ME(573:281473062022496,MainProcess):2023-05-23-03:52:26.782.379 [mindspore/train/model.py:1079] ...",
  b"- INFO - { Epoch:[  1/  2], step:[    %d/ 6500], loss: 0.000, per_step_time: 166756ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: [44.313248], train_throughput_per_npu: 2.849T",
  b"[WARNING] DEBUG(2950752,fffda37fe1e0,python):2025-08-26-10:47:28.934.305 [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:316] DoCheckSum] Global CheckSum result is 0",
  b"[INFO] ME(2950752:281473062022496,MainProcess):2025-08-26-10:46:%02d.000.000 [mindspore/train/callback/_loss_monitor.py:%d] epoch: 1 step: %d, loss is 2.30",
]

def fill(t, rng):
    n = t.count(b"%")
    if n == 0: return t
    args = tuple(rng.randrange(1, 900) for _ in range(n))
    return t % args

def noise(pool, count, rng):
    return [fill(rng.choice(pool), rng) for _ in range(count)]

def write_case(name, source, path, path_fields, parts, eol=b"\n", last_partial=False, note=""):
    """parts: list of (line_bytes, [expected findings as (rule, device, level, code)])"""
    d = os.path.join(ROOT, name)
    os.makedirs(d, exist_ok=True)
    data = b""
    expected = []
    for i, (line, exp) in enumerate(parts, start=1):
        end = b"" if (last_partial and i == len(parts)) else eol
        data += line + end
        for rule, dev, level, code in exp:
            full = rule if "." in rule else "ascend.asd." + rule  # another pack's rule: its full id
            expected.append({"rule": full, "device": dev, "level": level, "code": code, "line": i})
    open(os.path.join(d, "input.log"), "wb").write(data)
    open(os.path.join(d, "source"), "w").write(source + "\n" + (path + "\n" if path else ""))
    if path_fields:
        open(os.path.join(d, "path_fields"), "w").write(path_fields + "\n")
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for e in expected:
            f.write(json.dumps(e) + "\n")
    if note:
        open(os.path.join(d, "README"), "w").write(note.strip() + "\n")

def mix(noise_lines, positives, rng):
    """Spreads positives (kept in order) among noise lines."""
    parts = [(l, []) for l in noise_lines]
    slots = sorted(rng.sample(range(len(parts) + 1), len(positives)))
    for offset, (slot, pos) in enumerate(zip(slots, positives)):
        parts.insert(slot + offset, pos)
    return parts

rng = random.Random(7)

# 1. Device-side CANN log: SilentCheckV3/V2 L1 errors, an L2 warning, normal-case lines.
V3_L1 = b"[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.403 [silent_check_v3.cc:250][ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], avg=[1.128970e-09], step=[5], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], npu_asd_detect = [1]."
V3_L1b = b"[ERROR] AICPU(26559,aicpu_scheduler):2025-02-25-18:46:51.762.577 [silent_check_v3.cc:250][ComputeL1Error][tid:26572]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan], avg=[5.752281e-08], step=[5], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], npu_asd_detect = [3]."
V2_L1 = b"[ERROR] AICPU(24515,aicpu_scheduler):2024-09-13-14:12:28.956.344 [silent_check_v2.cc:136][ComputeL1Error][tid:24528]SilentCheck get L1 Error, input message: val = [nan], pre_val = [0.100089], min_val = [0.089474], max_val = [0.130423], step = [6],         c_min_steps = [100], c_thresh_l1 = [1000000.000000], c_coeff_l1 = [100000.000000], c_thresh_l2 = [10000.000000], c_coeff_l2 = [5000.000000] npu_asd_detect = [1]."
V3_L2 = b"[WARNING] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:55.001.403 [silent_check_v3.cc:250][ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [2.5e+04], max = [2.5e+04], avg=[1.128970e-09], step=[4], c_thresh_l1 = [1.000000e+06], c_thresh_l2 = [1.000000e+04], beta1 = [9.900000e-01], npu_asd_detect = [1]."
V2_L2 = b"[WARNING] AICPU(24515,aicpu_scheduler):2024-09-13-14:12:27.956.344 [silent_check_v2.cc:140][ComputeL2Error][tid:24528]SilentCheck get L2 Error, input message: val = [12000.5], pre_val = [0.100089], step = [5]."
V3_L1_INFO = b"[INFO] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.404 [silent_check_v3.cc:252][ComputeL1Error][tid:26552]ComputeL1Error finished, SilentCheckV3 ComputeL1Error check done"
dev3 = lambda rule, level=SEP: [(rule, "3", level, "80818C00")]
write_case("asd-device-log-silent-check", "device-log",
           "/root/ascend/log/debug/device-3/device-299066_20250225184036913.log",
           r"device-(?P<device>\d+)/",
           mix(noise(DEVICE_NOISE + PLOG_NOISE, 400, rng), [
               (V3_L2, dev3("silent-check-l2", SUB)),
               (V3_L1, dev3("silent-check-l1")),
               (V3_L1_INFO, []),
               (V2_L2, dev3("silent-check-l2", SUB)),
               (V2_L1, dev3("silent-check-l1")),
               (V3_L1b, dev3("silent-check-l1")),
           ], rng),
           note="""
Device-side CANN log of device 3 (the device comes only from the path): SilentCheckV3 and
SilentCheckV2 L1 errors (verbatim from MindSpore's sdc.md), L2 warnings (the L2 wording is
constructed: CANN documents only that the L2 alarm is a WARNING), an INFO line that names
ComputeL1Error, and many normal-case INFO lines among plog noise: none of those may match.""")

# 2. Host plog: "accuracy sensitivity feature abnormal" with and without a device id.
FA = b"accuracy sensitivity feature abnormal"
write_case("asd-plog-feature-abnormal", "plog",
           "/root/ascend/log/debug/plog/plog-59420_20250124110314898.log", None,
           mix(noise(PLOG_NOISE, 300, rng), [
               (b"[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.500 [silent_check_v3.cc:262][ComputeL1Error][tid:26552]" + FA,
                [("feature-abnormal", "", SEP, "80818C00")]),
               (b"[ERROR] RUNTIME(160186,python):2025-02-25-18:40:56.200.001 [task_info.cc:120]163618 ReportExceptProc:" + FA + b", device_id=5, stream_id=3, task_id=7",
                [("feature-abnormal", "5", SEP, "80818C00")]),
               (b"[ERROR] DEVICE(118114,ffff4effd1e0,python):2025-02-25-18:40:57.511.290 [mindspore/ccsrc/runtime/device/ascend/ascend_kernel_runtime.cc:679] DumpTaskExceptionInfo] " + FA + b", device_id: 6, retcode: 507015",
                [("feature-abnormal", "6", SEP, "80818C00"),
                 ("ascend.runtime.error-code", "6", "RestartBusiness", "")]),  # the task's return code too
               (b"[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:7, RankID:8) ERR00100 PTA call acl api failed, " + FA,
                [("feature-abnormal", "7", SEP, "80818C00")]),
               (b"[WARNING] RUNTIME(160186,python):2025-02-25-18:40:58.000.001 [task_info.cc:130]163618 " + FA + b" (reported again), device_id=5", []),
               (b"[INFO] ASCENDCL(162844,python):2025-02-25-18:40:59.086.834 [acl.cpp:12]168498 checking accuracy sensitivity feature abnormal flags: none", []),
               (b"  [ERROR] RUNTIME(160186,python):2025-02-25-18:41:00.000.001 [task_info.cc:120]163618 " + FA + b", device_id=12345678901234567890123456789012345678901234567890123456789012345",
                [("feature-abnormal", "", SEP, "80818C00")]),
               (b"[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:41:01.176.403 [silent_check_v3.cc:250][ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], " + FA + b", device_id=1",
                [("feature-abnormal", "1", SEP, "80818C00"), ("silent-check-l1", "1", SEP, "80818C00")]),
           ], rng),
           note="""
Host plog (no path fields): the ERROR "accuracy sensitivity feature abnormal" (constructed
lines: the phrase is documented, no real line is published) with the device in each of the
forms the rule reads (none, device_id=N, device_id: N, the torch_npu tuple), at WARNING and
INFO (no match), indented by blanks (matches), with a 65-digit device id (refused: the finding
stays, without device), and one line that two rules match (one finding each).""")

# 3. Training log of the faulty rank (MindSpore 2.7.1 combined detection).
STRIKE = b"[WARNING] DEBUG(2950752,fffee7e591e0,python):2025-08-26-10:46:26.665.782 [mindspore/ccsrc/tools/silent_detect/silent_detector.cc:109] SilentDetect] Silent detect strike detected: StrikeRecord{timestamp: 1756176386, name: fc1.weight, value: inf, stat: StatData{avg: 6.44326e+12, pre_value: 6.441e+14, count: 6, none_zero_count: 6}}"
def ms(line_no, func, msg):
    return (MS % (line_no, func.encode())) + msg
COMMON_TRAIN = [
    ms(147, "SilentDetector", b"Feature value detection works with CheckSum, strikes_num: 3, strikes_window: 480 min, cooldown: 5 min, checksum_cooldown: 180 min."),
    ms(226, "ProcessStrike", b"Detect feature value strike, count: 1, number to strikeout: 3"),
    ms(357, "DetectStrikeout", b"Feature value detection strikes out! Search 'strikes out on rank' in training logs to get abnormal ranks."),
    ms(316, "DoCheckSum", b"Global CheckSum result is 1"),
    ms(318, "DoCheckSum", b"SilentCheck detects SDC error, which means training may be unstable. Search 'CheckSum detects MatMul error on rank' in training logs to get abnormal ranks."),
    ms(361, "DetectStrikeout", b"CheckSum will not be enabled again within 180 min after timestamp 1756176448"),
]
d = "3"
write_case("asd-training-faulty-rank", "training", "/var/log/training/job-42/worker_3.log",
           r"worker_(?P<device>\d+)\.log$",
           mix(noise(TRAIN_NOISE, 200, rng), [
               (COMMON_TRAIN[0], []),
               (STRIKE, [("silent-detect-strike", d, SUB, "")]),
               (COMMON_TRAIN[1], []),
               (ms(348, "DetectStrikeout", b"Feature value detection strikes out on rank 3, strikes_num: 3, CheckSum will be enabled globally."),
                [("strikes-out", d, SUB, "")]),
               (COMMON_TRAIN[2], []),
               (ms(305, "DoCheckSum", b"CheckSum detects MatMul error on rank 3"),
                [("checksum-matmul", d, SEP, "80818C00")]),
               (COMMON_TRAIN[3], []),
               (COMMON_TRAIN[4], [("sdc-error", d, NOT, "")]),
               (COMMON_TRAIN[5], []),
           ], rng),
           note="""
Training log of rank 3 (worker_3.log, device from the path) in a MindSpore 2.7.1 combined
detection run where this rank is the faulty one. The strike line is verbatim from MindSpore's
sdc.md; the others are built from the MS_LOG calls of silent_detector.cc (MindSpore 2.7).""")

# 4. Training log of a healthy rank of the same job: only the job-wide lines.
write_case("asd-training-healthy-rank", "training", "/var/log/training/job-42/worker_0.log",
           r"worker_(?P<device>\d+)\.log$",
           mix(noise(TRAIN_NOISE, 200, rng), [
               (COMMON_TRAIN[0], []),
               (COMMON_TRAIN[2], []),
               (COMMON_TRAIN[3], []),
               (COMMON_TRAIN[4], [("sdc-error", "0", NOT, "")]),
               (COMMON_TRAIN[5], []),
           ], rng),
           note="""
Training log of rank 0 of the same job: it sees only the job-wide lines, which quote the
faulty rank's phrases. Nothing here may put device 0 in a fault state: the only finding is the
record-only sdc-error.""")

# 5. Device OS log: event 0x80818C00 in every spelling of the knowledge base.
EV = b"[EVENT] TDT(4717,tsdaemon):2023-10-31-16:43:%02d.406.087 [tsdaemon.cpp:1811][RunSpecialProcess][tid:4717] [TsdEVENT] "
dev2 = [("device-os-event", "2", SEP, "80818C00")]
write_case("asd-device-os-event", "device-os",
           "/var/log/npu/slog/dev-os-2/debug/device-os/device-os_20231031164139951.log",
           r"dev-os-(?P<device>\d+)/",
           mix(noise(DEVOS_NOISE, 250, rng), [
               ((EV % 1) + b"Event id=0x80818c00.", dev2),
               ((EV % 2) + b"Event id=0x80818C00.", dev2),
               (b"[EVENT] KERNEL(6843,sklogd):2023-10-31-16:43:03.096.793 [klogd.c:253][251681.794072] [ascend] [EVENT] [dms] report event_id=0x80818c00, devid=2", dev2),
               (b"[EVENT] KERNEL(6843,sklogd):2023-10-31-16:43:04.096.793 [klogd.c:253][251681.794072] [ascend] [EVENT] [dms] event_id:  [0x80818c00] assertion: 1", dev2),
               (b"[EVENT] KERNEL(6843,sklogd):2023-10-31-16:43:05.096.793 [klogd.c:253][251681.794072] [ascend] [EVENT] [dms] event_id=0x80818C00", dev2),
               (b"[EVENT] KERNEL(6843,sklogd):2023-10-31-16:43:06.096.793 [klogd.c:253][251681.794072] [ascend] [EVENT] [dms] (Node Type=0x40; Sensor Type=0xc6; event_state=0)",
                [("device-os-sensor", "2", SEP, "80818C00")]),
               (b"[EVENT] KERNEL(6843,sklogd):2023-10-31-16:43:07.096.793 [klogd.c:253][251681.794072] [ascend] [EVENT] [dms] (Node Type=0x40; Sensor Type=0xc6; event_state=1)", []),
               ((EV % 8) + b"Event id=0x80818c05.", []),
               ((EV % 9) + b"event id=0x80818c00.", []),
           ], rng),
           note="""
Device-OS log of device 2 (device from the dev-os-N directory). The event line shapes are
constructed around the knowledge base's match strings (no real 0x80818C00 line is published):
every spelling matches, the sensor triple matches only with event_state=0, and the related
code 0x80818C05 and a differently cased "event id" do not.""")

# 6. Bytes at the edges: CRLF, NUL, invalid UTF-8, blank lines, a partial last line.
EDGE = [
    (b"[INFO] AICPU(1,aicpu_scheduler):2025-02-25-18:40:50.000.000 [x.cc:1][SilentCheck][tid:1]SilentCheckV3 normal case, val=[1.0]\r", []),
    (V3_L1 + b"\r", [("silent-check-l1", "5", SEP, "80818C00")]),
    (b"", []),
    (b"\r", []),
    (b"[ERROR] AICPU(2,aicpu_scheduler):2025-02-25-18:40:51.000.000 \x00\xff\xfe\x80 binary\x00junk SilentCheckV3 ComputeL1Error:val = [inf]",
     [("silent-check-l1", "5", SEP, "80818C00")]),
    (b"[ERROR] RUNTIME(3,python):2025-02-25-18:40:52.000.000 [t.cc:1]9 \xc3\x28\xa0\xa1 \xf0\x28\x8c\xbc " + FA + b" \xe2\x82 device_id=4",
     [("feature-abnormal", "5", SEP, "80818C00")]),
    (b"\x00\x00\x00\xff\xff ComputeL1Error SilentCheckV3 ComputeL1Error [ERROR]", []),
    (b"[ERROR]\x00 AICPU " + FA, [("feature-abnormal", "5", SEP, "80818C00")]),
    (b"\t[ERROR] AICPU(4,aicpu_scheduler):2025-02-25-18:40:53.000.000 [silent_check_v2.cc:136][ComputeL1Error][tid:5]SilentCheck get L1 Error, input message: val = [nan]",
     [("silent-check-l1", "5", SEP, "80818C00")]),
]
write_case("asd-edge-bytes", "device-log",
           "/root/ascend/log/debug/device-5/device-1_20250225184036913.log",
           r"device-(?P<device>\d+)/",
           EDGE, eol=b"\n", last_partial=True,
           note="""
Hostile bytes on device 5: CRLF endings (the '\\r' is not part of the line), blank lines, NUL
bytes and invalid UTF-8 before the match (still matched; its inline device_id=4 is outranked
by the device-5/ directory, docs/log-formats.md §11), a line whose level is not at its start (no match), a NUL right after the level
(matches, device from the path), and a last line without '\\n' (a
partial line flushed on rotation), which still matches.""")

# 7. Nothing but realistic noise from every source, including all the near misses.
write_case("asd-noise-only", "training", "/var/log/training/job-7/worker_1.log",
           r"worker_(?P<device>\d+)\.log$",
           [(l, []) for l in noise(PLOG_NOISE + DEVICE_NOISE + DEVOS_NOISE + TRAIN_NOISE, 3000, rng)]
           + [(l, []) for l in [COMMON_TRAIN[0], COMMON_TRAIN[1], COMMON_TRAIN[2], COMMON_TRAIN[3], COMMON_TRAIN[5], V3_L1_INFO,
                                b"[INFO] AICPU(1,aicpu_scheduler):2025-02-25-18:40:50.000.000 [x.cc:1][SilentCheck][tid:1]SilentCheckV3 normal case, val=[nan]"]],
           note="""
3,000 ordinary lines of every kind (plog, device log, device OS, training) plus the near
misses (normal-case INFO lines, strike counters, the job-wide strike-out line, CheckSum
results of 0 and 1): no finding.""")
print("ok")
