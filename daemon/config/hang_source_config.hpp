// Loading a `type: hang` entry of the config's `sources:` list into a HangSourceConfig (the
// hang verdict, collectors/activity/hang_source.hpp), every problem at its file:line:column.
//
//   - { name: npu-hang, type: hang, tool: npu_smi, program: npu-smi, devices: "0-7",
//       hccn_tool: hccn_tool, interval: 60s, timeout: 10s, polls: 5, util_below: 5,
//       busy_above: 95, cpu_seconds: 5, packets: 100, wedge_level: SeparateNPU }
//
// Keys: name, type; tool (npu_smi or nvidia_smi, required); program (default npu-smi or
// nvidia-smi; a relative path with a '/' is the config's); devices (npu_smi: required, "0-7");
// hccn_tool (npu_smi, optional: traffic per device); interval (>= 1s, default 60s); timeout
// (>= 10ms, not above interval, default 10s); unresponsive_after (1-1000, default 3); polls
// (2-1000, default 5); util_below (0-100, default 5); busy_above (1-101, above util_below, default
// 95; 101 turns the busy case off); cpu_seconds (CPU seconds a minute that make a holder busy,
// default 5); packets (packets a minute under which traffic is quiet, default 100); wedge_level
// (a fault level, default SeparateNPU); device_wchan (list of wchan prefixes of the device's
// driver).
//
// Lifecycle and threading: a pure function of its inputs, called while a config is loaded.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "collectors/activity/hang_source.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {

std::optional<HangSourceConfig> load_hang_source(const YAML::Node& n, const std::string& name,
                                                 const std::string& base_dir, const yaml::Ctx& ctx);

}  // namespace faultd
