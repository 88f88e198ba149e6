#include "daemon/export/metrics.hpp"

#include "collectors/activity/hang_source.hpp"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>

namespace faultd {

namespace pm = prometheus;

namespace {

pm::MetricFamily family(std::string name, std::string help, pm::MetricType type) {
  pm::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

pm::ClientMetric sample(std::vector<pm::ClientMetric::Label> labels, double value,
                        pm::MetricType type) {
  pm::ClientMetric m;
  m.label = std::move(labels);
  if (type == pm::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return m;
}

double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// The HTTP server's threads, and how long a client may take to send its request (or to take
// the reply) before its thread is free again. A connection holds a thread from accept to close,
// so k connections held open delay a scrape by about floor(k / threads) request timeouts: 64
// threads and 1 s keep 63 of them from delaying it at all, and need about 640 to push it past
// Prometheus' 10 s scrape timeout. Prometheus sends its request as soon as it has connected, and
// reads the reply (at most a few MB) at once. Idle threads cost their stacks' touched pages.
constexpr int kHttpThreads = 64;
constexpr std::chrono::milliseconds kRequestTimeout{1000};

// Hooks run from milliseconds (a label) to half an hour (a stress diagnosis).
const pm::Histogram::BucketBoundaries kActionBuckets{0.05, 0.1, 0.5, 1,   5,   10,
                                                     30,   60,  120, 300, 900, 1800};

// faultd_device_incident_start_timestamp_seconds{device,code}: when each device's current
// incident opened, for the devices not healthy. Across nodes, the earliest of a group names
// the device that failed first (etc/prometheus/faultd-rules.yml orders them).
pm::MetricFamily incident_starts(const std::vector<DeviceRecord>& devices, CodeLabels& codes) {
  auto f = family("faultd_device_incident_start_timestamp_seconds",
                  "When the device's current incident opened (devices not healthy), by device "
                  "and the incident's code.",
                  pm::MetricType::Gauge);
  for (const auto& d : devices) {
    if (d.state == DeviceState::Healthy) continue;
    f.metric.push_back(sample({{"code", codes.label(d.code)}, {"device", d.device}},
                              static_cast<double>(to_unix_ms(d.incident_start)) / 1000.0,
                              pm::MetricType::Gauge));
  }
  return f;
}

// A device's names as faultd_device_info's labels: faultd's own, then the same names under the
// labels the vendor's exporter gives them, so that a PromQL join needs no label_replace.
// dcgm-exporter labels a GPU `gpu` (index), `UUID`, `pci_bus_id` (as nvidia-smi prints it:
// NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go); Ascend's npu-exporter
// labels a chip `id` (the physical id), `pcie_bus_info` (Ascend/ascend-npu-exporter
// collector/npu_collector.go). The other vendor's labels are empty (absent in PromQL).
std::vector<pm::ClientMetric::Label> info_labels(const InventoryDevice& d) {
  const bool nvidia = d.vendor == "nvidia";
  const bool ascend = d.vendor == "ascend";
  return {{"device", d.id},
          {"vendor", d.vendor},
          {"model", d.model},
          {"serial", d.serial},
          {"bus_id", d.bus_id},
          {"uuid", d.uuid},
          {"physical_id", d.physical_id},
          {"gpu", nvidia ? d.id : ""},
          {"UUID", nvidia ? d.uuid : ""},
          {"pci_bus_id", nvidia ? d.bus_id : ""},
          {"id", ascend ? d.physical_id : ""},
          {"pcie_bus_info", ascend ? d.bus_id : ""}};
}

}  // namespace

// faultd_device_state: one series per device and state, exactly one of them 1. Read from the
// pipeline's DeviceView at scrape time; the refused values of the rules with them.
class Metrics::DeviceStates final : public pm::Collectable {
 public:
  explicit DeviceStates(std::shared_ptr<CodeLabels> codes) : codes_(std::move(codes)) {}
  void set(std::shared_ptr<const DeviceView> view) {
    std::lock_guard lock(mu_);
    view_ = std::move(view);
  }
  void set(std::shared_ptr<const Refusals> refusals) {
    std::lock_guard lock(mu_);
    refusals_ = std::move(refusals);
  }
  std::vector<pm::MetricFamily> Collect() const override {
    auto f = family("faultd_device_state",
                    "Device state: 1 for the state the device is in, 0 for the others.",
                    pm::MetricType::Gauge);
    auto repair =
        family("faultd_device_repair",
               "1 when a diagnosis found the device faulty: it stays isolated for repair.",
               pm::MetricType::Gauge);
    auto acked = family("faultd_device_acknowledged",
                        "1 when an operator acknowledged the device's current incident.",
                        pm::MetricType::Gauge);
    auto refused = family("faultd_rule_refused_values_total",
                          "Values a rule captured that failed validation (kept out of the "
                          "finding), by field: device or code; source_type counts lines of a "
                          "rule's form from a type of source the rule does not accept (no "
                          "finding).",
                          pm::MetricType::Counter);
    std::shared_ptr<const DeviceView> view;
    std::shared_ptr<const Refusals> refusals;
    {
      std::lock_guard lock(mu_);
      view = view_;
      refusals = refusals_;
    }
    const auto devices = view ? view->snapshot() : std::vector<DeviceRecord>{};
    for (const auto& d : devices) {
      for (int i = 0; i < kDeviceStateCount; ++i) {
        const auto s = static_cast<DeviceState>(i);
        f.metric.push_back(sample({{"device", d.device}, {"state", std::string(to_string(s))}},
                                  s == d.state ? 1.0 : 0.0, pm::MetricType::Gauge));
      }
      repair.metric.push_back(
          sample({{"device", d.device}}, d.verdict == "faulty" ? 1.0 : 0.0, pm::MetricType::Gauge));
      acked.metric.push_back(
          sample({{"device", d.device}}, d.acked ? 1.0 : 0.0, pm::MetricType::Gauge));
    }
    if (refusals) {
      refused.metric.push_back(sample({{"field", "device"}},
                                      static_cast<double>(refusals->devices.load()),
                                      pm::MetricType::Counter));
      refused.metric.push_back(sample({{"field", "code"}},
                                      static_cast<double>(refusals->codes.load()),
                                      pm::MetricType::Counter));
      refused.metric.push_back(sample({{"field", "source_type"}},
                                      static_cast<double>(refusals->source_types.load()),
                                      pm::MetricType::Counter));
      refused.metric.push_back(sample(
          {{"field", "job"}}, static_cast<double>(refusals->jobs.load()), pm::MetricType::Counter));
    }
    return {std::move(f), std::move(repair), std::move(acked), std::move(refused),
            incident_starts(devices, *codes_)};
  }

 private:
  const std::shared_ptr<CodeLabels> codes_;
  mutable std::mutex mu_;
  std::shared_ptr<const DeviceView> view_;
  std::shared_ptr<const Refusals> refusals_;
};

// The node's inventory, from the pipeline's DeviceView at scrape time: one info series per
// device (the names an SRE joins on: serial follows a card across slots and nodes), the device
// count per state, and how many the node has and should have.
class Metrics::InventoryGauges final : public pm::Collectable {
 public:
  void set(std::shared_ptr<const DeviceView> view) {
    std::lock_guard lock(mu_);
    view_ = std::move(view);
  }
  std::vector<pm::MetricFamily> Collect() const override {
    using T = pm::MetricType;
    std::shared_ptr<const DeviceView> view;
    {
      std::lock_guard lock(mu_);
      view = view_;
    }
    if (!view) return {};
    auto info =
        family("faultd_device_info",
               "1 for every device of the node's inventory, with its names as labels.", T::Gauge);
    auto by_state = family("faultd_devices", "Devices shown by faultd, per state.", T::Gauge);
    auto expected = family("faultd_devices_expected",
                           "Devices the node should have (inventory.expected_devices, else as "
                           "many as were ever discovered); 0 while no inventory is known.",
                           T::Gauge);
    auto present = family("faultd_devices_present",
                          "Inventory devices that every discoverer still lists.", T::Gauge);
    const InventorySnapshot inv = view->inventory();
    for (const auto& d : inv.devices) info.metric.push_back(sample(info_labels(d), 1, T::Gauge));
    std::array<int, kDeviceStateCount> counts{};
    for (const auto& d : view->snapshot()) ++counts[static_cast<size_t>(d.state)];
    for (int i = 0; i < kDeviceStateCount; ++i) {
      by_state.metric.push_back(
          sample({{"state", std::string(to_string(static_cast<DeviceState>(i)))}},
                 counts[static_cast<size_t>(i)], T::Gauge));
    }
    expected.metric.push_back(sample({}, inv.known ? inv.expected : 0, T::Gauge));
    present.metric.push_back(sample({}, inv.present, T::Gauge));
    return {std::move(info), std::move(by_state), std::move(expected), std::move(present)};
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const DeviceView> view_;
};

// Per-source self-health, read from each source's atomics (and a command source's probe states)
// at scrape time: a dead collector must not look healthy.
class Metrics::SourceHealth final : public pm::Collectable {
 public:
  void set(std::vector<std::shared_ptr<Source>> sources) {
    std::lock_guard lock(mu_);
    sources_ = std::move(sources);
  }
  std::vector<pm::MetricFamily> Collect() const override {
    using T = pm::MetricType;
    auto lines = family("faultd_source_lines_total", "Lines consumed per source.", T::Counter);
    auto bytes = family("faultd_source_bytes_total", "Bytes consumed per source.", T::Counter);
    auto errors = family("faultd_source_errors_total",
                         "Read, parse and command errors per source and kind.", T::Counter);
    auto rotations = family("faultd_source_rotations_total",
                            "File rotations followed per source and kind.", T::Counter);
    auto lag =
        family("faultd_source_lag_bytes", "Bytes written but not yet read per source.", T::Gauge);
    auto files = family("faultd_source_files", "Files currently followed per source.", T::Gauge);
    auto probe_up =
        family("faultd_probe_up",
               "1 if a command source's last run for the device succeeded, else 0.", T::Gauge);
    // Device activity, from the hang sources: 3 series per device.
    auto util =
        family("faultd_device_utilization_percent",
               "Compute use of the device (AI Core / SM) at the last activity poll.", T::Gauge);
    auto memory = family("faultd_device_memory_used_bytes",
                         "Device memory in use at the last activity poll.", T::Gauge);
    auto holders = family("faultd_device_processes",
                          "Processes holding the device at the last activity poll.", T::Gauge);
    std::lock_guard lock(mu_);
    for (const auto& src : sources_) {
      const std::string& n = src->name();
      if (const auto* hang = dynamic_cast<const HangSource*>(src.get())) {
        for (const DeviceActivity& a : hang->activity()) {
          util.metric.push_back(sample({{"device", a.device}}, a.utilization, T::Gauge));
          memory.metric.push_back(sample({{"device", a.device}},
                                         static_cast<double>(a.memory_mb) * 1024 * 1024, T::Gauge));
          holders.metric.push_back(
              sample({{"device", a.device}}, static_cast<double>(a.holders), T::Gauge));
        }
      }
      SourceStats& s = src->stats();
      lines.metric.push_back(
          sample({{"source", n}}, static_cast<double>(s.lines.load()), T::Counter));
      bytes.metric.push_back(
          sample({{"source", n}}, static_cast<double>(s.bytes.load()), T::Counter));
      for (int k = 0; k < kSourceErrorKindCount; ++k) {
        const auto kind = static_cast<SourceErrorKind>(k);
        errors.metric.push_back(sample({{"kind", std::string(to_string(kind))}, {"source", n}},
                                       static_cast<double>(s.error_count(kind)), T::Counter));
      }
      rotations.metric.push_back(sample({{"kind", "rename"}, {"source", n}},
                                        static_cast<double>(s.rotations_rename.load()),
                                        T::Counter));
      rotations.metric.push_back(sample({{"kind", "truncate"}, {"source", n}},
                                        static_cast<double>(s.rotations_truncate.load()),
                                        T::Counter));
      lag.metric.push_back(
          sample({{"source", n}}, static_cast<double>(s.lag_bytes.load()), T::Gauge));
      files.metric.push_back(
          sample({{"source", n}}, static_cast<double>(s.files.load()), T::Gauge));
      for (const ProbeUp& p : src->probes()) {
        probe_up.metric.push_back(
            sample({{"device", p.device}, {"source", n}}, p.up ? 1.0 : 0.0, T::Gauge));
      }
    }
    std::vector<pm::MetricFamily> out{std::move(lines),     std::move(bytes), std::move(errors),
                                      std::move(rotations), std::move(lag),   std::move(files)};
    if (!probe_up.metric.empty()) out.push_back(std::move(probe_up));  // command sources only
    if (!util.metric.empty()) {                                        // hang sources only
      out.push_back(std::move(util));
      out.push_back(std::move(memory));
      out.push_back(std::move(holders));
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Source>> sources_;
};

// A counter family read from a server's atomics at scrape time, one series per value of one
// label: faultd_webhook_requests_total{result}, faultd_control_refusals_total{reason}. Absent
// until the server is running.
class Metrics::ServerCounts final : public pm::Collectable {
 public:
  ServerCounts(std::string name, std::string help, std::string label)
      : name_(std::move(name)), help_(std::move(help)), label_(std::move(label)) {}
  void set(CountsFn counts) {
    std::lock_guard lock(mu_);
    counts_ = std::move(counts);
  }
  std::vector<pm::MetricFamily> Collect() const override {
    std::lock_guard lock(mu_);
    if (!counts_) return {};
    auto f = family(name_, help_, pm::MetricType::Counter);
    for (const auto& [value, n] : counts_()) {
      f.metric.push_back(
          sample({{label_, std::string(value)}}, static_cast<double>(n), pm::MetricType::Counter));
    }
    return {std::move(f)};
  }

 private:
  const std::string name_, help_, label_;
  mutable std::mutex mu_;
  CountsFn counts_;
};

// faultd_training_*{device,rank}: what the training logs' step lines showed, per series. The
// labels are validated ids and bounded by the DetectorBank's series cap.
class Metrics::Numerics final : public pm::Collectable {
 public:
  void set(std::vector<DetectorBank::SeriesStats> series) {
    std::lock_guard lock(mu_);
    series_ = std::move(series);
  }
  std::vector<pm::MetricFamily> Collect() const override {
    std::lock_guard lock(mu_);
    if (series_.empty()) return {};
    auto step = family("faultd_training_last_step", "Last training step seen per series.",
                       pm::MetricType::Gauge);
    auto step_time = family("faultd_training_last_step_timestamp_seconds",
                            "When the last new step of a series was seen (for stall alerts).",
                            pm::MetricType::Gauge);
    auto overflow =
        family("faultd_training_overflow_steps_total",
               "Step lines that reported an overflow (skipped step).", pm::MetricType::Counter);
    auto drops = family("faultd_training_loss_scale_drops_total", "Times the loss scale went down.",
                        pm::MetricType::Counter);
    auto duration = family("faultd_training_step_time",
                           "Last step time a step line printed, in its unit (Megatron's and "
                           "MindFormers' lines: milliseconds).",
                           pm::MetricType::Gauge);
    for (const auto& s : series_) {
      const std::vector<pm::ClientMetric::Label> labels = {{"device", s.device}, {"rank", s.rank}};
      if (s.last_step) {
        step.metric.push_back(
            sample(labels, static_cast<double>(*s.last_step), pm::MetricType::Gauge));
        step_time.metric.push_back(
            sample(labels, static_cast<double>(to_unix_ms(s.last_step_time)) / 1000.0,
                   pm::MetricType::Gauge));
      }
      overflow.metric.push_back(
          sample(labels, static_cast<double>(s.overflow_steps), pm::MetricType::Counter));
      drops.metric.push_back(
          sample(labels, static_cast<double>(s.scale_drops), pm::MetricType::Counter));
      if (s.step_time) {
        duration.metric.push_back(sample(labels, *s.step_time, pm::MetricType::Gauge));
      }
    }
    std::vector<pm::MetricFamily> out;
    out.reserve(5);
    for (auto* f : {&step, &step_time, &overflow, &drops}) out.push_back(std::move(*f));
    if (!duration.metric.empty()) out.push_back(std::move(duration));
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<DetectorBank::SeriesStats> series_;
};

Metrics::Metrics()
    : registry_(std::make_shared<pm::Registry>()),
      codes_(std::make_shared<CodeLabels>()),
      device_states_(std::make_shared<DeviceStates>(codes_)),
      inventory_(std::make_shared<InventoryGauges>()),
      source_health_(std::make_shared<SourceHealth>()),
      webhook_requests_(std::make_shared<ServerCounts>(
          "faultd_webhook_requests_total",
          "Alertmanager webhook requests by result (accepted, unauthorized, ...).", "result")),
      control_refusals_(std::make_shared<ServerCounts>(
          "faultd_control_refusals_total",
          "Control socket connections (and commands) refused (permission, over_capacity) or "
          "closed (idle_timeout).",
          "reason")),
      numerics_(std::make_shared<Numerics>()) {
  auto& r = *registry_;
  faults_ = &pm::BuildCounter()
                 .Name("faultd_faults_total")
                 .Help("Findings recorded, by device, fault level and code.")
                 .Register(r);
  rule_matches_ = &pm::BuildCounter()
                       .Name("faultd_rule_matches_total")
                       .Help(
                           "Findings recorded per rule (every rule of the packs starts at "
                           "0; a knowledge base's entry appears at its first match).")
                       .Register(r);
  detector_findings_ = &pm::BuildCounter()
                            .Name("faultd_detector_findings_total")
                            .Help("Verdicts of the stateful detectors, by rule and detector type.")
                            .Register(r);
  actions_ = &pm::BuildCounter()
                  .Name("faultd_actions_total")
                  .Help("Hook runs by action and result (success, failure, timeout, skipped).")
                  .Register(r);
  action_duration_ = &pm::BuildHistogram()
                          .Name("faultd_action_duration_seconds")
                          .Help("Hook run time, retries and backoff included.")
                          .Register(r);
  reloads_ = &pm::BuildCounter()
                  .Name("faultd_config_reloads_total")
                  .Help("Configuration reloads (SIGHUP or faultctl reload) by result.")
                  .Register(r);
  build_info_ = &pm::BuildGauge()
                     .Name("faultd_build_info")
                     .Help("Always 1: the faultd version and the sha256 of the rules in force.")
                     .Register(r);
  detection_latency_ =
      &pm::BuildHistogram()
           .Name("faultd_detection_latency_seconds")
           .Help("From a source noticing new input to the finding being committed.")
           .Register(r)
           .Add({}, pm::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                    0.1, 0.25, 0.5, 1, 2.5, 5, 10});
  rules_loaded_ =
      &pm::BuildGauge().Name("faultd_rules_loaded").Help("Rules in force.").Register(r).Add({});
  store_errors_ = &pm::BuildCounter()
                       .Name("faultd_store_errors_total")
                       .Help("Failed writes to the state store (the input is read again).")
                       .Register(r)
                       .Add({});
  auto& pruned = pm::BuildCounter()
                     .Name("faultd_store_pruned_rows_total")
                     .Help("Journal rows deleted by retention (state.retention), per journal.")
                     .Register(r);
  for (size_t i = 0; i < kJournalNames.size(); ++i) {
    pruned_[i] = &pruned.Add({{"journal", std::string(kJournalNames[i])}});
  }
  for (const char* result : {"success", "failure"}) reloads_->Add({{"result", result}});
  budget_remaining_ = &pm::BuildGauge()
                           .Name("faultd_isolation_budget_remaining")
                           .Help("Automatic isolations still allowed in the current window.")
                           .Register(r)
                           .Add({});
  grouped_ = &pm::BuildCounter()
                  .Name("faultd_findings_grouped_total")
                  .Help("Findings counted into an open incident instead of opening one.")
                  .Register(r);
  shadow_ = &pm::BuildCounter()
                 .Name("faultd_shadow_findings_total")
                 .Help("Findings of rules in shadow mode: recorded, nothing done.")
                 .Register(r);
  storms_ = &pm::BuildCounter()
                 .Name("faultd_storms_total")
                 .Help("Node-level storms: the same fault on most devices at once (no isolation).")
                 .Register(r);
  folded_ = &pm::BuildCounter()
                 .Name("faultd_incidents_folded_total")
                 .Help(
                     "Findings counted into their device's TOO_MANY_CODES incident: the rule had "
                     "too many open incidents on the device (or the node in all).")
                 .Register(r);
  storms_refused_ = &pm::BuildCounter()
                         .Name("faultd_storm_windows_refused_total")
                         .Help(
                             "Findings judged as no storm because their source (or the node) "
                             "already held all the storm windows it may.")
                         .Register(r);
  escalations_ = &pm::BuildCounter()
                      .Name("faultd_escalations_total")
                      .Help("Incidents raised to a more severe level by frequency or duration.")
                      .Register(r);
  incidents_open_ = &pm::BuildGauge()
                         .Name("faultd_incidents_open")
                         .Help("Open incidents on this node.")
                         .Register(r)
                         .Add({});
  outside_inventory_ = &pm::BuildCounter()
                            .Name("faultd_findings_outside_inventory_total")
                            .Help(
                                "Findings that named a device outside the node's inventory: "
                                "recorded (rate-limited), nothing done.")
                            .Register(r);
  discoveries_ = &pm::BuildCounter()
                      .Name("faultd_inventory_discoveries_total")
                      .Help("Runs of the inventory's discoverers, by result.")
                      .Register(r);
  verdicts_ = &pm::BuildCounter()
                   .Name("faultd_diagnosis_verdicts_total")
                   .Help("Diagnosis results: passed, faulty, unavailable.")
                   .Register(r);
  for (const char* v : {"passed", "faulty", "unavailable"}) verdicts_->Add({{"verdict", v}});
  budget_exhausted_ =
      &pm::BuildGauge()
           .Name("faultd_isolation_budget_exhausted")
           .Help("1 while the blast-radius limit blocks automatic isolations, else 0.")
           .Register(r)
           .Add({});
}

Metrics::~Metrics() = default;

void Metrics::serve(const std::string& listen) {
  // civetweb serves a connection on one thread from accept to close, and a client that sends
  // nothing (or one byte) holds it until the request timeout (30 s by default): with 2 threads,
  // two such clients blocked every scrape, with 8 threads and 3 s, 16 delayed it by 6 s. Enough
  // threads, a short timeout and no keep-alive leave scrapes a free thread (security audit F9).
  exposer_ = std::make_unique<pm::Exposer>(std::vector<std::string>{
      "listening_ports", listen, "num_threads", std::to_string(kHttpThreads), "request_timeout_ms",
      std::to_string(kRequestTimeout.count()), "enable_keep_alive", "no"});
  if (exposer_->GetListeningPorts().empty()) {
    exposer_.reset();
    throw std::runtime_error("cannot listen on " + listen);
  }
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(device_states_);
  exposer_->RegisterCollectable(inventory_);
  exposer_->RegisterCollectable(source_health_);
  exposer_->RegisterCollectable(webhook_requests_);
  exposer_->RegisterCollectable(control_refusals_);
  exposer_->RegisterCollectable(numerics_);
}

std::vector<int> Metrics::listening_ports() const {
  return exposer_ ? exposer_->GetListeningPorts() : std::vector<int>{};
}

void Metrics::on_rules(const RuleSet& rules, std::span<const std::string_view> source_types) {
  // A knowledge base's thousand entries at 0 would be most of a node's series, at idle, on
  // every node of a fleet: their counters appear at their first match instead.
  for (const auto& id : rules.pack_rule_ids(source_types)) rule_matches_->Add({{"rule", id}});
  codes_->set_known(rules.known_codes());
  rules_loaded_->Set(static_cast<double>(rules.size()));
  if (build_info_current_ != nullptr) build_info_->Remove(build_info_current_);
  build_info_current_ =
      &build_info_->Add({{"version", FAULTD_VERSION}, {"ruleset_sha256", rules.sha256()}});
  build_info_current_->Set(1);
}

void Metrics::on_finding(const Finding& f, TimePoint committed) {
  // A recovery carries the code it recovers from, and so that code's level: counted here it
  // would look like one more fault to every alert on faultd_faults_total.
  if (!f.recovery) {
    faults_
        ->Add({{"device", f.device},
               {"level", std::string(to_string(f.level))},
               {"code", codes_->label(f.code)}})
        .Increment();
  }
  rule_matches_->Add({{"rule", f.rule}}).Increment();
  for (const auto& [key, value] : f.annotations) {
    if (key == "detector")
      detector_findings_->Add({{"rule", f.rule}, {"detector", value}}).Increment();
  }
  if (f.noticed != TimePoint{}) {
    detection_latency_->Observe(std::max(0.0, seconds(committed - f.noticed)));
  }
}

void Metrics::on_grouped(const Finding& f) { grouped_->Add({{"rule", f.rule}}).Increment(); }

void Metrics::on_shadow(const Finding& f) {
  shadow_->Add({{"rule", f.rule}}).Increment();
  rule_matches_->Add({{"rule", f.rule}}).Increment();
}

void Metrics::on_storm(const std::string& rule) { storms_->Add({{"rule", rule}}).Increment(); }

void Metrics::on_folded(const std::string& rule) { folded_->Add({{"rule", rule}}).Increment(); }

void Metrics::on_storms_refused(uint64_t findings) {
  // Created at its first count, as the folded incidents': a flood's signal, no series at idle.
  storms_refused_->Add({}).Increment(static_cast<double>(findings));
}

void Metrics::on_escalation(FaultLevel to) {
  escalations_->Add({{"level", std::string(to_string(to))}}).Increment();
}

void Metrics::on_incidents_open(size_t open) { incidents_open_->Set(static_cast<double>(open)); }

void Metrics::on_verdict(const std::string& verdict) {
  verdicts_->Add({{"verdict", verdict}}).Increment();
}

void Metrics::set_devices(std::shared_ptr<const DeviceView> view) {
  device_states_->set(view);
  inventory_->set(std::move(view));
}

void Metrics::on_outside_inventory(const std::string& rule) {
  outside_inventory_->Add({{"rule", rule}}).Increment();
}

void Metrics::on_discovery(std::string_view discoverer, bool ok) {
  discoveries_->Add({{"discoverer", std::string(discoverer)}, {"result", ok ? "ok" : "failed"}})
      .Increment();
}

void Metrics::set_refusals(std::shared_ptr<const Refusals> refusals) {
  device_states_->set(std::move(refusals));
}

void Metrics::on_actions_configured(const std::vector<std::string>& actions) {
  for (const auto& a : actions) {
    for (const char* result : {"success", "failure", "timeout", "skipped"}) {
      actions_->Add({{"action", a}, {"result", result}});
    }
    action_duration_->Add({{"action", a}}, kActionBuckets);
  }
}

void Metrics::on_action(const std::string& action, ActionStatus status, Duration took) {
  std::string result(to_string(status));
  if (status != ActionStatus::Success && status != ActionStatus::Timeout &&
      status != ActionStatus::Skipped) {
    result = "failure";
  }
  actions_->Add({{"action", action}, {"result", result}}).Increment();
  if (status != ActionStatus::Skipped) {
    action_duration_->Add({{"action", action}}, kActionBuckets).Observe(seconds(took));
  }
}

void Metrics::on_reload(bool ok) {
  reloads_->Add({{"result", ok ? "success" : "failure"}}).Increment();
}

void Metrics::on_isolation_budget(int remaining) {
  budget_remaining_->Set(remaining > 0 ? remaining : 0);
  budget_exhausted_->Set(remaining > 0 ? 0 : 1);
}

void Metrics::on_store_error() { store_errors_->Increment(); }

void Metrics::on_pruned(const PruneReport& report) {
  for (size_t i = 0; i < pruned_.size(); ++i) {
    pruned_[i]->Increment(static_cast<double>(report.deleted[i]));
  }
}

void Metrics::set_sources(std::vector<std::shared_ptr<Source>> sources) {
  source_health_->set(std::move(sources));
}

void Metrics::on_numerics(std::vector<DetectorBank::SeriesStats> series) {
  numerics_->set(std::move(series));
}

void Metrics::set_webhook_counts(CountsFn counts) { webhook_requests_->set(std::move(counts)); }

void Metrics::set_control_counts(CountsFn counts) { control_refusals_->set(std::move(counts)); }

std::string Metrics::render() const {
  std::vector<pm::MetricFamily> all = registry_->Collect();
  for (auto& f : device_states_->Collect()) all.push_back(std::move(f));
  for (auto& f : inventory_->Collect()) all.push_back(std::move(f));
  for (auto& f : source_health_->Collect()) all.push_back(std::move(f));
  for (auto& f : webhook_requests_->Collect()) all.push_back(std::move(f));
  for (auto& f : control_refusals_->Collect()) all.push_back(std::move(f));
  for (auto& f : numerics_->Collect()) all.push_back(std::move(f));
  return pm::TextSerializer().Serialize(all);
}

}  // namespace faultd
