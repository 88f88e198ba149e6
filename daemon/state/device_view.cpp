#include "daemon/state/device_view.hpp"

namespace faultd {

void DeviceView::publish(const std::map<std::string, DeviceRecord>& devices) {
  std::vector<DeviceRecord> copy;
  copy.reserve(devices.size());
  for (const auto& [id, d] : devices) copy.push_back(d);
  std::lock_guard lock(mu_);
  devices_ = std::move(copy);
}

std::vector<DeviceRecord> DeviceView::snapshot() const {
  std::lock_guard lock(mu_);
  return devices_;
}

}  // namespace faultd
