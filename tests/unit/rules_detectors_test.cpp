// The stateful detectors, each driven sample by sample with `now` injected: table-driven
// sequences of synthetic and real-looking values, including the false-alarm traps of the
// seed documents (a single overflow, the calibration burst, bf16's constant scale 1.0,
// "nan iterations: 0", a job resumed from a checkpoint).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>

#include "rules/detectors/detectors.hpp"

using namespace faultd;
using namespace faultd::detect;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint{} + 1000h;

// One step of a synthetic series: its fields, at `seconds` after kT0.
struct Step {
  Fields fields;
  double seconds = 0;
  std::optional<int64_t> step;
};

struct Run {
  std::vector<std::optional<Verdict>> verdicts;
  int count(Severity s) const {
    int n = 0;
    for (const auto& v : verdicts) n += v && v->severity == s;
    return n;
  }
  int total() const { return count(Severity::Warning) + count(Severity::Fault); }
  // Index of the first verdict, -1 when none.
  int first() const {
    for (size_t i = 0; i < verdicts.size(); ++i) {
      if (verdicts[i]) return static_cast<int>(i);
    }
    return -1;
  }
};

Run run(const DetectorSpec& spec, const std::vector<Step>& steps) {
  auto d = make_detector(spec);
  Run r;
  int64_t ordinal = 0;
  for (const auto& s : steps) {
    ++ordinal;
    Sample x{kT0 + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s.seconds)),
             s.step.value_or(ordinal), s.step.has_value(), &s.fields};
    r.verdicts.push_back(d->observe(x));
    if (r.verdicts.back()) INFO(r.verdicts.back()->reason);
  }
  return r;
}

DetectorSpec spec_of(DetectorType type) { return default_detector_spec(type); }

// Steps 0..n-1, one a second, with `make(i)` giving the fields of step i.
template <class F>
std::vector<Step> series(int n, F make) {
  std::vector<Step> out;
  for (int i = 0; i < n; ++i) out.push_back({make(i), static_cast<double>(i), i});
  return out;
}

std::string str(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

}  // namespace

TEST_CASE("parse_number reads what training logs print", "[rules][detectors]") {
  CHECK(parse_number("0.752") == 0.752);
  CHECK(parse_number("7.334521E-01") == Approx(0.7334521));
  CHECK(parse_number(" 65536 ") == 65536);
  CHECK(parse_number("166756ms") == 166756);
  CHECK(parse_number("+1.5") == 1.5);
  CHECK(std::isnan(*parse_number("nan")));
  CHECK(std::isnan(*parse_number("NaN")));
  CHECK(std::isinf(*parse_number("inf")));
  CHECK(std::isinf(*parse_number("-Infinity")));
  CHECK_FALSE(parse_number(""));
  CHECK_FALSE(parse_number("True"));
  CHECK_FALSE(parse_number("1.0.0"));
  CHECK_FALSE(parse_number("12abc"));
}

TEST_CASE("a sample's numbers are read once per field and line", "[rules][detectors]") {
  Fields fields = {{"loss", "2.5"}, {"scale", "nan"}, {"overflow", "False"}, {"step", "7"}};
  FieldNumbers numbers;
  const Sample memo{kT0, 7, true, &fields, &numbers};
  const Sample plain{kT0, 7, true, &fields, nullptr};
  for (const char* name : {"loss", "scale", "overflow", "step", "missing"}) {
    INFO(name);
    const auto a = memo.number(name), b = plain.number(name);
    REQUIRE(a.has_value() == b.has_value());
    if (a && !std::isnan(*a)) CHECK(*a == *b);
    if (a && std::isnan(*a)) CHECK(std::isnan(*b));
  }
  // What was read stands for the line: the memo belongs to one line's fields.
  fields[0].second = "9.75";
  CHECK(memo.number("loss") == 2.5);
  CHECK(plain.number("loss") == 9.75);
  CHECK_FALSE(memo.number("overflow"));  // not a number, remembered as none
}

