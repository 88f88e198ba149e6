// Runs the operator's hooks for a fault, in order, exactly once: the action journal in the store
// is keyed by (action, device, fault), so a hook that succeeded never runs again for the same
// fault, across restarts too. Root actions (isolate) start when a transition asks for them;
// dependent actions (`after: isolate`: resume, diagnose) start when their parent succeeded and
// are skipped when it failed. Automatic isolations are limited per time window (blast radius):
// beyond the limit the isolate action is journaled as skipped and nothing runs. An operator's
// isolations are neither limited nor counted against that budget; they are counted apart.
// Whether an isolate hook's success isolates the device (and so unlocks its dependents) is the
// pipeline's decision: a dependent it journaled as skipped is never started here.
//
// At most `max_concurrent_hooks` hooks run at once; the others wait in a queue of journal ids
// (first come, first served) and stay `pending` in the journal with the reason in `detail`.
//
// Lifecycle: constructed by the app with the HookRunner and the Store; `configure()` on start
// and reload; `resume_journal()` once at start re-runs actions that were pending or running when
// the previous process died. A running one whose hook process outlived that faultd (pid and
// start time are journaled) is waited for, with the hook's timeout, then killed, before it runs
// again; the hook sees FAULTD_ATTEMPT > 1 then. `on_finished` reports every final outcome to the
// app, which updates state (isolate succeeded → isolated) and metrics.
//
// Threading: io thread only; hooks run asynchronously, so a slow hook never blocks reading.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/actions/hook_runner.hpp"
#include "daemon/core/clock.hpp"
#include "daemon/state/records.hpp"

namespace faultd {

class Store;

struct ActionConfig {
  std::string name;  // isolate, resume, diagnose, or any operator-chosen name
  HookSpec hook;
  std::string after;  // run only once this action succeeded for the same fault
};

struct ActionSettings {
  std::string node;
  bool dry_run = false;
  int max_isolations = 2;
  Duration isolation_window = std::chrono::hours(1);
  int max_concurrent_hooks = 16;  // more wait in a queue, journaled as pending
  std::map<std::string, ActionConfig> actions;
};

inline constexpr const char* kIsolateAction = "isolate";
inline constexpr const char* kDiagnoseAction = "diagnose";
inline constexpr const char* kClearAction = "clear";
// The rule of the fault an operator's `faultctl isolate` journals: how a restart tells the
// operator's isolations from the policy's in the action journal.
inline constexpr const char* kOperatorIsolateRule = "operator.isolate";

class ActionManager {
 public:
  // `result` is null when the action did not run (skipped).
  using OnFinished = std::function<void(const ActionRecord& record, const HookResult* result)>;

  ActionManager(HookRunner& runner, Store& store, const Clock& clock, OnFinished on_finished);

  void configure(ActionSettings settings);
  // Starts `actions` (root actions) for the committed fault. `by_operator`: an operator's
  // explicit request is not a storm, so an isolation neither waits for the blast-radius budget
  // nor spends it (it is counted apart).
  void start(const std::vector<std::string>& actions, const Finding& fault, bool by_operator);
  // Re-runs journaled actions that never finished (the process died while they were pending or
  // running). Succeeded actions are never touched.
  void resume_journal();
  size_t in_flight() const { return running_ids_.size(); }
  size_t queued() const { return queue_.size(); }
  // Automatic isolations started within the window (the budget and its metric), and the
  // operator's, which the budget does not count.
  int isolations_in_window() const;
  int operator_isolations_in_window() const;

 private:
  // `rerun`: a run left by the previous process, counted when it first started.
  void launch(const ActionConfig& action, const Finding& fault, bool by_operator,
              std::optional<ProcessIdentity> survivor = std::nullopt, bool rerun = false);
  void start_queued();
  void finish(ActionRecord record, const HookResult* result, const Finding& fault);
  void start_dependents(const std::string& parent, const Finding& fault, bool parent_ok);
  bool isolation_budget_left() const;
  void save_success(const ActionRecord& rec);
  void save(const ActionRecord& rec);
  HookInput hook_input(const ActionConfig& action, const Finding& fault, int attempt) const;

  HookRunner& runner_;
  Store& store_;
  const Clock& clock_;
  OnFinished on_finished_;
  ActionSettings settings_;
  std::deque<TimePoint> isolation_starts_;           // automatic ones: the budget
  std::deque<TimePoint> operator_isolation_starts_;  // shown beside it, never limiting
  bool seeded_ = false;                              // isolation_starts_ loaded from the journal
  std::set<int64_t> running_ids_;                    // action journal ids with a hook under way
  struct Queued {
    int64_t action_id;
    std::string action;
    int64_t fault_id;
    bool by_operator;
  };
  std::deque<Queued> queue_;  // waiting for a free slot (max_concurrent_hooks)
  std::set<int64_t> queued_ids_;
};

}  // namespace faultd
