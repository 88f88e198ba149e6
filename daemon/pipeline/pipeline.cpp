#include "daemon/pipeline/pipeline.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/actions/action_manager.hpp"

namespace faultd {
namespace {

StateMachine::WarnTable level_table(const PolicyConfig& p, bool LevelPolicy::*flag) {
  StateMachine::WarnTable w{};
  for (size_t i = 0; i < w.size(); ++i) w[i] = p.levels[i].*flag;
  return w;
}

LifecycleSettings lifecycle_settings(const Config& c) {
  LifecycleSettings s;
  s.incident_ttl = c.policy.incident_ttl;
  s.storm = c.policy.storm;
  s.frequency = c.policy.escalations;
  s.duration = c.policy.duration_escalations;
  s.correlations = c.policy.correlations;
  for (const auto& id : c.rules->shadow_rule_ids()) s.shadow_rules.insert(id);
  return s;
}

// A collective's culprit or victim is read with its device's own recent findings beside it:
// "rank 5 is NPU 5, which logged 80818C00 eleven minutes earlier" (docs/detection.md, "The
// culprit of a collective timeout"). The rules are the collectives pack's.
void join_recent_findings(const Store& store, Finding& f, TimePoint now) {
  if ((f.rule != "collective.culprit" && f.rule != "collective.victim") || f.device.empty()) {
    return;
  }
  FaultQuery q;
  q.device = f.device;
  q.since = now - std::chrono::hours(1);
  q.limit = 8;
  std::string recent;
  size_t listed = 0;
  for (const Finding& p : store.query_faults(q)) {
    if (p.rule.rfind("collective.", 0) == 0 || listed == 5) continue;
    const auto ago = std::chrono::duration_cast<std::chrono::minutes>(now - p.time).count();
    if (!recent.empty()) recent += "; ";
    recent += p.rule + " (" + std::string(to_string(p.level)) +
              (p.code.empty() ? "" : " " + p.code) + ", #" + std::to_string(p.id) + ") " +
              std::to_string(ago) + "m ago";
    ++listed;
  }
  f.annotations.emplace_back("recent",
                             recent.empty() ? "no other finding in the last hour" : recent);
}

// How far back incidents are loaded: the longest window any escalation counts over.
Duration lifecycle_memory(const PolicyConfig& p) {
  Duration keep = p.incident_ttl;
  for (const auto& e : p.escalations) keep = std::max({keep, e.window, e.release});
  return keep;
}

// The journal row of a node-level storm: `f` tipped it; its id makes the row unique.
Finding storm_finding(const Finding& f, const Incident& storm) {
  Finding node;
  node.rule = "node.storm";
  node.source = "faultd";
  node.level = f.level;
  node.code = f.code;
  node.file = signature_of(f.rule, f.code);
  node.identity.ino = static_cast<uint64_t>(f.id);
  node.time = node.noticed = f.time;
  node.text = storm.note;
  return node;
}

// Findings outside the inventory: each (rule, device) is journaled at most once per window, and
// all of them together at most kOutsideJournalPerMinute times a minute; the map of what was
// journaled holds at most kOutsideKeys entries. The rest is only counted.
constexpr auto kOutsideWindow = std::chrono::minutes(10);
constexpr size_t kOutsideJournalPerMinute = 30;
constexpr size_t kOutsideKeys = 4096;
// With no inventory (no discoverer answered, none configured), the first this many device ids
// named (those with a state included) stand for the node's devices; findings naming others are
// taken out as outside the inventory (security audit F6: a log writer's forged ids would each
// add metric series and state).
constexpr size_t kMaxDevicesWithoutInventory = 64;

// The journal row of a device a discoverer no longer lists, or lists again (a recovery).
Finding inventory_finding(const std::string& device, const std::string& by, bool returned,
                          FaultLevel level, TimePoint now) {
  Finding f;
  f.rule = returned ? "device.returned" : "device.lost";
  f.source = std::string(kInventorySource);
  f.device = device;
  f.level = level;
  f.code = "DEVICE_LOST";
  f.recovery = returned;
  f.file = by;
  f.time = f.noticed = now;
  f.text = returned ? "device " + device + " is listed by " + by + " again"
                    : "device " + device + " is no longer listed by " + by;
  return f;
}

}  // namespace

Pipeline::Pipeline(Store& store, const Clock& clock)
    : store_(store), clock_(clock), machine_(StateMachine::WarnTable{}) {}

void Pipeline::configure(const Config& config) {
  policy_ = config.policy;
  actions_.clear();
  dependents_.clear();
  for (const auto& [name, a] : config.actions) {
    actions_.insert(name);
    if (!a.after.empty()) dependents_[a.after].push_back(name);
  }
  machine_.set_policy(level_table(policy_, &LevelPolicy::warn));
  machine_.set_recoverable(level_table(policy_, &LevelPolicy::recover));
  lifecycle_.configure(lifecycle_settings(config));
  inventory_.set_expected(config.inventory.expected_devices);
  lost_level_ = config.inventory.lost_level;
}

void Pipeline::load() {
  machine_.load(store_.load_devices());
  // Bounded whatever the store holds: the open incidents the caps allow, with room for the
  // folded ones, and the closed ones the lifecycle would keep.
  lifecycle_.load(store_.load_incidents(clock_.now() - lifecycle_memory(policy_),
                                        2 * lifecycle_.settings().limits.open,
                                        Lifecycle::kMaxKeptIncidents));
  inventory_.load(store_.load_inventory());
  publish();
}

void Pipeline::publish() { view_->publish(machine_.devices(), inventory_); }

void Pipeline::reload() {
  try {
    load();
  } catch (const StoreError& e) {
    spdlog::error("state store: cannot reload the state: {}", e.what());
  }
}

// One transaction for one input, and the one store-failure policy: nothing of the input is
// kept, and memory goes back to what the store holds.
template <typename Fn>
Step Pipeline::in_txn(const std::string& what, Fn&& fn) {
  Step step;
  try {
    Store::Txn txn(store_);
    fn(txn, step);
    for (const auto& i : lifecycle_.take_dirty()) txn.save_incident(i);
    txn.commit();
  } catch (const StoreError& e) {
    spdlog::error("state store: {}: {}", what, e.what());
    Step failed;
    failed.store_error = what + ": " + e.what();
    reload();
    return failed;
  }
  step.open_incidents = lifecycle_.open_count();
  step.storms_refused = lifecycle_.take_storm_refusals();
  publish();
  return step;
}

// A transition inside the input's transaction, with what it asks for: the actions of its
// level's policy (journaled with it, so a kill before the hooks start does not forget them), or
// undoing an isolation in the cluster when an isolated device is cleared.
void Pipeline::apply(Store::Txn& txn, const Transition& t, const Finding* cause, Step& step) {
  txn.apply_transition(t);
  step.transitions.push_back(t);
  if (t.to == DeviceState::Warning && t.fault_id != 0 && cause != nullptr) {
    const auto& wanted = policy_.levels[static_cast<size_t>(t.level)].actions;
    for (const auto& name : wanted) {
      if (actions_.count(name) != 0) txn.journal_action(name, t.device, t.fault_id, t.time);
    }
    if (!wanted.empty()) step.actions.push_back({wanted, *cause, /*by_operator=*/false});
  }
  // Keyed by the isolating incident, so the clear action runs once per isolation.
  if (t.from == DeviceState::Isolated && t.to == DeviceState::Healthy && t.fault_id != 0 &&
      actions_.count(kClearAction) != 0) {
    if (auto incident = store_.find_fault(t.fault_id)) {
      step.actions.push_back({{kClearAction}, *incident, /*by_operator=*/true});
    }
  }
}

Step Pipeline::record(std::vector<Finding>& findings, const ReadPosition* position) {
  const std::string what = "cannot record " + std::to_string(findings.size()) +
                           " finding(s) from " +
                           (position != nullptr ? position->path : std::string("detectors")) +
                           "; they will be read again";
  return in_txn(what, [&](Store::Txn& txn, Step& step) {
    bound_by_inventory(txn, findings, step);
    for (auto& f : findings) join_recent_findings(store_, f, clock_.now());
    lifecycle_.anticipate(findings);  // a storm arriving at once isolates none of its devices
    for (auto& f : findings) judge(txn, f, step);
    if (position != nullptr) txn.save_position(*position);
  });
}

// A device id named while no inventory is known: one of the first kMaxDevicesWithoutInventory.
bool Pipeline::admit_without_inventory(const std::string& device) {
  if (machine_.find(device) != nullptr || named_without_inventory_.count(device) != 0) return true;
  if (named_without_inventory_.size() + machine_.devices().size() >= kMaxDevicesWithoutInventory) {
    return false;
  }
  named_without_inventory_.insert(device);
  return true;
}

void Pipeline::bound_by_inventory(Store::Txn& txn, std::vector<Finding>& findings, Step& step) {
  const TimePoint now = clock_.now();
  std::erase_if(outside_recent_, [&](TimePoint t) { return t < now - std::chrono::minutes(1); });
  std::erase_if(findings, [&](Finding& f) {
    if (f.device.empty()) return false;
    if (!inventory_.known()) {
      if (admit_without_inventory(f.device)) return false;
    } else if (auto id = inventory_.resolve(f.device)) {
      f.device = *id;
      const InventoryDevice* d = inventory_.find(*id);
      f.serial = !d->serial.empty() ? d->serial : d->uuid;
      return false;
    } else if (machine_.find(f.device) != nullptr) {
      return false;  // a device with a state already
    }
    step.outside.push_back(f.rule);
    auto key = std::make_pair(f.rule, f.device);
    const auto last = outside_journaled_.find(key);
    if ((last != outside_journaled_.end() && now - last->second < kOutsideWindow) ||
        outside_recent_.size() >= kOutsideJournalPerMinute) {
      return true;
    }
    if (outside_journaled_.size() >= kOutsideKeys) outside_journaled_.clear();
    outside_journaled_[std::move(key)] = now;
    outside_recent_.push_back(now);
    f.annotations.emplace_back(
        "inventory", inventory_.known() ? "not a device of this node: recorded, nothing done"
                                        : "no inventory, and more than " +
                                              std::to_string(kMaxDevicesWithoutInventory) +
                                              " device ids named: recorded, nothing done");
    if (txn.insert_finding(f)) step.outside_journaled.push_back(f);
    return true;
  });
}

Step Pipeline::discovered(const Discovery& discovery) {
  const TimePoint now = clock_.now();
  return in_txn(
      "inventory from " + discovery.by + " not recorded", [&](Store::Txn& txn, Step& step) {
        const InventoryChange change = inventory_.merge(discovery, now);
        for (const auto& d : change.changed) txn.save_inventory_device(d);
        for (const auto& id : change.removed) txn.remove_inventory_device(id);
        step.inventory_changed = !change.changed.empty() || !change.removed.empty();
        std::vector<Finding> findings;
        for (const auto& id : change.lost) {
          findings.push_back(inventory_finding(id, discovery.by, false, lost_level_, now));
        }
        for (const auto& id : change.returned) {
          findings.push_back(inventory_finding(id, discovery.by, true, lost_level_, now));
        }
        lifecycle_.anticipate(findings);
        for (auto& f : findings) {
          const InventoryDevice* d = inventory_.find(f.device);
          if (d != nullptr) f.serial = !d->serial.empty() ? d->serial : d->uuid;
          judge(txn, f, step);
        }
      });
}

std::optional<std::string> Pipeline::device_of(const std::string& name) const {
  if (auto id = inventory_.resolve(name)) return id;
  if (!inventory_.known() || machine_.find(name) != nullptr) return name;
  return std::nullopt;
}

// One finding through the lifecycle (grouping, storms, escalation, recovery, shadow) and the
// state machine.
void Pipeline::judge(Store::Txn& txn, Finding& f, Step& step) {
  const auto d = lifecycle_.decide(f, f.time);
  using Kind = Lifecycle::Kind;
  if (d.folded) step.folded.push_back(f.rule);
  if (d.kind == Kind::Grouped) {
    step.grouped.push_back(f);
    return;
  }
  if (d.folded) {
    f.annotations.emplace_back("lifecycle", std::string(kTooManyCodes) +
                                                ": too many open incidents of this rule on this "
                                                "device; its further codes are counted in one");
  }
  if (!txn.insert_finding(f)) return;  // journaled before: a re-read after a crash
  switch (d.kind) {
    case Kind::Shadow:
      step.shadow.push_back(f);
      return;
    case Kind::Recovery:
      if (auto t = machine_.recover(f.device, f.code, f.source, "recovered: " + f.rule, f.time)) {
        apply(txn, *t, nullptr, step);
      }
      break;
    case Kind::Storm:
      if (d.storm_started) {
        Finding node = storm_finding(f, *d.storm_started);
        txn.insert_finding(node);
        Incident storm = *d.storm_started;
        storm.id = node.id;
        storm.count = 1;
        lifecycle_.storm_recorded(f, storm);
        step.storms.push_back(node);
      }
      break;
    case Kind::NewIncident: {
      lifecycle_.opened(f, d);
      if (d.folded) {  // once per (device, rule) and TTL
        spdlog::warn("device {}: incident {} ({}): {}", f.device, f.id, kTooManyCodes,
                     lifecycle_.find(f.id)->note);
      }
      Finding effective = f;
      effective.level = d.level;
      effective.code = d.code;
      if (!d.escalation.empty()) step.escalations.push_back(d.level);
      if (auto t = machine_.on_finding(effective, f.time)) {
        if (!d.escalation.empty()) t->reason = f.rule + " (" + d.escalation + ")";
        apply(txn, *t, &f, step);
      }
      break;
    }
    case Kind::Evidence:
      if (d.raised) {
        if (auto first = store_.find_fault(d.incident)) {
          first->level = d.level;
          step.escalations.push_back(d.level);
          if (auto t = machine_.on_finding(*first, f.time)) {
            t->reason = first->rule + " (" + d.escalation + ")";
            apply(txn, *t, &*first, step);
          }
        }
      }
      break;
    case Kind::NoDevice:
    case Kind::Grouped:
      break;
  }
  step.journaled.push_back(f);
}

Step Pipeline::tick() {
  const TimePoint now = clock_.now();
  return in_txn("lifecycle update failed", [&](Store::Txn& txn, Step& step) {
    for (const auto& i : lifecycle_.tick(now)) {
      if (!i.open) {
        if (auto t = machine_.release(i.device, i.id, "released: " + i.note, now)) {
          apply(txn, *t, nullptr, step);
        }
      } else if (auto f = store_.find_fault(i.id)) {
        f->level = i.level;
        step.escalations.push_back(i.level);
        if (auto t = machine_.on_finding(*f, now)) {
          t->reason = i.rule + " (" + i.escalation + ")";
          apply(txn, *t, &*f, step);
        }
      }
    }
  });
}

Step Pipeline::isolate(const std::string& device, const std::string& reason) {
  // The operator's request is journaled as a fault of its own: it is the incident the isolate
  // hook runs for, and its id is the hook's idempotence key.
  Finding f;
  f.rule = kOperatorIsolateRule;
  f.source = "faultctl";
  f.device = device;
  f.level = FaultLevel::ManuallySeparateNPU;
  f.time = clock_.now();
  f.offset = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(f.time.time_since_epoch()).count());
  f.text = "operator: " + reason;
  return in_txn("operator isolate not recorded", [&](Store::Txn& txn, Step& step) {
    txn.insert_finding(f);
    if (auto t = machine_.isolate(device, f.text, f.id, f.time)) {
      apply(txn, *t, nullptr, step);
      step.fault_id = f.id;
      if (actions_.count(kIsolateAction) != 0) {
        step.actions.push_back({{kIsolateAction}, f, /*by_operator=*/true});
      }
    }
  });
}

