// The shipped Ascend runtime pack (etc/faultd/rules.d/ascend-runtime.yaml) against the
// launcher prefixes that training jobs put before CANN and torch_npu lines: whatever the
// prefix, a line gives the same single finding with the same device. The engine does not
// strip prefixes, so the packs must not depend on a line's leading [LEVEL] either.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "rules/rule.hpp"

using namespace faultd;
namespace fs = std::filesystem;

namespace {

std::vector<RuleSpec> load_specs(const std::vector<std::string>& names) {
  std::vector<RuleSpec> specs;
  ErrorList errors;
  for (const auto& name : names) {
    load_rule_file(std::string(FAULTD_SOURCE_DIR) + "/etc/faultd/rules.d/" + name, specs, errors);
  }
  INFO(errors.to_string());
  REQUIRE(errors.empty());
  return specs;
}

// Every shipped pack, as faultd loads them: a line must not be claimed by two packs.
std::shared_ptr<const RuleSet> load_all_shipped() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(FAULTD_SOURCE_DIR) / "etc/faultd/rules.d")) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ErrorList errors;
  auto set = RuleSet::build(load_specs(names), CodeLevels{}, errors);
  INFO(errors.to_string());
  REQUIRE(set);
  return set;
}

std::vector<Finding> scan_line(const RuleSet& set, const std::string& line) {
  Chunk chunk;
  chunk.source = "training";
  chunk.source_type = "file";
  chunk.path = "/var/log/training/job/rank-0.log";
  chunk.data = line;
  chunk.end_offset = line.size();
  std::vector<Finding> out;
  set.scan(chunk, TimePoint{}, out);
  return out;
}

}  // namespace

TEST_CASE("ascend and nvidia packs: no rule depends on a leading [LEVEL]", "[rules][packs]") {
  // A launcher prefix hides the level from line_level(), so a `level:` filter would make the
  // rule miss every prefixed line.
  for (const auto& spec : load_specs({"ascend-runtime.yaml", "nvidia-xid.yaml"})) {
    INFO(spec.id);
    CHECK(spec.levels.empty());
  }
}

