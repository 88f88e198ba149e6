// The fault lifecycle with an injected clock: grouping, escalation, release, duration, recovery,
// storms and shadow rules, one path each.
#include <catch2/catch.hpp>

#include "daemon/state/lifecycle.hpp"
#include "daemon/state/state_machine.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

const TimePoint t0 = from_unix_ms(1'800'000'000'000);

Finding finding(const std::string& device, const std::string& code, TimePoint at,
                const std::string& rule = "ascend.test",
                FaultLevel level = FaultLevel::SubHealthFault) {
  Finding f;
  f.rule = rule;
  f.source = "plog";
  f.device = device;
  f.code = code;
  f.level = level;
  f.time = at;
  return f;
}

// Runs a finding through the lifecycle the way the app does, journal ids from a counter.
struct Harness {
  Lifecycle lifecycle;
  int64_t next_id = 1;
  Lifecycle::Decision feed(Finding f) {
    auto d = lifecycle.decide(f, f.time);
    if (d.kind == Lifecycle::Kind::NewIncident) {
      f.id = next_id++;
      lifecycle.opened(f, d);
    } else if (d.storm_started) {
      Incident storm = *d.storm_started;
      storm.id = next_id++;
      lifecycle.storm_recorded(f, storm);
    }
    return d;
  }
};

LifecycleSettings settings() {
  LifecycleSettings s;
  s.incident_ttl = 10min;
  s.storm.node_devices = 8;
  return s;
}

}  // namespace

TEST_CASE("a flood of the same finding is one incident with a count", "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());
  auto first = h.feed(finding("3", "80818C00", t0));
  REQUIRE(first.kind == Lifecycle::Kind::NewIncident);
  for (int i = 1; i < 1000; ++i) {
    auto d = h.feed(finding("3", "80818C00", t0 + std::chrono::milliseconds(i)));
    REQUIRE(d.kind == Lifecycle::Kind::Grouped);
    REQUIRE(d.incident == 1);
  }
  auto open = h.lifecycle.open_incidents();
  REQUIRE(open.size() == 1);
  CHECK(open[0].count == 1000);
  // Another device or another code is another incident.
  CHECK(h.feed(finding("4", "80818C00", t0 + 1s)).kind == Lifecycle::Kind::NewIncident);
  CHECK(h.feed(finding("3", "80818C06", t0 + 1s)).kind == Lifecycle::Kind::NewIncident);
  // After the TTL without a finding, the same signature opens a new incident.
  CHECK(h.feed(finding("3", "80818C00", t0 + 1s + 10min)).kind == Lifecycle::Kind::NewIncident);
}

TEST_CASE("grouped counts are handed to the store once per batch", "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());
  h.feed(finding("3", "80818C00", t0));
  CHECK(h.lifecycle.take_dirty().size() == 1);
  h.feed(finding("3", "80818C00", t0 + 1s));
  h.feed(finding("3", "80818C00", t0 + 2s));
  auto dirty = h.lifecycle.take_dirty();
  REQUIRE(dirty.size() == 1);
  CHECK(dirty[0].count == 3);
  CHECK(h.lifecycle.take_dirty().empty());
}

TEST_CASE("frequency escalation: times within the window raise the level", "[state][lifecycle]") {
  auto s = settings();
  s.incident_ttl = 1min;
  FrequencyEscalation e;
  e.codes = {"80E18005"};
  e.times = 3;
  e.window = 24h;
  e.to = FaultLevel::ManuallySeparateNPU;
  s.frequency.push_back(e);
  Harness h;
  h.lifecycle.configure(s);
  // Repeats inside one incident are not occurrences.
  CHECK(h.feed(finding("1", "80E18005", t0)).level == FaultLevel::SubHealthFault);
  CHECK(h.feed(finding("1", "80E18005", t0 + 10s)).kind == Lifecycle::Kind::Grouped);
  auto second = h.feed(finding("1", "80E18005", t0 + 2h));
  CHECK(second.kind == Lifecycle::Kind::NewIncident);
  CHECK(second.level == FaultLevel::SubHealthFault);
  // Another device does not count towards device 1.
  CHECK(h.feed(finding("2", "80E18005", t0 + 3h)).level == FaultLevel::SubHealthFault);
  auto third = h.feed(finding("1", "80E18005", t0 + 5h));
  CHECK(third.level == FaultLevel::ManuallySeparateNPU);
  CHECK_THAT(third.escalation, Catch::Contains("3 occurrences"));
  // Outside the window the old ones no longer count.
  auto later = h.feed(finding("1", "80E18005", t0 + 30h));
  CHECK(later.level == FaultLevel::SubHealthFault);
}

