// The shipped NVIDIA pack (etc/faultd/rules.d/nvidia-xid.yaml) as a table: every Xid number
// lands in exactly one level class, whatever collector prefixed the kernel line. The expected
// classes are written here from NVIDIA's Xid catalogue, independently of the pack's regexes,
// so an edit of one regex that drops or doubles a number fails here.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "rules/rule.hpp"

using namespace faultd;

namespace {

std::shared_ptr<const RuleSet> load_pack(const std::string& name) {
  std::vector<RuleSpec> specs;
  ErrorList errors;
  load_rule_file(std::string(FAULTD_SOURCE_DIR) + "/etc/faultd/rules.d/" + name, specs, errors);
  auto set = RuleSet::build(std::move(specs), CodeLevels{}, errors);
  INFO(errors.to_string());
  REQUIRE(errors.empty());
  REQUIRE(set);
  return set;
}

std::vector<Finding> scan_line(const RuleSet& set, const std::string& line) {
  Chunk chunk;
  chunk.source = "kmsg";
  chunk.source_type = "kmsg";  // the NVRM rules read the kernel's lines only
  chunk.path = "/dev/kmsg";
  chunk.data = line;
  chunk.end_offset = line.size();
  std::vector<Finding> out;
  set.scan(chunk, TimePoint{}, out);
  return out;
}

struct Class {
  std::string rule;
  FaultLevel level;
};

// NVIDIA's resolution buckets, as faultd's levels.
Class expected_class(int xid) {
  static const std::set<int> separate = {64, 79};
  static const std::set<int> reset = {48, 62, 63, 74, 94, 95, 109, 119, 120, 140};
  static const std::set<int> application = {13, 31, 43, 45, 68};
  if (separate.count(xid)) return {"nvidia.xid.separate", FaultLevel::SeparateNPU};
  if (reset.count(xid)) return {"nvidia.xid.reset", FaultLevel::RestartNPU};
  if (application.count(xid)) return {"nvidia.xid.application", FaultLevel::NotHandleFault};
  if (xid == 154) return {"nvidia.xid.recovery-action", FaultLevel::NotHandleFault};
  return {"nvidia.xid.other", FaultLevel::SubHealthFault};
}

}  // namespace

TEST_CASE("nvidia pack: every Xid number 0-999 is one finding of its level class",
          "[rules][packs]") {
  const auto set = load_pack("nvidia-xid.yaml");
  for (int xid = 0; xid < 1000; ++xid) {
    if (xid >= 144 && xid <= 150) continue;  // NVLink: by Fatal/Nonfatal, below
    const std::string n = std::to_string(xid);
    for (const std::string& line :
         {"[ 1843.308145] NVRM: Xid (PCI:0000:3b:00): " + n +
              ", pid=1234, name=python3, Ch 00000008",
          "NVRM: Xid (PCI:0000:3b:00): " + n,                        // at the end of the line
          "NVRM: Xid (0000:3b:00): " + n + ", Channel 00000001"}) {  // older, without "PCI:"
      INFO(line);
      const auto found = scan_line(*set, line);
      REQUIRE(found.size() == 1);
      const Class want = expected_class(xid);
      CHECK(found[0].rule == want.rule);
      CHECK(found[0].level == want.level);
      CHECK(found[0].code == "XID" + n);
      CHECK(found[0].device == "0000:3b:00");
    }
  }
}

TEST_CASE("nvidia pack: NVLink Xids 144-150 by their Fatal/Nonfatal word", "[rules][packs]") {
  const auto set = load_pack("nvidia-xid.yaml");
  for (int xid = 144; xid <= 150; ++xid) {
    const std::string n = std::to_string(xid);
    INFO(n);
    auto fatal = scan_line(*set, "[171167.620236] NVRM: Xid (PCI:0009:01:00): " + n +
                                     ", NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x0)");
    REQUIRE(fatal.size() == 1);
    CHECK(fatal[0].rule == "nvidia.xid.nvlink-fatal");
    CHECK(fatal[0].level == FaultLevel::RestartNPU);
    CHECK(fatal[0].code == "XID" + n);
    CHECK(fatal[0].device == "0009:01:00");
    auto nonfatal = scan_line(*set, "NVRM: Xid (PCI:0018:01:00): " + n +
                                        ", RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x0)");
    REQUIRE(nonfatal.size() == 1);
    CHECK(nonfatal[0].rule == "nvidia.xid.nvlink-nonfatal");
    CHECK(nonfatal[0].level == FaultLevel::NotHandleFault);
    // Neither word (never seen): no rule claims it rather than two.
    CHECK(scan_line(*set, "NVRM: Xid (PCI:0018:01:00): " + n + ", pid=1, name=x").empty());
  }
}

