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
  if (d.fault_id != f.id) {
    d.acked = false;  // an acknowledgement is of one incident
    d.ack_reason.clear();
  }
  if (d.state == DeviceState::Healthy) d.incident_start = f.time;
  d.fault_id = f.id;
  d.level = f.level;
  d.rule = f.rule;
  d.code = f.code;
  d.source = f.source;
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
  if (d.state == DeviceState::Healthy) d.incident_start = now;
  return move(d, DeviceState::Isolated, reason, now);
}

std::optional<Transition> StateMachine::clear(const std::string& device, const std::string& reason,
                                              TimePoint now) {
  auto it = devices_.find(device);
  if (it == devices_.end()) return std::nullopt;
  return back_to_healthy(it->second, reason, now);
}

std::optional<Transition> StateMachine::back_to_healthy(DeviceRecord& d, const std::string& reason,
                                                        TimePoint now) {
  if (d.state == DeviceState::Healthy) return std::nullopt;
  Transition t = move(d, DeviceState::Healthy, reason, now);
  d.fault_id = 0;
  d.incident_start = {};
  d.level = FaultLevel::NotHandleFault;
  d.rule.clear();
  d.code.clear();
  d.source.clear();
  d.verdict.clear();
  d.acked = false;
  d.ack_reason.clear();
  return t;
}

std::optional<Transition> StateMachine::recover(const std::string& device, const std::string& code,
                                                const std::string& source,
                                                const std::string& reason, TimePoint now) {
  auto it = devices_.find(device);
  if (it == devices_.end() || it->second.state != DeviceState::Warning) return std::nullopt;
  DeviceRecord& d = it->second;
  if (!code.empty() && code != d.code) return std::nullopt;
  if (source != d.source) return std::nullopt;
  if (!recover_[static_cast<size_t>(d.level)]) return std::nullopt;
  return back_to_healthy(d, reason, now);
}

std::optional<Transition> StateMachine::release(const std::string& device, int64_t fault_id,
                                                const std::string& reason, TimePoint now) {
  auto it = devices_.find(device);
  if (it == devices_.end() || it->second.state != DeviceState::Warning ||
      it->second.fault_id != fault_id) {
    return std::nullopt;
  }
  return back_to_healthy(it->second, reason, now);
}

bool StateMachine::set_verdict(const std::string& device, const std::string& verdict) {
  auto it = devices_.find(device);
  if (it == devices_.end()) return false;
  it->second.verdict = verdict;
  return true;
}

bool StateMachine::acknowledge(const std::string& device, const std::string& reason) {
  auto it = devices_.find(device);
  if (it == devices_.end()) return false;
  it->second.acked = true;
  it->second.ack_reason = reason;
  return true;
}

const DeviceRecord* StateMachine::find(const std::string& device) const {
  auto it = devices_.find(device);
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace faultd
