// The per-device state machine: healthy → warning → isolated. Back to healthy: from warning by a
// recovery the source reports (when the level's policy allows) or a release after an escalation
// window; from any state by an operator's clear or a passing diagnosis. Never silently. Every
// change goes through one of the methods below, each of which returns the Transition it made; the
// app commits that transition to the store in the same transaction as its cause, then lets actions
// and metrics react.
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
#include "daemon/state/records.hpp"

namespace faultd {

class StateMachine {
 public:
  // warn[level]: whether a finding of that level moves a healthy device to warning.
  using WarnTable = std::array<bool, kFaultLevelCount>;
  explicit StateMachine(WarnTable warn) : warn_(warn) {}

  void set_policy(WarnTable warn) { warn_ = warn; }
  // recover[level]: whether a recovery moves a device in warning at that level back to healthy.
  void set_recoverable(WarnTable recover) { recover_ = recover; }
  void load(const std::vector<DeviceRecord>& devices);

  // A committed finding (f.id set). Healthy → warning when its level warns; a warning device
  // moves to a more severe incident (warning → warning with the new fault); an isolated device
  // stays isolated (the finding is still journaled by the caller).
  std::optional<Transition> on_finding(const Finding& f, TimePoint now);
  // The isolate action succeeded for the incident `fault_id`, or an operator isolated it.
  std::optional<Transition> isolate(const std::string& device, const std::string& reason,
                                    int64_t fault_id, TimePoint now);
  // An operator cleared the device, or a diagnosis passed: back to healthy from any state.
  std::optional<Transition> clear(const std::string& device, const std::string& reason,
                                  TimePoint now);
  // `source` reports `device` recovered from `code` (from everything when empty): a device in
  // warning for that code, raised by that same source, goes back to healthy if its level's
  // policy allows. Isolated stays; a recovery from another source changes nothing.
  std::optional<Transition> recover(const std::string& device, const std::string& code,
                                    const std::string& source, const std::string& reason,
                                    TimePoint now);
  // The incident `fault_id` was released (no occurrence within its window): a device held in
  // warning by it goes back to healthy.
  std::optional<Transition> release(const std::string& device, int64_t fault_id,
                                    const std::string& reason, TimePoint now);
  // Marks that are not states: the last diagnosis verdict, an operator's acknowledgement.
  // Return false when the device is unknown.
  bool set_verdict(const std::string& device, const std::string& verdict);
  bool acknowledge(const std::string& device, const std::string& reason);

  const DeviceRecord* find(const std::string& device) const;
  const std::map<std::string, DeviceRecord>& devices() const { return devices_; }

 private:
  Transition move(DeviceRecord& d, DeviceState to, std::string reason, TimePoint now);
  std::optional<Transition> back_to_healthy(DeviceRecord& d, const std::string& reason,
                                            TimePoint now);
  WarnTable warn_;
  WarnTable recover_{true, true, true, true, true, true, true, true, true};
  std::map<std::string, DeviceRecord> devices_;
};

}  // namespace faultd
