#include <catch2/catch.hpp>

#include "daemon/state/state_machine.hpp"

using namespace faultd;

namespace {

StateMachine::WarnTable warn_all_but_not_handle() {
  StateMachine::WarnTable w{};
  w.fill(true);
  w[static_cast<size_t>(FaultLevel::NotHandleFault)] = false;
  return w;
}

Finding finding(std::string device, FaultLevel level, int64_t id, std::string rule = "r") {
  Finding f;
  f.device = std::move(device);
  f.level = level;
  f.id = id;
  f.rule = std::move(rule);
  f.code = "80818C00";
  return f;
}

const TimePoint t0{std::chrono::seconds(1000)};
const TimePoint t1{std::chrono::seconds(2000)};

}  // namespace

TEST_CASE("a warning-level finding moves a healthy device to warning once", "[state]") {
  StateMachine sm(warn_all_but_not_handle());
  auto t = sm.on_finding(finding("3", FaultLevel::SeparateNPU, 7, "ascend.asd.x"), t0);
  REQUIRE(t);
  CHECK(t->device == "3");
  CHECK(t->from == DeviceState::Healthy);
  CHECK(t->to == DeviceState::Warning);
  CHECK(t->fault_id == 7);
  CHECK(t->level == FaultLevel::SeparateNPU);
  CHECK(t->reason == "ascend.asd.x");
  CHECK(t->time == t0);
  // The same incident again: journaled by the caller, no new transition.
  CHECK_FALSE(sm.on_finding(finding("3", FaultLevel::SeparateNPU, 8), t1));
  CHECK_FALSE(sm.on_finding(finding("3", FaultLevel::SubHealthFault, 9), t1));
  REQUIRE(sm.find("3"));
  CHECK(sm.find("3")->fault_id == 7);
  CHECK(sm.find("3")->since == t0);
}

TEST_CASE("a more severe finding escalates the incident of a warning device", "[state]") {
  StateMachine sm(warn_all_but_not_handle());
  REQUIRE(sm.on_finding(finding("1", FaultLevel::SubHealthFault, 1), t0));
  auto t = sm.on_finding(finding("1", FaultLevel::SeparateNPU, 2), t1);
  REQUIRE(t);
  CHECK(t->from == DeviceState::Warning);
  CHECK(t->to == DeviceState::Warning);
  CHECK(t->fault_id == 2);
  CHECK(t->level == FaultLevel::SeparateNPU);
}

TEST_CASE("record-only levels and findings without a device change nothing", "[state]") {
  StateMachine sm(warn_all_but_not_handle());
  CHECK_FALSE(sm.on_finding(finding("1", FaultLevel::NotHandleFault, 1), t0));
  CHECK_FALSE(sm.on_finding(finding("", FaultLevel::SeparateNPU, 2), t0));
  CHECK(sm.devices().empty());
}

TEST_CASE("isolate keeps the incident; findings on an isolated device change nothing", "[state]") {
  StateMachine sm(warn_all_but_not_handle());
  REQUIRE(sm.on_finding(finding("5", FaultLevel::SeparateNPU, 11), t0));
  auto t = sm.isolate("5", "action isolate succeeded", 11, t1);
  REQUIRE(t);
  CHECK(t->from == DeviceState::Warning);
  CHECK(t->to == DeviceState::Isolated);
  CHECK(t->fault_id == 11);
  CHECK(t->level == FaultLevel::SeparateNPU);
  CHECK_FALSE(sm.isolate("5", "again", 11, t1));
  CHECK_FALSE(sm.on_finding(finding("5", FaultLevel::ManuallySeparateNPU, 12), t1));
  CHECK(sm.find("5")->state == DeviceState::Isolated);
}

TEST_CASE("an operator can isolate a healthy device and clear any device", "[state]") {
  StateMachine sm(warn_all_but_not_handle());
  auto t = sm.isolate("7", "operator: bad fan", 42, t0);
  REQUIRE(t);
  CHECK(t->from == DeviceState::Healthy);
  CHECK(t->to == DeviceState::Isolated);
  CHECK(t->fault_id == 42);
  CHECK(t->level == FaultLevel::ManuallySeparateNPU);
  auto c = sm.clear("7", "operator: replaced", t1);
  REQUIRE(c);
  CHECK(c->from == DeviceState::Isolated);
  CHECK(c->to == DeviceState::Healthy);
  CHECK(c->fault_id == 42);  // the transition names the incident it closed
  CHECK(sm.find("7")->fault_id == 0);
  CHECK_FALSE(sm.clear("7", "again", t1));
  CHECK_FALSE(sm.clear("unknown", "x", t1));
  // After a clear, a new finding opens a new incident.
  auto again = sm.on_finding(finding("7", FaultLevel::SubHealthFault, 43), t1);
  REQUIRE(again);
  CHECK(again->from == DeviceState::Healthy);
}

TEST_CASE("state loaded from the store is the starting point", "[state]") {
  StateMachine sm(warn_all_but_not_handle());
  DeviceRecord d;
  d.device = "2";
  d.state = DeviceState::Isolated;
  d.fault_id = 9;
  d.level = FaultLevel::SeparateNPU;
  sm.load({d});
  CHECK_FALSE(sm.on_finding(finding("2", FaultLevel::SeparateNPU, 10), t0));
  CHECK(sm.find("2")->state == DeviceState::Isolated);
}

TEST_CASE("a device's incident starts when it leaves healthy and keeps its start as it escalates",
          "[state]") {
  const TimePoint t2 = t1 + std::chrono::seconds(5);
  StateMachine sm(warn_all_but_not_handle());
  Finding first = finding("1", FaultLevel::SubHealthFault, 1);
  first.time = t0;
  REQUIRE(sm.on_finding(first, t0));
  CHECK(sm.find("1")->incident_start == t0);
  Finding worse = finding("1", FaultLevel::SeparateNPU, 2);
  worse.time = t1;
  REQUIRE(sm.on_finding(worse, t1));
  CHECK(sm.find("1")->since == t1);
  CHECK(sm.find("1")->incident_start == t0);
  REQUIRE(sm.isolate("1", "action isolate succeeded", 2, t2));
  CHECK(sm.find("1")->incident_start == t0);
  // Back to healthy ends the incident; the next one has its own start.
  REQUIRE(sm.clear("1", "operator: replaced", t2));
  CHECK(sm.find("1")->incident_start == TimePoint{});
  Finding next = finding("1", FaultLevel::SubHealthFault, 3);
  next.time = t2;
  REQUIRE(sm.on_finding(next, t2));
  CHECK(sm.find("1")->incident_start == t2);

  // An incident raised later (correlation, escalation by duration) started with its first
  // finding, not when it was raised.
  Finding raised = finding("5", FaultLevel::SeparateNPU, 4);
  raised.time = t0;
  REQUIRE(sm.on_finding(raised, t1));
  CHECK(sm.find("5")->incident_start == t0);
  // An operator's isolation of a healthy device: the request is the incident.
  REQUIRE(sm.isolate("6", "operator: drain", 5, t1));
  CHECK(sm.find("6")->incident_start == t1);
}
