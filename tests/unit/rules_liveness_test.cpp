// Liveness rules (`expect_every`, `expect_within`, `after`, `until`): the detectors driven line
// by line with `now` injected and the bank's attribution of a silence to the line before it (the
// loader's errors are in rules_parse_test.cpp). The traps are a healthy run's jitter, a
// checkpoint pause shorter than the window and a job that ends cleanly.
#include <catch2/catch.hpp>

#include "rules/detectors/bank.hpp"
#include "rules/detectors/detectors.hpp"

using namespace faultd;
using namespace faultd::detect;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint{} + 1000h;

DetectorSpec every(Duration t, std::vector<std::string> until = {}) {
  DetectorSpec s;
  s.type = DetectorType::ExpectEvery;
  s.expect = t;
  s.until = std::move(until);
  return s;
}

DetectorSpec within(Duration t, std::vector<std::string> after,
                    std::vector<std::string> until = {}) {
  DetectorSpec s;
  s.type = DetectorType::ExpectWithin;
  s.expect = t;
  s.after = std::move(after);
  s.until = std::move(until);
  return s;
}

// A line of the series at `at`, its ordinal `pos` (liveness lines name no step).
Sample line(TimePoint at, int64_t pos, std::string_view text) {
  return Sample{at, pos, false, nullptr, nullptr, text};
}

}  // namespace

TEST_CASE("expect_every: a silence longer than T once, re-armed by the next line",
          "[rules][liveness]") {
  auto d = make_detector(every(60s));
  CHECK_FALSE(d->tick(kT0 + 1h));  // no line yet: nothing is expected
  CHECK_FALSE(d->observe(line(kT0, 1, "heartbeat")));
  CHECK_FALSE(d->tick(kT0 + 60s));  // T exactly: not yet
  const auto v = d->tick(kT0 + 61s);
  REQUIRE(v);
  CHECK(v->severity == Severity::Fault);
  CHECK(v->reason == "no new line for 61s (limit 60s) after line 1");
  CHECK_FALSE(d->tick(kT0 + 10min));  // one verdict per silence
  d->observe(line(kT0 + 11min, 2, "heartbeat"));
  CHECK_FALSE(d->tick(kT0 + 11min + 59s));
  CHECK(d->tick(kT0 + 11min + 61s));
}

TEST_CASE("expect_every: no false alarm on jitter, a short checkpoint pause or a clean end",
          "[rules][liveness]") {
  auto d = make_detector(every(5min, {"training is done"}));
  // Two hours of steps every 30s ± 20s, with a checkpoint save of 4 minutes at the hour; the
  // timer is looked at every second, as the daemon does.
  TimePoint t = kT0;
  int64_t pos = 0;
  int verdicts = 0;
  for (int i = 0; i < 240; ++i) {
    const Duration gap = i == 120 ? Duration(4min) : Duration(30s + ((i * 7) % 41 - 20) * 1s);
    for (TimePoint probe = t + 1s; probe < t + gap; probe += 1s) verdicts += d->tick(probe) ? 1 : 0;
    t += gap;
    d->observe(line(t, ++pos, "iteration"));
  }
  CHECK(verdicts == 0);
  d->observe(line(t + 10s, ++pos, "[after training is done] datetime: ..."));
  CHECK_FALSE(d->tick(t + 24h));  // the job said it finished: its silence is expected
  d->observe(line(t + 25h, ++pos, "iteration"));  // a new run in the same file waits again
  CHECK(d->tick(t + 25h + 6min));
}

TEST_CASE("expect_within: an `after` line opens a wait that the next other line closes",
          "[rules][liveness]") {
  auto d = make_detector(within(20min, {"Starting elastic_operator"}, {"finished"}));
  CHECK_FALSE(d->observe(line(kT0, 1, "Rendezvous complete for workers")));
  CHECK_FALSE(d->tick(kT0 + 5h));  // nothing was waited for

  SECTION("a launch that never completes its rendezvous: one verdict") {
    d->observe(line(kT0, 2, "Starting elastic_operator with launch configs:"));
    CHECK_FALSE(d->tick(kT0 + 20min));
    const auto v = d->tick(kT0 + 20min + 1s);
    REQUIRE(v);
    CHECK(v->reason == "no expected line within 1200s of line 2 (waited 1201s)");
    CHECK_FALSE(d->tick(kT0 + 2h));
  }
  SECTION("the awaited line in time: nothing, ever") {
    d->observe(line(kT0, 2, "Starting elastic_operator with launch configs:"));
    d->observe(line(kT0 + 19min, 3, "Rendezvous complete for workers"));
    CHECK_FALSE(d->tick(kT0 + 5h));
  }
  SECTION("a second start waits afresh from its own line") {
    d->observe(line(kT0, 2, "Starting elastic_operator with launch configs:"));
    d->observe(line(kT0 + 15min, 3, "Starting elastic_operator with launch configs:"));
    CHECK_FALSE(d->tick(kT0 + 30min));
    CHECK(d->tick(kT0 + 35min + 1s));
  }
  SECTION("an `until` line ends the wait") {
    d->observe(line(kT0, 2, "Starting elastic_operator with launch configs:"));
    d->observe(line(kT0 + 1min, 3, "worker group finished"));
    CHECK_FALSE(d->tick(kT0 + 5h));
  }
}

TEST_CASE("stall keeps its learnt limit as a Silence detector", "[rules][liveness]") {
  DetectorSpec s = default_detector_spec(DetectorType::Stall);
  s.stall_floor = 60s;
  auto d = make_detector(s);
  for (int i = 0; i < 10; ++i) d->observe(Sample{kT0 + i * 30s, i, true, nullptr});
  const TimePoint last = kT0 + 9 * 30s;
  CHECK_FALSE(d->tick(last + 299s));
  const auto v = d->tick(last + 301s);
  REQUIRE(v);
  CHECK(v->reason == "no new step for 301s (limit 300s) after step 9");
}

TEST_CASE("bank: a liveness verdict names the line the silence came after", "[rules][liveness]") {
  DetectorBank bank;
  bank.configure({{"live", within(10min, {"start"})}});
  auto input = [](std::string text, uint64_t line) {
    Finding f;
    f.rule = "live";
    f.source = "training";
    f.file = "/w/worker_3.log";
    f.device = "3";
    f.line = line;
    f.text = std::move(text);
    f.level = FaultLevel::SubHealthFault;
    f.detector_input = true;
    return f;
  };
  bank.observe(input("start of training", 7), kT0);
  CHECK(bank.tick(kT0 + 10min).empty());
  const auto found = bank.tick(kT0 + 10min + 1s);
  REQUIRE(found.size() == 1);
  CHECK(found[0].rule == "live");
  CHECK(found[0].device == "3");
  CHECK(found[0].line == 7);
  CHECK(found[0].level == FaultLevel::SubHealthFault);
  CHECK_FALSE(found[0].detector_input);
  bool named = false;
  for (const auto& [k, v] : found[0].annotations)
    named = named || (k == "detector" && v == "expect_within");
  CHECK(named);
}
