// The device states as readers on other threads see them (the metrics endpoint, at scrape
// time): the pipeline publishes a copy after every change it commits, from one place, and a
// scrape takes the latest copy. So a scrape never sees a half-made change and never touches
// the io thread's data.
//
// Once the node's inventory is known, the devices shown are its devices (healthy until
// something happens) and any other device that is not healthy (an operator must see it); a
// device the inventory does not know and that is healthy is not shown.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/state/inventory.hpp"
#include "daemon/state/records.hpp"

namespace faultd {

struct InventorySnapshot {
  std::vector<InventoryDevice> devices;
  int expected = 0;
  int present = 0;
  bool known = false;
};

class DeviceView {
 public:
  void publish(const std::map<std::string, DeviceRecord>& devices, const Inventory& inventory);
  void publish(const std::map<std::string, DeviceRecord>& devices) { publish(devices, {}); }
  std::vector<DeviceRecord> snapshot() const;
  InventorySnapshot inventory() const;

 private:
  mutable std::mutex mu_;
  std::vector<DeviceRecord> devices_;
  InventorySnapshot inventory_;
};

// The devices to show: see above. Sorted by id.
std::vector<DeviceRecord> visible_devices(const std::map<std::string, DeviceRecord>& devices,
                                          const Inventory& inventory);

}  // namespace faultd
