#include "daemon/state/device_view.hpp"

namespace faultd {

std::vector<DeviceRecord> visible_devices(const std::map<std::string, DeviceRecord>& devices,
                                          const Inventory& inventory) {
  std::map<std::string, DeviceRecord> shown;
  for (const auto& [id, d] : devices) {
    if (!inventory.known() || d.state != DeviceState::Healthy || inventory.find(id) != nullptr) {
      shown.emplace(id, d);
    }
  }
  for (const auto& [id, inv] : inventory.devices()) {
    if (shown.count(id) != 0) continue;
    DeviceRecord healthy;
    healthy.device = id;
    shown.emplace(id, std::move(healthy));
  }
  std::vector<DeviceRecord> out;
  out.reserve(shown.size());
  for (auto& [id, d] : shown) out.push_back(std::move(d));
  return out;
}

void DeviceView::publish(const std::map<std::string, DeviceRecord>& devices,
                         const Inventory& inventory) {
  std::vector<DeviceRecord> copy = visible_devices(devices, inventory);
  InventorySnapshot inv;
  for (const auto& [id, d] : inventory.devices()) inv.devices.push_back(d);
  inv.expected = inventory.expected();
  inv.present = inventory.present();
  inv.known = inventory.known();
  std::lock_guard lock(mu_);
  devices_ = std::move(copy);
  inventory_ = std::move(inv);
}

std::vector<DeviceRecord> DeviceView::snapshot() const {
  std::lock_guard lock(mu_);
  return devices_;
}

InventorySnapshot DeviceView::inventory() const {
  std::lock_guard lock(mu_);
  return inventory_;
}

}  // namespace faultd
