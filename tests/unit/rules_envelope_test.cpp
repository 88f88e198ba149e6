// unwrap(): each envelope of rules/envelope.hpp peeled off, what it said kept as fields, and
// text that only resembles an envelope left alone. Device and process spellings.
#include <catch2/catch.hpp>

#include <random>

#include "rules/envelope.hpp"
#include "rules/rule.hpp"
#include "tests/support/rules_support.hpp"

using namespace faultd;

namespace {

std::string message_of(std::string_view line) {
  Envelope env;
  unwrap(line, env);
  return std::string(env.message);
}

}  // namespace

TEST_CASE("envelope: the CRI format of /var/log/pods", "[rules][envelope]") {
  Envelope env;
  unwrap("2024-01-01T00:00:00.123456789Z stderr F [ERROR] RUNTIME(1,python): x", env);
  CHECK(env.message == "[ERROR] RUNTIME(1,python): x");
  CHECK(env.stream == "stderr");
  CHECK(line_level(env.message) == "ERROR");
  CHECK(message_of("2024-01-01T00:00:00+08:00 stdout P partial") == "partial");
  // Not CRI: only the time is taken off a time followed by anything else.
  CHECK(message_of("2024-01-01T00:00:00Z stdout X text") == "stdout X text");
}

TEST_CASE("envelope: docker json-file lines are decoded", "[rules][envelope]") {
  Envelope env;
  unwrap(
      R"({"log":"[rank3]: RuntimeError: CUDA error: \"an illegal\" memory access\n","stream":"stderr","time":"2024-01-01T00:00:00Z"})",
      env);
  CHECK(env.message == "RuntimeError: CUDA error: \"an illegal\" memory access");
  CHECK(env.stream == "stderr");
  CHECK(env.rank == "3");
  CHECK(message_of(R"({"log":"caf\u00e9 \\ ok"})") == "caf\xc3\xa9 \\ ok");
  // Cut off mid-string: not decoded, left as it is.
  CHECK(message_of(R"({"log":"unterminated)") == R"({"log":"unterminated)");
}

TEST_CASE("envelope: syslog, journald and kernel prefixes", "[rules][envelope]") {
  Envelope env;
  unwrap("Jan  2 03:04:05 gpu-node-7 kernel: [ 1126.635824] NVRM: Xid (PCI:0000:3b:00): 79, pid=1",
         env);
  CHECK(env.message == "NVRM: Xid (PCI:0000:3b:00): 79, pid=1");
  CHECK(env.host == "gpu-node-7");
  unwrap("2024-05-01T10:00:00.123456+00:00 node1 python3[4711]: [ERROR] boom", env);
  CHECK(env.message == "[ERROR] boom");
  CHECK(env.pid == "4711");
  CHECK(message_of("<4>[   12.5] NVRM: GPU at PCI:0000:01:00: GPU has fallen off the bus.") ==
        "NVRM: GPU at PCI:0000:01:00: GPU has fallen off the bus.");
}

TEST_CASE("envelope: a bare date and time put first by a collector or launcher",
          "[rules][envelope]") {
  // NVIDIA/nccl issue threads: a collector's minute-resolution time before NCCL's own prefix,
  // which then gives the warning process's device.
  Envelope env;
  unwrap(" 2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:173:3266 [0] proxy.cc:1458 NCCL WARN x", env);
  CHECK(env.message == "ncivki7qpk7pmo1btv0h0:173:3266 [0] proxy.cc:1458 NCCL WARN x");
  CHECK(line_device(env.message) == "0");
  CHECK(message_of("2024-05-11 14:10:52.227 n176:2657296:2658232 [1] NCCL WARN y") ==
        "n176:2657296:2658232 [1] NCCL WARN y");
  CHECK(message_of("[2025-02-16 22:31:34,422] [ERROR] z") == "[ERROR] z");
  CHECK(message_of("2025-02-16T22:31:34.422+08:00 [rank3]: RuntimeError: w") == "RuntimeError: w");
  // mpirun --timestamp-output: an ISO time and a colon before the rank's stream prefix.
  CHECK(message_of("2019-06-02T16:13:44.884Z: [1,12]<stdout>:h:815:864 [0] NCCL WARN v") ==
        "h:815:864 [0] NCCL WARN v");
  // Python logging's time is taken off; what follows it is the message.
  CHECK(message_of("2024-01-01 12:00:00,123 - INFO - step 3") == "- INFO - step 3");
  // Not a time: a date alone, a time without its date, a time that is the whole line, and a
  // bracket opened and not closed.
  CHECK(message_of("2025-02-18 failed") == "2025-02-18 failed");
  CHECK(message_of("12:54:03 failed") == "12:54:03 failed");
  CHECK(message_of("2025-02-18 12:54 ") == "2025-02-18 12:54 ");
  CHECK(message_of("[2025-02-18 12:54:03 failed") == "[2025-02-18 12:54:03 failed");
}

TEST_CASE("envelope: a quoted excerpt's '> ' marks", "[rules][envelope]") {
  // A log pasted into a reply or a Markdown blockquote (scitix/sichek#44): the quote hid the
  // time before NCCL's prefix, and so the prefix's "[3]".
  Envelope env;
  unwrap("> [2026-01-04 21:33:04] master-0:617:2799 [3] transport/net_ib.cc:2360 NCCL WARN x", env);
  CHECK(env.message == "master-0:617:2799 [3] transport/net_ib.cc:2360 NCCL WARN x");
  CHECK(env.layers == 2);
  CHECK(line_device(env.message) == "3");
  CHECK(message_of("> > [rank1]: RuntimeError: boom") == "RuntimeError: boom");
  // Not a quote: a '>' that is text, a quote of nothing, a bare mark.
  CHECK(message_of(">> redirected") == ">> redirected");
  CHECK(message_of(">  indented") == ">  indented");
  CHECK(message_of("> ") == "> ");
  CHECK(message_of("-> 2") == "-> 2");
}

TEST_CASE("envelope: grep -rn output names the collected file", "[rules][envelope]") {
  Envelope env;
  unwrap("device-2/device-305322_20250225184310213.log:1859:[ERROR] AICPU(25787,aicpu_scheduler):x",
         env);
  CHECK(env.message == "[ERROR] AICPU(25787,aicpu_scheduler):x");
  CHECK(env.path == "device-2/device-305322_20250225184310213.log");
  CHECK(path_device(env.path) == "2");
  unwrap("worker_0.log:[WARNING] DEBUG(1,2,python):x", env);
  CHECK(env.message == "[WARNING] DEBUG(1,2,python):x");
  // Messages with colons are not paths.
  CHECK(message_of("RuntimeError: CUDA error: unknown error") ==
        "RuntimeError: CUDA error: unknown error");
  CHECK(message_of("[ERROR] RUNTIME(150840,python):2021-09-14-09:26:01.014.355 x") ==
        "[ERROR] RUNTIME(150840,python):2021-09-14-09:26:01.014.355 x");
  CHECK(message_of("EI0002: [PID: 1] 2024-01-01-00:00:00: x") ==
        "EI0002: [PID: 1] 2024-01-01-00:00:00: x");
}

TEST_CASE("envelope: launcher prefixes, several deep", "[rules][envelope]") {
  Envelope env;
  unwrap("(RayWorkerWrapper pid=123, ip=10.0.0.1) [rank15]: [E ProcessGroupNCCL.cpp] x", env);
  CHECK(env.message == "[E ProcessGroupNCCL.cpp] x");
  CHECK(env.pid == "123");
  CHECK(env.host == "10.0.0.1");
  CHECK(env.rank == "15");
  unwrap("[1,3]<stderr>:Traceback (most recent call last):", env);
  CHECK(env.message == "Traceback (most recent call last):");
  CHECK(env.rank == "3");
  CHECK(env.stream == "stderr");
  CHECK(message_of("[default7]:[rank7]: torch.OutOfMemoryError: x") == "torch.OutOfMemoryError: x");
  CHECK(message_of("(pid=) x") == "(pid=) x");
  CHECK(message_of("[rank] x") == "[rank] x");
  // A SkyPilot job's lines: the task's "(head, rank=0, pid=5634) " and the node and local rank,
  // then NCCL's own prefix, which names the warning process's device.
  unwrap(
      "(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] "
      "misc/socket.cc:484 NCCL WARN socketStartConnect: failed",
      env);
  CHECK(env.message ==
        "nccl-e9ef-7d4f-0:11172:11249 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: failed");
  CHECK(env.pid == "5634");
  CHECK(env.host == "nccl-e9ef-7d4f-0");
  CHECK(env.rank == "3");
  CHECK(line_device(env.message) == "3");
  // A time, a number pair or an unterminated one is not that prefix.
  CHECK(message_of("[12:30]: x") == "[12:30]: x");
  CHECK(message_of("[node-1:x]: y") == "[node-1:x]: y");
  CHECK(message_of("[node-1:3] z") == "[node-1:3] z");
}

TEST_CASE("envelope: colours and a progress bar sharing the line", "[rules][envelope]") {
  CHECK(message_of("\x1b[31m[ERROR]\x1b[0m boom") == "[ERROR] boom");
  CHECK(message_of("Epoch 1:  50%|#####     | 5/10 [00:01<00:01,  4.50it/s]RuntimeError: CUDA "
                   "error: an illegal memory access was encountered") ==
        "RuntimeError: CUDA error: an illegal memory access was encountered");
  // A bar alone is no message of its own.
  const std::string bar = " 50%|#####     | 5/10 [00:01<00:01,  4.50it/s]";
  CHECK(message_of(bar) == bar);
}

TEST_CASE("envelope: hostile input stays bounded and is never a crash", "[rules][envelope]") {
  std::string deep;
  for (int i = 0; i < 1000; ++i) deep += "[rank1]: ";
  Envelope env;
  deep += "x";
  unwrap(deep, env);
  CHECK(env.layers == 8);  // at most 8 wrappers are peeled
  const std::string escapes(100000, '\x1b');
  unwrap(escapes, env);
  CHECK(env.message.empty());
  const std::string cut = "{\"log\":\"\\u12";
  unwrap(cut, env);
  CHECK(env.message == cut);
}

TEST_CASE("device spellings and process ids on a line", "[rules][envelope]") {
  CHECK(line_device("Task exception! device_id=0, stream_id=117") == "0");
  CHECK(line_device("Notify wait execute failed, device_id: 3") == "3");
  CHECK(line_device("remote deviceId[5] on serverId") == "5");
  CHECK(line_device("devId 1 localRank 1") == "1");
  // XLA's allocator of a GPU; NVML's Go binding's index.
  CHECK(line_device("Allocator (GPU_0_bfc) ran out of memory trying to allocate 9.00MiB") == "0");
  CHECK(line_device("error creating nvml.Device 5: nvml: GPU is lost") == "5");
  CHECK(line_device("CPU_0_bfc allocator").empty());
  // The kernel's NVRM lines name the GPU by its bus; MXNet names its context.
  CHECK(line_device("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed") ==
        "0000:01:00");
  CHECK(line_device("Running on [gpu(0)]") == "0");
  CHECK(line_device("cpu(0) and gpu() and mygpu(3)").empty());
  CHECK(line_device("[devid-2] ts exception") == "2");
  CHECK(line_device("device(chipId:7) error") == "7");
  CHECK(line_device("CUDA out of memory. GPU 3 has a total capacity of 79.10 GiB") == "3");
  CHECK(line_device("on cuda:6 with") == "6");
  CHECK(line_device("Heartbeat lost! (device=1, ") == "1");
  CHECK(line_device("no device here, step 12") == "");
  CHECK(line_device("GPU memory") == "");
  CHECK(line_device("localInfo{server[127.10.0.1],deviceId[127.10.0.1]}") == "");
  CHECK(line_device("Device 1.5 GiB") == "");
  CHECK(line_device("on Device 3.") == "3");
  CHECK(line_device("device_id=11111") == "");
  CHECK(line_device("|  comm error, device[2] num[1]") == "2");
  CHECK(line_device("deviceType[4], logicDevId[11]") == "11");
  CHECK(line_device("userRankId[3], deviceLogicId[0]") == "0");
  CHECK(line_device("logicDevId[-1]") == "");
  CHECK(line_device("[WARN] exception_cb deviceId:0 streamId:8 taskId:1275 failed:500002") == "0");
  // HCCL's task exception report brackets the value after the colon (vllm-project/vllm-ascend
  // #13482); an address in the brackets is still none.
  CHECK(line_device("Task run failed, opData information is deviceId:[3], index[1338]") == "3");
  CHECK(line_device("deviceId:[127.10.0.1]") == "");
  // A PCI address is a bus id, never a device numbered by its domain (NVIDIA/NVSentinel#155).
  CHECK(line_device("NVRM: The NVIDIA GPU 0000:b3:00.0") == "0000:b3:00.0");
  CHECK(line_device("GPU 00000000:3B:00.0: Detected Critical Xid Error") == "00000000:3B:00.0");
  CHECK(line_device("on device 0000:3b:00") == "");
  CHECK(line_device("GPU 1: NVIDIA A100-SXM4-80GB") == "1");
  // The id keys in their other spellings: dev_id, devid: N, device_id N, device_id = N, and a
  // hyphen (CANN runtime and black-box records).
  CHECK(line_device("fftsplus task execute failed, dev_id=0, stream_id=4") == "0");
  CHECK(line_device("devid: 2 device manager current status: working.") == "2");
  CHECK(line_device("drvRetCode=6, device_id 7, ErrCode=207001") == "7");
  CHECK(line_device("device_id = 2, fail info: x") == "2");
  CHECK(line_device("fail info: device_id-2 appeared multi ecc err") == "2");
  CHECK(line_device("Device ID: 5 failed") == "5");
  // The driver's own "GPU<N>" instance number is not an index: no device from the spelling
  // table (the rules that read it keep it raw, docs/log-formats.md §11).
  CHECK(line_device("NVRM: GPU0 _issueRpcAndWait: rpcSendMessage failed") == "");
  CHECK(line_device("individual results") == "");
  CHECK(line_pid("[ERROR] RUNTIME(150840,python):2021-09-14 x") == "150840");
  CHECK(line_pid("EE9999: [PID: 1234] 2024-01-01") == "1234");
  CHECK(line_pid("ERR00100 PTA call acl api failed (PID:13075, Device:0, RankID:8)") == "13075");
  CHECK(line_pid("no process") == "");
  CHECK(path_device("/var/log/npu/device-12/x.log") == "12");
  CHECK(path_device("dev-os-3/x.log") == "");
  CHECK(path_device("mydevice-3/x.log") == "");
}

TEST_CASE("device spellings: a reader of a source's lines gives what each line gives alone",
          "[rules][envelope]") {
  // Spellings whose answer turns on how many digits there are, or whether a byte is one, in
  // lines whose digits change from line to line (kept shapes) and more shapes than a reader
  // keeps; each line's digits are redrawn every round.
  const std::vector<std::string> forms = {
      "step 12 | loss 2.5 | device_id=3 | grad norm 0.5",
      "Device 1.5 GiB free, step 9",
      "device_id=1111 and then",
      "NVRM: The NVIDIA GPU 0000:b3:00.0 step 1",
      "logicDevId[1] deviceLogicId[2]",
      "deviceId:[12.10.0.1] rank 3",
      "node-7:2345:2370 [3] NCCL WARN x",
      "on Device 3. at step 17",
      "no device at all, iteration 12/400",
  };
  std::mt19937 rng(3);
  LineDeviceReader reader;
  for (int round = 0; round < 300; ++round) {
    std::string line = forms[rng() % forms.size()];
    for (char& c : line) {
      if (c >= '0' && c <= '9') c = static_cast<char>('0' + rng() % 10);
    }
    INFO(line);
    REQUIRE(reader.read(line) == line_device(line));
  }
  CHECK(reader.read("device_id=7 x") == "7");
  CHECK(reader.read("device_id=8 x") == "8");  // the same place, this line's digit
  CHECK(reader.read("device_ix=8 x").empty());
}

TEST_CASE("rules see the message; the device is resolved and says how", "[rules][envelope]") {
  const auto set = faultd::testing::build(R"(
rules:
  - id: t.err
    description: an ERROR line
    match: { any: ["boom"], level: ERROR }
    device: "{device}"
    fault: { level: SeparateNPU }
)");
  SECTION("level and device behind a grep prefix: the collected file's directory") {
    const auto s = faultd::testing::scan(*set, "device-4/device-1_2.log:7:[ERROR] boom\n");
    REQUIRE(s.findings.size() == 1);
    CHECK(s.findings[0].device == "4");
    CHECK(s.findings[0].device_from == "path");
    CHECK(s.findings[0].text == "device-4/device-1_2.log:7:[ERROR] boom");  // evidence: the line
  }
  SECTION("a spelling on the line") {
    const auto s =
        faultd::testing::scan(*set, "2024-01-01T00:00:00Z stderr F [ERROR] boom device_id=2\n");
    REQUIRE(s.findings.size() == 1);
    CHECK(s.findings[0].device == "2");
    CHECK(s.findings[0].device_from == "line");
  }
  SECTION("the process's device from an earlier line of the same file, within one context") {
    ScanContext context;
    const auto first =
        faultd::testing::scan(*set, "[ERROR] RUNTIME(150840,python):t boom device_id=5\n", "plog",
                              nullptr, 1, 0, &context);
    REQUIRE(first.findings.size() == 1);
    CHECK(first.findings[0].device_from == "line");
    const auto later = faultd::testing::scan(*set, "[ERROR] RUNTIME(150840,python):t boom again\n",
                                             "plog", nullptr, 2, 100, &context);
    REQUIRE(later.findings.size() == 1);
    CHECK(later.findings[0].device == "5");
    CHECK(later.findings[0].device_from == "context");
    // Another process learns nothing from it.
    const auto other = faultd::testing::scan(*set, "[ERROR] RUNTIME(99,python):t boom\n", "plog",
                                             nullptr, 3, 200, &context);
    REQUIRE(other.findings.size() == 1);
    CHECK(other.findings[0].device.empty());
    CHECK(other.findings[0].device_from.empty());
  }
  SECTION("an INFO line behind an envelope still does not match a level: ERROR rule") {
    CHECK(faultd::testing::scan(*set, "2024-01-01T00:00:00Z stdout F [INFO] boom\n")
              .findings.empty());
  }
}

TEST_CASE("envelope: a record starts where its own form starts, behind any label",
          "[rules][envelope]") {
  // srun -l's task number and kubectl logs --prefix's pod and container: labels faultd does
  // not know, before CANN's, NCCL's, the kernel's and Python's record forms.
  Envelope env;
  unwrap("12: [ERROR] AICPU(25787,aicpu_scheduler):x", env);
  CHECK(env.message == "[ERROR] AICPU(25787,aicpu_scheduler):x");
  CHECK(line_level(env.message) == "ERROR");
  CHECK(env.rank.empty());  // a task label is no field, and never a device
  unwrap("[pod/train-7/pytorch] node-3:1234:1250 [5] NCCL WARN Call to connect failed", env);
  CHECK(env.message == "node-3:1234:1250 [5] NCCL WARN Call to connect failed");
  CHECK(line_device(env.message) == "5");
  CHECK(message_of("worker-3: NVRM: Xid (PCI:0000:3b:00): 79, pid=1") ==
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1");
  CHECK(message_of("7: Traceback (most recent call last):") ==
        "Traceback (most recent call last):");
  CHECK(message_of("[pod/a/b] torch.OutOfMemoryError: CUDA out of memory") ==
        "torch.OutOfMemoryError: CUDA out of memory");
  // The device of a line behind a label is the record's, not a number in the label.
  unwrap("[pod/npu-3/main] [ERROR] RUNTIME(1,python): device_id=6 failed", env);
  CHECK(line_device(env.message) == "6");
  // Left alone: a form in the middle of a sentence (no label ends before it), a form too far
  // in, a bracketed word that is no level, and a line that starts with its record.
  CHECK(message_of("raised RuntimeError: x") == "raised RuntimeError: x");
  CHECK(message_of("call failed [ERROR] x") == "call failed [ERROR] x");
  CHECK(message_of(std::string(200, 'a') + ": [ERROR] x") == std::string(200, 'a') + ": [ERROR] x");
  CHECK(message_of("12: [Rank 0] x") == "12: [Rank 0] x");
  CHECK(message_of("[ERROR] HCCL(1,python): x: RuntimeError: y") ==
        "[ERROR] HCCL(1,python): x: RuntimeError: y");
}

TEST_CASE("envelope: ANSI sequences anywhere, CSI and OSC", "[rules][envelope]") {
  // A logger that colours its level word in the middle of the line, and a hyperlink (OSC 8)
  // ended by BEL or by ESC backslash.
  CHECK(message_of("node-1:12:13 [2] NCCL \x1b[33mWARN\x1b[0m Call to connect failed") ==
        "node-1:12:13 [2] NCCL WARN Call to connect failed");
  CHECK(message_of("see \x1b]8;;http://x/y\x07the log\x1b]8;;\x07 now") == "see the log now");
  CHECK(message_of("see \x1b]8;;http://x/y\x1b\\the log\x1b]8;;\x1b\\ now") == "see the log now");
  CHECK(message_of("cut \x1b]8;;http://x") == "cut ");
}

TEST_CASE("envelope: a relay's process and the launcher's inside it", "[rules][envelope]") {
  Envelope env;
  unwrap("Mar 14 09:26:53 node-a07 python3[48213]: (EngineCore_DP0 pid=415) x", env);
  CHECK(env.pid == "415");
  CHECK(env.outer_pid == "48213");
  unwrap("Mar 14 09:26:53 node-a07 python3[48213]: x", env);
  CHECK(env.pid == "48213");
  CHECK(env.outer_pid.empty());
}
