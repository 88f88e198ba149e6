// Parsers for what the device tools say of a device's *activity*: how busy it is, how much of
// its memory is in use, which processes hold it and how much traffic its network ports moved.
// The hang verdict (collectors/activity/) reads them every poll; a device whose activity stays
// flat while a process holds it is a hang candidate.
//
// Like parsers.hpp: pure functions from the bytes a command printed to plain values, nullopt
// with `error` set when the output is not what the tool prints (refused as a whole).
//
// Lifecycle and threading: stateless free functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::command_parsers {

// How busy one device is. `utilization` is the compute engine's use in percent (AI Core on
// Ascend, SM on NVIDIA); `memory_mb` the device memory in use.
struct DeviceUsage {
  std::string device;  // as the tool prints it ("" when the output names none)
  std::string bus_id;  // nvidia-smi only: the GPU's PCI bus id, to place its processes
  double utilization = 0;
  uint64_t memory_mb = 0;
  friend bool operator==(const DeviceUsage&, const DeviceUsage&) = default;
};

// A process holding a device.
struct DeviceProcess {
  std::string device;  // NPU id (npu-smi) or "" (nvidia-smi names the bus id instead)
  std::string bus_id;  // nvidia-smi's gpu_bus_id
  int64_t pid = 0;     // as the tool reports it (the host's pid namespace for npu-smi's table)
  std::string name;
  uint64_t memory_mb = 0;
  friend bool operator==(const DeviceProcess&, const DeviceProcess&) = default;
};

// `npu-smi info -t usages -i N`: "Key : value" lines. Utilization = the highest "Aicore Usage
// Rate(%)" of the card's chips (A3 cards print one block per chip); memory = the sum over chips
// of "HBM Capacity(MB)" × "HBM Usage Rate(%)" / 100 (npu-smi gives no absolute figure), or of
// the DDR pair on cards without HBM. An AI Core rate is required.
std::optional<DeviceUsage> parse_npu_smi_usages(std::string_view output, std::string& error);

// The process table of `npu-smi info` (after the device table): one entry per process row
// ("| NPU Chip | Process id | Process name | Process memory(MB) [| Process id in container] |"),
// none for "No running processes found in NPU N". Without the table's header: an error.
std::optional<std::vector<DeviceProcess>> parse_npu_smi_processes(std::string_view output,
                                                                  std::string& error);

// `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` where fields name index,
// utilization.gpu and memory.used (pci.bus_id too, to place processes), in any order; with a
// header line the columns are found by name. Units ("37 %", "2048 MiB") are accepted.
inline constexpr std::string_view kActivityGpuFields =
    "index,pci.bus_id,utilization.gpu,memory.used";
std::optional<std::vector<DeviceUsage>> parse_nvidia_smi_activity(
    std::string_view output, std::string& error, std::string_view fields = kActivityGpuFields);

// `nvidia-smi --query-compute-apps=gpu_bus_id,pid,used_memory --format=csv,noheader,nounits`
// (a header line, as with --format=csv, is skipped). Empty output: no process.
std::optional<std::vector<DeviceProcess>> parse_nvidia_smi_apps(std::string_view output,
                                                                std::string& error);

// `hccn_tool -i N -stat -g`: "name:value" counter lines. Packets = roce_tx_all_pkt_num +
// roce_rx_all_pkt_num (the RoCE traffic MindCluster's hang rule reads), else mac_tx_total_pkt_num
// + mac_rx_total_pkt_num. Neither pair: an error.
std::optional<uint64_t> parse_hccn_stat_packets(std::string_view output, std::string& error);

}  // namespace faultd::command_parsers
