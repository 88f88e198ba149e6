// LogLimiter: at most N lines a minute per owner, the count of those left out said with the next
// line written.
#include <catch2/catch.hpp>

#include "daemon/core/log_limiter.hpp"
#include "tests/support/captured_log.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::CapturedLog;

TEST_CASE("log limiter: N lines a minute, then counted, and the next minute's first line says so") {
  LogLimiter limiter(3);
  const TimePoint t0 = TimePoint{} + 1000h;
  int admitted = 0;
  for (int i = 0; i < 100; ++i) admitted += limiter.admit(t0 + i * 100ms) ? 1 : 0;
  CHECK(admitted == 3);
  const auto next = limiter.admit(t0 + 61s);
  REQUIRE(next);
  CHECK(*next == 97);
  const auto after = limiter.admit(t0 + 62s);
  REQUIRE(after);
  CHECK(*after == 0);  // said once
}

TEST_CASE("log limiter: a clock stepped back starts a new window") {
  LogLimiter limiter(1);
  const TimePoint t0 = TimePoint{} + 1000h;
  CHECK(limiter.admit(t0));
  CHECK_FALSE(limiter.admit(t0 + 1s));
  const auto back = limiter.admit(t0 - 1h);
  REQUIRE(back);
  CHECK(*back == 1);
}

TEST_CASE("log limiter: warn writes the admitted lines with the count left out before") {
  CapturedLog captured;
  LogLimiter limiter(2);
  const TimePoint t0 = TimePoint{} + 1000h;
  for (int i = 0; i < 10; ++i) limiter.warn(t0 + i * 1s, "source s: line " + std::to_string(i));
  limiter.warn(t0 + 70s, "source s: later");
  CHECK(captured.lines() ==
        std::vector<std::string>{"source s: line 0", "source s: line 1",
                                 "source s: later (8 similar line(s) left out before)"});
}