TEST_CASE("nvidia pack: the same Xid line behind every collector's prefix", "[rules][packs]") {
  const auto set = load_pack("nvidia-xid.yaml");
  const std::string body =
      "NVRM: Xid (PCI:0000:c6:00): 79, pid=1101234, name=nvc:[driver], GPU "
      "has fallen off the bus.";
  for (const std::string prefix : {"", "[ 1843.308145] ", "[Sun Feb 23 16:24:18 2025] ",
                                   "kern  :warn  : 2025-01-21T04:41:44,283302+00:00 ",
                                   "<4>[ 1126.635824] ", "Mon Jan 21 04:41:44 gpu-node-7 kernel: ",
                                   "Jan 21 04:41:44 gpu-node-7 kernel: [ 1843.308145] ",
                                   "[gpu-health] [CRITICAL] GPU-1234: XID: "}) {
    INFO(prefix);
    const auto found = scan_line(*set, prefix + body);
    REQUIRE(found.size() == 1);
    CHECK(found[0].rule == "nvidia.xid.separate");
    CHECK(found[0].device == "0000:c6:00");
    CHECK(found[0].code == "XID79");
    CHECK(found[0].level == FaultLevel::SeparateNPU);
  }
}

TEST_CASE("nvidia pack: Xid look-alikes and non-faults stay silent", "[rules][packs]") {
  const auto set = load_pack("nvidia-xid.yaml");
  for (const std::string line :
       {"[    8.108512] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Release Build",
        "<3>[    8.108512] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.58.03",
        "NVRM: GPU at PCI:0000:9b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d",
        "NVRM: Xid error: xyz, invalid data", "NVRM: Xid (PCI:0000:3b:00): 79x, not a number",
        "NVRM: Xid (PCI:0000:3b:00): , empty",
        "[rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1370] [PG 0 (default_pg) Rank 3] "
        "Heartbeat monitor timed out! Process will be terminated after dumping debug info.",
        "NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out",
        "NVRM: The NVIDIA GPU 0000:b3:00.0"}) {
    INFO(line);
    CHECK(scan_line(*set, line).empty());
  }
}

TEST_CASE("nvidia pack: fallen off the bus and GSP lines name the GPU their way",
          "[rules][packs]") {
  const auto set = load_pack("nvidia-xid.yaml");
  struct Case {
    std::string line, rule, device, code;
  };
  for (const Case& c : std::vector<Case>{
           {"NVRM: GPU at 0000:01:00.0 has fallen off the bus.", "nvidia.gpu.fallen-off-bus",
            "0000:01:00", "XID79"},
           {"NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.", "nvidia.gpu.fallen-off-bus",
            "0000:2b:00", "XID79"},
           {"NVRM: fallen off the bus and is not responding to commands.",
            "nvidia.gpu.fallen-off-bus", "", "XID79"},
           {"NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 1 timeout "
            "5200",
            "nvidia.gsp.heartbeat-timeout", "GPU6", ""},
           {"NVRM: GPU4 _kgspLogRpcTimeout: Timeout after 6s of waiting for RPC response from GPU4 "
            "GSP! Expected function 76 (GSP_RM_CONTROL)",
            "nvidia.gsp.rpc-timeout", "GPU4", ""},
           {"NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of "
            "every "
            "30).  The GPU likely needs to be reset.",
            "nvidia.gsp.rpc-timeout", "0000:9b:00", ""},
           // The RPC timeout inside an Xid 119 line is the Xid rule's, with the BDF.
           {"NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of "
            "waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC)",
            "nvidia.xid.reset", "0000:9b:00", "XID119"},
           {"I0523 10:22:31.123456       1 health.go:186] XidCriticalError: Xid=79 on "
            "Device=GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae; marking device as unhealthy.",
            "nvidia.device-plugin.xid-critical", "GPU-0b11d014-1685-04bd-26ed-5fc0bc1c44ae",
            "XID79"},
           {"XidCriticalError: Xid=48, All devices will go unhealthy.",
            "nvidia.device-plugin.xid-critical", "", "XID48"},
       }) {
    INFO(c.line);
    const auto found = scan_line(*set, c.line);
    REQUIRE(found.size() == 1);
    CHECK(found[0].rule == c.rule);
    CHECK(found[0].device == c.device);
    CHECK(found[0].code == c.code);
  }
}
