#include "collectors/activity/log_activity.hpp"

namespace faultd {

void LogClock::on_chunk(const Chunk& chunk, TimePoint now) {
  if (chunk.source_type != "file" || chunk.path_fields == nullptr || chunk.data.empty()) return;
  for (const auto& [name, value] : *chunk.path_fields) {
    if (name != "device" || !is_valid_device_id(value)) continue;
    const auto it = last_.find(value);
    if (it != last_.end()) {
      it->second = now;
    } else if (last_.size() < kMaxDevices) {
      last_.emplace(value, now);
    }
  }
}

std::optional<TimePoint> LogClock::last_line(std::string_view device) const {
  const auto it = last_.find(device);
  if (it == last_.end()) return std::nullopt;
  return it->second;
}

}  // namespace faultd
