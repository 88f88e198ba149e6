// The rows of the store as plain values: a device's state and an action journal entry. Kept
// apart from the SQLite Store so that the pure parts (the state machine, the exporter, the action
// manager's interface) can use them without the database.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/core/child_process.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

struct DeviceRecord {
  std::string device;
  DeviceState state = DeviceState::Healthy;
  std::string reason;
  int64_t fault_id = 0;  // the incident holding the device in this state (0: none)
  FaultLevel level = FaultLevel::NotHandleFault;
  std::string rule;
  std::string code;
  // The source of the finding that raised the incident: only that source's recovery clears it
  // (a job's log cannot clear what the kernel log raised). Not stored: read from the journal.
  std::string source;
  TimePoint since{};  // time of the last transition
  // When the device's current incident opened: the time of the finding (or operator request)
  // that took it out of healthy. It stays while the incident escalates (a more severe finding,
  // isolation); after the return to healthy, the next incident has its own.
  TimePoint incident_start{};
  // The last diagnosis verdict while not healthy: "", "passed", "faulty" (marked for repair).
  std::string verdict;
  bool acked = false;  // an operator acknowledged the current incident
  std::string ack_reason;
};

enum class ActionStatus { Pending, Running, Success, Failure, Timeout, Skipped };
std::string_view to_string(ActionStatus s);
std::optional<ActionStatus> parse_action_status(std::string_view s);

struct ActionRecord {
  int64_t id = 0;
  std::string action;
  std::string device;
  int64_t fault_id = 0;
  ActionStatus status = ActionStatus::Pending;
  int attempts = 0;
  int exit_code = -1;  // last exit code, -1 when none (signal, not started)
  std::string output;  // capped hook output of the last attempt
  std::string detail;  // why: "dry run", "timeout after 60s", "waiting for isolate", ...
  TimePoint created{};
  TimePoint started{};
  TimePoint finished{};
  // The hook's process while it runs (pid 0: none), so that the next faultd can tell whether a
  // run it finds `running` in the journal outlived the previous process.
  ProcessIdentity process;
};

// How long the journals keep rows (config `state.retention`). A row that still explains a
// device's state, an open incident or an unfinished action is kept whatever its age.
struct Retention {
  Duration max_age = std::chrono::hours(24 * 90);
  int64_t max_rows = 100'000;  // per journal (faults, transitions, actions, incidents)
  bool operator==(const Retention&) const = default;
};

// The journals retention prunes, in the order of PruneReport::deleted (metric label values).
inline constexpr std::array<std::string_view, 5> kJournalNames = {
    "faults", "transitions", "actions", "incidents", "positions"};

struct PruneReport {
  std::array<int64_t, kJournalNames.size()> deleted{};
  bool more = false;  // a batch was full: there is more to prune now
};

}  // namespace faultd
