#include "collectors/file/rescan_pacer.hpp"

#include <algorithm>

namespace faultd {

bool RescanPacer::due(TimePoint now) const {
  if (first_ || requested_now_) return true;
  if (now < last_walk_ || now - last_walk_ >= periodic_) return true;  // also a clock step back
  return requested_ && now >= next_requested_walk_;
}

void RescanPacer::walked(TimePoint now, Duration cost) {
  if (requested_ && !first_) {
    ++requested_walks_;
    next_requested_walk_ = now + std::max(kMinGap, cost * kCostFactor);
  }
  ++walks_;
  first_ = false;
  requested_ = false;
  requested_now_ = false;
  last_walk_ = now;
}

std::optional<Duration> RescanPacer::held_back(TimePoint now) const {
  if (!requested_ || due(now)) return std::nullopt;
  return next_requested_walk_ - now;
}

}  // namespace faultd