TEST_CASE("rate: N matches within the window, after the warm-up", "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::Rate);
  s.count = 3;
  s.window_steps = 100;
  s.window = 10min;
  s.warmup = 20;
  struct Case {
    const char* name;
    std::vector<int64_t> overflow_steps;
    int verdicts;
    int first;  // index in overflow_steps of the first verdict
  };
  const Case cases[] = {
      {"a single overflow late in the run is normal (seed 000)", {5000}, 0, -1},
      {"the calibration burst at the start is not counted", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, -1},
      {"occasional overflows, one per 1000 steps", {1000, 2000, 3000, 4000, 5000}, 0, -1},
      {"three overflows within 100 steps", {500, 530, 560}, 1, 2},
      {"a storm fires once per three matches", {500, 501, 502, 503, 504, 505}, 2, 2},
      {"calibration then a storm", {0, 1, 2, 3, 400, 401, 402}, 1, 6},
      {"two within the window, the third outside", {500, 550, 650}, 0, -1},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      std::vector<Step> steps;
      for (int64_t st : c.overflow_steps) {
        steps.push_back({{{"overflow", "True"}}, static_cast<double>(st) * 0.5, st});
      }
      const Run r = run(s, steps);
      CHECK(r.total() == c.verdicts);
      CHECK(r.first() == c.first);
    }
  }
  SECTION("without a step field the time window counts; the first matches are the warm-up") {
    DetectorSpec t = spec_of(DetectorType::Rate);
    t.count = 5;
    t.window = 10min;
    t.warmup = 20;
    std::vector<Step> steps;
    for (int i = 0; i < 20; ++i) steps.push_back({{}, i * 0.1, std::nullopt});  // calibration
    for (int i = 0; i < 4; ++i) steps.push_back({{}, 1000.0 + i * 1000, std::nullopt});
    CHECK(run(t, steps).total() == 0);
    for (int i = 0; i < 5; ++i) steps.push_back({{}, 10000.0 + i, std::nullopt});
    const Run r = run(t, steps);
    CHECK(r.total() == 1);
    CHECK(r.first() == 28);
  }
}

TEST_CASE("loss_scale_collapse: floor or repeated drops after calibration", "[rules][detectors]") {
  const DetectorSpec s = spec_of(DetectorType::LossScaleCollapse);  // floor 1, 3 drops / 100 steps
  auto scales = [](std::vector<std::pair<int, double>> at) {
    std::vector<Step> out;
    for (auto [step, scale] : at) {
      out.push_back({{{"scale", str(scale)}}, static_cast<double>(step), step});
    }
    return out;
  };
  SECTION("bf16's constant loss scale 1.0 never dropped: quiet") {
    CHECK(run(s, series(500, [](int) { return Fields{{"scale", "1.0"}}; })).total() == 0);
  }
  SECTION("the calibration burst of halvings at the start, then stable: quiet") {
    std::vector<std::pair<int, double>> at;
    double scale = 4294967296.0;  // DeepSpeed's 2^32
    for (int i = 0; i < 16; ++i) at.push_back({i, scale /= 2});
    for (int i = 16; i < 3000; ++i) at.push_back({i, scale});
    CHECK(run(s, scales(at)).total() == 0);
  }
  SECTION("a single late overflow halves the scale once: quiet") {
    std::vector<std::pair<int, double>> at;
    for (int i = 0; i < 2000; ++i) at.push_back({i, i < 1500 ? 65536.0 : 32768.0});
    CHECK(run(s, scales(at)).total() == 0);
  }
  SECTION("the scale halved three times within 100 steps after warm-up") {
    const Run r =
        run(s, scales({{0, 65536}, {100, 65536}, {110, 32768}, {120, 16384}, {130, 8192}}));
    CHECK(r.total() == 1);
    CHECK(r.first() == 4);
  }
  SECTION("driven monotonically to 1 (apex#834), fires when the floor is reached") {
    std::vector<std::pair<int, double>> at;
    double scale = 65536;
    for (int i = 0; i < 17; ++i) {
      at.push_back({1000 + i * 200, scale});  // one halving per 200 steps: never 3 per 100
      scale /= 2;
    }
    const Run r = run(s, scales(at));
    CHECK(r.total() == 1);
    CHECK(r.first() == 16);  // 65536 / 2^16 = 1
  }
  SECTION("below the floor fires once, again only after recovering above it") {
    const Run r = run(s, scales({{100, 2}, {300, 1}, {500, 0.5}, {700, 2}, {900, 1}}));
    CHECK(r.total() == 2);
  }
  SECTION("scale_from (DeepSpeed's attempted scale) tells a drop from the first line on") {
    std::vector<Step> steps;
    steps.push_back({{{"scale_from", "2"}, {"scale", "1"}}, 0, std::nullopt});
    CHECK(run(s, steps).total() == 1);
  }
  SECTION("a resume from a checkpoint is handled by the bank (not here); NaN is ignored") {
    CHECK(run(s, scales({{100, 65536}, {101, std::nan("")}, {102, 65536}})).total() == 0);
  }
}

