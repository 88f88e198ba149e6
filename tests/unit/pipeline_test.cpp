// The decision pipeline with a fake clock and a real SQLite store in a temporary directory:
// every input (findings, ticks, operator and alert requests, hook outcomes) through to the Step
// it returns and what the store holds afterwards.
#include <catch2/catch.hpp>

#include <algorithm>

#include "daemon/actions/action_manager.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "rules/rule.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/state_store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::FakeClock;
using faultd::testing::RawDb;
using faultd::testing::TempDir;

namespace {

// A config as the loader makes it, with the default policy and an isolate and a diagnose action.
Config test_config() {
  Config c;
  c.node = "node-1";
  ErrorList errors;
  c.rules = RuleSet::build({}, CodeLevels{}, errors);
  REQUIRE(c.rules != nullptr);
  c.actions["isolate"] = ActionConfig{"isolate", {}, ""};
  c.actions["diagnose"] = ActionConfig{"diagnose", {}, "isolate"};
  c.actions["clear"] = ActionConfig{"clear", {}, ""};
  c.policy.storm.node_devices = 8;
  return c;
}

struct Rig {
  TempDir dir;
  FakeClock clock{from_unix_ms(1'800'000'000'000)};
  Store store{dir.file("state.db")};
  Config config = test_config();
  Pipeline pipeline{store, clock};
  uint64_t next_offset = 0;

  Rig() { reconfigure(); }
  void reconfigure() {
    pipeline.configure(config);
    pipeline.load();
  }

  // A finding as the matcher hands it on: read from a file at the next offset, dated now.
  Finding finding(const std::string& device, FaultLevel level, const std::string& code = "",
                  const std::string& rule = "ascend.test") {
    Finding f;
    f.rule = rule;
    f.source = "plog";
    f.device = device;
    f.level = level;
    f.code = code;
    f.file = "/var/log/plog/plog-1.log";
    f.identity = {1, 2, 3, 4};
    f.offset = next_offset;
    next_offset += 100;
    f.line = next_offset / 100;
    f.time = f.noticed = clock.now();
    return f;
  }
  Step record(std::vector<Finding> findings) { return pipeline.record(findings, nullptr); }
  Step record(Finding f) { return record(std::vector<Finding>{std::move(f)}); }

  DeviceState state(const std::string& device) const {
    const DeviceRecord* d = pipeline.find(device);
    return d == nullptr ? DeviceState::Healthy : d->state;
  }
  // What a restart would see.
  DeviceState stored_state(const std::string& device) const {
    for (const auto& d : store.load_devices()) {
      if (d.device == device) return d.state;
    }
    return DeviceState::Healthy;
  }
  size_t journal_rows() const { return store.query_faults(FaultQuery{}).size(); }
};

std::vector<std::string> action_names(const Step& step) {
  std::vector<std::string> out;
  for (const auto& a : step.actions) {
    for (const auto& name : a.actions) out.push_back(name + "@" + a.fault.device);
  }
  return out;
}

ActionRecord hook_done(const std::string& action, const std::string& device, int64_t fault_id,
                       ActionStatus status, int exit_code) {
  ActionRecord r;
  r.action = action;
  r.device = device;
  r.fault_id = fault_id;
  r.status = status;
  r.exit_code = exit_code;
  return r;
}

}  // namespace

TEST_CASE("a separating fault warns the device and asks for the isolate hook, once", "[pipeline]") {
  Rig rig;
  const Step step = rig.record(rig.finding("3", FaultLevel::SeparateNPU, "80818C00"));
  REQUIRE(step.committed());
  REQUIRE(step.transitions.size() == 1);
  CHECK(step.transitions[0].to == DeviceState::Warning);
  CHECK(step.journaled.size() == 1);
  CHECK(action_names(step) == std::vector<std::string>{"isolate@3"});
  CHECK(step.actions[0].fault.id == step.journaled[0].id);
  CHECK_FALSE(step.actions[0].by_operator);
  // The action is journaled with the transition, so a kill before the hook starts keeps it.
  const auto pending = rig.store.unfinished_actions();
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].action == "isolate");
  CHECK(pending[0].fault_id == step.journaled[0].id);
  CHECK(rig.stored_state("3") == DeviceState::Warning);
  // The published view is what a scrape reads.
  const auto view = rig.pipeline.device_view()->snapshot();
  REQUIRE(view.size() == 1);
  CHECK(view[0].state == DeviceState::Warning);

  // The same line read again after a crash is not a second finding.
  Finding again = step.journaled[0];
  again.id = 0;
  const Step replay = rig.record(again);
  CHECK(replay.journaled.empty());
  CHECK(replay.transitions.empty());
  CHECK(rig.journal_rows() == 1);
}

