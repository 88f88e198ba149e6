// When a source walks its directory tree again. The walk is the truth and costs in proportion
// to the tree (a 4096-directory tree is a walk of a tenth of a second), and a job decides how
// often inotify asks for one: one file created every 50 ms must not keep the io thread walking.
//
// - The first poll walks; then a walk runs at least every `periodic` (the truth, for what
//   inotify cannot see).
// - A request (an inotify create/move/delete) is answered at once when no requested walk ran
//   in the gap before it, so the first new file after a quiet spell is found without delay.
//   Requests within the gap after a requested walk are coalesced into one walk at the gap's
//   end. The gap is kMinGap, or kCostFactor times the last requested walk's own duration when
//   that is longer: requested walks take at most about 1/kCostFactor of the thread, however
//   big the tree and however fast the events come.
//
// Lifecycle: one per source. Pure: `now` and the walk's cost are passed in.
// Threading: single-threaded (the source's).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "daemon/core/types.hpp"

namespace faultd {

class RescanPacer {
 public:
  static constexpr Duration kMinGap = std::chrono::milliseconds(250);
  static constexpr int kCostFactor = 10;

  explicit RescanPacer(Duration periodic) : periodic_(periodic) {}

  void set_periodic(Duration periodic) { periodic_ = periodic; }
  void request() { requested_ = true; }
  // A walk that must run at once (the rest of a walk cut short by a per-poll limit).
  void request_now() { requested_now_ = true; }
  bool requested() const { return requested_ || requested_now_; }

  bool due(TimePoint now) const;
  // A walk ran at `now` and took `cost`.
  void walked(TimePoint now, Duration cost);
  // How long a pending request is held back (nullopt if none is).
  std::optional<Duration> held_back(TimePoint now) const;

  uint64_t walks() const { return walks_; }
  uint64_t requested_walks() const { return requested_walks_; }

 private:
  Duration periodic_;
  bool first_ = true;
  bool requested_ = false;
  bool requested_now_ = false;
  TimePoint last_walk_{};
  TimePoint next_requested_walk_{};  // a request before this waits until it
  uint64_t walks_ = 0;
  uint64_t requested_walks_ = 0;
};

}  // namespace faultd