TEST_CASE("non_finite: NaN/Inf for N consecutive steps; counters at 0 are not NaN",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::NonFinite);
  s.fields = {"loss", "grad_norm"};
  s.counters = {"nan_iterations"};
  s.consecutive = 3;
  auto megatron = [](const char* loss, const char* grad, const char* nans) {
    return Fields{{"loss", loss}, {"grad_norm", grad}, {"nan_iterations", nans}};
  };
  struct Case {
    const char* name;
    std::vector<Fields> lines;
    int verdicts;
    int first;
  };
  const Case cases[] = {
      {"'number of nan iterations: 0' is not NaN",
       std::vector<Fields>(10, megatron("7.334521E-01", "0.752", "0")), 0, -1},
      {"one NaN grad norm on an overflow step is normal",
       {megatron("0.7", "0.7", "0"), megatron("0.7", "nan", "0"), megatron("0.7", "0.7", "0"),
        megatron("0.7", "nan", "0"), megatron("0.7", "0.7", "0")},
       0,
       -1},
      {"grad norm nan while both counters stay 0 (Megatron-DeepSpeed#396)",
       {megatron("0.7", "nan", "0"), megatron("0.7", "nan", "0"), megatron("0.7", "nan", "0"),
        megatron("0.7", "nan", "0")},
       1,
       2},
      {"nan iterations counted three intervals in a row",
       {megatron("0.7", "0.7", "2"), megatron("0.7", "0.7", "1"), megatron("0.7", "0.7", "5")},
       1,
       2},
      {"loss inf, then finite, then inf again: two episodes",
       {megatron("inf", "1", "0"), megatron("inf", "1", "0"), megatron("inf", "1", "0"),
        megatron("1", "1", "0"), megatron("-inf", "1", "0"), megatron("nan", "1", "0"),
        megatron("nan", "1", "0")},
       2,
       2},
      {"a line without those fields says nothing",
       {Fields{{"scale", "1"}}, Fields{{"scale", "1"}}, Fields{{"scale", "1"}}},
       0,
       -1},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      std::vector<Step> steps;
      int i = 0;
      for (const auto& f : c.lines) steps.push_back({f, static_cast<double>(i), i}), ++i;
      const Run r = run(s, steps);
      CHECK(r.total() == c.verdicts);
      CHECK(r.first() == c.first);
    }
  }
}