TEST_CASE("a flood of one fault is one incident: grouped, not journaled again", "[pipeline]") {
  Rig rig;
  REQUIRE(rig.record(rig.finding("1", FaultLevel::SubHealthFault, "A1")).transitions.size() == 1);
  for (int i = 0; i < 5; ++i) {
    rig.clock.advance(1s);
    const Step s = rig.record(rig.finding("1", FaultLevel::SubHealthFault, "A1"));
    CHECK(s.grouped.size() == 1);
    CHECK(s.journaled.empty());
    CHECK(s.transitions.empty());
  }
  CHECK(rig.journal_rows() == 1);
  const auto incidents = rig.store.query_incidents("1", true, 10);
  REQUIRE(incidents.size() == 1);
  CHECK(incidents[0].count == 6);
}

TEST_CASE("a storm arriving at once changes no device; spread out, devices warn", "[pipeline]") {
  SECTION("the same fault on most devices in one batch is one node-level incident") {
    Rig rig;
    std::vector<Finding> batch;
    for (int d = 0; d < 6; ++d) {
      batch.push_back(rig.finding(std::to_string(d), FaultLevel::SeparateNPU, "", "hccl.timeout"));
    }
    const Step s = rig.record(batch);
    REQUIRE(s.committed());
    CHECK(s.transitions.empty());
    CHECK(s.actions.empty());
    REQUIRE(s.storms.size() == 1);
    CHECK(s.storms[0].rule == "node.storm");
    CHECK(s.journaled.size() == 6);
    for (int d = 0; d < 6; ++d) CHECK(rig.state(std::to_string(d)) == DeviceState::Healthy);
  }
  SECTION("one device alone is that device's fault") {
    Rig rig;
    const Step s = rig.record(rig.finding("2", FaultLevel::SeparateNPU, "", "hccl.timeout"));
    CHECK(s.storms.empty());
    CHECK(rig.state("2") == DeviceState::Warning);
  }
}

TEST_CASE("evidence from a second rule raises the incident and starts its actions", "[pipeline]") {
  Rig rig;  // the default policy correlates two signals about 80818C00 within 10 minutes
  const Step first =
      rig.record(rig.finding("5", FaultLevel::SubHealthFault, "80818C00", "asd.log"));
  REQUIRE(first.transitions.size() == 1);
  CHECK(first.actions.empty());  // SubHealthFault warns, runs nothing
  rig.clock.advance(2min);
  const Step second =
      rig.record(rig.finding("5", FaultLevel::SubHealthFault, "80818C00", "npu_smi.health"));
  REQUIRE(second.committed());
  REQUIRE(second.transitions.size() == 1);
  CHECK(second.transitions[0].level == FaultLevel::SeparateNPU);
  REQUIRE(second.escalations.size() == 1);
  // The raised incident is the first finding: its hooks run for it, not for the evidence.
  REQUIRE(second.actions.size() == 1);
  CHECK(second.actions[0].fault.id == first.journaled[0].id);
  CHECK(second.actions[0].fault.level == FaultLevel::SeparateNPU);
}

