#include "daemon/actions/action_manager.hpp"

#include "daemon/state/store.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/core/child_process.hpp"
#include "daemon/core/json.hpp"

namespace faultd {

ActionManager::ActionManager(HookRunner& runner, Store& store, const Clock& clock,
                             OnFinished on_finished)
    : runner_(runner), store_(store), clock_(clock), on_finished_(std::move(on_finished)) {}

void ActionManager::configure(ActionSettings settings) {
  settings_ = std::move(settings);
  if (seeded_) return;
  seeded_ = true;
  // The blast-radius window survives restarts: seed it from the journal. An isolation's fault
  // says who asked for it.
  const TimePoint since = clock_.now() - settings_.isolation_window;
  for (const auto& a : store_.query_actions("", 10'000)) {
    if (a.action == kIsolateAction && a.status != ActionStatus::Skipped &&
        a.status != ActionStatus::Pending && a.started >= since) {
      const auto fault = store_.find_fault(a.fault_id);
      const bool by_operator = fault && fault->rule == kOperatorIsolateRule;
      (by_operator ? operator_isolation_starts_ : isolation_starts_).push_front(a.started);
    }
  }
}

namespace {
// The first non-blank line a hook printed, at most a log line's worth.
std::string_view first_output_line(std::string_view output) {
  constexpr size_t kMaxBytes = 200;
  const size_t start = output.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  output.remove_prefix(start);
  return output.substr(0, std::min({output.find('\n'), output.find('\r'), kMaxBytes}));
}

int count_since(const std::deque<TimePoint>& starts, TimePoint since) {
  return static_cast<int>(
      std::count_if(starts.begin(), starts.end(), [since](TimePoint t) { return t >= since; }));
}
}  // namespace

int ActionManager::isolations_in_window() const {
  return count_since(isolation_starts_, clock_.now() - settings_.isolation_window);
}

int ActionManager::operator_isolations_in_window() const {
  return count_since(operator_isolation_starts_, clock_.now() - settings_.isolation_window);
}

bool ActionManager::isolation_budget_left() const {
  return isolations_in_window() < settings_.max_isolations;
}

void ActionManager::start(const std::vector<std::string>& actions, const Finding& fault,
                          bool by_operator) {
  for (const auto& name : actions) {
    auto it = settings_.actions.find(name);
    if (it == settings_.actions.end()) {
      spdlog::warn("action '{}' is not configured; fault {} on device {} gets no '{}' hook", name,
                   fault.id, fault.device, name);
      continue;
    }
    launch(it->second, fault, by_operator);
  }
}

void ActionManager::resume_journal() {
  for (const auto& a : store_.unfinished_actions()) {
    auto cfg = settings_.actions.find(a.action);
    auto fault = store_.find_fault(a.fault_id);
    if (cfg == settings_.actions.end() || !fault) {
      ActionRecord r = a;
      r.status = ActionStatus::Skipped;
      r.detail = cfg == settings_.actions.end() ? "action no longer configured"
                                                : "fault not found in the journal";
      r.finished = clock_.now();
      save(r);
      continue;
    }
    std::optional<ProcessIdentity> survivor;
    if (a.status == ActionStatus::Running && is_running(a.process)) survivor = a.process;
    spdlog::info("re-running action {} for device {} fault {}: it was {} when faultd stopped{}",
                 a.action, a.device, a.fault_id, to_string(a.status),
                 survivor ? fmt::format("; its hook (pid {}) is still running: waiting for it",
                                        survivor->pid)
                          : std::string());
    // A running one was counted against the budget when it started; a pending one never
    // started (journaled with its finding just before a crash), so the budget still applies
    // unless an operator asked for it.
    launch(cfg->second, *fault, fault->rule == kOperatorIsolateRule, survivor,
           /*rerun=*/a.status == ActionStatus::Running);
  }
}

HookInput ActionManager::hook_input(const ActionConfig& action, const Finding& fault,
                                    int attempt) const {
  HookInput in;
  in.env = {
      {"PATH", std::string(kChildPath)},
      {"FAULTD_ACTION", action.name},
      {"FAULTD_NODE", settings_.node},
      {"FAULTD_DEVICE", fault.device},
      {"FAULTD_RULE", fault.rule},
      {"FAULTD_CODE", fault.code},
      {"FAULTD_LEVEL", std::string(to_string(fault.level))},
      {"FAULTD_FAULT_ID", std::to_string(fault.id)},
      {"FAULTD_JOB", fault.job},  // empty when the finding names no job
      {"FAULTD_DRY_RUN", settings_.dry_run ? "1" : "0"},
      // 1 for the first run of this action for this fault; more when an earlier run (or a
      // retry after exit 75) started and faultd stopped before it ended: the hook may find
      // its own work half done.
      {"FAULTD_ATTEMPT", std::to_string(attempt)},
  };
  nlohmann::json j = to_json(fault);
  j["action"] = action.name;
  j["node"] = settings_.node;
  j["dry_run"] = settings_.dry_run;
  j["evidence"] = nlohmann::json::array({fault.text});
  in.stdin_data = dump_json(j) + "\n";
  return in;
}

void ActionManager::launch(const ActionConfig& action, const Finding& fault, bool by_operator,
                           std::optional<ProcessIdentity> survivor, bool rerun) {
  ActionRecord rec = store_.ensure_action(action.name, fault.device, fault.id, clock_.now());
  if (rec.status == ActionStatus::Success || rec.status == ActionStatus::Skipped ||
      rec.status == ActionStatus::Failure || rec.status == ActionStatus::Timeout) {
    // Finished before (this process or an earlier one): never run twice.
    if (rec.status == ActionStatus::Success) start_dependents(action.name, fault, true);
    return;
  }
  if (running_ids_.count(rec.id) != 0 || queued_ids_.count(rec.id) != 0) return;  // under way
  if (running_ids_.size() >= static_cast<size_t>(settings_.max_concurrent_hooks)) {
    queue_.push_back({rec.id, action.name, fault.id, by_operator});
    queued_ids_.insert(rec.id);
    rec.status = ActionStatus::Pending;
    rec.detail = "queued: " + std::to_string(running_ids_.size()) +
                 " hooks running (policy.max_concurrent_hooks)";
    save(rec);
    return;
  }
  if (action.name == kIsolateAction && !by_operator && !rerun && !isolation_budget_left()) {
    rec.status = ActionStatus::Skipped;
    rec.detail = "isolation budget exhausted (" + std::to_string(settings_.max_isolations) +
                 " per " + format_duration(settings_.isolation_window) + ")";
    rec.finished = clock_.now();
    save(rec);
    spdlog::warn("not isolating device {} for fault {}: {}", fault.device, fault.id, rec.detail);
    finish(rec, nullptr, fault);
    return;
  }
  if (action.name == kIsolateAction && !rerun) {
    auto& starts = by_operator ? operator_isolation_starts_ : isolation_starts_;
    while (!starts.empty() && starts.front() < clock_.now() - settings_.isolation_window) {
      starts.pop_front();
    }
    starts.push_back(clock_.now());
  }
  rec.status = ActionStatus::Running;
  rec.started = clock_.now();
  rec.detail = settings_.dry_run ? "dry run" : "";
  if (survivor)
    rec.detail = "waiting for the run left by the previous faultd (pid " +
                 std::to_string(survivor->pid) + ")";
  save(rec);
  running_ids_.insert(rec.id);
  spdlog::info("running action {} for device {} fault {}{}", action.name, fault.device, fault.id,
               settings_.dry_run ? " (dry run)" : "");
  // The record as journaled, shared by the spawn and completion callbacks: each attempt's
  // process is journaled as it starts, so a faultd killed meanwhile knows what to wait for.
  auto live = std::make_shared<ActionRecord>(rec);
  RunOptions options;
  options.wait_for = survivor;
  options.on_spawn = [this, live](const ProcessIdentity& process) {
    live->attempts += 1;
    live->process = process;
    live->detail = settings_.dry_run ? "dry run" : "";
    save(*live);
  };
  runner_.run(
      action.hook, hook_input(action, fault, rec.attempts + 1),
      [this, live, fault](const HookResult& result) {
        ActionRecord& ended = *live;
        running_ids_.erase(ended.id);
        ended.exit_code = result.outcome == HookResult::Outcome::Exited ? result.exit_code : -1;
        ended.output = result.output;
        ended.finished = clock_.now();
        switch (result.outcome) {
          case HookResult::Outcome::Exited:
            ended.status = result.exit_code == 0 ? ActionStatus::Success : ActionStatus::Failure;
            break;
          case HookResult::Outcome::TimedOut:
            ended.status = ActionStatus::Timeout;
            break;
          case HookResult::Outcome::Cancelled:
            // faultd is stopping: leave it Running so the next start re-runs it.
            save(ended);
            return;
          default:
            ended.status = ActionStatus::Failure;
            break;
        }
        ended.process = {};
        if (!result.error.empty()) ended.detail = result.error;
        if (ended.status == ActionStatus::Success) {
          save_success(ended);
        } else {
          save(ended);
        }
        finish(ended, &result, fault);
        start_queued();
      },
      std::move(options));
}

// Starts what waited for a free slot, first come first served. The fault is read back from the
// journal: the queue holds ids only, so a burst costs no memory per finding text.
void ActionManager::start_queued() {
  while (!queue_.empty() &&
         running_ids_.size() < static_cast<size_t>(settings_.max_concurrent_hooks)) {
    const Queued next = queue_.front();
    queue_.pop_front();
    queued_ids_.erase(next.action_id);
    const auto cfg = settings_.actions.find(next.action);
    const auto fault = store_.find_fault(next.fault_id);
    if (cfg == settings_.actions.end() || !fault) continue;  // resume_journal's rule at start
    launch(cfg->second, *fault, next.by_operator);
  }
}

// The journal is the idempotence key; if it cannot be written (disk full), the hook outcome is
// still reported and the failure logged, but the daemon keeps running.
void ActionManager::save(const ActionRecord& rec) {
  try {
    store_.update_action(rec);
  } catch (const StoreError& e) {
    spdlog::error("action journal: cannot record {} for device {}: {}", rec.action, rec.device,
                  e.what());
  }
}

// A success and the dependents it unlocks are journaled in one transaction: a kill right after
// the success must not forget them (resume_journal runs pending actions).
void ActionManager::save_success(const ActionRecord& rec) {
  try {
    Store::Txn txn(store_);
    txn.update_action(rec);
    for (const auto& [name, cfg] : settings_.actions) {
      if (cfg.after == rec.action) txn.journal_action(name, rec.device, rec.fault_id, rec.finished);
    }
    txn.commit();
  } catch (const StoreError& e) {
    spdlog::error("action journal: cannot record {} for device {}: {}", rec.action, rec.device,
                  e.what());
  }
}

void ActionManager::finish(ActionRecord record, const HookResult* result, const Finding& fault) {
  if (result != nullptr) {
    auto level = record.status == ActionStatus::Success ? spdlog::level::info : spdlog::level::warn;
    // A failed hook's first line of output is usually its reason; the rest is in the journal
    // (`faultctl events --verbose`).
    std::string said;
    if (record.status != ActionStatus::Success) {
      const auto first = first_output_line(record.output);
      if (!first.empty()) said = ": " + std::string(first);
    }
    spdlog::log(level, "action {} for device {} fault {}: {} (exit {}, {} attempt(s)){}",
                record.action, record.device, record.fault_id, to_string(record.status),
                record.exit_code, record.attempts, said);
  }
  if (on_finished_) on_finished_(record, result);
  start_dependents(record.action, fault, record.status == ActionStatus::Success);
}

void ActionManager::start_dependents(const std::string& parent, const Finding& fault,
                                     bool parent_ok) {
  for (const auto& [name, cfg] : settings_.actions) {
    if (cfg.after != parent) continue;
    if (parent_ok) {
      launch(cfg, fault, /*by_operator=*/true);
      continue;
    }
    ActionRecord rec = store_.ensure_action(name, fault.device, fault.id, clock_.now());
    if (rec.status != ActionStatus::Pending) continue;
    rec.status = ActionStatus::Skipped;
    rec.detail = "'" + parent + "' did not succeed";
    rec.finished = clock_.now();
    save(rec);
    finish(rec, nullptr, fault);
  }
}

}  // namespace faultd