TEST_CASE("feature_anomaly a: CANN SilentCheck thresholds", "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::FeatureAnomaly);
  s.generation = 'a';
  s.field = "value";
  auto values = [](std::vector<double> v) {
    std::vector<Step> out;
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back({{{"value", str(v[i])}}, static_cast<double>(i), static_cast<int64_t>(i)});
    }
    return out;
  };
  std::vector<double> normal;
  for (int i = 0; i < 50; ++i) normal.push_back(1.0 + 0.1 * std::sin(i));
  SECTION("a noisy but bounded series is quiet") { CHECK(run(s, values(normal)).total() == 0); }
  SECTION("above the absolute thresholds, or jumping: faults") {
    auto v = normal;
    v.push_back(3e4);
    v.push_back(1.0);
    v.push_back(2e6);
    const Run r = run(s, values(v));
    CHECK(r.count(Severity::Warning) + r.count(Severity::Fault) == 2);
    REQUIRE(r.verdicts[50]);
    CHECK(r.verdicts[50]->severity == Severity::Fault);  // jump 3e4 / range 0.2 > 1e5
    REQUIRE(r.verdicts[52]);
    CHECK(r.verdicts[52]->severity == Severity::Fault);
  }
  SECTION("a jump relative to the running range: 5000× warns, 100000× faults") {
    auto v = normal;  // range ≈ 0.2
    v.push_back(1.0 + 0.2 * 6000);
    const Run r = run(s, values(v));
    REQUIRE(r.verdicts.back());
    CHECK(r.verdicts.back()->severity == Severity::Warning);
  }
  SECTION("jumps do not count before min_steps (7)") {
    const Run r = run(s, values({1.0, 1.1, 3000.0}));
    CHECK(r.total() == 0);
  }
  SECTION("NaN is a level-1 fault at once; a persisting high value is one episode") {
    auto v = normal;
    v.push_back(std::nan(""));
    CHECK(run(s, values(v)).verdicts.back()->severity == Severity::Fault);
    auto w = normal;
    for (int i = 0; i < 5; ++i) w.push_back(2e4);
    CHECK(run(s, values(w)).total() == 1);
  }
}

TEST_CASE("feature_anomaly b: the strike model", "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::FeatureAnomaly);  // generation b by default
  s.field = "grad_norm";
  auto at = [](double seconds, double v) {
    return Step{{{"grad_norm", str(v)}}, seconds, std::nullopt};
  };
  std::vector<Step> normal;
  for (int i = 0; i < 30; ++i) normal.push_back(at(i, 0.8 + 0.05 * (i % 3)));
  SECTION("normal grad norms, including a 10× wobble: quiet") {
    auto v = normal;
    v.push_back(at(30, 8));
    CHECK(run(s, v).total() == 0);
  }
  SECTION("a spike above 1e6 × the average is a strike (warning) at that very step") {
    auto v = normal;
    v.push_back(at(30, 5e7));
    const Run r = run(s, v);
    CHECK(r.total() == 1);
    REQUIRE(r.verdicts.back());
    CHECK(r.verdicts.back()->severity == Severity::Warning);
  }
  SECTION("NaN/Inf is not a strike (an overflowed fp16 step prints it) and leaves the average") {
    auto v = normal;
    v.push_back(at(30, std::nan("")));
    v.push_back(at(31, std::numeric_limits<double>::infinity()));
    v.push_back(at(32, 8));
    CHECK(run(s, v).total() == 0);
  }
  SECTION("no strike within the 10-sample warm-up") {
    std::vector<Step> v = {at(0, 1), at(1, 1), at(2, 5e7)};
    CHECK(run(s, v).total() == 0);
  }
  SECTION("a value high but without a jump is not a strike (jump must exceed too)") {
    auto v = normal;
    v.push_back(at(30, 5e7));
    v.push_back(at(31, 5.0000001e7));   // still high, no jump, within the cooldown anyway
    v.push_back(at(400, 5.0000002e7));  // after the cooldown: high, but no jump
    CHECK(run(s, v).total() == 1);
  }
  SECTION("repeats within the 5 min cooldown are one strike; 3 strikes escalate to fault") {
    auto v = normal;
    v.push_back(at(30, 5e7));
    v.push_back(at(31, 1));
    v.push_back(at(60, 5e7));  // within cooldown: same strike
    v.push_back(at(61, 1));
    v.push_back(at(400, 5e7));  // strike 2
    v.push_back(at(401, 1));
    v.push_back(at(800, 5e7));  // strike 3: strikes out
    const Run r = run(s, v);
    CHECK(r.count(Severity::Warning) == 2);
    CHECK(r.count(Severity::Fault) == 1);
    CHECK(r.verdicts.back()->severity == Severity::Fault);
  }
  SECTION("strikes further apart than the 480 min window never escalate") {
    auto v = normal;
    for (int k = 0; k < 4; ++k) {
      v.push_back(at(100 + k * 481 * 60.0, 5e7));
      v.push_back(at(101 + k * 481 * 60.0, 1));
    }
    const Run r = run(s, v);
    CHECK(r.count(Severity::Warning) == 4);
    CHECK(r.count(Severity::Fault) == 0);
  }
  SECTION("values above upper_thresh2 × average stay out of the average") {
    // 200× values would drag the average up; kept out, a later 1e6× spike is still caught.
    auto v = normal;
    for (int i = 0; i < 40; ++i) v.push_back(at(30 + i, 200));
    v.push_back(at(100, 2e6));
    CHECK(run(s, v).total() == 1);
  }
}