TEST_CASE("a fault still open after its timeout is raised by the tick", "[pipeline]") {
  Rig rig;
  DurationEscalation e;
  e.codes = {"C0DE"};
  e.fault_timeout = 5min;
  e.to = FaultLevel::SeparateNPU;
  rig.config.policy.duration_escalations.push_back(e);
  rig.reconfigure();
  const Step first = rig.record(rig.finding("4", FaultLevel::SubHealthFault, "C0DE"));
  REQUIRE(first.transitions.size() == 1);
  rig.clock.advance(1min);
  CHECK(rig.pipeline.tick().transitions.empty());
  rig.clock.advance(5min);
  const Step tick = rig.pipeline.tick();
  REQUIRE(tick.committed());
  REQUIRE(tick.transitions.size() == 1);
  CHECK(tick.transitions[0].level == FaultLevel::SeparateNPU);
  CHECK(action_names(tick) == std::vector<std::string>{"isolate@4"});
}

TEST_CASE("a recovery the source reports brings a warning device back", "[pipeline]") {
  Rig rig;
  REQUIRE(rig.record(rig.finding("6", FaultLevel::SubHealthFault, "80818C06")).transitions.size() ==
          1);
  rig.clock.advance(30s);
  Finding ok = rig.finding("6", FaultLevel::NotHandleFault, "80818C06", "npu_smi.recovered");
  ok.recovery = true;
  const Step s = rig.record(ok);
  REQUIRE(s.transitions.size() == 1);
  CHECK(s.transitions[0].to == DeviceState::Healthy);
  CHECK(s.actions.empty());
  CHECK(rig.stored_state("6") == DeviceState::Healthy);
}

// Security audit F2: a job printing a recovery record into its own log must not clear what
// another source (the kernel log) raised, not even after a restart.
TEST_CASE("only the source that raised a warning can report its recovery", "[pipeline]") {
  Rig rig;
  REQUIRE(rig.record(rig.finding("3", FaultLevel::RestartNPU, "40F84E00")).transitions.size() == 1);
  Finding forged = rig.finding("3", FaultLevel::NotHandleFault, "", "npu_smi.recovered");
  forged.source = "training";
  forged.recovery = true;
  auto check_forged_refused = [&](Pipeline& p) {
    rig.clock.advance(10s);
    forged.offset += 1000;
    std::vector<Finding> one{forged};
    CHECK(p.record(one, nullptr).transitions.empty());
    CHECK(p.find("3")->state == DeviceState::Warning);
    // The incident stays open: the same fault again groups into it.
    std::vector<Finding> again{rig.finding("3", FaultLevel::RestartNPU, "40F84E00")};
    CHECK(p.record(again, nullptr).grouped.size() == 1);
  };
  check_forged_refused(rig.pipeline);
  Pipeline restarted(rig.store, rig.clock);
  restarted.configure(rig.config);
  restarted.load();
  check_forged_refused(restarted);

  Finding real = rig.finding("3", FaultLevel::NotHandleFault, "", "plog.recovered");
  real.recovery = true;
  std::vector<Finding> one{real};
  const Step s = restarted.record(one, nullptr);
  REQUIRE(s.transitions.size() == 1);
  CHECK(s.transitions[0].to == DeviceState::Healthy);
}

TEST_CASE("a successful isolate hook isolates; a diagnosis verdict releases or marks",
          "[pipeline]") {
  Rig rig;
  const Step fault = rig.record(rig.finding("7", FaultLevel::SeparateNPU, "80818C00"));
  const int64_t id = fault.journaled.at(0).id;
  const Step isolated =
      rig.pipeline.on_action_finished(hook_done("isolate", "7", id, ActionStatus::Success, 0));
  REQUIRE(isolated.transitions.size() == 1);
  CHECK(isolated.transitions[0].to == DeviceState::Isolated);
  CHECK(rig.stored_state("7") == DeviceState::Isolated);

  SECTION("faulty: stays isolated, marked for repair") {
    const Step v =
        rig.pipeline.on_action_finished(hook_done("diagnose", "7", id, ActionStatus::Failure, 1));
    CHECK(v.verdict == std::optional<std::string>("faulty"));
    CHECK(v.transitions.empty());
    CHECK(rig.pipeline.find("7")->verdict == "faulty");
    CHECK(rig.store.load_devices().at(0).verdict == "faulty");
  }
  SECTION("passed: released, and the clear hook undoes the isolation") {
    const Step v =
        rig.pipeline.on_action_finished(hook_done("diagnose", "7", id, ActionStatus::Success, 0));
    CHECK(v.verdict == std::optional<std::string>("passed"));
    REQUIRE(v.transitions.size() == 1);
    CHECK(v.transitions[0].to == DeviceState::Healthy);
    CHECK(action_names(v) == std::vector<std::string>{"clear@7"});
    CHECK(v.actions[0].fault.id == id);
  }
  SECTION("no tool: no verdict, nothing changes") {
    const Step v =
        rig.pipeline.on_action_finished(hook_done("diagnose", "7", id, ActionStatus::Failure, 2));
    CHECK(v.verdict == std::optional<std::string>("unavailable"));
    CHECK(rig.state("7") == DeviceState::Isolated);
  }
  SECTION("a verdict for an incident that is over changes nothing") {
    const Step v = rig.pipeline.on_action_finished(
        hook_done("diagnose", "7", id + 100, ActionStatus::Success, 0));
    CHECK(v.transitions.empty());
    CHECK(rig.state("7") == DeviceState::Isolated);
  }
}

