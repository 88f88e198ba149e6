// faultd's configuration: the YAML of docs/design.md §6 loaded into plain structs, with the rule
// files it includes compiled into an immutable RuleSet. Loading never stops at the first
// problem: every error is collected with its file:line:column, so `faultd --check-config` shows
// them all at once and a bad reload says exactly why it kept the old set.
//
// Lifecycle: load_config() builds a complete Config or reports errors; the app swaps whole
// Configs on reload. Threading: a Config is an immutable value once loaded.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "collectors/activity/hang_source.hpp"
#include "collectors/command/command_source.hpp"
#include "collectors/file/file_source.hpp"
#include "collectors/flight_recorder/flight_recorder_source.hpp"
#include "collectors/kmsg/kmsg_source.hpp"
#include "collectors/overflow_dump/overflow_dump_source.hpp"
#include "daemon/actions/action_manager.hpp"
#include "daemon/config/inventory_config.hpp"
#include "daemon/config/log_config.hpp"
#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"
#include "daemon/state/lifecycle.hpp"
#include "daemon/state/records.hpp"
#include "rules/catalogs/faultdiag.hpp"
#include "rules/catalogs/mindcluster.hpp"
#include "rules/rule.hpp"

namespace faultd {

// What a fault level does to a device and which actions it starts.
struct LevelPolicy {
  bool warn = false;  // healthy → warning
  std::vector<std::string> actions;
  bool recover = true;  // a recovery the source reports moves warning → healthy
};

struct PolicyConfig {
  int max_isolations = 2;  // blast radius: isolate hooks started per window on this node
  Duration isolation_window = std::chrono::hours(1);
  // Hooks running at once; the rest wait their turn (journaled as pending).
  int max_concurrent_hooks = 16;
  bool dry_run = false;
  FaultLevel default_level = FaultLevel::NotHandleFault;  // codes no catalogue knows
  std::array<LevelPolicy, kFaultLevelCount> levels{};
  Duration incident_ttl = std::chrono::minutes(10);
  LifecycleSettings::Storm storm;
  std::vector<FrequencyEscalation> escalations;  // policy.escalate, then the catalogue's
  std::vector<DurationEscalation> duration_escalations;
  // Two signals about one device and code within a window escalate (policy.correlate).
  std::vector<Correlation> correlations{Correlation{{"80818C00"}}};
  bool release_on_diagnosis_pass = true;  // a passing diagnosis clears the device
};
PolicyConfig default_policy();

// One configured source: its type's settings. Each settings type has `name` and `==` (a reload
// keeps a running source whose settings are equal, with its partial lines and positions).
using SourceConfig =
    std::variant<FileSourceConfig, CommandSourceConfig, KmsgSourceConfig, OverflowDumpSourceConfig,
                 FlightRecorderSourceConfig, HangSourceConfig>;
const std::string& source_name(const SourceConfig& source);
// The types (kSourceTypes) of the chunks the configured sources hand to the rules.
std::vector<std::string_view> chunk_source_types(const std::vector<SourceConfig>& sources);

struct Config {
  std::string path;  // the main file
  std::string node;
  std::string state_dir = "/var/lib/faultd";
  std::string metrics_listen = "0.0.0.0:9847";  // empty: no metrics endpoint
  std::string control_socket = "/run/faultd/control.sock";
  std::string control_group = "faultd";
  // A control session waiting longer for its next request is closed; empty: the server's
  // default (ControlLimits).
  std::optional<Duration> control_idle_timeout;
  std::string webhook_listen;  // empty: off
  std::string webhook_token_file;
  LogConfig log;
  std::vector<std::string> include{"/etc/faultd/rules.d/*.yaml"};
  std::string mindcluster_fault_codes;    // catalogue path, empty: none
  std::string mindcluster_customization;  // faultCustomization.json path, empty: none
  // Escalation data for the state machine (never null; empty without a customization file).
  std::shared_ptr<const FaultCustomization> customization =
      std::make_shared<const FaultCustomization>();
  std::string faultdiag_knowledge;  // kg-config.json path, empty: none
  FaultDiagOptions faultdiag;
  std::string faultdiag_summary;      // what the import loaded and skipped, for --check-config
  std::vector<SourceConfig> sources;  // in config order
  std::map<std::string, ActionConfig> actions;
  PolicyConfig policy = default_policy();
  Duration position_save_interval = std::chrono::seconds(1);
  Retention retention;  // state.retention
  InventoryConfig inventory;

  std::shared_ptr<const RuleSet> rules;
  std::vector<std::string> rule_files;  // every file rules came from, for logs
  std::vector<std::string> warnings;    // not errors: shown by --check-config and at start
  // A config that loads but cannot do its job: no rule, no source, a hook that cannot run.
  // `--check-config` fails on them (so the unit's ExecStartPre keeps such a faultd from
  // starting); the daemon itself logs them as warnings (a test rig may run without rules).
  ErrorList setup_errors;

  std::vector<FileSourceConfig> file_sources() const;  // the `file` sources, in order
};

// Loads `path`, its includes and catalogues. Returns nullopt if there was any error; `errors`
// then holds all of them as file:line:column: message.
std::optional<Config> load_config(const std::string& path, ErrorList& errors);

inline constexpr const char* kDefaultConfigPath = "/etc/faultd/faultd.yaml";

}  // namespace faultd