TEST_CASE("an escalated incident is released after its window without occurrences",
          "[state][lifecycle]") {
  auto s = settings();
  s.incident_ttl = 100h;  // keep the incident open: only the release closes it
  FrequencyEscalation e;
  e.rules = {"ascend.test"};
  e.times = 2;
  e.window = 1h;
  e.release = 2h;
  e.to = FaultLevel::ManuallySeparateNPU;
  s.frequency.push_back(e);
  Harness h;
  h.lifecycle.configure(s);
  h.feed(finding("1", "", t0));
  // The first incident is still open: recovery closes it so the next one is an occurrence.
  auto rec = finding("1", "", t0 + 1min);
  rec.recovery = true;
  CHECK(h.feed(rec).kind == Lifecycle::Kind::Recovery);
  auto second = h.feed(finding("1", "", t0 + 10min));
  REQUIRE(second.level == FaultLevel::ManuallySeparateNPU);
  CHECK(h.lifecycle.tick(t0 + 2h).empty());  // 1h50m since its last finding
  auto released = h.lifecycle.tick(t0 + 2h + 11min);
  REQUIRE(released.size() == 1);
  CHECK_FALSE(released[0].open);
  CHECK_THAT(released[0].note, Catch::Contains("released"));
  // The count starts over after a release.
  CHECK(h.feed(finding("1", "", t0 + 2h + 20min)).level == FaultLevel::SubHealthFault);
}

TEST_CASE("duration escalation: a fault still open after its timeout is raised",
          "[state][lifecycle]") {
  auto s = settings();
  s.incident_ttl = 100h;
  DurationEscalation e;
  e.codes = {"81078603"};
  e.fault_timeout = 20s;
  e.to = FaultLevel::PreSeparateNPU;
  s.duration.push_back(e);
  Harness h;
  h.lifecycle.configure(s);
  h.feed(finding("5", "81078603", t0));
  CHECK(h.lifecycle.tick(t0 + 19s).empty());
  auto raised = h.lifecycle.tick(t0 + 21s);
  REQUIRE(raised.size() == 1);
  CHECK(raised[0].level == FaultLevel::PreSeparateNPU);
  CHECK(raised[0].open);
  CHECK(h.lifecycle.tick(t0 + 40s).empty());  // once
}

TEST_CASE("a recovery closes the device's incidents for that code", "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());
  h.feed(finding("3", "80818C00", t0));
  h.feed(finding("3", "80818C06", t0));
  auto rec = finding("3", "80818C00", t0 + 5s);
  rec.recovery = true;
  auto d = h.feed(rec);
  REQUIRE(d.kind == Lifecycle::Kind::Recovery);
  CHECK(d.closed == std::vector<int64_t>{1});
  REQUIRE(h.lifecycle.open_incidents().size() == 1);
  CHECK(h.lifecycle.open_incidents()[0].code == "80818C06");
}

