// The node's devices: what the node has, each under one canonical id with the other names the
// world uses for it, whether the last discovery still saw it, and how many the node should have.
//
// One device has many names. The runtime says `device_id=3`, the Device Plugin `Ascend910-3`
// (the physical id), npu-smi a card and chip, NVIDIA's kernel log a PCI BDF in whatever width,
// CUDA an index, Kubernetes a UUID. `resolve()` maps every spelling to the canonical id, so a
// device's findings meet in one place; a name that is no device of the node resolves to nothing.
//
// Discoveries (npu-smi's table, nvidia-smi's query, the /dev nodes, the config's `devices:`)
// are merged by canonical id. Each remembers which discoverers listed the device: when a
// discoverer that listed it runs successfully without it, the device is lost; when it lists it
// again, it has returned. A failed discovery changes nothing.
//
// Lifecycle: loaded from the store at start, changed by `merge()` (the caller persists the
// devices it returns as changed). Pure: no I/O, no clock. Threading: io thread only; readers
// elsewhere get copies (DeviceView).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/types.hpp"

namespace faultd {

// The source name of the inventory's own findings (device.lost and its recovery).
inline constexpr std::string_view kInventorySource = "inventory";
// The config's `devices:` as a discoverer: a device taken out of it is forgotten, not lost.
inline constexpr std::string_view kConfigDiscoverer = "config";

struct InventoryDevice {
  std::string id;      // canonical: the logical id (Ascend), the index (NVIDIA), or as configured
  std::string vendor;  // "ascend", "nvidia", or empty (a configured or /dev-only device)
  std::string model;
  std::string serial;
  std::string bus_id;  // PCI BDF as the discoverer printed it
  std::string uuid;
  std::string physical_id;
  std::string card;  // npu-smi's NPU id (what `-i` takes) and chip
  std::string chip;
  // Discoverers that listed it ("npu-smi", "nvidia-smi", "dev", "config"), sorted, and those
  // of them whose last successful run did not: the device is lost while any did not.
  std::vector<std::string> seen_by;
  std::vector<std::string> missing_from;
  bool present() const { return missing_from.empty(); }
  TimePoint first_seen{};
  TimePoint last_seen{};
  friend bool operator==(const InventoryDevice&, const InventoryDevice&) = default;
};

// One successful run of one discoverer: every device it lists now. The config's `devices:` is
// a discoverer too ("config"): a device taken out of it is forgotten, not lost.
struct Discovery {
  std::string by;
  std::vector<InventoryDevice> devices;
};

// What a merge changed.
struct InventoryChange {
  std::vector<std::string> added;        // first seen
  std::vector<std::string> lost;         // a discoverer that listed it no longer does
  std::vector<std::string> returned;     // lost, now listed again
  std::vector<std::string> removed;      // no discoverer lists it any more (config only)
  std::vector<InventoryDevice> changed;  // every device whose record changed (to persist)
};

// The names of one device other than its canonical id: card-chip ("3-0"), the Device Plugin's
// name ("Ascend910-<physical id>"), the bus id, the UUID, the serial. Tested with every spelling
// `resolve` accepts.
std::vector<std::string> device_aliases(const InventoryDevice& d);

// A PCI address in any of the forms tools print ("0000:9b:00", "00000000:9B:00.0", "9b:00.0",
// "PCI:0000:9b:00") as "dddd:bb:dd.f", lower-case; empty when `text` is none.
std::string normalize_bdf(std::string_view text);

class Inventory {
 public:
  // The devices as stored, and the config's `expected_devices` (0: remember the first
  // discovery, i.e. the number of devices ever seen).
  void load(std::vector<InventoryDevice> devices);
  void set_expected(int expected) { expected_config_ = expected; }

  InventoryChange merge(const Discovery& discovery, TimePoint now);

  // The canonical id of `name`, or nothing when `name` is no device of this node.
  std::optional<std::string> resolve(std::string_view name) const;
  // Whether findings are bounded by the inventory: once any device is known.
  bool known() const { return !devices_.empty(); }
  int expected() const;
  int present() const;
  const std::map<std::string, InventoryDevice>& devices() const { return devices_; }
  const InventoryDevice* find(const std::string& id) const;

 private:
  void index();

  std::map<std::string, InventoryDevice> devices_;
  std::map<std::string, std::string> aliases_;  // alias (normalized) → canonical id
  int expected_config_ = 0;
};

}  // namespace faultd
