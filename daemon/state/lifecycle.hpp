// The fault lifecycle between a finding and the device state machine: what a finding *means*
// given what came before it on this node.
//
//   - Incident grouping (flood control): findings for the same device and signature while an
//     incident is open (its last finding less than `incident_ttl` ago) join that incident and
//     bump its count; only the first is journaled and can change device state. The signature is
//     the code when there is one (so an ASD log line and npu-smi's 80818C00 for the same device
//     are one incident), else the rule.
//   - Correlation: a finding from another rule joining an open incident is new evidence: it is
//     journaled, and when `signals` distinct rules have reported the incident's code within
//     `window`, its level is raised to `to` (e.g. an ASD log warning plus 80818C00 from npu-smi
//     within 10 minutes → SeparateNPU: one incident, both pieces of evidence).
//   - Escalation by frequency: `times` new incidents of a code (or rule) within `window` raise the
//     level to `to` (MindCluster's faultCustomization.json FaultFrequency, and the same knobs for
//     faultd's own rules). After `release` without a new one, the count starts over and a device
//     held in `warning` by the escalated incident is released (de-escalation).
//   - Escalation by duration: an incident of a FaultDuration code still open (no recovery) after
//     `fault_timeout` is raised to its level.
//   - Node-level storms: the same signature on at least max(min_devices, fraction × devices)
//     devices within `storm.window` is a software or data problem, not N broken devices: the
//     signature's findings are recorded as one node-level incident and change no device state
//     until the window passes without them.
//   - Shadow rules: findings are recorded and counted, nothing else.
//
// Memory is bounded whatever a log writer prints (security audit N2): a line's code opens an
// incident, so distinct codes would open incidents without end. At most
// `limits.open_per_device_rule` incidents of one (device, rule) and `limits.open` in all are
// open; past either, a new code is folded into one incident of that device and rule with the code
// kTooManyCodes (opened once, then counted), so the device still changes state and the flood
// is one row. Storm windows are kept per source and signature, at most
// `limits.storm_windows_per_source` per source and `limits.storm_windows` in all; a finding
// whose window cannot be kept is judged as no storm (counted). Closed incidents are kept at
// most kMaxKeptIncidents.
//
// Pure logic: `now` comes in as a parameter; the app persists what `decide` and `tick` return in
// the same transaction as the finding, and reloads from the store if that commit fails.
// Threading: app io thread only.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/core/types.hpp"

namespace faultd {

// The code of the incident that a (device, rule) past its open-incident cap folds its further
// codes into (see Lifecycle).
inline constexpr std::string_view kTooManyCodes = "TOO_MANY_CODES";

struct Incident {
  int64_t id = 0;  // the fault journal id of its first finding
  std::string device;
  std::string rule;
  std::string code;
  std::string source;  // of its first finding: only that source's recovery closes it
  FaultLevel level = FaultLevel::NotHandleFault;  // after escalation
  FaultLevel base_level = FaultLevel::NotHandleFault;
  TimePoint first{};
  TimePoint last{};
  uint64_t count = 1;       // findings grouped into it, the first included
  bool open = true;         // closed by a recovery, a release or the TTL
  bool node_level = false;  // a storm: the devices are listed in `note`
  std::string escalation;   // why the level was raised; empty when it was not
  std::string note;
  // The rules that reported it (evidence for correlation); in memory only: after a restart an
  // open incident knows its first rule.
  std::vector<std::string> rules;
};

struct Correlation {
  std::set<std::string> codes;  // empty: any code
  int signals = 2;              // distinct rules
  Duration window = std::chrono::minutes(10);
  FaultLevel to = FaultLevel::SeparateNPU;
};

struct FrequencyEscalation {
  std::set<std::string> codes;  // upper-case hex, as findings carry them
  std::set<std::string> rules;  // faultd rule ids
  int times = 2;
  Duration window = std::chrono::hours(24);
  FaultLevel to = FaultLevel::ManuallySeparateNPU;
  Duration release{0};  // 0: the window
};

struct DurationEscalation {
  std::set<std::string> codes;
  Duration fault_timeout{0};
  FaultLevel to = FaultLevel::PreSeparateNPU;
};

struct LifecycleSettings {
  Duration incident_ttl = std::chrono::minutes(10);
  struct Storm {
    Duration window = std::chrono::seconds(60);
    int min_devices = 3;
    double fraction = 0.5;
    int node_devices = 8;  // devices on the node, when no source has reported more
  } storm;
  // Bounds of what a log writer can make the lifecycle hold (see the header).
  struct Limits {
    size_t open_per_device_rule = 256;
    size_t open = 4096;
    size_t storm_windows_per_source = 256;
    size_t storm_windows = 4096;
  } limits;
  std::vector<FrequencyEscalation> frequency;
  std::vector<DurationEscalation> duration;
  std::vector<Correlation> correlations;
  std::set<std::string> shadow_rules;
};

class Lifecycle {
 public:
  enum class Kind {
    NewIncident,  // journal it, open an incident, let the state machine see it at `level`
    Grouped,      // count it into `incident`; nothing else changes
    Evidence,     // another rule's finding for `incident`: journal it; `raised` if correlated
    Storm,        // part of a node-level storm: journal it, change no device
    Shadow,       // a shadow rule: journal and count it, change nothing
    Recovery,     // the source says the device recovered: close `closed` incidents
    NoDevice,     // no device to hold an incident: journal it as it is
  };
  struct Decision {
    Kind kind = Kind::NoDevice;
    FaultLevel level = FaultLevel::NotHandleFault;  // effective level (escalated or not)
    std::string escalation;                         // why the level was raised
    int64_t incident = 0;                           // Grouped/Evidence: the incident it joined
    bool raised = false;                    // Evidence: correlation raised the incident to `level`
    std::vector<int64_t> closed;            // Recovery: the incidents it closed
    std::optional<Incident> storm_started;  // this finding tipped a storm: record it (id 0)
    // NewIncident/Grouped: the incident's code, `f.code` unless `folded` into kTooManyCodes
    // because its (device, rule) or the node had too many open incidents.
    std::string code;
    bool folded = false;
  };