TEST_CASE("the same fault on most devices at once is a node-level storm", "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());  // 8 devices, half of them: 4
  for (int dev = 0; dev < 3; ++dev) {
    CHECK(h.feed(finding(std::to_string(dev), "EI0006", t0 + std::chrono::seconds(dev))).kind ==
          Lifecycle::Kind::NewIncident);
  }
  auto tipped = h.feed(finding("3", "EI0006", t0 + 4s));
  REQUIRE(tipped.kind == Lifecycle::Kind::Storm);
  REQUIRE(tipped.storm_started);
  CHECK(tipped.storm_started->node_level);
  CHECK_THAT(tipped.storm_started->note, Catch::Contains("4 devices"));
  // While it lasts, the signature changes no device; another signature still does.
  CHECK(h.feed(finding("7", "EI0006", t0 + 5s)).kind == Lifecycle::Kind::Storm);
  CHECK(h.feed(finding("7", "80818C00", t0 + 5s)).kind == Lifecycle::Kind::NewIncident);
  CHECK(h.lifecycle.storm_active(t0 + 30s));
  // A window without it ends the storm.
  h.lifecycle.tick(t0 + 5s + 61s);
  CHECK_FALSE(h.lifecycle.storm_active(t0 + 5s + 61s));
  CHECK(h.feed(finding("6", "EI0006", t0 + 3min)).kind == Lifecycle::Kind::NewIncident);
}

TEST_CASE("spread-out findings on many devices are not a storm", "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());
  for (int dev = 0; dev < 8; ++dev) {
    auto d = h.feed(finding(std::to_string(dev), "EI0006", t0 + std::chrono::minutes(2 * dev)));
    CHECK(d.kind == Lifecycle::Kind::NewIncident);
  }
}

TEST_CASE("shadow rules are recorded and do nothing else", "[state][lifecycle]") {
  auto s = settings();
  s.shadow_rules = {"ascend.try"};
  Harness h;
  h.lifecycle.configure(s);
  CHECK(h.feed(finding("3", "X", t0, "ascend.try")).kind == Lifecycle::Kind::Shadow);
  CHECK(h.lifecycle.open_incidents().empty());
  CHECK(h.feed(finding("3", "X", t0, "ascend.enforced")).kind == Lifecycle::Kind::NewIncident);
}

TEST_CASE("incidents reloaded from the store keep grouping", "[state][lifecycle]") {
  Incident open;
  open.id = 42;
  open.device = "2";
  open.rule = "ascend.test";
  open.code = "80818C00";
  open.first = open.last = t0;
  open.count = 7;
  Harness h;
  h.lifecycle.configure(settings());
  h.lifecycle.load({open});
  auto d = h.feed(finding("2", "80818C00", t0 + 1min));
  CHECK(d.kind == Lifecycle::Kind::Grouped);
  CHECK(d.incident == 42);
  CHECK(h.lifecycle.find(42)->count == 8);
}

TEST_CASE("state machine: recovery, release and verdict paths", "[state][lifecycle]") {
  StateMachine::WarnTable warn{};
  warn.fill(true);
  StateMachine m(warn);
  Finding f = finding("3", "80818C00", t0, "ascend.test", FaultLevel::SubHealthFault);
  f.id = 1;
  REQUIRE(m.on_finding(f, t0));
  // A recovery for another code changes nothing, nor one from another source (security audit
  // F2: a job's log cannot clear what the kernel log raised); for the incident's code from its
  // source, back to healthy.
  CHECK_FALSE(m.recover("3", "80818C06", "plog", "recovered", t0 + 1s));
  CHECK_FALSE(m.recover("3", "80818C00", "training", "recovered", t0 + 1s));
  CHECK_FALSE(m.recover("3", "", "training", "recovered", t0 + 1s));
  auto t = m.recover("3", "80818C00", "plog", "recovered", t0 + 2s);
  REQUIRE(t);
  CHECK(t->to == DeviceState::Healthy);

  // A level whose policy does not allow recovery stays in warning.
  StateMachine::WarnTable recover{};
  recover.fill(true);
  recover[static_cast<size_t>(FaultLevel::SubHealthFault)] = false;
  m.set_recoverable(recover);
  f.id = 2;
  REQUIRE(m.on_finding(f, t0 + 3s));
  CHECK_FALSE(m.recover("3", "", "plog", "recovered", t0 + 4s));

  // Isolated devices are never released by a recovery or a release.
  REQUIRE(m.isolate("3", "isolate succeeded", 2, t0 + 5s));
  recover.fill(true);
  m.set_recoverable(recover);
  CHECK_FALSE(m.recover("3", "", "plog", "recovered", t0 + 6s));
  CHECK_FALSE(m.release("3", 2, "released", t0 + 6s));
  CHECK(m.set_verdict("3", "faulty"));
  CHECK(m.acknowledge("3", "operator: seen"));
  CHECK(m.find("3")->verdict == "faulty");
  // An operator's clear resets the marks with the state.
  REQUIRE(m.clear("3", "operator: repaired", t0 + 7s));
  CHECK(m.find("3")->verdict.empty());
  CHECK_FALSE(m.find("3")->acked);
}

