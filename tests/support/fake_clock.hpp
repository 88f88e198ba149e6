// A clock that moves only when the test says so.
#pragma once

#include "daemon/core/clock.hpp"

namespace faultd::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{std::chrono::seconds{1'700'000'000}})
      : now_(start) {}
  TimePoint now() const override { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

}  // namespace faultd::testing
