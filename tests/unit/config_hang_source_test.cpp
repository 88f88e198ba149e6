// The `type: hang` source entry: MindCluster's defaults, tuning, and every error at its
// file:line:column.
#include <catch2/catch.hpp>

#include <string>

#include "daemon/config/hang_source_config.hpp"
#include "tests/support/source_entry.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

auto load(const std::string& text) {
  return testing::load_source_entry(text, "npu-hang", [](auto&&... args) {
    return load_hang_source(std::forward<decltype(args)>(args)...);
  });
}

}  // namespace

TEST_CASE("hang source config: npu-smi with MindCluster's defaults") {
  const auto l = load(R"({ name: npu-hang, type: hang, tool: npu_smi, devices: "0-7" })");
  INFO(l.errors);
  REQUIRE(l.config);
  CHECK(l.config->tool == HangTool::NpuSmi);
  CHECK(l.config->program == "npu-smi");
  CHECK(l.config->hccn_tool.empty());
  CHECK(l.config->thresholds.interval == 60s);
  CHECK(l.config->thresholds.polls == 5);
  CHECK(l.config->thresholds.util_below == 5);
  CHECK(l.config->thresholds.busy_above == 95);
  CHECK(l.config->thresholds.cpu_seconds_per_minute == 5);
  CHECK(l.config->thresholds.packets_per_minute == 100);
  CHECK(l.config->wedge_level == FaultLevel::SeparateNPU);
}

TEST_CASE("hang source config: tuned, relative programs, nvidia-smi") {
  const auto l = load(R"(
name: npu-hang
type: hang
tool: npu_smi
program: bin/npu-smi
hccn_tool: hccn_tool
devices: "0,2"
interval: 30s
timeout: 5s
polls: 6
util_below: 3
busy_above: 101
cpu_seconds: 10
packets: 50
wedge_level: RestartNPU
device_wchan: [devdrv]
)");
  INFO(l.errors);
  REQUIRE(l.config);
  CHECK(l.config->program == "/etc/faultd/bin/npu-smi");
  CHECK(l.config->hccn_tool == "hccn_tool");
  CHECK(l.config->thresholds.interval == 30s);
  CHECK(l.config->thresholds.polls == 6);
  CHECK(l.config->thresholds.busy_above == 101);
  CHECK(l.config->wedge_level == FaultLevel::RestartNPU);
  CHECK(l.config->thresholds.device_wchan == std::vector<std::string>{"devdrv"});
  const auto g = load(R"({ name: gpu-hang, type: hang, tool: nvidia_smi })");
  REQUIRE(g.config);
  CHECK(g.config->program == "nvidia-smi");
}

TEST_CASE("hang source config: errors at their position") {
  auto e = load(R"({ name: x, type: hang, devices: "0-7" })");
  CHECK_FALSE(e.config);
  CHECK(e.errors.find("needs tool") != std::string::npos);
  e = load("name: x\ntype: hang\ntool: rocm_smi\n");
  CHECK(e.errors.find("faultd.yaml:3:7") != std::string::npos);
  CHECK(e.errors.find("unknown tool 'rocm_smi'") != std::string::npos);
  e = load("name: x\ntype: hang\ntool: npu_smi\n");
  CHECK(e.errors.find("needs devices") != std::string::npos);
  e = load("name: x\ntype: hang\ntool: nvidia_smi\ndevices: \"0-7\"\n");
  CHECK(e.errors.find("faultd.yaml:4:10") != std::string::npos);
  e = load("name: x\ntype: hang\ntool: npu_smi\ndevices: \"0-7\"\ninterval: 10s\ntimeout: 20s\n");
  CHECK(e.errors.find("must not exceed interval") != std::string::npos);
  e = load("name: x\ntype: hang\ntool: npu_smi\ndevices: \"0-7\"\npolls: 1\n");
  CHECK(e.errors.find("faultd.yaml:5:8") != std::string::npos);
  e = load(
      "name: x\ntype: hang\ntool: npu_smi\ndevices: \"0-7\"\nutil_below: 50\nbusy_above: 40\n");
  CHECK(e.errors.find("busy_above must be above util_below") != std::string::npos);
  e = load("name: x\ntype: hang\ntool: npu_smi\ndevices: \"0-7\"\nwedge_level: Severe\n");
  CHECK_FALSE(e.config);
  e = load("name: x\ntype: hang\ntool: npu_smi\ndevices: \"0-7\"\npoll: 5\n");
  CHECK_FALSE(e.config);  // an unknown key
}
