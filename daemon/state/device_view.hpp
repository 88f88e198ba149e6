// The device states as readers on other threads see them (the metrics endpoint, at scrape
// time): the pipeline publishes a copy after every change it commits, from one place, and a
// scrape takes the latest copy. So a scrape never sees a half-made change and never touches
// the io thread's data.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/state/records.hpp"

namespace faultd {

class DeviceView {
 public:
  void publish(const std::map<std::string, DeviceRecord>& devices);
  std::vector<DeviceRecord> snapshot() const;

 private:
  mutable std::mutex mu_;
  std::vector<DeviceRecord> devices_;
};

}  // namespace faultd
