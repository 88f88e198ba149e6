// The DetectorBank (series keying, attribution, storms, reloads, the series cap) and the
// `detect:` block as rule YAML (defaults, errors at file:line:column, engine fields).
#include <catch2/catch.hpp>

#include "daemon/core/yaml_check.hpp"
#include "rules/detectors/bank.hpp"
#include "rules/rule.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

const TimePoint kT0 = TimePoint{} + 1000h;

DetectorSpec strikes() {
  DetectorSpec s = default_detector_spec(DetectorType::FeatureAnomaly);
  s.field = "grad_norm";
  return s;
}

Finding match(const std::string& rule, const std::string& file, uint64_t offset, Fields fields,
              const std::string& device = "") {
  Finding f;
  f.rule = rule;
  f.source = "training";
  f.file = file;
  f.offset = offset;
  f.line = offset + 1;
  f.device = device;
  f.level = FaultLevel::PreSeparateNPU;
  f.detector_input = true;
  f.fields = std::move(fields);
  return f;
}

// Feeds `steps` normal grad norms for `rank` of a job, then optionally a spike; returns the
// verdicts.
std::vector<Finding> feed(DetectorBank& bank, const std::string& rank, int steps, bool spike,
                          TimePoint at = kT0, int first = 0) {
  std::vector<Finding> out;
  for (int i = first; i <= first + steps; ++i) {
    const bool now_spike = spike && i == first + steps;
    auto f = match(
        "r", "/logs/job/worker_" + rank + ".log", static_cast<uint64_t>(i),
        {{"step", std::to_string(i)}, {"rank", rank}, {"grad_norm", now_spike ? "5e7" : "0.9"}});
    if (auto v = bank.observe(f, at + i * 1s)) out.push_back(*v);
  }
  return out;
}

std::string annotation(const Finding& f, const std::string& key) {
  for (const auto& [k, v] : f.annotations) {
    if (k == key) return v;
  }
  return "";
}

}  // namespace

TEST_CASE("bank: a verdict carries the match, the warn level and the attributed device",
          "[rules][detectors][bank]") {
  DetectorSpec s = strikes();
  s.rank_device = {{"3", "npu3"}};
  DetectorBank bank;
  bank.configure({{"r", s}});
  REQUIRE(bank.active());
  const auto v = feed(bank, "3", 20, true);
  REQUIRE(v.size() == 1);
  CHECK(v[0].rule == "r");
  CHECK(v[0].device == "npu3");                     // rank 3 mapped
  CHECK(v[0].level == FaultLevel::SubHealthFault);  // a strike is a warning
  CHECK(v[0].offset == 20);
  CHECK_FALSE(v[0].detector_input);
  CHECK(annotation(v[0], "detector") == "feature_anomaly");
  CHECK(annotation(v[0], "verdict").find("strike 1 of 3") == 0);
  CHECK(annotation(v[0], "rank") == "3");

  SECTION("without a mapping the rank names no device; identity uses the rank") {
    DetectorBank plain;
    plain.configure({{"r", strikes()}});
    CHECK(feed(plain, "3", 20, true).at(0).device.empty());
    DetectorSpec id = strikes();
    id.rank_identity = true;
    DetectorBank ident;
    ident.configure({{"r", id}});
    CHECK(feed(ident, "3", 20, true).at(0).device == "3");
  }
  SECTION("a rank that is not a valid id is ignored and counted") {
    DetectorBank b;
    b.configure({{"r", strikes()}});
    b.observe(match("r", "/f", 0, {{"rank", "../../etc"}, {"grad_norm", "1"}}), kT0);
    CHECK(b.counters().refused_ranks == 1);
  }
}

TEST_CASE("bank: each (job or file, rank, device) is its own series", "[rules][detectors][bank]") {
  DetectorBank bank;
  bank.configure({{"r", strikes()}});
  // Rank 1 warms up; rank 2 sees the spike on its third sample: still in its own warm-up.
  feed(bank, "1", 20, false);
  CHECK(feed(bank, "2", 2, true).empty());
  CHECK(bank.counters().series == 2);
}

