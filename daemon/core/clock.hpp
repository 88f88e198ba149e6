// The seam for time. Pure logic takes `now` as a parameter; only the app asks a Clock, so tests
// drive time with tests/support/fake_clock.hpp and never sleep.
#pragma once

#include "daemon/core/types.hpp"

namespace faultd {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint now() const override { return SystemClock::now(); }
};

}  // namespace faultd