  // Closed incidents kept for frequency windows, at most.
  static constexpr size_t kMaxKeptIncidents = 20000;

  void configure(LifecycleSettings settings);
  const LifecycleSettings& settings() const { return settings_; }
  // Open incidents, and recent ones (for frequency windows), from the store.
  void load(const std::vector<Incident>& incidents);

  // Findings that arrived together (one read buffer) are judged together: each device of the
  // batch counts towards its signature's storm before any of them is decided, so a storm whose
  // lines arrive at once changes no device, not even the first few. Each finding counts at its
  // own time, as `decide` will see it. Call before `decide`.
  void anticipate(const std::vector<Finding>& batch);
  // What `f` means (f.id not yet known). Call `opened` once a NewIncident/Storm is journaled.
  Decision decide(const Finding& f, TimePoint now);
  void opened(const Finding& f, const Decision& d);
  // The node-level incident of a storm that `f` tipped was journaled (incident.id set).
  void storm_recorded(const Finding& f, const Incident& incident);

  // Time-based changes: duration escalations and releases. Each returned incident changed
  // (level raised, or closed by a release); the app persists it and updates the device.
  std::vector<Incident> tick(TimePoint now);

  // Incidents changed since the last call (grouped counts, closes), for the store.
  std::vector<Incident> take_dirty();

  const Incident* find(int64_t id) const;
  std::vector<Incident> open_incidents() const;
  size_t open_count() const { return open_.size(); }
  size_t storm_windows() const { return storms_.size(); }
  bool storm_active(TimePoint now) const;
  // Findings judged as no storm since the last call because their window could not be kept.
  uint64_t take_storm_refusals() { return std::exchange(storm_refusals_, 0); }

 private:
  struct Key {
    std::string device, rule, code;
    auto operator<=>(const Key&) const = default;
  };
  using OpenMap = std::map<Key, int64_t>;
  // A storm window's key: the source, then the signature (a source's findings storm alone).
  using StormKey = std::pair<std::string, std::string>;
  struct StormWindow {
    std::map<std::string, TimePoint> devices;  // device → last finding
    bool active = false;
    TimePoint last{};
    int64_t incident = 0;
  };
  const FrequencyEscalation* frequency_for(const Finding& f) const;
  static Key key_of(const std::string& device, const std::string& rule, const std::string& code);
  static StormKey storm_key(const Finding& f);
  // The open incident under `key` (nullptr when none, or when its TTL passed: then closed).
  Incident* open_incident(const Key& key, TimePoint now);
  bool room_for_incident(const Finding& f) const;
  // Every change of open_ goes through these two, which keep the per-(device, rule) counts.
  void track_open(const Incident& i);
  OpenMap::iterator untrack_open(OpenMap::iterator it);
  void correlate(Incident& i, const Finding& f, TimePoint now, Decision& d);
  void expire(TimePoint now);
  void mark_dirty(int64_t id);
  bool storm_check(const Finding& f, TimePoint now, Decision& d);
  // `f`'s window with its device counted, or nullptr when no window can be kept for it.
  StormWindow* storm_window(const Finding& f, TimePoint now);

  LifecycleSettings settings_;
  std::map<int64_t, Incident> incidents_;  // open ones, and closed ones still in a window
  OpenMap open_;                           // (device, code) or (device, rule) → open incident
  std::map<std::pair<std::string, std::string>, size_t> open_per_rule_;  // (device, rule) → open
  std::map<StormKey, StormWindow> storms_;  // (source, signature) → devices seen
  std::map<std::string, size_t> storms_per_source_;
  uint64_t storm_refusals_ = 0;
  std::set<std::string> devices_seen_;
  std::map<std::string, TimePoint> released_;  // device + escalation index → last release
  std::set<int64_t> dirty_;
};

// A storm's signature: the rule and the code ("rule/code"), or the rule alone.
std::string signature_of(const std::string& rule, const std::string& code);
std::string rule_of_signature(const std::string& signature);

}  // namespace faultd