TEST_CASE("the operator isolates, acknowledges and clears", "[pipeline]") {
  Rig rig;
  const Step iso = rig.pipeline.isolate("2", "burn-in failed");
  REQUIRE(iso.transitions.size() == 1);
  CHECK(iso.transitions[0].to == DeviceState::Isolated);
  CHECK(iso.fault_id != 0);
  CHECK(action_names(iso) == std::vector<std::string>{"isolate@2"});
  CHECK(iso.actions[0].by_operator);
  CHECK(rig.pipeline.isolate("2", "again").transitions.empty());  // already isolated

  const Step ack = rig.pipeline.acknowledge("2", "operator: seen");
  REQUIRE(ack.committed());
  CHECK(rig.store.load_devices().at(0).acked);
  CHECK_FALSE(rig.pipeline.acknowledge("3", "operator: nothing there").refused.empty());

  const Step clear = rig.pipeline.clear("2", "operator: replaced");
  REQUIRE(clear.transitions.size() == 1);
  CHECK(clear.transitions[0].to == DeviceState::Healthy);
  CHECK(action_names(clear) == std::vector<std::string>{"clear@2"});
}

TEST_CASE("an alert isolates once, however often Alertmanager repeats it", "[pipeline]") {
  Rig rig;
  auto alert = [&] {
    Finding f;
    f.rule = "alertmanager.isolate";
    f.source = "alertmanager";
    f.device = "1";
    f.level = FaultLevel::SeparateNPU;
    f.identity.ino = 42;  // the alert's firing
    f.time = rig.clock.now();
    return f;
  };
  const Step first = rig.pipeline.isolate_by_alert(alert());
  REQUIRE(first.committed());
  CHECK_FALSE(first.duplicate);
  REQUIRE(first.transitions.size() == 1);
  CHECK(first.transitions[0].to == DeviceState::Warning);
  // The level's policy and the alert both ask for isolate: the action journal keys them as one.
  CHECK(action_names(first) == std::vector<std::string>{"isolate@1", "isolate@1"});
  rig.clock.advance(5min);
  const Step repeat = rig.pipeline.isolate_by_alert(alert());
  CHECK(repeat.duplicate);
  CHECK(repeat.fault_id == first.fault_id);
  CHECK(repeat.actions.empty());
  CHECK(rig.journal_rows() == 1);

  CHECK(rig.pipeline.run_action("1", "diagnose").actions.size() == 1);
  CHECK_FALSE(rig.pipeline.run_action("5", "diagnose").refused.empty());  // no incident
  CHECK_FALSE(rig.pipeline.run_action("1", "reboot").refused.empty());    // not configured
}