Step Pipeline::clear(const std::string& device, const std::string& reason) {
  return in_txn("clear not recorded", [&](Store::Txn& txn, Step& step) {
    if (auto t = machine_.clear(device, reason, clock_.now())) apply(txn, *t, nullptr, step);
  });
}

Step Pipeline::acknowledge(const std::string& device, const std::string& reason) {
  const DeviceRecord* d = machine_.find(device);
  if (d == nullptr || d->state == DeviceState::Healthy) {
    Step refused;
    refused.refused = "device " + device + " has no incident to acknowledge";
    return refused;
  }
  return in_txn("acknowledgement not recorded", [&](Store::Txn& txn, Step& step) {
    machine_.acknowledge(device, reason);
    const DeviceRecord* acked = machine_.find(device);
    txn.mark_device(*acked);
    step.fault_id = acked->fault_id;
  });
}

// An isolation requested by the cluster goes through the same journal, state machine, policy
// and budget as a local finding.
Step Pipeline::isolate_by_alert(Finding alert) {
  return in_txn("alert not recorded", [&](Store::Txn& txn, Step& step) {
    if (!txn.insert_finding(alert)) {
      step.duplicate = true;
      step.fault_id = alert.id;
      return;
    }
    step.fault_id = alert.id;
    if (auto t = machine_.on_finding(alert, alert.time)) apply(txn, *t, &alert, step);
    step.journaled.push_back(alert);
    const DeviceRecord* d = machine_.find(alert.device);
    if (d == nullptr || d->state != DeviceState::Isolated) {
      // A no-op when the level's policy already asked for it (the journal keys the hook).
      step.actions.push_back({{kIsolateAction}, alert, /*by_operator=*/false});
    }
  });
}

