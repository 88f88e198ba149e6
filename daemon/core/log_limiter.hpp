// Log lines that input can cause (a directory link a log writer plants, a probe that fails every
// few seconds), at most `per_minute` a minute per owner: a cause that repeats for hours must not
// flood the journal, whose own rate limit would then drop faultd's fault lines with them. Lines
// past the limit are only counted; the next line written says how many were left out before it.
//
// Lifecycle: one per owner (a source), kept for its life. Pure: `now` is passed in.
// Threading: single-threaded (the owner's thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "daemon/core/types.hpp"

namespace faultd {

class LogLimiter {
 public:
  static constexpr uint32_t kDefaultPerMinute = 10;

  explicit LogLimiter(uint32_t per_minute = kDefaultPerMinute) : per_minute_(per_minute) {}

  // nullopt: leave this line out (it is counted). Else write it, and say the number returned
  // (the lines left out since the last one written) with it when that is not 0.
  std::optional<uint64_t> admit(TimePoint now);

  // Writes `line` as a warning if admitted, with the count of lines left out before it.
  void warn(TimePoint now, std::string_view line);

 private:
  uint32_t per_minute_;
  TimePoint window_start_{};
  uint32_t written_ = 0;
  uint64_t left_out_ = 0;
};

}  // namespace faultd