TEST_CASE("a store failure keeps nothing of the input and memory follows the store", "[pipeline]") {
  Rig rig;
  RawDb raw(rig.dir.file("state.db"));
  raw.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON transitions "
      "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END");
  std::vector<Finding> batch{rig.finding("3", FaultLevel::SeparateNPU, "80818C00")};
  const ReadPosition position{"plog", "/var/log/plog/plog-1.log", {1, 2, 3, 4}, 100, 1};
  const Step failed = rig.pipeline.record(batch, &position);
  CHECK_FALSE(failed.store_error.empty());
  CHECK(failed.transitions.empty());
  CHECK(failed.actions.empty());
  CHECK(rig.state("3") == DeviceState::Healthy);  // reloaded from the store
  CHECK(rig.journal_rows() == 0);
  CHECK_FALSE(rig.store.find_position("plog", 1, 2).has_value());  // the chunk is read again
  CHECK(rig.pipeline.isolate("3", "x").store_error.size() > 0);    // one policy for every input

  raw.exec("DROP TRIGGER refuse");
  batch[0].id = 0;
  const Step retried = rig.pipeline.record(batch, &position);
  REQUIRE(retried.committed());
  CHECK(retried.transitions.size() == 1);
  CHECK(rig.store.find_position("plog", 1, 2)->offset == 100);
  CHECK(rig.state("3") == DeviceState::Warning);
}

TEST_CASE("state survives a restart: a new pipeline on the same store", "[pipeline]") {
  Rig rig;
  rig.record(rig.finding("0", FaultLevel::SeparateNPU, "80818C00"));
  Pipeline again(rig.store, rig.clock);
  again.configure(rig.config);
  again.load();
  REQUIRE(again.find("0") != nullptr);
  CHECK(again.find("0")->state == DeviceState::Warning);
  // The open incident is remembered: the same fault a minute later groups into it.
  rig.clock.advance(1min);
  std::vector<Finding> more{rig.finding("0", FaultLevel::SeparateNPU, "80818C00")};
  CHECK(again.record(more, nullptr).grouped.size() == 1);
}

TEST_CASE("dry run: hook outcomes change no device", "[pipeline]") {
  Rig rig;
  rig.config.policy.dry_run = true;
  rig.reconfigure();
  const Step fault = rig.record(rig.finding("1", FaultLevel::SeparateNPU));
  const int64_t id = fault.journaled.at(0).id;
  CHECK(rig.pipeline.on_action_finished(hook_done("isolate", "1", id, ActionStatus::Success, 0))
            .transitions.empty());
  CHECK(rig.state("1") == DeviceState::Warning);
}

namespace {

Discovery eight_npus(const std::string& by = "npu-smi", const std::string& without = "") {
  Discovery d{by, {}};
  for (int i = 0; i < 8; ++i) {
    if (std::to_string(i) == without) continue;
    InventoryDevice dev;
    dev.id = std::to_string(i);
    dev.vendor = "ascend";
    dev.card = dev.id;
    dev.chip = "0";
    dev.serial = "SN-" + dev.id;
    dev.bus_id = "0000:" + std::to_string(10 + i) + ":00.0";
    d.devices.push_back(dev);
  }
  return d;
}

}  // namespace

TEST_CASE("once the inventory is known, every device is shown healthy until something happens",
          "[pipeline][inventory]") {
  Rig rig;
  CHECK(rig.pipeline.device_view()->snapshot().empty());
  const Step first = rig.pipeline.discovered(eight_npus());
  REQUIRE(first.committed());
  CHECK(first.inventory_changed);
  CHECK(first.journaled.empty());  // a first discovery loses nothing
  const auto view = rig.pipeline.device_view()->snapshot();
  REQUIRE(view.size() == 8);
  for (const auto& d : view) CHECK(d.state == DeviceState::Healthy);
  CHECK(rig.pipeline.device_view()->inventory().expected == 8);
  // The inventory survives a restart.
  Pipeline restarted(rig.store, rig.clock);
  restarted.configure(rig.config);
  restarted.load();
  CHECK(restarted.inventory().devices().size() == 8);
  CHECK(restarted.device_view()->snapshot().size() == 8);
}