Step Pipeline::run_action(const std::string& device, const std::string& action) {
  Step step;
  if (actions_.count(action) == 0) {
    step.refused = "action not configured";
    return step;
  }
  const DeviceRecord* d = machine_.find(device);
  std::optional<Finding> incident;
  try {
    if (d != nullptr && d->fault_id != 0) incident = store_.find_fault(d->fault_id);
  } catch (const StoreError& e) {
    step.store_error = e.what();
    return step;
  }
  if (!incident) {
    step.refused = "the device has no open incident to " + action;
    return step;
  }
  step.fault_id = incident->id;
  step.actions.push_back({{action}, *incident, /*by_operator=*/true});
  return step;
}

Step Pipeline::on_action_finished(const ActionRecord& record) {
  if (policy_.dry_run) return {};
  if (record.action == kDiagnoseAction) return on_diagnosis(record);
  if (record.action != kIsolateAction || record.status != ActionStatus::Success) return {};
  return in_txn("device " + record.device + " isolated, but not recorded",
                [&](Store::Txn& txn, Step& step) {
                  const Override o = isolation_override(record);
                  if (!o.why.empty()) {
                    ignore_isolation(txn, record, o, step);
                  } else if (auto t = machine_.isolate(record.device, "action isolate succeeded",
                                                       record.fault_id, clock_.now())) {
                    apply(txn, *t, nullptr, step);
                  }
                });
}