TEST_CASE("stall: no new step for max(floor, k × median interval)", "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::Stall);
  s.stall_floor = 60s;
  s.factor = 10;
  s.min_intervals = 5;
  auto d = make_detector(s);
  Fields none;
  for (int i = 0; i < 10; ++i) {
    CHECK_FALSE(d->observe(Sample{kT0 + i * 30s, i, true, &none}));
  }
  const TimePoint last = kT0 + 9 * 30s;
  CHECK_FALSE(d->tick(last + 299s));  // 10 × median 30s = 300s
  const auto v = d->tick(last + 301s);
  REQUIRE(v);
  CHECK(v->severity == Severity::Fault);
  CHECK_FALSE(d->tick(last + 600s));  // reported once per stall
  CHECK_FALSE(
      d->observe(Sample{last + 700s, 9, true, &none}));  // the same step again: still stalled
  CHECK_FALSE(d->tick(last + 900s));
  d->observe(Sample{last + 1000s, 10, true, &none});  // a new step re-arms
  CHECK_FALSE(d->tick(last + 1000s + 299s));

  SECTION("before enough intervals the floor alone counts") {
    auto e = make_detector(s);
    e->observe(Sample{kT0, 1, true, &none});
    CHECK_FALSE(e->tick(kT0 + 59s));
    CHECK(e->tick(kT0 + 61s));
  }
  SECTION("never fires before the first step") { CHECK_FALSE(make_detector(s)->tick(kT0 + 24h)); }
}

TEST_CASE("slow_step: N consecutive steps slower than the series' own baseline",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::SlowStep);  // ratio 2, 5 consecutive, warm-up 5
  auto times = [](std::vector<double> v) {
    std::vector<Step> out;
    for (size_t i = 0; i < v.size(); ++i) {
      out.push_back({{{"step_time", str(v[i])}}, static_cast<double>(i), static_cast<int64_t>(i)});
    }
    return out;
  };
  std::vector<double> base = {90000, 3000, 3000, 3000, 3000};  // long first steps: compile
  for (int i = 0; i < 30; ++i) base.push_back(1000 + (i % 4) * 20);
  SECTION("long first steps (graph compilation) and normal jitter: quiet") {
    CHECK(run(s, times(base)).total() == 0);
  }
  SECTION("a few slow steps (a data hiccup) are not a slow node") {
    auto v = base;
    for (int i = 0; i < 4; ++i) v.push_back(2500);
    v.push_back(1000);
    CHECK(run(s, times(v)).total() == 0);
  }
  SECTION("five slow steps in a row: one warning") {
    auto v = base;
    for (int i = 0; i < 12; ++i) v.push_back(2500);
    const Run r = run(s, times(v));
    CHECK(r.total() == 1);
    CHECK(r.first() == static_cast<int>(base.size()) + 4);
    CHECK(r.verdicts[static_cast<size_t>(r.first())]->severity == Severity::Warning);
  }
}