TEST_CASE("two signals about one device and code correlate into one raised incident",
          "[state][lifecycle]") {
  auto s = settings();
  Correlation c;
  c.codes = {"80818C00"};
  c.window = 10min;
  c.to = FaultLevel::SeparateNPU;
  s.correlations.push_back(c);
  Harness h;
  h.lifecycle.configure(s);
  // The training log's strike (SubHealth) opens the incident...
  auto first = h.feed(finding("3", "80818C00", t0, "training.asd.strike"));
  REQUIRE(first.kind == Lifecycle::Kind::NewIncident);
  // ...its repeats are flood, not evidence...
  CHECK(h.feed(finding("3", "80818C00", t0 + 1min, "training.asd.strike")).kind ==
        Lifecycle::Kind::Grouped);
  // ...and npu-smi's 80818C00 for the same device is the second signal: the same incident,
  // raised, both pieces of evidence kept.
  auto second = h.feed(finding("3", "80818C00", t0 + 5min, "ascend.npu-smi.health-fault"));
  CHECK(second.kind == Lifecycle::Kind::Evidence);
  CHECK(second.incident == 1);
  CHECK(second.raised);
  CHECK(second.level == FaultLevel::SeparateNPU);
  CHECK_THAT(second.escalation,
             Catch::Contains("training.asd.strike, ascend.npu-smi.health-fault"));
  REQUIRE(h.lifecycle.open_incidents().size() == 1);
  CHECK(h.lifecycle.open_incidents()[0].level == FaultLevel::SeparateNPU);
}

TEST_CASE("signals further apart than the window, or about another code, do not correlate",
          "[state][lifecycle]") {
  auto s = settings();
  s.incident_ttl = 1h;
  Correlation c;
  c.codes = {"80818C00"};
  c.window = 10min;
  s.correlations.push_back(c);
  Harness h;
  h.lifecycle.configure(s);
  h.feed(finding("3", "80818C00", t0, "training.asd.strike"));
  auto late = h.feed(finding("3", "80818C00", t0 + 11min, "ascend.npu-smi.health-fault"));
  CHECK(late.kind == Lifecycle::Kind::Evidence);  // still evidence of the open incident
  CHECK_FALSE(late.raised);
  h.feed(finding("4", "80818C06", t0, "rule.a"));
  auto other = h.feed(finding("4", "80818C06", t0 + 1min, "rule.b"));
  CHECK(other.kind == Lifecycle::Kind::Evidence);
  CHECK_FALSE(other.raised);
}

