// When a source walks its tree again (security audit F5 and N7): the first request after a
// quiet spell at once, later ones coalesced into one walk per gap, the gap stretched by the
// walk's own cost, and the periodic walk as the backstop.
#include <catch2/catch.hpp>

#include <chrono>

#include "collectors/file/rescan_pacer.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint{std::chrono::seconds{1'700'000'000}};
constexpr Duration kCheap = 1ms;  // a walk that costs less than the gap / kCostFactor

}  // namespace

TEST_CASE("rescan pacer: the first poll walks, then the periodic interval", "[collectors][pacer]") {
  RescanPacer pacer(30s);
  CHECK(pacer.due(kT0));
  pacer.walked(kT0, kCheap);
  CHECK_FALSE(pacer.due(kT0 + 29s));
  CHECK(pacer.due(kT0 + 30s));
  CHECK(pacer.due(kT0 - 1s));  // the clock stepped back: walk rather than wait for it
  CHECK(pacer.walks() == 1);
  CHECK(pacer.requested_walks() == 0);
}

TEST_CASE("rescan pacer: the first request after a quiet spell is answered at once",
          "[collectors][pacer]") {
  RescanPacer pacer(30s);
  pacer.walked(kT0, kCheap);
  pacer.request();
  CHECK(pacer.due(kT0));  // right after the first walk: no requested walk ran before it
  CHECK_FALSE(pacer.held_back(kT0).has_value());
  pacer.walked(kT0, kCheap);
  CHECK(pacer.requested_walks() == 1);

  // A quiet spell longer than the gap: the next request is answered at once too.
  pacer.request();
  CHECK(pacer.due(kT0 + RescanPacer::kMinGap));
}

TEST_CASE("rescan pacer: requests within the gap are coalesced into one walk at its end",
          "[collectors][pacer]") {
  RescanPacer pacer(30s);
  pacer.walked(kT0, kCheap);
  pacer.request();
  pacer.walked(kT0, kCheap);
  TimePoint now = kT0;
  for (int i = 0; i < 4; ++i) {
    now += 50ms;
    pacer.request();
    CHECK_FALSE(pacer.due(now));
  }
  REQUIRE(pacer.held_back(now).has_value());
  CHECK(*pacer.held_back(now) == RescanPacer::kMinGap - 200ms);
  CHECK(pacer.due(kT0 + RescanPacer::kMinGap));
  pacer.walked(kT0 + RescanPacer::kMinGap, kCheap);
  CHECK(pacer.requested_walks() == 2);
  CHECK_FALSE(pacer.requested());
  CHECK_FALSE(pacer.held_back(kT0 + RescanPacer::kMinGap).has_value());
}

TEST_CASE("rescan pacer: an expensive walk stretches the gap to keep walks a tenth of the time",
          "[collectors][pacer]") {
  RescanPacer pacer(30s);
  pacer.walked(kT0, kCheap);
  pacer.request();
  pacer.walked(kT0, 150ms);  // a walk of 4096 directories
  pacer.request();
  CHECK_FALSE(pacer.due(kT0 + 1499ms));
  CHECK(pacer.due(kT0 + 1500ms));
  // Events every 50 ms for 20 s: at most one walk per 1.5 s.
  TimePoint now = kT0;
  for (int i = 0; i < 400; ++i) {
    now += 50ms;
    pacer.request();
    if (pacer.due(now)) pacer.walked(now, 150ms);
  }
  CHECK(pacer.walks() <= 2 + 14);
}

TEST_CASE("rescan pacer: the rest of a cut-short walk runs at once", "[collectors][pacer]") {
  RescanPacer pacer(30s);
  pacer.walked(kT0, kCheap);
  pacer.request();
  pacer.walked(kT0, kCheap);
  pacer.request_now();
  CHECK(pacer.due(kT0));
}