TEST_CASE("peer_slow: N consecutive steps above (1 + margin) × the reference, from step 1",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::PeerSlow);  // margin 0.2, 5 consecutive, no warm-up
  auto d = make_detector(s);
  std::vector<Fields> lines;
  auto observe = [&](double t, std::optional<double> reference, int64_t step) {
    lines.push_back({{"step_time", str(t)}});
    Sample x{kT0 + step * 1s, step, true, &lines.back()};
    x.reference = reference;
    x.peers = 7;
    return d->observe(x);
  };
  lines.reserve(64);
  // A device 30 % slower than its peers from its very first step: the fifth step reports it.
  for (int64_t i = 1; i <= 4; ++i) CHECK_FALSE(observe(1300, 1000, i));
  const auto v = observe(1300, 1000, 5);
  REQUIRE(v);
  CHECK(v->severity == Severity::Warning);
  INFO(v->reason);
  CHECK(v->reason.find("30 % above the median 1000 of 7 peers") != std::string::npos);
  CHECK_FALSE(observe(1300, 1000, 6));  // one verdict per episode
  CHECK_FALSE(observe(1100, 1000, 7));  // within the margin: re-armed
  for (int64_t i = 8; i <= 11; ++i) CHECK_FALSE(observe(1300, 1000, i));
  CHECK(observe(1300, 1000, 12));
  SECTION("at the margin, or without a reference (too few peers), the run breaks") {
    auto e = make_detector(s);
    d.swap(e);
    for (int64_t i = 1; i <= 4; ++i) CHECK_FALSE(observe(1300, 1000, i));
    CHECK_FALSE(observe(1200, 1000, 5));  // exactly 20 %: not above
    for (int64_t i = 6; i <= 9; ++i) CHECK_FALSE(observe(1300, 1000, i));
    CHECK_FALSE(observe(1300, std::nullopt, 10));
    for (int64_t i = 11; i <= 14; ++i) CHECK_FALSE(observe(1300, 1000, i));
    CHECK(observe(1300, 1000, 15));
  }
}

// ---- the parameters of the step-line rules (etc/faultd/rules.d/training-numerics.yaml) ----

TEST_CASE("rate with field and probe_scale: only overflows below a healthy scale count",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::Rate);
  s.field = "overflow";
  s.probe_scale = 4096;
  s.count = 3;
  auto line = [](const char* overflow, const char* scale, double t) {
    Fields f{{"overflow", overflow}};
    if (scale[0] != '\0') f.emplace_back("scale", scale);
    return Step{f, t, std::nullopt};
  };
  // DeepSpeed's calibration from 2^32 and the periodic probing 8192 -> 4096: quiet.
  CHECK(run(s, {line("OVERFLOW", "2147483648", 1), line("OVERFLOW", "1073741824", 2),
                line("OVERFLOW", "536870912", 3), line("OVERFLOW", "4096", 60),
                line("OVERFLOW", "4096", 180)})
            .total() == 0);
  // A line without a scale takes the series' last one (a hysteresis line after "reducing to
  // 4096" is still at 4096).
  CHECK(run(s, {line("OVERFLOW", "4096", 1), line("OVERFLOW", "", 2), line("OVERFLOW", "", 3),
                line("OVERFLOW", "", 4)})
            .total() == 0);
  // Three overflows at 512 and below: a storm, on the third.
  const Run storm = run(s, {line("OVERFLOW", "512", 1), line("False", "512", 2),
                            line("OVERFLOW", "256", 3), line("OVERFLOW", "128", 4)});
  CHECK(storm.total() == 1);
  CHECK(storm.first() == 3);
  // Lines that report no overflow are not counted, whatever their scale.
  CHECK(run(s, {line("False", "1", 1), line("0", "1", 2), line("False", "1", 3)}).total() == 0);
}

