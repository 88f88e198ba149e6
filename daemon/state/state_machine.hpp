// The per-device state machine: healthy → warning → isolated, and back to healthy only by an
// operator's clear (or, later, a diagnosis verdict). Every change goes through one of the
// methods below, each of which returns the Transition it made; the app commits that transition
// to the store in the same transaction as its cause, then lets actions and metrics react.
//
// Pure logic: `now` comes in as a parameter, nothing here does I/O. If a commit fails the app
// reloads the machine from the store, which is the truth.
//
// Threading: app io thread only.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/types.hpp"
#include "daemon/state/store.hpp"

namespace faultd {

class StateMachine {
 public:
  // warn[level]: whether a finding of that level moves a healthy device to warning.
  using WarnTable = std::array<bool, kFaultLevelCount>;
  explicit StateMachine(WarnTable warn) : warn_(warn) {}

  void set_policy(WarnTable warn) { warn_ = warn; }
  void load(const std::vector<DeviceRecord>& devices);

  // A committed finding (f.id set). Healthy → warning when its level warns; a warning device
  // moves to a more severe incident (warning → warning with the new fault); an isolated device
  // stays isolated (the finding is still journaled by the caller).
  std::optional<Transition> on_finding(const Finding& f, TimePoint now);
  // The isolate action succeeded for the incident `fault_id`, or an operator isolated it.
  std::optional<Transition> isolate(const std::string& device, const std::string& reason,
                                    int64_t fault_id, TimePoint now);
  // An operator cleared the device: back to healthy from any state.
  std::optional<Transition> clear(const std::string& device, const std::string& reason,
                                  TimePoint now);

  const DeviceRecord* find(const std::string& device) const;
  const std::map<std::string, DeviceRecord>& devices() const { return devices_; }

 private:
  Transition move(DeviceRecord& d, DeviceState to, std::string reason, TimePoint now);
  WarnTable warn_;
  std::map<std::string, DeviceRecord> devices_;
};

}  // namespace faultd
