// The decision pipeline: everything that happens after matching, in one place.
//
// clang-format off
//   findings ──┐
//   tick ──────┤             Lifecycle ──▶ StateMachine      ┌─▶ Step.transitions
//   operator ──┼─▶ Pipeline  (grouping,    (healthy, warning, ┼─▶ Step.actions (hooks to start)
//   alert ─────┤             escalation,   isolated)          └─▶ Step.journaled, grouped, ...
//   hook done ─┘             storms)           │
//                                              └─ one Store::Txn per input
// clang-format on
//
// Each input is judged once and committed in one transaction (findings, the incidents they
// touched, the transitions, the actions those transitions ask for, the read position), and comes
// back as one Step: what changed and what to do about it. The caller applies the Step (metrics,
// logs, starting hooks); the policy (which level warns, which actions a level runs, what a
// diagnosis verdict does) is looked up here and nowhere else.
//
// Store failures have one policy (in_txn): nothing of the input is kept, the error is counted
// and logged once, the in-memory state is reloaded from the store (the truth), and the Step says
// so (`store_error`): a chunk is then read again, an alert answered 503, an operator told.
//
// The device states are published as a snapshot after every committed change (DeviceView), which
// the exporter reads at scrape time.
//
// Pure of I/O other than the store: `now` comes from the Clock it is given, hooks are started by
// the caller from Step.actions. Threading: io thread only (DeviceView is the exception).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/core/clock.hpp"
#include "daemon/core/types.hpp"
#include "daemon/state/device_view.hpp"
#include "daemon/state/lifecycle.hpp"
#include "daemon/state/state_machine.hpp"
#include "daemon/state/store.hpp"

namespace faultd {

// Hooks to start for a committed fault.
struct ActionRequest {
  std::vector<std::string> actions;
  Finding fault;  // committed (id set)
  // An operator's explicit request (or the cluster's, for an action other than isolate):
  // neither limited by the isolation budget nor counted in it.
  bool by_operator = false;
};

// What one input changed, once committed.
struct Step {
  std::vector<Transition> transitions;
  std::vector<ActionRequest> actions;
  std::vector<Finding> journaled;  // new journal rows (faults and recoveries)
  std::vector<Finding> grouped;    // counted into an open incident
  std::vector<Finding> shadow;     // a shadow rule's findings: counted, nothing else
  std::vector<Finding> storms;     // node-level incidents opened
  // Rules of findings folded into a device's kTooManyCodes incident (daemon/state/lifecycle.hpp),
  // and findings judged as no storm because their storm window could not be kept.
  std::vector<std::string> folded;
  uint64_t storms_refused = 0;
  // Findings that name a device outside the node's inventory (with no inventory: past the first
  // ids named, see kMaxDevicesWithoutInventory): counted (rule), nothing done. Those journaled
  // (rate-limited per rule and id) are in `outside_journaled` too.
  std::vector<std::string> outside;
  std::vector<Finding> outside_journaled;
  bool inventory_changed = false;  // a discovery changed the inventory
  std::vector<FaultLevel> escalations;
  std::optional<std::string> verdict;  // a diagnosis verdict: passed, faulty, unavailable
  int64_t fault_id = 0;    // the journal row an operator's or alert's request created or found
  bool duplicate = false;  // the request was journaled before (an alert repeated): nothing done
  size_t open_incidents = 0;
  // An isolate hook succeeded but its result did not apply (the device left that fault, or an
  // operator decided, while it ran): why, as journaled on the action; and the dependents that
  // were journaled as skipped instead of starting.
  std::string ignored;
  std::vector<ActionRecord> skipped;
  std::string refused;      // the request was refused, nothing changed (why)
  std::string store_error;  // the store failed: nothing was committed (why)
  bool committed() const { return store_error.empty() && refused.empty(); }
};

class Pipeline {
 public:
  Pipeline(Store& store, const Clock& clock);