TEST_CASE("a finding under another name of a device lands on it, with the card's serial",
          "[pipeline][inventory]") {
  Rig rig;
  rig.pipeline.discovered(eight_npus());
  const Step step = rig.record(rig.finding("Ascend910-3", FaultLevel::SeparateNPU, "80818C00"));
  REQUIRE(step.journaled.size() == 1);
  CHECK(step.journaled[0].device == "3");
  CHECK(step.journaled[0].serial == "SN-3");
  CHECK(rig.state("3") == DeviceState::Warning);
  FaultQuery q;
  q.serial = "SN-3";
  CHECK(rig.store.query_faults(q).size() == 1);
}

TEST_CASE("findings for devices outside the inventory create nothing and journal a few",
          "[pipeline][inventory]") {
  Rig rig;
  rig.pipeline.discovered(eight_npus());
  std::vector<Finding> forged;
  for (int i = 0; i < 2000; ++i) {
    forged.push_back(rig.finding(std::to_string(1'000'000 + i), FaultLevel::SeparateNPU, "DEAD"));
  }
  forged.push_back(rig.finding("2", FaultLevel::SeparateNPU, "80818C00"));
  const Step step = rig.record(forged);
  REQUIRE(step.committed());
  CHECK(step.outside.size() == 2000);
  CHECK(step.outside_journaled.size() <= 30);
  CHECK_FALSE(step.outside_journaled.empty());
  REQUIRE(step.journaled.size() == 1);  // the real device's fault goes through
  CHECK(step.journaled[0].device == "2");
  CHECK(action_names(step) == std::vector<std::string>{"isolate@2"});
  CHECK(rig.pipeline.devices().size() == 1);
  CHECK(rig.pipeline.device_view()->snapshot().size() == 8);
  CHECK(rig.journal_rows() == 1 + step.outside_journaled.size());
  // The same forged id again within the window is not journaled again.
  rig.clock.advance(2min);
  const Step again = rig.record(rig.finding("1000000", FaultLevel::SeparateNPU, "DEAD"));
  CHECK(again.outside.size() == 1);
  CHECK(again.outside_journaled.empty());
  // Operators and the cluster are refused such a device too; an alias is resolved.
  CHECK_FALSE(rig.pipeline.device_of("1000000"));
  CHECK(rig.pipeline.device_of("0000:15:00") == "5");
}

TEST_CASE("without an inventory, any valid device id is a device, as before",
          "[pipeline][inventory]") {
  Rig rig;
  const Step step = rig.record(rig.finding("1000000", FaultLevel::SubHealthFault, "A1"));
  CHECK(step.outside.empty());
  CHECK(step.journaled.size() == 1);
  CHECK(rig.pipeline.device_of("1000000") == "1000000");
}