TEST_CASE("a storm whose findings arrive together changes none of its devices",
          "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());  // 8 devices, half of them: 4
  std::vector<Finding> batch;
  for (int dev = 0; dev < 6; ++dev) batch.push_back(finding(std::to_string(dev), "EI0006", t0));
  batch.push_back(finding("7", "80818C00", t0));  // another signature, alone: a device fault
  h.lifecycle.anticipate(batch);
  std::vector<Lifecycle::Kind> kinds;
  int started = 0;
  for (const auto& f : batch) {
    auto d = h.feed(f);
    kinds.push_back(d.kind);
    started += d.storm_started ? 1 : 0;
  }
  using K = Lifecycle::Kind;
  CHECK(kinds ==
        std::vector<K>{K::Storm, K::Storm, K::Storm, K::Storm, K::Storm, K::Storm, K::NewIncident});
  CHECK(started == 1);
  // Below the threshold, a batch is judged finding by finding as before.
  Harness small;
  small.lifecycle.configure(settings());
  std::vector<Finding> few{finding("0", "EI0006", t0), finding("1", "EI0006", t0)};
  small.lifecycle.anticipate(few);
  for (const auto& f : few) CHECK(small.feed(f).kind == K::NewIncident);
}

TEST_CASE("a release moves a device held in warning by that incident back to healthy",
          "[state][lifecycle]") {
  StateMachine::WarnTable warn{};
  warn.fill(true);
  StateMachine m(warn);
  Finding f = finding("4", "80C98000", t0, "ascend.test", FaultLevel::ManuallySeparateNPU);
  f.id = 10;
  REQUIRE(m.on_finding(f, t0));
  CHECK_FALSE(m.release("4", 11, "released: another incident", t0 + 1s));
  CHECK_FALSE(m.release("5", 10, "released: unknown device", t0 + 1s));
  auto t = m.release("4", 10, "released: no occurrence for 1d", t0 + 2s);
  REQUIRE(t);
  CHECK(t->from == DeviceState::Warning);
  CHECK(t->to == DeviceState::Healthy);
  CHECK(m.find("4")->state == DeviceState::Healthy);
  CHECK_FALSE(m.release("4", 10, "released again", t0 + 3s));  // once
}

