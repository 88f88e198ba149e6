// Loading a `type: command` entry of the config's `sources:` list into a CommandSourceConfig,
// with every problem reported at its file:line:column (as the rest of the config loader does).
//
//   - { name: npu-health, type: command, argv: [npu-smi, info, -t, health, -i, "{device}"],
//       devices: "0-7", interval: 10s, timeout: 5s, max_output_bytes: 65536,
//       parser: npu_smi_health }
//
// Keys: name, type, argv (required, a list of strings; argv[0] with a '/' but not absolute is
// taken relative to the config file's directory, a bare name is looked up in PATH when run),
// devices ("0-7", "0,2,4-5"), discover (bool), interval (>= 100ms, default 10s), timeout
// (10ms up to the interval, default 5s: a run must end before the next one is due),
// max_output_bytes (1 KiB - 16 MiB, default 64 KiB), parser (required: npu_smi_health,
// npu_smi_info, deviceinfo_cm, nvidia_smi_bus). An argv with "{device}" needs devices or discover:
// true; devices or discover without "{device}" in argv is an error (it would run the same command N
// times).
//
// Lifecycle and threading: a pure function of its inputs, called while a config is loaded.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "collectors/command/command_source.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {

// A polled source's `interval` (at least `min_interval`) and `timeout` (at least 10ms, not above
// the interval), into the defaults given; errors through ctx. Command and hang sources share it.
void load_interval_timeout(const YAML::Node& n, Duration min_interval, Duration& interval,
                           Duration& timeout, const yaml::Ctx& ctx);

// `name` has been read and validated by the caller (unique, well-formed). Returns nullopt when
// anything was reported through ctx.
std::optional<CommandSourceConfig> load_command_source(const YAML::Node& n, const std::string& name,
                                                       const std::string& base_dir,
                                                       const yaml::Ctx& ctx);

}  // namespace faultd