// Security audit F6: with no inventory a log writer names the devices; the first 64 stand for
// the node's, the rest are counted and a few journaled, as findings outside an inventory are.
TEST_CASE("without an inventory, forged device ids past the first 64 create nothing",
          "[pipeline][inventory]") {
  Rig rig;
  std::vector<Finding> forged;
  forged.reserve(20'000);
  for (int i = 0; i < 20'000; ++i) {
    // A code of its own each: one code on many devices would be a storm, which warns none.
    forged.push_back(rig.finding(std::to_string(1'000'000 + i), FaultLevel::SubHealthFault,
                                 "A" + std::to_string(i)));
  }
  const Step step = rig.record(forged);
  REQUIRE(step.committed());
  CHECK(step.outside.size() == 20'000 - 64);
  CHECK(step.outside_journaled.size() <= 30);
  REQUIRE_FALSE(step.outside_journaled.empty());
  CHECK_THAT(step.outside_journaled[0].annotations.back().second,
             Catch::Contains("no inventory, and more than 64 device ids"));
  CHECK(rig.pipeline.devices().size() == 64);
  // The devices admitted keep working; a restart does not admit 64 more.
  CHECK(rig.record(rig.finding("1000001", FaultLevel::SubHealthFault, "B1")).outside.empty());
  Pipeline restarted(rig.store, rig.clock);
  restarted.configure(rig.config);
  restarted.load();
  std::vector<Finding> more{rig.finding("2000000", FaultLevel::SubHealthFault, "A1")};
  CHECK(restarted.record(more, nullptr).outside.size() == 1);
}

// Security audit N2 through the pipeline: a flood of codes on one device is a bounded number of
// incidents, the device warns, and the store holds the fold with its count.
TEST_CASE("a flood of distinct codes folds into one incident and still warns the device",
          "[pipeline]") {
  Rig rig;
  std::vector<Finding> flood;
  flood.reserve(3000);
  for (int i = 0; i < 3000; ++i) {
    flood.push_back(rig.finding("2", FaultLevel::SubHealthFault, "C" + std::to_string(i)));
  }
  const Step step = rig.record(flood);
  REQUIRE(step.committed());
  CHECK(rig.state("2") == DeviceState::Warning);
  CHECK(step.open_incidents == 257);  // 256 codes and the fold
  CHECK(step.folded.size() == 3000 - 256);
  CHECK(rig.journal_rows() == 257);
  const auto incidents = rig.store.query_incidents("2", true, 1);
  REQUIRE(incidents.size() == 1);
  CHECK(incidents[0].code == kTooManyCodes);
  CHECK(incidents[0].count == 3000 - 256);
  const auto fold = rig.store.find_fault(incidents[0].id);
  REQUIRE(fold);
  CHECK(fold->code == "C256");  // the journal keeps the line's own code, annotated
  CHECK_THAT(fold->annotations.back().second, Catch::Contains("TOO_MANY_CODES"));
}

TEST_CASE("a device its discoverer no longer lists is lost: the usual lifecycle, then recovery",
          "[pipeline][inventory]") {
  Rig rig;
  rig.pipeline.discovered(eight_npus());
  rig.clock.advance(1min);
  const Step lost = rig.pipeline.discovered(eight_npus("npu-smi", "5"));
  REQUIRE(lost.committed());
  REQUIRE(lost.journaled.size() == 1);
  CHECK(lost.journaled[0].rule == "device.lost");
  CHECK(lost.journaled[0].device == "5");
  CHECK(lost.journaled[0].level == FaultLevel::SeparateNPU);
  CHECK(lost.journaled[0].serial == "SN-5");
  CHECK(action_names(lost) == std::vector<std::string>{"isolate@5"});
  CHECK(rig.state("5") == DeviceState::Warning);
  CHECK(rig.pipeline.device_view()->inventory().present == 7);
  // Still missing at the next discovery: nothing new.
  rig.clock.advance(1min);
  CHECK(rig.pipeline.discovered(eight_npus("npu-smi", "5")).journaled.empty());

  // A log that claims the device recovered cannot clear what the inventory raised.
  Finding forged =
      rig.finding("5", FaultLevel::SeparateNPU, "DEVICE_LOST", "ascend.npu-smi.health-recovered");
  forged.recovery = true;
  rig.record(forged);
  CHECK(rig.state("5") == DeviceState::Warning);

  rig.clock.advance(1min);
  const Step back = rig.pipeline.discovered(eight_npus());
  REQUIRE(back.journaled.size() == 1);
  CHECK(back.journaled[0].rule == "device.returned");
  CHECK(back.journaled[0].recovery);
  CHECK(rig.state("5") == DeviceState::Healthy);
  CHECK(rig.pipeline.device_view()->inventory().present == 8);
}

TEST_CASE("the whole node vanishing at once is one node-level incident, no isolation",
          "[pipeline][inventory]") {
  Rig rig;
  rig.pipeline.discovered(eight_npus());
  rig.clock.advance(1min);
  const Step gone = rig.pipeline.discovered(Discovery{"npu-smi", {}});
  REQUIRE(gone.committed());
  CHECK(gone.storms.size() == 1);
  CHECK(gone.actions.empty());
}

namespace {

// An isolate hook as the action manager journals it: running since `started`, its dependent
// journaled pending with its success (ActionManager::save_success).
ActionRecord isolate_succeeded(Rig& rig, const std::string& device, int64_t fault_id,
                               TimePoint started) {
  ActionRecord r = rig.store.ensure_action("isolate", device, fault_id, started);
  r.status = ActionStatus::Success;
  r.attempts = 1;
  r.exit_code = 0;
  r.started = started;
  r.finished = rig.clock.now();
  rig.store.update_action(r);
  rig.store.ensure_action("diagnose", device, fault_id, r.finished);
  return r;
}

ActionRecord journaled(const Rig& rig, const std::string& action, const std::string& device) {
  for (const auto& a : rig.store.query_actions(device, 100)) {
    if (a.action == action) return a;
  }
  FAIL("no " << action << " for device " << device << " in the journal");
  return {};
}

}  // namespace

TEST_CASE("an isolate result that comes after a later decision is ignored, and says why",
          "[pipeline]") {
  Rig rig;
  const Step fault = rig.record(rig.finding("3", FaultLevel::SeparateNPU, "80818C00"));
  const int64_t id = fault.journaled.at(0).id;
  const TimePoint started = rig.clock.now();
  rig.clock.advance(2s);

  SECTION("an operator's clear while the hook ran wins; the clear hook undoes the isolation") {
    REQUIRE(rig.pipeline.clear("3", "operator: mistaken").transitions.size() == 1);
    rig.clock.advance(2s);
    const Step s = rig.pipeline.on_action_finished(isolate_succeeded(rig, "3", id, started));
    REQUIRE(s.committed());
    CHECK(s.transitions.empty());
    CHECK(rig.state("3") == DeviceState::Healthy);
    CHECK(rig.stored_state("3") == DeviceState::Healthy);
    CHECK_THAT(s.ignored,
               Catch::Contains("went back to healthy") && Catch::Contains("operator: mistaken"));
    CHECK(journaled(rig, "isolate", "3").detail == s.ignored);
    CHECK(journaled(rig, "isolate", "3").status == ActionStatus::Success);
    REQUIRE(s.skipped.size() == 1);
    CHECK(s.skipped[0].action == "diagnose");
    CHECK(journaled(rig, "diagnose", "3").status == ActionStatus::Skipped);
    CHECK_THAT(journaled(rig, "diagnose", "3").detail, Catch::Contains("result ignored"));
    CHECK(action_names(s) == std::vector<std::string>{"clear@3"});
    CHECK(s.actions[0].fault.id == id);

    SECTION("...also when the result comes to the next faultd") {
      Pipeline again(rig.store, rig.clock);
      again.configure(rig.config);
      again.load();
      ActionRecord r = journaled(rig, "isolate", "3");
      r.detail.clear();
      const Step s2 = again.on_action_finished(r);
      CHECK(s2.transitions.empty());
      CHECK_FALSE(s2.ignored.empty());
      CHECK(again.find("3")->state == DeviceState::Healthy);
    }
  }
  SECTION("an operator's isolation while the hook ran: kept, no dependents, no clear") {
    REQUIRE(rig.pipeline.isolate("3", "by hand").transitions.size() == 1);
    const Step s = rig.pipeline.on_action_finished(isolate_succeeded(rig, "3", id, started));
    CHECK(s.transitions.empty());
    CHECK_THAT(s.ignored, Catch::Contains("was isolated at"));
    CHECK(rig.state("3") == DeviceState::Isolated);
    CHECK(journaled(rig, "diagnose", "3").status == ActionStatus::Skipped);
    CHECK(s.actions.empty());
  }
  SECTION("a more severe incident took the device: that one's own hooks decide") {
    rig.record(rig.finding("3", FaultLevel::ManuallySeparateNPU, "", "ascend.other"));
    const Step s = rig.pipeline.on_action_finished(isolate_succeeded(rig, "3", id, started));
    CHECK(s.transitions.empty());
    CHECK_THAT(s.ignored, Catch::Contains("moved on to fault"));
    CHECK(rig.state("3") == DeviceState::Warning);
    CHECK(s.actions.empty());
  }
  SECTION("nothing happened meanwhile: the device is isolated and the dependents stay pending") {
    const Step s = rig.pipeline.on_action_finished(isolate_succeeded(rig, "3", id, started));
    REQUIRE(s.transitions.size() == 1);
    CHECK(s.transitions[0].to == DeviceState::Isolated);
    CHECK(s.ignored.empty());
    CHECK(journaled(rig, "diagnose", "3").status == ActionStatus::Pending);
  }
}