// Security audit N2: a log writer choosing a new code for every line.
TEST_CASE("codes past the open-incident cap fold into one counted incident per device and rule",
          "[state][lifecycle]") {
  auto s = settings();
  s.limits.open_per_device_rule = 4;
  Harness h;
  h.lifecycle.configure(s);
  auto code = [](int i) { return "C" + std::to_string(i); };
  for (int i = 0; i < 4; ++i) {
    auto d = h.feed(finding("3", code(i), t0));
    REQUIRE(d.kind == Lifecycle::Kind::NewIncident);
    CHECK_FALSE(d.folded);
    CHECK(d.code == code(i));
  }
  const auto fold = h.feed(finding("3", code(4), t0 + 1s));
  REQUIRE(fold.kind == Lifecycle::Kind::NewIncident);
  CHECK(fold.folded);
  CHECK(fold.code == kTooManyCodes);
  const int64_t fold_id = h.next_id - 1;
  for (int i = 5; i < 10'000; ++i) {
    auto d = h.feed(finding("3", code(i), t0 + 2s));
    REQUIRE(d.kind == Lifecycle::Kind::Grouped);
    CHECK(d.folded);
    CHECK(d.incident == fold_id);
  }
  CHECK(h.lifecycle.open_count() == 5);  // the four codes and the fold
  const Incident* folded = h.lifecycle.find(fold_id);
  REQUIRE(folded != nullptr);
  CHECK(folded->code == kTooManyCodes);
  CHECK(folded->rule == "ascend.test");
  CHECK(folded->count == 10'000 - 4);
  CHECK_THAT(folded->note, Catch::Contains("further codes are counted here"));
  // A code that has its incident still groups into it; another rule or device has room.
  CHECK(h.feed(finding("3", code(0), t0 + 3s)).kind == Lifecycle::Kind::Grouped);
  CHECK_FALSE(h.feed(finding("3", code(0), t0 + 3s)).folded);
  CHECK_FALSE(h.feed(finding("3", "X1", t0 + 3s, "ascend.other")).folded);
  CHECK_FALSE(h.feed(finding("4", "X1", t0 + 3s)).folded);
  // Once the incidents close (TTL), codes get incidents of their own again.
  h.lifecycle.tick(t0 + 3s + 10min);
  CHECK(h.lifecycle.open_count() == 0);
  CHECK_FALSE(h.feed(finding("3", code(20'000), t0 + 11min)).folded);
}

TEST_CASE("the node's open-incident cap folds new codes too, and a reload keeps the counts",
          "[state][lifecycle]") {
  auto s = settings();
  s.limits.open = 6;
  Harness h;
  h.lifecycle.configure(s);
  for (int dev = 0; dev < 6; ++dev) {
    CHECK_FALSE(h.feed(finding(std::to_string(dev), "C1", t0 + std::chrono::minutes(dev))).folded);
  }
  auto d = h.feed(finding("6", "C1", t0 + 7min));
  CHECK(d.kind == Lifecycle::Kind::NewIncident);
  CHECK(d.folded);  // the device still gets its incident: the fold
  // What the store hands back after a restart is judged with the same counts.
  Lifecycle reloaded;
  s.limits.open = 100;
  s.limits.open_per_device_rule = 1;  // device 0 has one open: its next code folds
  reloaded.configure(s);
  reloaded.load(h.lifecycle.open_incidents());
  CHECK(reloaded.open_count() == 7);
  auto again = reloaded.decide(finding("0", "C2", t0 + 8min), t0 + 8min);
  CHECK(again.folded);
}

// Security audit N6: a job printing a kernel line for three devices must not turn the kernel's
// line for a fourth into a node-level storm.
TEST_CASE("storms are counted per source: a job's lines never absorb another source's finding",
          "[state][lifecycle]") {
  Harness h;
  h.lifecycle.configure(settings());  // 8 devices: a storm takes 4
  auto from = [](const std::string& source, const std::string& device, TimePoint at) {
    Finding f =
        finding(device, "40F84E00", at, "ascend.device.drv-heartbeat-lost", FaultLevel::RestartNPU);
    f.source = source;
    return f;
  };
  std::vector<Finding> batch;
  batch.reserve(7);
  for (int i = 0; i < 6; ++i) batch.push_back(from("training", std::to_string(i % 3), t0));
  batch.push_back(from("host-kernel", "5", t0 + 1s));
  h.lifecycle.anticipate(batch);
  for (size_t i = 0; i + 1 < batch.size(); ++i) h.feed(batch[i]);
  const auto genuine = h.feed(batch.back());
  CHECK(genuine.kind == Lifecycle::Kind::NewIncident);
  CHECK_FALSE(h.lifecycle.storm_active(t0 + 1s));
  // The job's own source still storms on its own lines.
  h.feed(from("training", "3", t0 + 2s));
  CHECK(h.feed(from("training", "4", t0 + 2s)).kind == Lifecycle::Kind::Storm);
}

TEST_CASE("storm windows are capped per source and in all; a finding past them is no storm",
          "[state][lifecycle]") {
  auto s = settings();
  s.limits.storm_windows_per_source = 3;
  s.limits.storm_windows = 5;
  Harness h;
  h.lifecycle.configure(s);
  auto at = [](const std::string& source, const std::string& code) {
    Finding f = finding("1", code, t0);
    f.source = source;
    return f;
  };
  for (int i = 0; i < 1000; ++i) h.feed(at("training", "C" + std::to_string(i)));
  CHECK(h.lifecycle.storm_windows() == 3);
  CHECK(h.lifecycle.take_storm_refusals() == 997);
  CHECK(h.lifecycle.take_storm_refusals() == 0);
  // Another source has windows of its own, up to the node's cap.
  for (int i = 0; i < 3; ++i) h.feed(at("host-kernel", "K" + std::to_string(i)));
  CHECK(h.lifecycle.storm_windows() == 5);
  CHECK(h.lifecycle.take_storm_refusals() == 1);
  // Windows with nothing in them for a storm window go, and make room.
  h.lifecycle.tick(t0 + 2min);
  CHECK(h.lifecycle.storm_windows() == 0);
  h.feed(at("host-kernel", "K9"));
  CHECK(h.lifecycle.storm_windows() == 1);
}