TEST_CASE("bank: an every-rank storm names no device", "[rules][detectors][bank]") {
  DetectorSpec s = strikes();
  s.rank_identity = true;
  DetectorBank bank;
  bank.configure({{"r", s}});
  std::vector<Finding> verdicts;
  for (int r = 0; r < 8; ++r) feed(bank, std::to_string(r), 20, false);
  for (int r = 0; r < 8; ++r) {
    auto v = feed(bank, std::to_string(r), 0, true, kT0 + 100s, 21);  // every rank at once
    verdicts.insert(verdicts.end(), v.begin(), v.end());
  }
  REQUIRE(verdicts.size() == 8);
  // The first two look like single-device problems; from the third (3 of 8 ≥ 50%? no: 3 < 4),
  // the storm is recognised once half of the live series fired.
  int blamed = 0;
  for (const auto& v : verdicts) blamed += !v.device.empty();
  CHECK(blamed == 3);
  CHECK(verdicts.back().device.empty());
  CHECK(annotation(verdicts.back(), "storm").find("8 of 8 series") == 0);
  CHECK(annotation(verdicts.back(), "storm_device") == "7");
  CHECK(bank.counters().storms == 5);
}

TEST_CASE("bank: a reload keeps unchanged rules' state, resets changed ones",
          "[rules][detectors][bank]") {
  DetectorBank bank;
  bank.configure({{"r", strikes()}, {"other", default_detector_spec(DetectorType::Stall)}});
  feed(bank, "1", 20, false);  // warmed up
  bank.configure({{"r", strikes()}});
  CHECK(feed(bank, "1", 0, true, kT0 + 100s, 21).size() == 1);  // state kept

  DetectorSpec changed = strikes();
  changed.upper_thresh1 = 1e5;
  bank.configure({{"r", changed}});
  CHECK(bank.counters().series == 0);
  CHECK(feed(bank, "1", 2, true, kT0 + 1000s, 22).empty());  // warming up again

  bank.configure(std::vector<std::pair<std::string, DetectorSpec>>{});
  CHECK_FALSE(bank.active());
  CHECK_FALSE(bank.observe(match("r", "/f", 0, {{"grad_norm", "1"}}), kT0));
}

TEST_CASE("bank: the series cap evicts the least recently used", "[rules][detectors][bank]") {
  DetectorBank bank(4);
  bank.configure({{"r", strikes()}});
  for (int r = 0; r < 10; ++r) {
    bank.observe(match("r", "/f" + std::to_string(r), 0, {{"grad_norm", "1"}}, "0"), kT0);
  }
  CHECK(bank.counters().series == 4);
  CHECK(bank.counters().evicted == 6);
}

TEST_CASE("bank: a rule's last series, once evicted by another rule's, is made afresh",
          "[rules][detectors][bank]") {
  // Each rule remembers the series it fed last, to find it again without its key: an eviction
  // must make it forget, or the third observation would feed a dropped series.
  DetectorBank bank(1);
  bank.configure({{"r1", strikes()}, {"r2", strikes()}});
  bank.observe(match("r1", "/f", 0, {{"grad_norm", "1"}}, "0"), kT0);
  bank.observe(match("r2", "/f", 0, {{"grad_norm", "1"}}, "0"), kT0);
  CHECK(bank.counters().evicted == 1);
  bank.observe(match("r1", "/f", 1, {{"grad_norm", "1"}}, "0"), kT0 + 1s);
  CHECK(bank.counters().evicted == 2);
  CHECK(bank.counters().series == 1);
  // The same rule on another device, then back: two series, each found again.
  DetectorBank two(8);
  two.configure({{"r", strikes()}});
  for (int i = 0; i < 4; ++i) {
    two.observe(match("r", "/f", static_cast<uint64_t>(i), {{"grad_norm", "1"}}, i % 2 ? "1" : "0"),
                kT0 + i * 1s);
  }
  CHECK(two.counters().series == 2);
}

TEST_CASE("bank: a step that goes back starts the series afresh", "[rules][detectors][bank]") {
  DetectorBank bank;
  bank.configure({{"r", strikes()}});
  feed(bank, "1", 20, false);
  // A new run in the same file from step 0: its spike at step 2 is within the new warm-up.
  CHECK(feed(bank, "1", 2, true, kT0 + 100s).empty());
}

TEST_CASE("bank: stall verdicts come from tick(), attributed to the last step's line",
          "[rules][detectors][bank]") {
  DetectorSpec s = default_detector_spec(DetectorType::Stall);
  DetectorBank bank;
  bank.configure({{"stall", s}});
  bank.observe(match("stall", "/w_1.log", 7, {{"step", "5"}}, "1"), kT0);
  CHECK(bank.tick(kT0 + 9min).empty());
  const auto v = bank.tick(kT0 + 11min);
  REQUIRE(v.size() == 1);
  CHECK(v[0].device == "1");
  CHECK(v[0].offset == 7);
  CHECK(bank.tick(kT0 + 20min).empty());
}