  // The policy, actions and rules in force (at start and on every reload).
  void configure(const Config& config);
  // Loads device states and recent incidents from the store. Throws StoreError.
  void load();

  // Findings of one read buffer (or of the detectors' tick), with the read position that
  // produced them (null: none). The step's store_error says the chunk must be offered again.
  Step record(std::vector<Finding>& findings, const ReadPosition* position);
  // Time-based lifecycle changes: duration escalations and releases.
  Step tick();

  // A discoverer's successful run: the inventory is merged and stored; a device it no longer
  // lists is a `device.lost` finding, one it lists again a recovery of it.
  Step discovered(const Discovery& discovery);
  // The canonical id of a device an operator or the cluster names: an alias resolved, a device
  // with a state kept as it is; nothing when the inventory is known and names no such device.
  std::optional<std::string> device_of(const std::string& name) const;
  const Inventory& inventory() const { return inventory_; }

  // An operator's requests (faultctl). The device id and reason are validated by the caller.
  Step isolate(const std::string& device, const std::string& reason);
  Step clear(const std::string& device, const std::string& reason);
  Step acknowledge(const std::string& device, const std::string& reason);

  // The cluster's requests (Alertmanager). `alert` is the alert's own finding (rule, device,
  // level, code, text, and an identity unique to the alert's firing): journaled once, so a
  // repeated alert does nothing (Step.duplicate).
  Step isolate_by_alert(Finding alert);
  // Runs `action` for the device's open incident; refused when it has none.
  Step run_action(const std::string& device, const std::string& action);

  // A hook finished: an isolation that succeeded isolates the device, if the device has held
  // that fault since the hook started and nobody else isolated or cleared it meanwhile;
  // otherwise the result is journaled as ignored, the isolate's dependents as skipped, and
  // `clear` runs for a device that went back to healthy. A diagnosis verdict releases the
  // device or marks it for repair.
  Step on_action_finished(const ActionRecord& record);

  const DeviceRecord* find(const std::string& device) const { return machine_.find(device); }
  const std::map<std::string, DeviceRecord>& devices() const { return machine_.devices(); }
  const std::shared_ptr<DeviceView>& device_view() const { return view_; }

 private:
  template <typename Fn>
  Step in_txn(const std::string& what, Fn&& fn);
  void reload();
  void judge(Store::Txn& txn, Finding& f, Step& step);
  // Resolves each finding's device through the inventory; takes out those naming a device
  // outside it (journaling a few of them, see OutsideLimit).
  void bound_by_inventory(Store::Txn& txn, std::vector<Finding>& findings, Step& step);
  bool admit_without_inventory(const std::string& device);
  void publish();
  void apply(Store::Txn& txn, const Transition& t, const Finding* cause, Step& step);
  Step on_diagnosis(const ActionRecord& record);
  struct Override {
    std::string why;       // empty: the isolate result applies
    bool cleared = false;  // the device went back to healthy since the hook started
  };
  Override isolation_override(const ActionRecord& record) const;
  void ignore_isolation(Store::Txn& txn, const ActionRecord& record, const Override& o, Step& step);

  Store& store_;
  const Clock& clock_;
  StateMachine machine_;
  Lifecycle lifecycle_;
  PolicyConfig policy_;
  std::set<std::string> actions_;                               // configured action names
  std::map<std::string, std::vector<std::string>> dependents_;  // action → those `after` it
  Inventory inventory_;
  FaultLevel lost_level_ = FaultLevel::SeparateNPU;
  // When a finding outside the inventory was last journaled, per (rule, device); bounded.
  std::map<std::pair<std::string, std::string>, TimePoint> outside_journaled_;
  std::vector<TimePoint> outside_recent_;          // journal times in the last minute, all devices
  std::set<std::string> named_without_inventory_;  // admitted ids without a state; bounded
  std::shared_ptr<DeviceView> view_ = std::make_shared<DeviceView>();
};

}  // namespace faultd