// An isolate hook's success applies only to the device as the hook found it: still not healthy,
// and moved since the hook started by nothing but the hook's fault's own escalation. A clear (by
// an operator, the cluster, a recovery or a release), another isolation or another incident in
// between is a later decision, and it wins. The device need not hold the hook's fault itself: the
// cluster's isolation request is a fault of its own for a device whose incident is another one.
// The transition journal says what happened while the hook ran, across a restart too.
Pipeline::Override Pipeline::isolation_override(const ActionRecord& record) const {
  constexpr size_t kLookBack = 1000;  // transitions of one device while one hook ran
  Override o;
  std::optional<Transition> first;  // the earliest change the hook's fault did not make
  for (const auto& t : store_.query_transitions(record.device, kLookBack)) {
    if (t.time < record.started) break;
    if (t.to == DeviceState::Healthy) o.cleared = true;
    if (t.to != DeviceState::Warning || t.fault_id != record.fault_id) first = t;
  }
  const DeviceRecord* d = machine_.find(record.device);
  const bool holds = d != nullptr && d->state != DeviceState::Healthy;
  if (!first && holds) return o;
  if (d == nullptr || d->state == DeviceState::Healthy) o.cleared = true;
  const std::string fault = "fault " + std::to_string(record.fault_id);
  if (!first) {
    o.why = "device " + record.device + " no longer holds " + fault;
  } else if (first->to == DeviceState::Healthy) {
    o.why = "device " + record.device + " went back to healthy at " + format_time(first->time) +
            " (" + first->reason + ") while the hook ran";
  } else if (first->to == DeviceState::Isolated) {
    o.why = "device " + record.device + " was isolated at " + format_time(first->time) + " (" +
            first->reason + ") while the hook ran";
  } else {
    o.why = "device " + record.device + " moved on to fault " + std::to_string(first->fault_id) +
            " at " + format_time(first->time) + " while the hook ran";
  }
  return o;
}

