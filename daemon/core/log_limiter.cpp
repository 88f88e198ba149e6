#include "daemon/core/log_limiter.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace faultd {

std::optional<uint64_t> LogLimiter::admit(TimePoint now) {
  // A clock stepped back starts a new window rather than silencing the owner until it catches up.
  if (now < window_start_ || now - window_start_ >= std::chrono::minutes(1)) {
    window_start_ = now;
    written_ = 0;
  }
  if (written_ >= per_minute_) {
    ++left_out_;
    return std::nullopt;
  }
  ++written_;
  return std::exchange(left_out_, 0);
}

void LogLimiter::warn(TimePoint now, std::string_view line) {
  const auto left_out = admit(now);
  if (!left_out) return;
  if (*left_out > 0) {
    spdlog::warn("{} ({} similar line(s) left out before)", line, *left_out);
  } else {
    spdlog::warn("{}", line);
  }
}

}  // namespace faultd
