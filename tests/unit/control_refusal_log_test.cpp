#include <catch2/catch.hpp>

#include <boost/asio.hpp>

#include "daemon/control/refusal_log.hpp"
#include "tests/support/captured_log.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::CapturedLog;

namespace {

size_t admitted(RefusalLog& log, int refusals) {
  size_t n = 0;
  for (int i = 0; i < refusals; ++i) n += log.admit() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE(
    "refusal log: a burst is logged, the rest is summed up in one line when the interval "
    "ends",
    "[control]") {
  CapturedLog captured;
  boost::asio::io_context io;
  RefusalLog log(io, "webhook", 3, 20ms);
  CHECK(admitted(log, 1000) == 3);
  CHECK(captured.lines().empty());  // the owner writes the admitted lines; nothing else yet

  // The summary is written by a timer at the interval's end.
  REQUIRE(io.run_one_for(10s) == 1);
  REQUIRE(captured.lines().size() == 1);
  CHECK(captured.lines()[0] == "webhook: 997 more refusal(s) in the last 20ms were not logged");

  // A new interval starts with a new burst.
  CHECK(admitted(log, 5) == 3);
  log.stop();  // writes what is pending at once
  REQUIRE(captured.lines().size() == 2);
  CHECK(captured.lines()[1] == "webhook: 2 more refusal(s) in the last 20ms were not logged");
}

TEST_CASE("refusal log: nothing held back, no summary", "[control]") {
  CapturedLog captured;
  boost::asio::io_context io;
  RefusalLog log(io, "control socket", 3, 20ms);
  CHECK(admitted(log, 3) == 3);
  log.stop();
  CHECK(io.run() == 0);  // no timer was armed
  CHECK(captured.lines().empty());
}
