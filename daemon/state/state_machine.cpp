#include "daemon/state/state_machine.hpp"

namespace faultd {

void StateMachine::load(const std::vector<DeviceRecord>& devices) {
  devices_.clear();
  for (const auto& d : devices) devices_[d.device] = d;
}

Transition StateMachine::move(DeviceRecord& d, DeviceState to, std::string reason, TimePoint now) {
  Transition t;
  t.device = d.device;
  t.from = d.state;
  t.to = to;
  t.reason = std::move(reason);
  t.fault_id = d.fault_id;
  t.level = d.level;
  t.rule = d.rule;
  t.code = d.code;
  t.time = now;
  d.state = to;
  d.reason = t.reason;
  d.since = now;
  return t;
}

std::optional<Transition> StateMachine::on_finding(const Finding& f, TimePoint now) {
  if (f.device.empty() || !warn_[static_cast<size_t>(f.level)]) return std::nullopt;
  auto [it, created] = devices_.try_emplace(f.device);
  DeviceRecord& d = it->second;
  if (created) d.device = f.device;
  if (d.state == DeviceState::Isolated) return std::nullopt;
  if (d.state == DeviceState::Warning && d.fault_id != 0 && !more_severe(f.level, d.level)) {
    return std::nullopt;  // the same or a milder incident: journaled, no new transition
  }
  d.fault_id = f.id;
  d.level = f.level;
  d.rule = f.rule;
  d.code = f.code;
  return move(d, DeviceState::Warning, f.rule, now);
}

std::optional<Transition> StateMachine::isolate(const std::string& device,
                                                const std::string& reason, int64_t fault_id,
                                                TimePoint now) {
  auto [it, created] = devices_.try_emplace(device);
  DeviceRecord& d = it->second;
  if (created) d.device = device;
  if (d.state == DeviceState::Isolated) return std::nullopt;
  if (d.fault_id == 0) {
    d.fault_id = fault_id;  // isolating a healthy device: the operator's request is the incident
    d.level = FaultLevel::ManuallySeparateNPU;
  }
  return move(d, DeviceState::Isolated, reason, now);
}

std::optional<Transition> StateMachine::clear(const std::string& device, const std::string& reason,
                                              TimePoint now) {
  auto it = devices_.find(device);
  if (it == devices_.end() || it->second.state == DeviceState::Healthy) return std::nullopt;
  Transition t = move(it->second, DeviceState::Healthy, reason, now);
  it->second.fault_id = 0;
  it->second.level = FaultLevel::NotHandleFault;
  it->second.rule.clear();
  it->second.code.clear();
  return t;
}

const DeviceRecord* StateMachine::find(const std::string& device) const {
  auto it = devices_.find(device);
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace faultd