// The ignored result is journaled on the isolate's own row, its dependents (journaled pending
// with its success) are skipped, so neither this process nor a restart starts them, and a device
// that is not isolated now gets the cluster-side isolation undone by `clear`.
void Pipeline::ignore_isolation(Store::Txn& txn, const ActionRecord& record, const Override& o,
                                Step& step) {
  const TimePoint now = clock_.now();
  step.ignored = "result ignored: " + o.why;
  if (record.id != 0) {
    ActionRecord journaled = record;
    journaled.detail = step.ignored;
    txn.update_action(journaled);
  }
  const auto dependents = dependents_.find(record.action);
  if (dependents != dependents_.end()) {
    for (const auto& name : dependents->second) {
      ActionRecord dep = txn.journal_action(name, record.device, record.fault_id, now);
      if (dep.status != ActionStatus::Pending) continue;
      dep.status = ActionStatus::Skipped;
      dep.detail = "'" + record.action + "' " + step.ignored;
      dep.finished = now;
      txn.update_action(dep);
      step.skipped.push_back(dep);
    }
  }
  const DeviceRecord* d = machine_.find(record.device);
  if (o.cleared && (d == nullptr || d->state != DeviceState::Isolated) &&
      actions_.count(kClearAction) != 0) {
    if (auto fault = store_.find_fault(record.fault_id)) {
      step.actions.push_back({{kClearAction}, *fault, /*by_operator=*/true});
    }
  }
}

