// Parsers for the output of device-health commands (npu-smi, the Device Plugin's ConfigMap,
// nvidia-smi). Each is a pure function from the bytes a command printed to plain values, so it
// can be tested on verbatim vendor output without running anything; CommandSource owns the
// state (what changed since the last run) and the record lines the rule engine sees.
//
// Every parser either returns its values or nullopt with `error` set to a short reason: output
// that is truncated, garbled or of another tool is refused as a whole (the caller counts a parse
// error and keeps its previous view), never half-read.
//
// Lifecycle and threading: stateless free functions, safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::command_parsers {

// What one device (or one chip of it) reports about its health.
struct DeviceHealth {
  std::string device;              // card/NPU id, GPU index, ... as the tool prints it
  std::string chip;                // chip id when the tool tells chips apart, else empty
  std::string status;              // "OK" when healthy; anything else as printed
  std::vector<std::string> codes;  // fault codes, upper-case hex, no 0x, in printed order
  std::vector<std::string> info;   // free-text details (npu-smi Error Information pieces)
  std::string fault_level;         // the vendor's level when the tool names one (ConfigMap)
  // What npu-smi's device table says of the chip (empty elsewhere): the Name column, the
  // Bus-Id, and the second id of the chip row: the physical id ("Chip  Phy-ID" header) or the
  // logical device id ("Chip  Device" header).
  std::string name;
  std::string bus_id;
  std::string physical_id;
  std::string logical_id;
  bool ok() const { return status == "OK"; }
};

// `npu-smi info -t health -i N [-c C]`: "Health Status", "Error Code" (NA or several
// space-separated hex codes) and "Error Information" (NA, or pieces on continuation lines that
// start with blank padding and ": ", possibly separated by blank lines). Keys are padded with a
// TAB or spaces. The output names no device: `device`/`chip` are left empty for the caller.
// Health Status and Error Code are required; an error code that is not hex is garbled.
std::optional<DeviceHealth> parse_npu_smi_health(std::string_view output, std::string& error);

// `npu-smi info`: the device table, in the layout without chips' physical ids (one chip per
// NPU, second header "Chip"), the A3 layout ("Chip  Phy-ID", one row pair per chip, the
// second chip's power shown as "-") and the 310P layout ("Chip  Device": the logical id). One entry
// per chip row pair, in table order, with device = NPU id, chip = chip id and status = the Health
// column. The process section that follows the table is ignored. No header is an error. A table cut
// inside a row pair (output cut short) is an error too, unless `truncated` is given: then the
// complete pairs before the cut are returned, *truncated is set and `error` says where it was cut
// (their health is what npu-smi printed; the cut device is simply not seen this time).
std::optional<std::vector<DeviceHealth>> parse_npu_smi_info(std::string_view output,
                                                            std::string& error,
                                                            bool* truncated = nullptr);
// The distinct NPU ids of a parsed table, in order: the devices `-i` takes.
std::vector<std::string> npu_ids(const std::vector<DeviceHealth>& table);

// The Ascend Device Plugin's `DeviceInfoCfg` (ConfigMap kube-system/mindx-dl-deviceinfo-<node>):
// accepts `kubectl get cm ... -o json` output (the value under data.DeviceInfoCfg), or the
// DeviceInfoCfg JSON itself. Every `huawei.com/<type>-Fault` list of DeviceInfo.DeviceList
// (an escaped JSON array, "[]" when empty) gives per-device faults: device = the number after
// the last '-' of npu_name ("Ascend910-3" → "3"), codes from fault_code (comma-separated),
// fault_level from fault_level. Devices named in the plain `huawei.com/<type>` list without a
// fault are reported OK, so a fault list that empties reads as a recovery.
std::optional<std::vector<DeviceHealth>> parse_deviceinfo_cm(std::string_view output,
                                                             std::string& error);

// `nvidia-smi --query-gpu=<fields> --format=csv[,noheader]`: one GPU per line, cells separated
// by ", ", never quoted. With a header line ("index, pci.bus_id, uuid, ...": nvidia-smi prints
// the canonical names even for aliases such as gpu_bus_id) the columns are found by their
// names, in any order; without one, `fields` (the query's list) says what they are. Fields
// other than these five are skipped. An index must be a number and a bus id look like one;
// "[N/A]" and "[Not Supported]" read as empty. A line with more or fewer cells than columns
// is garbled.
inline constexpr std::string_view kInventoryGpuFields = "index,pci.bus_id,uuid,serial,name";
struct GpuInfo {
  std::string index;
  std::string bus_id;
  std::string uuid;
  std::string serial;
  std::string name;
  friend bool operator==(const GpuInfo&, const GpuInfo&) = default;
};
std::optional<std::vector<GpuInfo>> parse_nvidia_smi_gpus(
    std::string_view output, std::string& error, std::string_view fields = kInventoryGpuFields);

// `nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader`: "0, 00000000:3B:00.0".
struct GpuBus {
  std::string index;
  std::string bus_id;  // as printed (upper-case hex, 8-digit domain)
  friend bool operator==(const GpuBus&, const GpuBus&) = default;
};
std::optional<std::vector<GpuBus>> parse_nvidia_smi_bus(std::string_view output,
                                                        std::string& error);

// `nvidia-smi -q`: one entry per "GPU <bus id>" block (device = the bus id as printed,
// "00000000:10:1C.0"), status "OK" or "Error", one code per problem in printed order:
//   VOLATILE_UNCORRECTABLE_ECC / AGGREGATE_UNCORRECTABLE_ECC  an "Uncorrectable" count (or an
//       older driver's "Double Bit" "Total") above 0 under "ECC Errors" > "Volatile" (since the
//       driver was loaded) or "Aggregate" (the GPU's life);
//   RETIRED_PAGES_PENDING   "Retired Pages" > "Pending Page Blacklist" (or "Pending ...") Yes;
//   REMAPPED_ROWS_PENDING   "Remapped Rows" > "Pending" Yes (a reset activates the spare row);
//   ROW_REMAPPING_FAILURE   "Remapped Rows" > "Remapping Failure Occurred" Yes;
//   RESET_REQUIRED          "GPU Reset Status" > "Reset Required" Yes;
// each with a short `info` piece. Sections are told apart by indentation; values NVML cannot
// give ("N/A", "Unknown Error" for a field the GPU lacks) are no problem. No GPU block, or a
// GPU line that names no bus id, is not -q output.
std::optional<std::vector<DeviceHealth>> parse_nvidia_smi_query(std::string_view output,
                                                                std::string& error);

}  // namespace faultd::command_parsers
