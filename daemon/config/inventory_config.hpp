// The config's `inventory:` section: where the node's devices are discovered, how many it should
// have, and what losing one means (daemon/state/inventory.hpp, docs/operations.md).
//
//   inventory:
//     devices: "0-7"              # or a list of ids; the devices the node has, as configured
//     expected_devices: 8         # default: as many as were ever discovered
//     npu_smi: [npu-smi, info]    # the device table; [] turns it off
//     nvidia_smi: [nvidia-smi, "--query-gpu=index,pci.bus_id,uuid,serial,name",
//                  "--format=csv,noheader"]   # [] turns it off
//     dev_dir: /dev               # /dev/davinciN, /dev/nvidiaN; "" turns it off
//     interval: 60s               # >= 1s
//     timeout: 10s                # 100ms up to the interval
//     lost_level: SeparateNPU     # the level of a device.lost finding
//
// A command that is not installed is simply not a discoverer on this node (logged once).
//
// Lifecycle and threading: a pure function of its inputs, called while a config is loaded.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/types.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {

struct InventoryConfig {
  std::vector<std::string> devices;
  int expected_devices = 0;  // 0: the number of devices ever discovered
  std::vector<std::string> npu_smi{"npu-smi", "info"};
  std::vector<std::string> nvidia_smi{"nvidia-smi", "--query-gpu=index,pci.bus_id,uuid,serial,name",
                                      "--format=csv,noheader"};
  std::string dev_dir = "/dev";
  Duration interval = std::chrono::seconds(60);
  Duration timeout = std::chrono::seconds(10);
  FaultLevel lost_level = FaultLevel::SeparateNPU;
  friend bool operator==(const InventoryConfig&, const InventoryConfig&) = default;
};

// Reads `inventory:` into `cfg` (defaults stay for what is not given); every problem is
// reported through ctx at its position.
void load_inventory_config(const YAML::Node& n, const std::string& base_dir, const yaml::Ctx& ctx,
                           InventoryConfig& cfg);

}  // namespace faultd