TEST_CASE("shipped packs: what a rule of every source triggers on is nine bytes or more",
          "[rules][packs]") {
  // The prefilter's Wu-Manber shift is the shortest trigger of the view less its block: one
  // eight-byte trigger in a rule that reads every source (an npu-smi table's "| Alarm ") cost
  // the whole one-shot benchmark 6%. The triggers as the engine takes them: each `any`, else
  // the longest of each `any_of` group or `lines` entry, else the longest `all`.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(FAULTD_SOURCE_DIR) / "etc/faultd/rules.d")) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  }
  auto longest = [](const std::vector<std::string>& v) {
    return *std::max_element(v.begin(), v.end(),
                             [](const auto& a, const auto& b) { return a.size() < b.size(); });
  };
  size_t checked = 0;
  for (const auto& spec : load_specs(names)) {
    if (!spec.sources.empty()) continue;  // a named source's view pays for its own triggers
    std::vector<std::string> triggers = spec.any;
    if (triggers.empty()) {
      for (const auto& group : spec.any_of.empty() ? spec.lines : spec.any_of) {
        triggers.push_back(longest(group));
      }
    }
    if (triggers.empty() && !spec.all.empty()) triggers.push_back(longest(spec.all));
    for (const auto& t : triggers) {
      INFO(spec.id << ": '" << t << "'");
      CHECK(t.size() >= 9);
      ++checked;
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("ascend pack: each rule's line gives one finding behind every launcher prefix",
          "[rules][packs]") {
  const auto set = load_all_shipped();
  struct Case {
    std::string line, rule, device;
  };
  const std::vector<Case> cases = {
      {"EZ9999: [PID: 1440043] 2025-09-02-03:32:24.130.271 The error from device(chipId:2, "
       "dieId:0), serial number is 3, there is an exception of fftsplus aicore error, core id is 2",
       "ascend.aicore.error", "2"},
      {"RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total "
       "capacity; ...)",
       "ascend.memory.device-oom", "2"},
      {"DevMemAllocHugePageManaged:[drv api] halMemAlloc failed:size=2122688(bytes), "
       "drvRetCode=6, device_id=7, ErrCode=207001, desc=[driver error:out of memory]",
       "ascend.memory.hal-alloc-oom", "7"},
      {"EL0004: [PID: 6903] 2025-10-09-01:31:15.131.349 Failed to allocate memory. device_id=4",
       "ascend.memory.driver-oom", "4"},
      {"Out of memory: Killed process 4242 (python3) total-vm:22GB", "ascend.host.oom", ""},
      {"[ERROR] 2025-10-11-15:09:34 (PID:2969, Device:4, RankID:101) EI0002: The wait execution "
       "of the Notify register times out. Reason: ...",
       "ascend.hccl.notify-timeout", "4"},
      {"EI0006: Getting socket times out. Reason: ... device_id=1", "ascend.hccl.socket-timeout",
       "1"},
      {"RuntimeError: npuSynchronizeDevice: NPU function error: AclrtSynchronizeDeviceWithTimeout, "
       "error code is 507048 (PID:13075, Device:5, RankID:8)",
       "ascend.hccl.task-timeout", "5"},
      {"SynchronizeExecutedTask:Stream synchronize timeout, device_id=11, stream_id=103",
       "ascend.runtime.stream-sync-timeout", "11"},
      {"TaskWait:Device[3] lost heartbeart.", "ascend.device.heartbeat-lost", "3"},
      {"[Heartbeat]cqe err status[12], device_id=2, remote ip[192.168.1.20]",
       "ascend.network.rdma-cqe-error", "2"},
  };
  // docs/log-formats.md §4: Ray, torchrun / LLaMA-Factory, vLLM engine and worker, grep output.
  const std::vector<std::string> prefixes = {
      "",
      "(train pid=8464) ",
      "[rank7]: ",
      "[rank1953]: ",
      "(EngineCore_DP0 pid=1228) ERROR 03-30 10:00:00 [core.py:714] ",
      "(Worker pid=17148) (Worker_DP0_TP6_EP6 pid=17148) ERROR 03-25 06:14:02 "
      "[multiproc_executor.py:880] ",
      "worker_3.log:1234:",
      " \t",
      "[ERROR] ",
  };
  for (const auto& c : cases) {
    for (const auto& prefix : prefixes) {
      const std::string line = prefix + c.line;
      INFO(line);
      const auto found = scan_line(*set, line);
      REQUIRE(found.size() == 1);
      CHECK(found[0].rule == c.rule);
      CHECK(found[0].device == c.device);
    }
  }
  // The host driver's heartbeat loss is the kernel's line: a job's copy, behind any prefix,
  // raises nothing (security audit N6; the kernel log's forms are golden case kernel-log-forms).
  for (const auto& prefix : prefixes) {
    CHECK(scan_line(*set, prefix +
                              "[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] "
                              "<kworker/5:1H:39365> Heartbeat lost! (device=1; old_count=1104;")
              .empty());
  }
}

TEST_CASE("ascend pack: the detail text fires, the bare error code does not", "[rules][packs]") {
  const auto set = load_all_shipped();
  for (const std::string line :
       {"EZ9999: Inner Error!", "[ERROR] RecentErrMsg: EZ9999: Inner Error!",
        "[ERROR] RUNTIME(539029,python3):2024-03-25-11:22:02.462.315 [stream.cc:1512]539029 "
        "GetError:[INIT][DEFAULT]report error module_type=5, module_name=EZ9999",
        // a halMemAlloc failure that is not an out-of-memory (docs/log-formats.md §2)
        "[ERROR] RUNTIME(10972,python):2023-09-23-05:41:40.256.365 [npu_driver.cc:1100]49835 "
        "DevMemAllocHugePageManaged:[INIT][DEFAULT][drv api] halMemAlloc "
        "failed:size=2097152(Byte), "
        "... device_id=0!",
        "Failed to allocate memory.", "EL0004", "export HCCL_EXEC_TIMEOUT=1800",
        "BEE1002 AREA DO CIRCULO",
        "2025-03-01 10:00:00 ERROR ray: Executor lost heartbeat, marking worker dead"}) {
    INFO(line);
    CHECK(scan_line(*set, line).empty());
  }
  // hiyouga/LlamaFactory#3796: an EZ9999 report of a missing operator binary is the
  // application's: the operator family records it, at a level that changes nothing.
  const auto found =
      scan_line(*set, "EZ9999: 2024-05-17-18:46:14.721.067  Op Equal does not has any binary.");
  REQUIRE(found.size() == 1);
  CHECK(found[0].rule == "ascend.cann.operator-error");
  CHECK(found[0].level == FaultLevel::NotHandleFault);
}