TEST_CASE("rate with probe_scale: a healthy scale held step after step while every step overflows",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::Rate);
  s.field = "overflow";
  s.probe_scale = 4096;
  s.count = 3;
  auto at = [](const char* overflow, const char* scale, std::optional<int64_t> step) {
    return Step{
        {{"overflow", overflow}, {"scale", scale}}, static_cast<double>(step.value_or(0)), step};
  };
  // A fixed scale (Megatron's --loss-scale 16384) that overflows on iterations 1-4: the second,
  // third and fourth overflow at the scale held since the step before; the storm is the fourth.
  const Run fixed =
      run(s, {at("1", "16384", 1), at("1", "16384", 2), at("1", "16384", 3), at("1", "16384", 4)});
  CHECK(fixed.total() == 1);
  CHECK(fixed.first() == 3);
  // A dynamic scaler with a hysteresis of two: one overflow at the held scale, then each halves.
  CHECK(run(s, {at("1", "65536", 1), at("1", "65536", 2), at("1", "32768", 3), at("1", "16384", 4),
                at("1", "8192", 5)})
            .total() == 0);
  // A good step between: no overflow was held.
  CHECK(run(s, {at("1", "16384", 1), at("0", "16384", 2), at("1", "16384", 3), at("0", "16384", 4),
                at("1", "16384", 5), at("0", "16384", 6), at("1", "16384", 7)})
            .total() == 0);
  // Four ranks printing one overflow, no step: one event, whatever its repeats.
  CHECK(run(s, {at("1", "16384", std::nullopt), at("1", "16384", std::nullopt),
                at("1", "16384", std::nullopt), at("1", "16384", std::nullopt)})
            .total() == 0);
}

TEST_CASE("loss_scale_collapse with low_scale: drops landing at or below it, no rise between",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::LossScaleCollapse);
  s.drops = 3;
  s.low_scale = 64;
  auto scale = [](const char* v, double t) { return Step{{{"scale", v}}, t, std::nullopt}; };
  // Calibration from 65536 to 2048 never lands that low.
  CHECK(run(s, {scale("65536", 1), scale("32768", 2), scale("16384", 3), scale("8192", 4),
                scale("4096", 5), scale("2048", 6)})
            .total() == 0);
  // 16 -> 8 -> 4 -> 2 mid-training: the third drop at or below 64 fires, once.
  const Run low = run(s, {scale("16", 1), scale("8", 2), scale("4", 3), scale("2", 4)});
  CHECK(low.first() == 3);
  CHECK(low.total() == 1);
  // A rise between resets the run; repeated equal values neither count nor reset.
  CHECK(run(s, {scale("64", 1), scale("32", 2), scale("64", 3), scale("32", 4), scale("32", 5),
                scale("16", 6)})
            .total() == 0);
  // The floor still fires at once.
  CHECK(run(s, {scale("2", 1), scale("1", 2)}).first() == 1);
}

TEST_CASE("non_finite with warn_first: the first NaN is a warning, the third in a row a fault",
          "[rules][detectors]") {
  DetectorSpec s = spec_of(DetectorType::NonFinite);
  s.warn_first = true;
  auto loss = [](const char* v, double t) { return Step{{{"loss", v}}, t, std::nullopt}; };
  const Run r = run(s, {loss("0.5", 1), loss("nan", 2), loss("nan", 3), loss("nan", 4),
                        loss("nan", 5), loss("0.4", 6), loss("inf", 7)});
  REQUIRE(r.verdicts.size() == 7);
  CHECK(r.verdicts[1]->severity == Severity::Warning);
  CHECK(!r.verdicts[2]);
  CHECK(r.verdicts[3]->severity == Severity::Fault);
  CHECK(!r.verdicts[4]);
  CHECK(r.verdicts[6]->severity == Severity::Warning);  // a new run after a finite value
  CHECK(r.total() == 3);
  // Without warn_first, a single NaN stays quiet.
  CHECK(run(spec_of(DetectorType::NonFinite), {loss("nan", 1), loss("0.3", 2)}).total() == 0);
}
