// Where the node's devices are discovered (daemon/state/inventory.hpp): what npu-smi's device
// table, nvidia-smi's query, the /dev nodes and the config list say, each as one Discovery.
//
// npu-smi: one device per chip row. Its canonical id: the "Device" column when the table has one
// (310P: the logical id); the chip's physical id when the table has "Phy-ID" (A3, two chips per
// NPU: stable when another chip vanishes, and the logical id while every chip is there); else
// the NPU id, one chip per NPU (the id the runtime, the device-N log directories and `npu-smi -i`
// agree on). Failing all, the chip's position in the table. nvidia-smi: the index.
// /dev: davinciN and nvidiaN (not davinci_manager, nvidiactl, nvidia-uvm ...).
//
// The commands run as the hooks do (daemon/actions): their program an absolute path, a bare name
// looked up in the system's directories (kChildPath) when a config comes into force, never in
// faultd's PATH; their environment PATH alone, none of faultd's. A tool that needs a variable
// is given it in its argv: [/usr/bin/env, VAR=value, npu-smi, info].
//
// Pure functions (the /dev listing reads a directory, the lookup stats the PATH's files); the
// app runs the commands.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/command/parsers/parsers.hpp"
#include "daemon/state/inventory.hpp"

namespace faultd {

inline constexpr std::string_view kNpuSmiDiscoverer = "npu-smi";
inline constexpr std::string_view kNvidiaSmiDiscoverer = "nvidia-smi";
inline constexpr std::string_view kDevDiscoverer = "dev";

// What runs for a discoverer configured as `argv`.
struct DiscovererCommand {
  std::vector<std::string> argv;                         // argv[0] an absolute path
  std::vector<std::pair<std::string, std::string>> env;  // the whole environment
};
// nullopt, with `error` saying where it was looked for, when a bare program name is not found.
std::optional<DiscovererCommand> discoverer_command(const std::vector<std::string>& argv,
                                                    std::string& error);

Discovery discovery_from_npu_smi(const std::vector<command_parsers::DeviceHealth>& table);
Discovery discovery_from_nvidia_smi(const std::vector<command_parsers::GpuInfo>& gpus);
// Throws std::filesystem::filesystem_error when the directory cannot be listed.
Discovery discovery_from_dev(const std::string& dev_dir);
Discovery discovery_from_config(const std::vector<std::string>& ids);

}  // namespace faultd
