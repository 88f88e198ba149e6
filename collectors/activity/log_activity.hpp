// The "log silent" half of the hang verdict: when a log line last arrived that names a device.
// A one-method interface (LogActivity), so that line-level liveness rules can feed it later; its
// implementation today (LogClock) is told of every chunk a file source hands on and keeps, per
// device named by the source's `device` path field, the time the last one arrived.
//
// A device no log names has no entry: the verdict then rests on the device's activity alone
// (MindCluster's rule reads no log either).
//
// Lifecycle: one per daemon, for its life. Threading: the app's io thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/core/types.hpp"

namespace faultd {

class LogActivity {
 public:
  virtual ~LogActivity() = default;
  // When a log line naming `device` last arrived; nullopt when none ever did.
  virtual std::optional<TimePoint> last_line(std::string_view device) const = 0;
};

class LogClock final : public LogActivity {
 public:
  // At most this many devices are remembered (device ids come from paths: bounded anyway).
  static constexpr size_t kMaxDevices = 4096;
  void on_chunk(const Chunk& chunk, TimePoint now);
  std::optional<TimePoint> last_line(std::string_view device) const override;

 private:
  std::map<std::string, TimePoint, std::less<>> last_;
};

}  // namespace faultd
