// faultd's Prometheus metrics (docs/design.md §4). Counters that the pipeline drives are
// prometheus-cpp families whose label sets are added once and kept; state that lives elsewhere
// (device states, per-source health) is exported by Collectables that snapshot it at scrape
// time, so a scrape never sees a half-updated device and never touches the io thread's data.
//
// Lifecycle: constructed at start; `serve()` binds the HTTP endpoint; the app reports events.
// Threading: the methods are called from the io thread; the exposer's HTTP threads call the
// collectables, which take a mutex around their snapshots.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "collectors/collector.hpp"
#include "daemon/core/fault_code.hpp"
#include "daemon/core/types.hpp"
#include "daemon/state/device_view.hpp"
#include "daemon/state/records.hpp"
#include "rules/detectors/bank.hpp"
#include "rules/matcher.hpp"
#include "rules/rule.hpp"

namespace prometheus {
class Registry;
class Exposer;
class Counter;
class Histogram;
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus

namespace faultd {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Binds "host:port" (port 0 picks a free one), served by 64 HTTP threads with a 1 s request
  // timeout and no keep-alive. Throws std::runtime_error if it cannot bind.
  void serve(const std::string& listen);
  std::vector<int> listening_ports() const;

  // A rule set came into force: the counters of the packs' rules that may match a line of the
  // configured source types created at 0 (a knowledge base's entries, and a rule for a source
  // type this node does not read, e.g. the kernel log's Xid rules without a kernel-log source,
  // get theirs at their first match), the codes kept as labels (CodeLabels: the catalogue's and
  // the rules' own, other codes up to a cap), rules_loaded and build_info set.
  void on_rules(const RuleSet& rules,
                std::span<const std::string_view> source_types = kSourceTypes);
  void on_finding(const Finding& f, TimePoint committed);
  // The fault lifecycle: a finding counted into an open incident, a shadow rule's finding, a
  // node-level storm, an escalation, the open incidents, a diagnosis verdict.
  void on_grouped(const Finding& f);
  void on_shadow(const Finding& f);
  void on_storm(const std::string& rule);
  // A finding folded into its device's "too many codes" incident (the open-incident caps), and
  // findings judged as no storm because their storm window could not be kept.
  void on_folded(const std::string& rule);
  void on_storms_refused(uint64_t findings);
  void on_escalation(FaultLevel to);
  void on_incidents_open(size_t open);
  void on_verdict(const std::string& verdict);
  // Where device states and the rules' refused values are read at scrape time.
  void set_devices(std::shared_ptr<const DeviceView> view);
  // A finding that named a device outside the node's inventory (nothing done), and a
  // discoverer's run (daemon/state/inventory.hpp).
  void on_outside_inventory(const std::string& rule);
  void on_discovery(std::string_view discoverer, bool ok);
  void set_refusals(std::shared_ptr<const Refusals> refusals);
  // The configured actions: their result counters are created at 0.
  void on_actions_configured(const std::vector<std::string>& actions);
  void on_action(const std::string& action, ActionStatus status, Duration took);
  void on_reload(bool ok);
  // Automatic isolations left in the current window (the blast-radius budget).
  void on_isolation_budget(int remaining);
  void on_store_error();
  void on_pruned(const PruneReport& report);  // rows deleted by retention, per journal
  void set_sources(std::vector<std::shared_ptr<Source>> sources);
  // The webhook receiver's request counts by result, and the control socket's refusals by
  // reason, read at scrape time.
  using CountsFn = std::function<std::vector<std::pair<std::string_view, uint64_t>>()>;
  void set_webhook_counts(CountsFn counts);
  void set_control_counts(CountsFn counts);

  // Training numerics per (device, rank), from the DetectorBank: last step seen (and when),
  // overflow steps, loss-scale drops. Replaces the previous snapshot.
  void on_numerics(std::vector<DetectorBank::SeriesStats> series);

  // The text exposition, as a scrape would see it (for tests and `faultctl`).
  std::string render() const;

 private:
  class DeviceStates;
  class InventoryGauges;
  class SourceHealth;
  class ServerCounts;
  class Numerics;

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<CodeLabels> codes_;  // shared with DeviceStates (scrape threads)
  std::shared_ptr<DeviceStates> device_states_;
  std::shared_ptr<InventoryGauges> inventory_;
  std::shared_ptr<SourceHealth> source_health_;
  std::shared_ptr<ServerCounts> webhook_requests_;
  std::shared_ptr<ServerCounts> control_refusals_;
  std::shared_ptr<Numerics> numerics_;
  std::unique_ptr<prometheus::Exposer> exposer_;

  prometheus::Family<prometheus::Counter>* faults_ = nullptr;
  prometheus::Family<prometheus::Counter>* rule_matches_ = nullptr;
  prometheus::Family<prometheus::Counter>* detector_findings_ = nullptr;
  prometheus::Family<prometheus::Counter>* actions_ = nullptr;
  prometheus::Family<prometheus::Histogram>* action_duration_ = nullptr;
  prometheus::Family<prometheus::Counter>* reloads_ = nullptr;
  prometheus::Family<prometheus::Gauge>* build_info_ = nullptr;
  prometheus::Histogram* detection_latency_ = nullptr;
  prometheus::Gauge* rules_loaded_ = nullptr;
  prometheus::Counter* store_errors_ = nullptr;
  std::array<prometheus::Counter*, kJournalNames.size()> pruned_{};
  prometheus::Gauge* build_info_current_ = nullptr;
  prometheus::Gauge* budget_remaining_ = nullptr;
  prometheus::Gauge* budget_exhausted_ = nullptr;
  prometheus::Family<prometheus::Counter>* grouped_ = nullptr;
  prometheus::Family<prometheus::Counter>* shadow_ = nullptr;
  prometheus::Family<prometheus::Counter>* storms_ = nullptr;
  prometheus::Family<prometheus::Counter>* folded_ = nullptr;
  prometheus::Family<prometheus::Counter>* storms_refused_ = nullptr;
  prometheus::Family<prometheus::Counter>* escalations_ = nullptr;
  prometheus::Family<prometheus::Counter>* verdicts_ = nullptr;
  prometheus::Gauge* incidents_open_ = nullptr;
  prometheus::Family<prometheus::Counter>* outside_inventory_ = nullptr;
  prometheus::Family<prometheus::Counter>* discoveries_ = nullptr;
};

}  // namespace faultd