// The diagnose hook's verdict (the vendor stress test): exit 0 = the device passed, so the cause
// is suspected in software and the device is released per policy; exit 1 = the device is faulty
// and stays isolated, marked for repair; exit 2 (no tool) or anything else = no verdict.
Step Pipeline::on_diagnosis(const ActionRecord& record) {
  std::string verdict;
  if (record.status == ActionStatus::Success) {
    verdict = "passed";
  } else if (record.status == ActionStatus::Failure && record.exit_code == 1) {
    verdict = "faulty";
  } else {
    spdlog::warn("device {}: no diagnosis verdict ({}, exit {})", record.device,
                 to_string(record.status), record.exit_code);
    Step step;
    step.verdict = "unavailable";
    return step;
  }
  const DeviceRecord* d = machine_.find(record.device);
  if (d == nullptr || d->fault_id != record.fault_id) {
    spdlog::info("device {}: diagnosis {} for an incident that is over; nothing changes",
                 record.device, verdict);
    Step step;
    step.verdict = verdict;
    return step;
  }
  Step step;
  if (verdict == "passed" && policy_.release_on_diagnosis_pass) {
    step = clear(record.device, "diagnosis passed: a software cause is suspected");
  } else {
    step = in_txn("diagnosis " + verdict + " not recorded", [&](Store::Txn& txn, Step&) {
      machine_.set_verdict(record.device, verdict);
      txn.mark_device(*machine_.find(record.device));
    });
    if (step.committed()) {
      spdlog::warn("device {}: diagnosis {}{}", record.device, verdict,
                   verdict == "faulty" ? ": stays isolated, marked for repair" : "");
    }
  }
  step.verdict = verdict;
  return step;
}

}  // namespace faultd