TEST_CASE("bank: per-device numbers for metrics count each line once", "[rules][detectors][bank]") {
  DetectorBank bank;
  bank.configure({{"a", default_detector_spec(DetectorType::Rate)},
                  {"b", default_detector_spec(DetectorType::LossScaleCollapse)}});
  uint64_t offset = 0;
  for (const char* scale : {"4", "2", "2", "1"}) {
    const Fields fields = {
        {"step", std::to_string(offset)}, {"overflow", "True"}, {"scale", scale}};
    bank.observe(match("a", "/f", offset, fields, "3"), kT0);  // two rules, same line
    bank.observe(match("b", "/f", offset, fields, "3"), kT0);
    ++offset;
  }
  const auto stats = bank.series_stats();
  REQUIRE(stats.size() == 1);
  CHECK(stats[0].device == "3");
  CHECK(stats[0].overflow_steps == 4);
  CHECK(stats[0].scale_drops == 2);
  CHECK(stats[0].last_step == 3);
}

namespace {

// One step of every device of a node: device d's step time is times(d, step).
template <class F>
std::vector<Finding> node_steps(DetectorBank& bank, int devices, int steps, F times,
                                const std::string& job = "") {
  std::vector<Finding> out;
  for (int step = 1; step <= steps; ++step) {
    for (int d = 0; d < devices; ++d) {
      Fields fields = {{"step", std::to_string(step)},
                       {"step_time", std::to_string(times(d, step))}};
      if (!job.empty()) fields.emplace_back("job", job);
      const std::string dev = std::to_string(d);
      auto f = match("slow", "/logs/" + job + "/worker_" + dev + ".log",
                     static_cast<uint64_t>(step), fields, dev);
      f.level = FaultLevel::SubHealthFault;
      if (auto v = bank.observe(f, kT0 + step * 1s)) out.push_back(*v);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("bank: peer_slow compares a device with the median of its peers",
          "[rules][detectors][bank]") {
  DetectorBank bank;
  bank.configure({{"slow", default_detector_spec(DetectorType::PeerSlow)}});
  SECTION("a device 30 % slower from step 1 is named at its fifth step, once") {
    const auto v = node_steps(bank, 8, 20, [](int d, int) { return d == 5 ? 1300 : 1000; });
    REQUIRE(v.size() == 1);
    CHECK(v[0].device == "5");
    CHECK(v[0].line == 5 + 1);  // the fifth step's line (offset + 1)
    CHECK(v[0].level == FaultLevel::SubHealthFault);
    CHECK(annotation(v[0], "detector") == "peer_slow");
    CHECK(annotation(v[0], "verdict").find("of 7 peers") != std::string::npos);
  }
  SECTION("normal jitter (every device within ±8 % at random) is quiet") {
    uint32_t state = 12345;
    auto jitter = [&state](int, int) {
      state = state * 1664525u + 1013904223u;
      return 1000 * (0.92 + 0.16 * (state >> 8) / double(1u << 24));
    };
    CHECK(node_steps(bank, 8, 500, jitter).empty());
  }
  SECTION("every device slow together (a slow step of the job) is no straggler") {
    CHECK(node_steps(bank, 8, 20, [](int, int step) { return step > 5 ? 3000 : 1000; }).empty());
  }
  SECTION("peers are the same job's series") {
    // Job a runs at 1000 ms on devices 0-3, job b at 1500 ms on 4-7: neither is slow.
    std::vector<Finding> v;
    for (int step = 1; step <= 20; ++step) {
      for (int d = 0; d < 8; ++d) {
        const std::string job = d < 4 ? "a" : "b";
        const std::string dev = std::to_string(d);
        auto f = match(
            "slow", "/logs/" + job + "/worker_" + dev + ".log", static_cast<uint64_t>(step),
            {{"step", std::to_string(step)}, {"step_time", d < 4 ? "1000" : "1500"}, {"job", job}},
            dev);
        if (auto r = bank.observe(f, kT0 + step * 1s)) v.push_back(*r);
      }
    }
    CHECK(v.empty());
  }
  SECTION("two devices alone have too few peers") {
    CHECK(node_steps(bank, 2, 20, [](int d, int) { return d == 1 ? 2000 : 1000; }).empty());
  }
  SECTION("the metrics carry each device's last step time") {
    node_steps(bank, 3, 2, [](int d, int) { return 1000 + d; });
    const auto stats = bank.series_stats();
    REQUIRE(stats.size() == 3);
    CHECK(stats[2].step_time == 1002);
  }
}

TEST_CASE("bank: peer_slow with a reference field reads the peers' figure from the line",
          "[rules][detectors][bank]") {
  DetectorSpec spec = default_detector_spec(DetectorType::PeerSlow);
  spec.reference = "peer_time";
  DetectorBank bank;
  bank.configure({{"slow", spec}});
  std::vector<Finding> v;
  for (int i = 1; i <= 6; ++i) {
    auto f = match(
        "slow", "/logs/rank0.log", static_cast<uint64_t>(i),
        {{"step_time", "1570.32"}, {"peer_time", i == 3 ? "1446.49" : "1200"}, {"rank", "30"}});
    if (auto r = bank.observe(f, kT0 + i * 1s)) v.push_back(*r);
  }
  CHECK(v.empty());  // the third report is within 20 % (8.6 %): the run broke
  for (int i = 7; i <= 11; ++i) {
    auto f = match("slow", "/logs/rank0.log", static_cast<uint64_t>(i),
                   {{"step_time", "1570.32"}, {"peer_time", "1200"}, {"rank", "30"}});
    if (auto r = bank.observe(f, kT0 + i * 1s)) v.push_back(*r);
  }
  REQUIRE(v.size() == 1);
  CHECK(v[0].device.empty());  // a global rank, no rank_device
  CHECK(annotation(v[0], "rank") == "30");
  CHECK(annotation(v[0], "verdict").find("above peer_time 1200") != std::string::npos);
}

TEST_CASE("detect: YAML with defaults, errors at their position, fields from the engine",
          "[rules][detectors][parse]") {
  auto parse = [](const std::string& text, std::vector<RuleSpec>& specs) {
    ErrorList errors;
    const yaml::Ctx ctx{"t.yaml", &errors};
    auto doc = yaml::load_text(text, ctx);
    REQUIRE(doc);
    parse_rules((*doc)["rules"], "t.yaml", specs, errors);
    return errors.to_string();
  };
  std::vector<RuleSpec> specs;
  CHECK(parse(R"(rules:
  - id: a
    match: { any: ["lm loss:"], regex: 'grad norm: (?P<grad_norm>\S+)' }
    detect: { type: feature_anomaly, field: grad_norm, generation: a, upper_thresh: "1000000,10000" }
)",
              specs) == "");
  REQUIRE(specs.size() == 1);
  REQUIRE(specs[0].detect);
  CHECK(specs[0].detect->generation == 'a');
  CHECK(specs[0].detect->upper_l2 == 10000);
  CHECK(specs[0].detect->sigma_l1 == 100000);  // default
  CHECK(specs[0].detect->warmup == 10);

  std::vector<RuleSpec> bad;
  const std::string errors = parse(R"(rules:
  - id: a
    match: { any: [x] }
    detect: { type: rate, cuont: 3 }
  - id: b
    match: { any: [x] }
    detect: { type: sometimes }
  - id: c
    match: { any: [x] }
    detect: { type: feature_anomaly, upper_thresh: "10,1000", beta: 1.5 }
  - id: d
    match: { any: [x] }
    detect: { type: stall, floor: 0s }
)",
                                   bad);
  CHECK(bad.empty());
  INFO(errors);
  CHECK(errors.find("t.yaml:4:27: unknown key 'cuont' for detector type 'rate'") !=
        std::string::npos);
  CHECK(errors.find("t.yaml:7:21: unknown detector type 'sometimes'") != std::string::npos);
  CHECK(errors.find("t.yaml:10:52: 'upper_thresh' must be two positive numbers") !=
        std::string::npos);
  CHECK(errors.find("'beta' must be below 1") != std::string::npos);
  CHECK(errors.find("t.yaml:13:35: 'floor' must be longer than 0s") != std::string::npos);

  SECTION("the engine marks detector inputs and hands over captures and path fields") {
    ErrorList e;
    auto set = RuleSet::build(specs, CodeLevels{}, e);
    REQUIRE(set);
    REQUIRE(set->detectors().size() == 1);
    const Fields path_fields = {{"device", "4"}, {"grad_norm", "shadowed"}};
    const std::string data = "x | lm loss: 2.0 | grad norm: nan |\nno match\n";
    Chunk c;
    c.source = "training";
    c.path = "/w.log";
    c.data = data;
    c.end_offset = data.size();
    c.path_fields = &path_fields;
    std::vector<Finding> out;
    set->scan(c, kT0, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].detector_input);
    CHECK(out[0].device == "4");
    CHECK(out[0].fields == Fields{{"grad_norm", "nan"}, {"device", "4"}});
  }
}
