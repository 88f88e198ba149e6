#include "daemon/app/app.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>
#include <csignal>
#include <filesystem>
#include <map>

#include "collectors/file/file_source.hpp"
#include "daemon/actions/action_manager.hpp"
#include "daemon/actions/hook_runner.hpp"
#include "daemon/app/logging.hpp"
#include "daemon/config/config.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/control/webhook_server.hpp"
#include "daemon/core/clock.hpp"
#include "daemon/core/json.hpp"
#include "daemon/export/metrics.hpp"
#include "daemon/state/state_machine.hpp"
#include "daemon/state/store.hpp"
#include "rules/detectors/bank.hpp"

namespace faultd {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr int kExitConfig = 78;
// The state database cannot be opened (damaged, read-only, newer schema): restarting cannot fix
// it, so the unit lists this code in RestartPreventExitStatus (EX_CANTCREAT).
constexpr int kExitStore = 73;
constexpr auto kDetectorTick = std::chrono::seconds(1);
// Descriptors kept out of the file sources' reach: sockets (metrics, control, webhook and their
// clients), SQLite, inotify, epoll and timer fds, hooks' and commands' pipes.
constexpr size_t kReservedDescriptors = 256;

// systemd gives a service a soft open-file limit of 1024 (the hard one is far higher) so that
// select() users stay safe; faultd uses no select(), and a file source follows every matching
// file with one open descriptor. Raised once at start.
void raise_descriptor_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max) return;
  const rlim_t before = lim.rlim_cur;
  lim.rlim_cur = lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) {
    spdlog::info("open files limit raised from {} to {}", before, lim.rlim_max);
  }
}

StateMachine::WarnTable warn_table(const PolicyConfig& p) {
  StateMachine::WarnTable w{};
  for (int i = 0; i < kFaultLevelCount; ++i)
    w[static_cast<size_t>(i)] = p.levels[static_cast<size_t>(i)].warn;
  return w;
}

StateMachine::WarnTable recover_table(const PolicyConfig& p) {
  StateMachine::WarnTable w{};
  for (int i = 0; i < kFaultLevelCount; ++i)
    w[static_cast<size_t>(i)] = p.levels[static_cast<size_t>(i)].recover;
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

// How far back incidents are loaded at start: the longest window any escalation counts over.
Duration lifecycle_memory(const PolicyConfig& p) {
  Duration keep = p.incident_ttl;
  for (const auto& e : p.escalations) keep = std::max({keep, e.window, e.release});
  return keep;
}

// What one committed chunk (or alert, or tick) changed, for metrics, logs and actions.
struct Outcome {
  std::vector<Transition> transitions;
  std::vector<Finding> fresh;      // journaled
  std::vector<Finding> grouped;    // counted into an open incident
  std::vector<Finding> incidents;  // an incident's first finding whose level was raised
  std::vector<Finding> shadow;
  std::vector<Finding> storms;  // the node-level incidents opened
  std::vector<FaultLevel> escalations;
};

std::vector<std::string> action_names(const Config& c) {
  std::vector<std::string> names;
  for (const auto& [name, a] : c.actions) names.push_back(name);
  return names;
}

ActionSettings action_settings(const Config& c) {
  ActionSettings s;
  s.node = c.node;
  s.dry_run = c.policy.dry_run;
  s.max_isolations = c.policy.max_isolations;
  s.isolation_window = c.policy.isolation_window;
  s.actions = c.actions;
  return s;
}

std::string value_of(const std::map<std::string, std::string>& map, const char* key) {
  auto it = map.find(key);
  return it == map.end() ? std::string() : it->second;
}

// A source plus what the io loop needs to drive it: its wake-up fd and its poll timer.
struct SourceSlot {
  SourceConfig config;
  std::string name;
  std::shared_ptr<Source> source;
  std::unique_ptr<asio::posix::stream_descriptor> wake;
  std::unique_ptr<asio::steady_timer> timer;
  int wake_source_fd = -1;  // the source's fd that `wake` duplicates
  bool poll_queued = false;
  bool retired = false;
  bool seen = false;  // the store knows this source completed a first scan
};

class Daemon final : public ChunkSink {
 public:
  explicit Daemon(std::string config_path)
      : config_path_(std::move(config_path)),
        signals_(io_, SIGTERM, SIGINT, SIGHUP),
        save_timer_(io_),
        watchdog_timer_(io_),
        machine_(StateMachine::WarnTable{}) {}

  int run();

 private:
  // Start-up steps, in order.
  bool load_config();
  bool open_store();
  bool start_metrics();
  bool start_control();
  bool start_webhook();
  void start_sources();
  void start_signals();
  void start_timers();
  void kick_watchdog(std::chrono::microseconds period);

  // The pipeline.
  bool on_chunk(const Chunk& chunk) override;
  void record(Store::Txn& txn, Finding& f, Outcome& out);
  void commit(Store::Txn& txn, const Transition& t, Outcome& out);
  void report(const Outcome& out);
  void tick_lifecycle();
  void reload_state();
  bool commit_findings(std::vector<Finding>& findings, const ReadPosition* position);
  void arm_detector_tick();
  void apply_transitions(const std::vector<Transition>& transitions,
                         const std::vector<Finding>& causes);
  void journal_actions(Store::Txn& txn, const Transition& t);
  void on_action_finished(const ActionRecord& record, const HookResult* result);
  void on_diagnosis(const ActionRecord& record);
  void undo_isolation(const Transition& t);
  std::optional<Transition> commit_transition(
      const std::function<std::optional<Transition>()>& change, Finding* operator_fault);

  // Sources.
  void add_source(const SourceConfig& cfg);
  std::shared_ptr<Source> make_source(const FileSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const CommandSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const KmsgSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const OverflowDumpSourceConfig& cfg, bool seen);
  void watch_wake_fd(const std::shared_ptr<SourceSlot>& slot);
  PositionLookup position_lookup();
  void arm_wake(const std::shared_ptr<SourceSlot>& slot);
  void arm_timer(const std::shared_ptr<SourceSlot>& slot);
  void queue_poll(const std::shared_ptr<SourceSlot>& slot);
  void poll(const std::shared_ptr<SourceSlot>& slot);
  void retire(const std::shared_ptr<SourceSlot>& slot);
  void publish_sources();
  void save_positions();
  void publish_budget();

  // Control.
  nlohmann::json handle(const nlohmann::json& request);
  nlohmann::json status() const;
  nlohmann::json events(const nlohmann::json& request) const;
  nlohmann::json operator_isolate(const nlohmann::json& request);
  nlohmann::json operator_clear(const nlohmann::json& request);
  nlohmann::json operator_ack(const nlohmann::json& request);
  nlohmann::json history(const nlohmann::json& request) const;
  nlohmann::json incidents(const nlohmann::json& request) const;
  nlohmann::json budget() const;

  // Alertmanager webhook: alerts carrying `faultd_action` drive this node's actions.
  WebhookServer::Reply on_alerts(const WebhookBatch& batch);
  nlohmann::json on_alert(const WebhookAlert& alert);
  bool alert_for_this_node(const WebhookAlert& alert) const;
  nlohmann::json webhook_isolate(const WebhookAlert& alert, const std::string& device);
  std::string reload();
  void shutdown();

  std::string config_path_;
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer save_timer_;
  asio::steady_timer watchdog_timer_;
  RealClock clock_;
  Config config_;
  std::unique_ptr<Store> store_;
  StateMachine machine_;
  Lifecycle lifecycle_;
  Metrics metrics_;
  std::unique_ptr<HookRunner> runner_;
  std::unique_ptr<ActionManager> actions_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<WebhookServer> webhook_;
  std::vector<std::shared_ptr<SourceSlot>> slots_;
  Source* polling_ = nullptr;      // the source whose chunk is being handled
  std::vector<Finding> findings_;  // reused per chunk
  DetectorBank detectors_;         // state of the training-numerics detectors
  asio::steady_timer detector_timer_{io_};
  bool detector_tick_armed_ = false;
  // Multi-line rule progress per source, across chunks (a context notices a new RuleSet after
  // a reload and starts over). Touched only on the io thread, like findings_.
  std::map<std::string, ScanContext, std::less<>> scan_contexts_;
  bool stopping_ = false;
};

bool Daemon::load_config() {
  ErrorList errors;
  auto cfg = faultd::load_config(config_path_, errors);
  if (!cfg) {
    spdlog::critical("configuration has {} error(s):", errors.size());
    for (const auto& e : errors.all()) spdlog::critical("{}", e.to_string());
    return false;
  }
  config_ = std::move(*cfg);
  set_log_level(config_.log_level);
  for (const auto& w : config_.warnings) spdlog::warn("config: {}", w);
  return true;
}

bool Daemon::open_store() {
  std::error_code ec;
  std::filesystem::create_directories(config_.state_dir, ec);
  try {
    store_ = std::make_unique<Store>(config_.state_dir + "/state.db");
  } catch (const StoreError& e) {
    spdlog::critical("state store: {}", e.what());
    return false;
  }
  machine_.set_policy(warn_table(config_.policy));
  machine_.set_recoverable(recover_table(config_.policy));
  lifecycle_.configure(lifecycle_settings(config_));
  try {
    reload_state();
  } catch (const StoreError& e) {
    spdlog::critical("state store: {}", e.what());
    return false;
  }
  metrics_.on_device_states(machine_.devices());
  size_t not_healthy = 0;
  for (const auto& [id, d] : machine_.devices()) not_healthy += d.state != DeviceState::Healthy;
  spdlog::info("state: {} device(s) known, {} not healthy (from {}/state.db)",
               machine_.devices().size(), not_healthy, config_.state_dir);
  return true;
}

bool Daemon::start_metrics() {
  detectors_.configure(*config_.rules);
  arm_detector_tick();
  metrics_.on_rules(config_.rules->rule_ids(), config_.rules->sha256());
  metrics_.on_actions_configured(action_names(config_));
  if (config_.metrics_listen.empty()) return true;
  try {
    metrics_.serve(config_.metrics_listen);
  } catch (const std::exception& e) {
    spdlog::critical("metrics: cannot listen on {}: {}", config_.metrics_listen, e.what());
    return false;
  }
  auto ports = metrics_.listening_ports();
  spdlog::info("metrics on http://{}/metrics (port {})", config_.metrics_listen,
               ports.empty() ? 0 : ports.front());
  return true;
}

bool Daemon::start_control() {
  control_ = std::make_unique<ControlServer>(io_, config_.control_socket, config_.control_group,
                                             [this](const nlohmann::json& r) { return handle(r); });
  try {
    control_->start();
  } catch (const std::exception& e) {
    spdlog::critical("control socket: {}", e.what());
    return false;
  }
  spdlog::info("control socket at {}", config_.control_socket);
  return true;
}

void Daemon::start_sources() {
  for (const auto& cfg : config_.sources) add_source(cfg);
  publish_sources();
}

PositionLookup Daemon::position_lookup() {
  Store* store = store_.get();
  return [store](const std::string& source, uint64_t dev,
                 uint64_t ino) -> std::optional<ReadPosition> {
    try {
      return store->find_position(source, dev, ino);
    } catch (const StoreError& e) {
      spdlog::error("state store: cannot look up a read position: {}", e.what());
      return std::nullopt;
    }
  };
}

std::shared_ptr<Source> Daemon::make_source(const FileSourceConfig& cfg, bool seen) {
  FileSourceConfig effective = cfg;
  // `start_at: end` is for the very first start: once this source has scanned, a file without a
  // stored position was created since, possibly while faultd was down, and is read in full.
  if (seen) effective.start_at = FileSourceConfig::StartAt::Beginning;
  effective.fd_reserve = kReservedDescriptors;
  spdlog::info("source {}: following {}", cfg.name, fmt::join(cfg.paths, ", "));
  return std::make_shared<FileSource>(effective, position_lookup());
}

std::shared_ptr<Source> Daemon::make_source(const CommandSourceConfig& cfg, bool) {
  spdlog::info("source {}: running {} every {}", cfg.name, fmt::join(cfg.argv, " "),
               format_duration(cfg.interval));
  return std::make_shared<CommandSource>(cfg);
}

std::shared_ptr<Source> Daemon::make_source(const KmsgSourceConfig& cfg, bool) {
  spdlog::info("source {}: kernel log {}", cfg.name, cfg.path);
  return std::make_shared<KmsgSource>(cfg, position_lookup());
}

std::shared_ptr<Source> Daemon::make_source(const OverflowDumpSourceConfig& cfg, bool) {
  spdlog::info("source {}: overflow dumps under {}", cfg.name, cfg.root);
  return std::make_shared<OverflowDumpSource>(cfg, position_lookup());
}

// A source's wake fd may change (the kernel log reopened, or opened late): follow it.
void Daemon::watch_wake_fd(const std::shared_ptr<SourceSlot>& slot) {
  const int fd = slot->source->wake_fd();
  if (fd == slot->wake_source_fd) return;
  boost::system::error_code ec;
  if (slot->wake) slot->wake->close(ec);
  slot->wake.reset();
  slot->wake_source_fd = fd;
  if (fd < 0) return;
  // asio owns a duplicate, so closing it never closes the source's own descriptor.
  slot->wake = std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(fd));
  arm_wake(slot);
}

void Daemon::add_source(const SourceConfig& cfg) {
  auto slot = std::make_shared<SourceSlot>();
  slot->config = cfg;
  slot->name = source_name(cfg);
  try {
    slot->seen = store_->source_seen(slot->name);
  } catch (const StoreError& e) {
    spdlog::error("state store: {}", e.what());
  }
  try {
    slot->source = std::visit([&](const auto& c) { return make_source(c, slot->seen); }, cfg);
  } catch (const std::exception& e) {
    // A source that cannot start (e.g. /dev/kmsg unreadable) is reported and left out; the
    // others run. Its metrics stay absent, which the source-health alert notices.
    spdlog::error("source {}: cannot start: {}", slot->name, e.what());
    return;
  }
  slot->timer = std::make_unique<asio::steady_timer>(io_);
  watch_wake_fd(slot);
  slots_.push_back(slot);
  queue_poll(slot);
  arm_timer(slot);
}

void Daemon::arm_wake(const std::shared_ptr<SourceSlot>& slot) {
  slot->wake->async_wait(asio::posix::stream_descriptor::wait_read,
                         [this, slot](boost::system::error_code ec) {
                           if (ec || slot->retired) return;
                           slot->source->drain_wake_fd();
                           queue_poll(slot);
                           arm_wake(slot);
                         });
}

void Daemon::arm_timer(const std::shared_ptr<SourceSlot>& slot) {
  slot->timer->expires_after(slot->source->poll_interval());
  slot->timer->async_wait([this, slot](boost::system::error_code ec) {
    if (ec || slot->retired) return;
    queue_poll(slot);
    arm_timer(slot);
  });
}

// Wake-ups are coalesced: however many inotify events arrive, one poll is queued.
void Daemon::queue_poll(const std::shared_ptr<SourceSlot>& slot) {
  if (slot->poll_queued || slot->retired) return;
  slot->poll_queued = true;
  asio::post(io_, [this, slot] { poll(slot); });
}

void Daemon::poll(const std::shared_ptr<SourceSlot>& slot) {
  slot->poll_queued = false;
  if (slot->retired || stopping_) return;
  polling_ = slot->source.get();
  bool more = false;
  try {
    more = slot->source->poll_once(clock_.now(), *this);
  } catch (const std::exception& e) {
    spdlog::error("source {}: {}", slot->name, e.what());
    slot->source->stats().count_error(SourceErrorKind::Read);
  }
  polling_ = nullptr;
  watch_wake_fd(slot);
  if (!slot->seen) {
    // The first scan decided where each file starts; make that durable before anything else.
    save_positions();
    try {
      store_->mark_source_seen(slot->name, clock_.now());
      slot->seen = true;
    } catch (const StoreError& e) {
      metrics_.on_store_error();
      spdlog::error("state store: {}", e.what());
    }
  }
  if (more) queue_poll(slot);  // yield to other work, then carry on
}

void Daemon::retire(const std::shared_ptr<SourceSlot>& slot) {
  slot->retired = true;
  boost::system::error_code ec;
  if (slot->wake) slot->wake->close(ec);
  slot->timer->cancel();
}

void Daemon::publish_sources() {
  std::vector<std::shared_ptr<Source>> sources;
  for (const auto& s : slots_) sources.push_back(s->source);
  metrics_.set_sources(std::move(sources));
}

void Daemon::publish_budget() {
  metrics_.on_isolation_budget(config_.policy.max_isolations - actions_->isolations_in_window());
}

void Daemon::save_positions() {
  std::vector<ReadPosition> all;
  for (const auto& s : slots_) {
    auto p = s->source->positions();
    all.insert(all.end(), p.begin(), p.end());
  }
  if (all.empty()) return;
  try {
    store_->save_positions(all);
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("state store: cannot save read positions: {}", e.what());
  }
}

bool Daemon::on_chunk(const Chunk& chunk) {
  findings_.clear();
  ScanStats stats;
  const TimePoint now = clock_.now();
  auto context = scan_contexts_.find(chunk.source);
  if (context == scan_contexts_.end()) {
    context = scan_contexts_.try_emplace(std::string(chunk.source)).first;
  }
  config_.rules->scan(chunk, now, findings_, &stats, &context->second);
  if (stats.device_refused > 0 && polling_ != nullptr) {
    for (uint64_t i = 0; i < stats.device_refused; ++i) {
      polling_->stats().count_error(SourceErrorKind::Device);
    }
  }
  if (detectors_.active() && !findings_.empty()) {
    detectors_.apply(findings_, now);  // detector inputs → only the verdicts they complete
    metrics_.on_numerics(detectors_.series_stats());
  }
  if (findings_.empty()) return true;  // the position is saved with the next periodic save
  const ReadPosition position{std::string(chunk.source), std::string(chunk.path), chunk.identity,
                              chunk.end_offset, chunk.end_line};
  return commit_findings(findings_, &position);
}

// Journals findings (with the read position that produced them, if any) in one transaction,
// then reports and acts on them. False when the store failed: the caller reads them again.
bool Daemon::commit_findings(std::vector<Finding>& findings, const ReadPosition* position) {
  Outcome out;
  try {
    Store::Txn txn(*store_);
    lifecycle_.anticipate(findings);  // a storm arriving at once isolates none of its devices
    for (auto& f : findings) record(txn, f, out);
    for (const auto& i : lifecycle_.take_dirty()) txn.save_incident(i);
    if (position != nullptr) txn.save_position(*position);
    txn.commit();
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("state store: cannot record {} finding(s) from {}: {}; will read them again",
                  findings.size(), position != nullptr ? position->path : "detectors", e.what());
    try {
      reload_state();  // the store is the truth
    } catch (const StoreError&) {
    }
    return false;
  }
  report(out);
  return true;
}

// A transition made inside a chunk's (or tick's) transaction: stored with the actions it asks
// for, and reported once the transaction commits.
void Daemon::commit(Store::Txn& txn, const Transition& t, Outcome& out) {
  txn.apply_transition(t);
  journal_actions(txn, t);
  out.transitions.push_back(t);
}

void Daemon::reload_state() {
  machine_.load(store_->load_devices());
  lifecycle_.load(store_->load_incidents(clock_.now() - lifecycle_memory(config_.policy)));
}

// One finding through the lifecycle (grouping, storms, escalation, recovery, shadow) and the
// state machine, inside the chunk's transaction.
void Daemon::record(Store::Txn& txn, Finding& f, Outcome& out) {
  const auto d = lifecycle_.decide(f, f.time);
  using Kind = Lifecycle::Kind;
  if (d.kind == Kind::Grouped) {
    out.grouped.push_back(f);
    return;
  }
  if (!txn.insert_finding(f)) return;  // journaled before: a re-read after a crash
  switch (d.kind) {
    case Kind::Shadow:
      out.shadow.push_back(f);
      return;
    case Kind::Recovery:
      if (auto t = machine_.recover(f.device, f.code, "recovered: " + f.rule, f.time)) {
        commit(txn, *t, out);
      }
      break;
    case Kind::Storm:
      if (d.storm_started) {
        Finding node;
        node.rule = "node.storm";
        node.source = "faultd";
        node.level = f.level;
        node.code = f.code;
        node.file = signature_of(f.rule, f.code);
        node.identity.ino = static_cast<uint64_t>(f.id);  // unique: the finding that tipped it
        node.time = node.noticed = f.time;
        node.text = d.storm_started->note;
        txn.insert_finding(node);
        Incident storm = *d.storm_started;
        storm.id = node.id;
        storm.count = 1;
        lifecycle_.storm_recorded(f, storm);
        out.storms.push_back(node);
      }
      break;
    case Kind::NewIncident: {
      lifecycle_.opened(f, d);
      Finding effective = f;
      effective.level = d.level;
      if (!d.escalation.empty()) out.escalations.push_back(d.level);
      if (auto t = machine_.on_finding(effective, f.time)) {
        if (!d.escalation.empty()) t->reason = f.rule + " (" + d.escalation + ")";
        commit(txn, *t, out);
      }
      break;
    }
    case Kind::Evidence:
      if (d.raised) {
        if (auto first = store_->find_fault(d.incident)) {
          first->level = d.level;
          out.escalations.push_back(d.level);
          if (auto t = machine_.on_finding(*first, f.time)) {
            t->reason = first->rule + " (" + d.escalation + ")";
            commit(txn, *t, out);
            out.incidents.push_back(*first);
          }
        }
      }
      break;
    case Kind::NoDevice:
    case Kind::Grouped:
      break;
  }
  out.fresh.push_back(f);
}

void Daemon::report(const Outcome& out) {
  const TimePoint committed = clock_.now();
  for (const auto& f : out.fresh) {
    metrics_.on_finding(f, committed);
    spdlog::warn("{}: rule={} device={} level={} code={} at {}:{}",
                 f.recovery ? "recovery" : "fault", f.rule, f.device.empty() ? "-" : f.device,
                 to_string(f.level), f.code, f.file, f.line);
  }
  for (const auto& f : out.grouped) {
    metrics_.on_finding(f, committed);
    metrics_.on_grouped(f);
  }
  for (const auto& f : out.shadow) {
    metrics_.on_shadow(f);
    spdlog::info("shadow: rule={} device={} level={} (mode: shadow, nothing done)", f.rule,
                 f.device.empty() ? "-" : f.device, to_string(f.level));
  }
  for (const auto& s : out.storms) {
    metrics_.on_storm(s.file);
    spdlog::error("node-level incident {}: {}", s.id, s.text);
  }
  for (auto level : out.escalations) metrics_.on_escalation(level);
  metrics_.on_incidents_open(lifecycle_.open_incidents().size());
  std::vector<Finding> causes = out.fresh;
  causes.insert(causes.end(), out.incidents.begin(), out.incidents.end());
  apply_transitions(out.transitions, causes);
}

// Time-based lifecycle changes (duration escalations, releases), once a second with the
// position save.
void Daemon::tick_lifecycle() {
  const TimePoint now = clock_.now();
  Outcome out;
  try {
    Store::Txn txn(*store_);
    for (const auto& i : lifecycle_.tick(now)) {
      std::optional<Transition> t;
      if (!i.open) {
        t = machine_.release(i.device, i.id, "released: " + i.note, now);
      } else if (auto f = store_->find_fault(i.id)) {
        f->level = i.level;
        out.escalations.push_back(i.level);
        t = machine_.on_finding(*f, now);
        if (t) t->reason = i.rule + " (" + i.escalation + ")";
        if (t) out.fresh.push_back(*f);
      }
      if (t) {
        commit(txn, *t, out);
      }
    }
    for (const auto& i : lifecycle_.take_dirty()) txn.save_incident(i);
    txn.commit();
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("state store: lifecycle update failed: {}", e.what());
    try {
      reload_state();
    } catch (const StoreError&) {
    }
    return;
  }
  for (auto level : out.escalations) metrics_.on_escalation(level);
  metrics_.on_incidents_open(lifecycle_.open_incidents().size());
  apply_transitions(out.transitions, out.fresh);
}

// The actions a transition asks for are journaled with the finding that caused it: a kill
// between that commit and the hooks' start must not forget them (resume_journal runs them).
void Daemon::journal_actions(Store::Txn& txn, const Transition& t) {
  if (t.to != DeviceState::Warning || t.fault_id == 0) return;
  for (const auto& name : config_.policy.levels[static_cast<size_t>(t.level)].actions) {
    if (config_.actions.count(name) != 0) txn.journal_action(name, t.device, t.fault_id, t.time);
  }
}

// Time-based detector verdicts (stalls). The timer runs only while a detector rule is loaded,
// so an idle faultd without them stays idle.
void Daemon::arm_detector_tick() {
  if (!detectors_.active() || detector_tick_armed_ || stopping_) return;
  detector_tick_armed_ = true;
  detector_timer_.expires_after(kDetectorTick);
  detector_timer_.async_wait([this](boost::system::error_code ec) {
    detector_tick_armed_ = false;
    if (ec || stopping_) return;
    auto verdicts = detectors_.tick(clock_.now());
    if (!verdicts.empty()) commit_findings(verdicts, nullptr);
    arm_detector_tick();
  });
}

void Daemon::apply_transitions(const std::vector<Transition>& transitions,
                               const std::vector<Finding>& causes) {
  if (transitions.empty()) return;
  metrics_.on_device_states(machine_.devices());
  for (const auto& t : transitions) {
    spdlog::warn("device {}: {} -> {} ({})", t.device, to_string(t.from), to_string(t.to),
                 t.reason);
    if (t.to != DeviceState::Warning || t.fault_id == 0) continue;
    const auto& policy = config_.policy.levels[static_cast<size_t>(t.level)];
    if (policy.actions.empty()) continue;
    for (const auto& f : causes) {
      if (f.id != t.fault_id) continue;
      try {
        actions_->start(policy.actions, f, /*by_operator=*/false);
      } catch (const StoreError& e) {
        metrics_.on_store_error();
        spdlog::error("actions for device {} not started: {}", t.device, e.what());
      }
    }
  }
  publish_budget();
}

std::optional<Transition> Daemon::commit_transition(
    const std::function<std::optional<Transition>()>& change, Finding* operator_fault) {
  Store::Txn txn(*store_);
  if (operator_fault != nullptr) txn.insert_finding(*operator_fault);
  auto t = change();
  if (t) txn.apply_transition(*t);
  try {
    txn.commit();
  } catch (const StoreError&) {
    machine_.load(store_->load_devices());
    throw;
  }
  if (t) {
    metrics_.on_device_states(machine_.devices());
    spdlog::warn("device {}: {} -> {} ({})", t->device, to_string(t->from), to_string(t->to),
                 t->reason);
    if (t->from == DeviceState::Isolated && t->to == DeviceState::Healthy) undo_isolation(*t);
  }
  return t;
}

// A device left isolation (operator clear, passing diagnosis, Alertmanager clear): the `clear`
// action, when configured, undoes what the isolate hook did in the cluster (the recipes read
// FAULTD_ACTION=clear). Keyed by the isolating incident, so it runs once per isolation.
void Daemon::undo_isolation(const Transition& t) {
  if (config_.actions.count(kClearAction) == 0 || t.fault_id == 0) return;
  try {
    if (auto incident = store_->find_fault(t.fault_id)) {
      actions_->start({kClearAction}, *incident, /*by_operator=*/true);
    }
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("device {}: clear action not started: {}", t.device, e.what());
  }
}

void Daemon::on_action_finished(const ActionRecord& record, const HookResult* result) {
  const Duration took = result != nullptr ? result->elapsed : Duration{0};
  metrics_.on_action(record.action, record.status, took);
  publish_budget();
  if (record.action == kDiagnoseAction && !config_.policy.dry_run) {
    on_diagnosis(record);
    return;
  }
  if (record.action != kIsolateAction || record.status != ActionStatus::Success ||
      config_.policy.dry_run) {
    return;
  }
  try {
    commit_transition(
        [&] {
          return machine_.isolate(record.device, "action isolate succeeded", record.fault_id,
                                  clock_.now());
        },
        nullptr);
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("device {}: isolated, but the state store failed: {}", record.device, e.what());
  }
}

// The diagnose hook's verdict (the vendor stress test): exit 0 = the device passed, so the cause
// is suspected in software and the device is released per policy; exit 1 = the device is faulty
// and stays isolated, marked for repair; exit 2 (no tool) or anything else = no verdict.
void Daemon::on_diagnosis(const ActionRecord& record) {
  std::string verdict;
  if (record.status == ActionStatus::Success) {
    verdict = "passed";
  } else if (record.status == ActionStatus::Failure && record.exit_code == 1) {
    verdict = "faulty";
  } else {
    metrics_.on_verdict("unavailable");
    spdlog::warn("device {}: no diagnosis verdict ({}, exit {})", record.device,
                 to_string(record.status), record.exit_code);
    return;
  }
  metrics_.on_verdict(verdict);
  const DeviceRecord* d = machine_.find(record.device);
  if (d == nullptr || d->fault_id != record.fault_id) {
    spdlog::info("device {}: diagnosis {} for an incident that is over; nothing changes",
                 record.device, verdict);
    return;
  }
  try {
    if (verdict == "passed" && config_.policy.release_on_diagnosis_pass) {
      commit_transition(
          [&] {
            return machine_.clear(record.device, "diagnosis passed: a software cause is suspected",
                                  clock_.now());
          },
          nullptr);
      return;
    }
    machine_.set_verdict(record.device, verdict);
    Store::Txn txn(*store_);
    txn.mark_device(*machine_.find(record.device));
    txn.commit();
    metrics_.on_device_states(machine_.devices());
    spdlog::warn("device {}: diagnosis {}{}", record.device, verdict,
                 verdict == "faulty" ? ": stays isolated, marked for repair" : "");
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("device {}: diagnosis {} not recorded: {}", record.device, verdict, e.what());
    try {
      reload_state();
    } catch (const StoreError&) {
    }
  }
}

nlohmann::json Daemon::handle(const nlohmann::json& r) {
  const std::string cmd = r.value("cmd", "");
  if (cmd == "status") return status();
  if (cmd == "events") return events(r);
  if (cmd == "isolate") return operator_isolate(r);
  if (cmd == "clear") return operator_clear(r);
  if (cmd == "ack") return operator_ack(r);
  if (cmd == "history") return history(r);
  if (cmd == "incidents") return incidents(r);
  if (cmd == "budget") return budget();
  if (cmd == "reload") {
    const std::string error = reload();
    if (error.empty()) return {{"ok", true}, {"rules", config_.rules->size()}};
    return {{"ok", false}, {"error", error}};
  }
  return {{"ok", false}, {"error", "unknown command '" + cmd + "'"}};
}

nlohmann::json Daemon::status() const {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& [id, d] : machine_.devices()) {
    devices.push_back({{"device", id},
                       {"state", std::string(to_string(d.state))},
                       {"reason", d.reason},
                       {"fault_id", d.fault_id},
                       {"level", d.fault_id != 0 ? std::string(to_string(d.level)) : ""},
                       {"rule", d.rule},
                       {"code", d.code},
                       {"since", format_time(d.since)},
                       {"verdict", d.verdict},
                       {"repair", d.verdict == "faulty"},
                       {"acked", d.acked},
                       {"ack_reason", d.ack_reason}});
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& s : slots_) {
    auto& st = s->source->stats();
    uint64_t errors = 0;
    for (int k = 0; k < kSourceErrorKindCount; ++k)
      errors += st.error_count(static_cast<SourceErrorKind>(k));
    sources.push_back({{"name", s->name},
                       {"files", st.files.load()},
                       {"lines", st.lines.load()},
                       {"bytes", st.bytes.load()},
                       {"lag_bytes", st.lag_bytes.load()},
                       {"errors", errors}});
  }
  return {{"ok", true},
          {"node", config_.node},
          {"version", FAULTD_VERSION},
          {"rules", config_.rules->size()},
          {"ruleset_sha256", config_.rules->sha256()},
          {"dry_run", config_.policy.dry_run},
          {"actions_in_flight", actions_->in_flight()},
          {"devices", devices},
          {"sources", sources}};
}

nlohmann::json Daemon::events(const nlohmann::json& r) const {
  FaultQuery q;
  q.device = r.value("device", "");
  if (r.contains("since")) {
    auto d = parse_duration(r.value("since", ""));
    if (!d) return {{"ok", false}, {"error", "since must be a duration such as 30m or 24h"}};
    q.since = clock_.now() - *d;
  }
  q.limit = r.value("limit", static_cast<size_t>(1000));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& f : store_->query_faults(q)) list.push_back(to_json(f));
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& a : store_->query_actions(q.device, q.limit)) {
    if (q.since && a.created < *q.since) continue;
    actions.push_back({{"id", a.id},
                       {"action", a.action},
                       {"device", a.device},
                       {"fault_id", a.fault_id},
                       {"status", std::string(to_string(a.status))},
                       {"attempts", a.attempts},
                       {"exit_code", a.exit_code},
                       {"detail", a.detail},
                       {"created", format_time(a.created)},
                       {"finished", a.finished == TimePoint{} ? "" : format_time(a.finished)}});
  }
  return {{"ok", true}, {"faults", list}, {"actions", actions}};
}

nlohmann::json Daemon::operator_isolate(const nlohmann::json& r) {
  const std::string device = r.value("device", "");
  const std::string reason = r.value("reason", "");
  if (!is_valid_device_id(device)) return {{"ok", false}, {"error", "invalid device id"}};
  if (reason.empty()) return {{"ok", false}, {"error", "a reason is required"}};
  // The operator's request is journaled as a fault of its own: it is the incident the
  // isolate hook runs for, and its id is the hook's idempotence key.
  Finding f;
  f.rule = "operator.isolate";
  f.source = "faultctl";
  f.device = device;
  f.level = FaultLevel::ManuallySeparateNPU;
  f.time = clock_.now();
  f.offset = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(f.time.time_since_epoch()).count());
  f.text = "operator: " + reason;
  auto t = commit_transition([&] { return machine_.isolate(device, f.text, f.id, f.time); }, &f);
  if (!t) return {{"ok", true}, {"changed", false}, {"state", "isolated"}};
  if (config_.actions.count(kIsolateAction) != 0) {
    actions_->start({kIsolateAction}, f, /*by_operator=*/true);
  }
  return {{"ok", true}, {"changed", true}, {"state", "isolated"}, {"fault_id", f.id}};
}

nlohmann::json Daemon::operator_clear(const nlohmann::json& r) {
  const std::string device = r.value("device", "");
  const std::string reason = r.value("reason", "");
  if (!is_valid_device_id(device)) return {{"ok", false}, {"error", "invalid device id"}};
  if (reason.empty()) return {{"ok", false}, {"error", "a reason is required"}};
  auto t = commit_transition(
      [&] { return machine_.clear(device, "operator: " + reason, clock_.now()); }, nullptr);
  return {{"ok", true}, {"changed", t.has_value()}, {"state", "healthy"}};
}

nlohmann::json Daemon::operator_ack(const nlohmann::json& r) {
  const std::string device = r.value("device", "");
  const std::string reason = r.value("reason", "");
  if (!is_valid_device_id(device)) return {{"ok", false}, {"error", "invalid device id"}};
  if (reason.empty()) return {{"ok", false}, {"error", "a reason is required"}};
  const DeviceRecord* d = machine_.find(device);
  if (d == nullptr || d->state == DeviceState::Healthy) {
    return {{"ok", false}, {"error", "device " + device + " has no incident to acknowledge"}};
  }
  machine_.acknowledge(device, "operator: " + reason);
  Store::Txn txn(*store_);
  txn.mark_device(*machine_.find(device));
  txn.commit();
  metrics_.on_device_states(machine_.devices());
  spdlog::info("device {}: incident {} acknowledged ({})", device, d->fault_id, reason);
  return {{"ok", true}, {"device", device}, {"fault_id", d->fault_id}};
}

nlohmann::json incident_json(const Incident& i) {
  return {{"id", i.id},
          {"device", i.device},
          {"rule", i.rule},
          {"code", i.code},
          {"level", std::string(to_string(i.level))},
          {"base_level", std::string(to_string(i.base_level))},
          {"first", format_time(i.first)},
          {"last", format_time(i.last)},
          {"count", i.count},
          {"open", i.open},
          {"node_level", i.node_level},
          {"escalation", i.escalation},
          {"note", i.note}};
}

nlohmann::json Daemon::history(const nlohmann::json& r) const {
  const std::string device = r.value("device", "");
  if (!is_valid_device_id(device)) return {{"ok", false}, {"error", "invalid device id"}};
  const auto limit = r.value("limit", static_cast<size_t>(100));
  nlohmann::json transitions = nlohmann::json::array();
  for (const auto& t : store_->query_transitions(device, limit)) transitions.push_back(to_json(t));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& i : store_->query_incidents(device, false, limit)) {
    list.push_back(incident_json(i));
  }
  return {{"ok", true}, {"device", device}, {"transitions", transitions}, {"incidents", list}};
}

nlohmann::json Daemon::incidents(const nlohmann::json& r) const {
  const std::string device = r.value("device", "");
  if (!device.empty() && !is_valid_device_id(device)) {
    return {{"ok", false}, {"error", "invalid device id"}};
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& i :
       store_->query_incidents(device, !r.value("all", false), r.value("limit", size_t{1000}))) {
    list.push_back(incident_json(i));
  }
  return {{"ok", true}, {"incidents", list}};
}

nlohmann::json Daemon::budget() const {
  const int used = actions_->isolations_in_window();
  const int max = config_.policy.max_isolations;
  return {{"ok", true},
          {"max_isolations", max},
          {"window", format_duration(config_.policy.isolation_window)},
          {"used", used},
          {"remaining", std::max(0, max - used)},
          {"exhausted", used >= max}};
}

bool Daemon::start_webhook() {
  if (config_.webhook_listen.empty()) return true;
  WebhookServer::Options options;
  options.listen = config_.webhook_listen;
  try {
    const auto token = read_webhook_token(config_.webhook_token_file);
    if (token.loose_permissions) {
      spdlog::warn("webhook: {} is readable by group or others", config_.webhook_token_file);
    }
    options.token = token.token;
    webhook_ = std::make_unique<WebhookServer>(
        io_, options, [this](const WebhookBatch& b) { return on_alerts(b); });
    webhook_->start();
  } catch (const std::exception& e) {
    spdlog::critical("webhook: {}", e.what());
    return false;
  }
  metrics_.set_webhook_counts([stats = webhook_->stats()] { return stats->counts(); });
  spdlog::info("Alertmanager webhook on {} (port {}), POST /api/v1/alerts", config_.webhook_listen,
               webhook_->port());
  return true;
}

// An alert is for this node when its `node` label names it, or its `instance` label's host does.
// An alert with neither label is taken as meant for the only node an Alertmanager serves.
bool Daemon::alert_for_this_node(const WebhookAlert& alert) const {
  if (auto it = alert.labels.find("node"); it != alert.labels.end()) {
    return it->second == config_.node;
  }
  if (auto it = alert.labels.find("instance"); it != alert.labels.end()) {
    const std::string& instance = it->second;
    const auto colon = instance.rfind(':');
    return instance.substr(0, colon) == config_.node;
  }
  return true;
}

WebhookServer::Reply Daemon::on_alerts(const WebhookBatch& batch) {
  if (batch.truncated_alerts > 0) {
    spdlog::warn("webhook: Alertmanager left out {} alert(s) of group {}", batch.truncated_alerts,
                 batch.group_key);
  }
  nlohmann::json results = nlohmann::json::array();
  try {
    for (const auto& alert : batch.alerts) results.push_back(on_alert(alert));
  } catch (const StoreError& e) {
    // Transient: Alertmanager retries on 5xx, and the journal makes the retry idempotent.
    metrics_.on_store_error();
    spdlog::error("webhook: state store failed: {}", e.what());
    return {503, dump_json({{"error", "state store unavailable"}})};
  }
  return {200, dump_json({{"results", results}})};
}

nlohmann::json Daemon::on_alert(const WebhookAlert& alert) {
  auto label = [&alert](const char* key) { return value_of(alert.labels, key); };
  const std::string action = label("faultd_action");
  const std::string device = label("device");
  nlohmann::json r = {{"alertname", label("alertname")}, {"fingerprint", alert.fingerprint}};
  auto outcome = [&r](const char* result, const std::string& reason) {
    r["result"] = result;
    if (!reason.empty()) r["reason"] = reason;
    return r;
  };
  if (action.empty()) return outcome("ignored", "no faultd_action label");
  if (!alert_for_this_node(alert)) return outcome("ignored", "for another node");
  if (alert.status != "firing") {
    spdlog::info("webhook: {} for device {} resolved", label("alertname"), device);
    return outcome("recorded", "resolved");
  }
  if (!is_valid_device_id(device)) return outcome("rejected", "missing or invalid device label");
  spdlog::info("webhook: {} asks for {} of device {}", label("alertname"), action, device);
  if (action == kIsolateAction) return webhook_isolate(alert, device);
  if (action == "clear") {
    auto t = commit_transition(
        [&] { return machine_.clear(device, "alertmanager: " + label("alertname"), clock_.now()); },
        nullptr);
    return outcome(t ? "done" : "unchanged", "");
  }
  if (config_.actions.count(action) == 0) return outcome("rejected", "action not configured");
  const DeviceRecord* d = machine_.find(device);
  std::optional<Finding> incident;
  if (d != nullptr && d->fault_id != 0) incident = store_->find_fault(d->fault_id);
  if (!incident) return outcome("rejected", "the device has no open incident to " + action);
  actions_->start({action}, *incident, /*by_operator=*/true);
  return outcome("started", "");
}

// An isolation requested by the cluster goes through the same journal, state machine, policy
// and budget as a local finding. The alert's fingerprint and start time key it, so the repeats
// Alertmanager sends (repeat_interval, retries) never isolate twice.
nlohmann::json Daemon::webhook_isolate(const WebhookAlert& alert, const std::string& device) {
  auto label = [&alert](const char* key) { return value_of(alert.labels, key); };
  Finding f;
  f.rule = "alertmanager.isolate";
  f.source = "alertmanager";
  f.device = device;
  f.level = parse_fault_level(label("level")).value_or(FaultLevel::SeparateNPU);
  f.code = code_label(label("code")) == "invalid" ? "" : label("code");
  f.time = f.noticed = clock_.now();
  uint64_t key = 1469598103934665603ULL;  // FNV-1a over the alert's identity
  for (char c : alert.fingerprint + "@" + alert.starts_at) {
    key = (key ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  f.identity.ino = key == 0 ? 1 : key;
  f.text = ("alertmanager: " + label("alertname") + " " + value_of(alert.annotations, "summary"))
               .substr(0, kMaxEvidenceBytes);
  std::vector<Transition> transitions;
  bool inserted = false;
  {
    Store::Txn txn(*store_);
    inserted = txn.insert_finding(f);
    if (inserted) {
      if (auto t = machine_.on_finding(f, f.time)) {
        txn.apply_transition(*t);
        journal_actions(txn, *t);
        transitions.push_back(*t);
      }
    }
    txn.commit();
  }
  nlohmann::json r = {
      {"alertname", label("alertname")}, {"fingerprint", alert.fingerprint}, {"fault_id", f.id}};
  if (!inserted) {
    r["result"] = "duplicate";
    return r;
  }
  metrics_.on_finding(f, clock_.now());
  apply_transitions(transitions, {f});
  const DeviceRecord* d = machine_.find(device);
  if (d != nullptr && d->state == DeviceState::Isolated) {
    r["result"] = "unchanged";
    r["reason"] = "already isolated";
    return r;
  }
  actions_->start({kIsolateAction}, f, /*by_operator=*/false);  // a no-op if policy started it
  r["result"] = "started";
  return r;
}

std::string Daemon::reload() {
  sd_notify(0, "RELOADING=1");
  ErrorList errors;
  auto cfg = faultd::load_config(config_path_, errors);
  if (!cfg) {
    metrics_.on_reload(false);
    spdlog::error("reload failed; keeping the running configuration. {} error(s):", errors.size());
    for (const auto& e : errors.all()) spdlog::error("{}", e.to_string());
    sd_notify(0, "READY=1");
    return errors.to_string();
  }
  auto needs_restart = [](const char* what, bool changed) {
    if (changed) spdlog::warn("reload: a change of {} takes effect at the next restart", what);
  };
  needs_restart("state_dir", cfg->state_dir != config_.state_dir);
  needs_restart("metrics.listen", cfg->metrics_listen != config_.metrics_listen);
  needs_restart("control.socket", cfg->control_socket != config_.control_socket);
  cfg->state_dir = config_.state_dir;
  cfg->metrics_listen = config_.metrics_listen;
  cfg->control_socket = config_.control_socket;

  // Positions first, so a replaced source resumes exactly where the old one stopped.
  save_positions();
  std::vector<std::shared_ptr<SourceSlot>> kept;
  std::vector<SourceConfig> added;
  for (const auto& want : cfg->sources) {
    auto it = std::find_if(slots_.begin(), slots_.end(),
                           [&](const auto& s) { return s->name == source_name(want); });
    if (it != slots_.end() && (*it)->config == want) {
      kept.push_back(*it);
    } else {
      added.push_back(want);
    }
  }
  for (const auto& s : slots_) {
    if (std::find(kept.begin(), kept.end(), s) == kept.end()) retire(s);
  }
  slots_ = std::move(kept);
  config_ = std::move(*cfg);
  set_log_level(config_.log_level);
  for (const auto& w : config_.warnings) spdlog::warn("config: {}", w);
  machine_.set_policy(warn_table(config_.policy));
  machine_.set_recoverable(recover_table(config_.policy));
  lifecycle_.configure(lifecycle_settings(config_));
  actions_->configure(action_settings(config_));
  publish_budget();
  for (const auto& a : added) add_source(a);
  publish_sources();
  detectors_.configure(*config_.rules);  // unchanged detector rules keep their state
  if (!detectors_.active()) detector_timer_.cancel();
  arm_detector_tick();
  metrics_.on_rules(config_.rules->rule_ids(), config_.rules->sha256());
  metrics_.on_actions_configured(action_names(config_));
  metrics_.on_reload(true);
  spdlog::info("reloaded: {} rule(s), {} source(s) ({} new)", config_.rules->size(), slots_.size(),
               added.size());
  sd_notify(0, "READY=1");
  return "";
}

void Daemon::start_signals() {
  signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      reload();
      start_signals();
      return;
    }
    spdlog::info("signal {}: stopping", sig);
    shutdown();
  });
}

void Daemon::start_timers() {
  save_timer_.expires_after(config_.position_save_interval);
  save_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    save_positions();
    tick_lifecycle();
    publish_budget();  // the window slides: the budget comes back without any event
    start_timers();
  });
}

void Daemon::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  if (control_) control_->stop();
  if (webhook_) webhook_->stop();
  save_positions();
  for (const auto& s : slots_) retire(s);
  runner_->shutdown();
  signals_.cancel();
  save_timer_.cancel();
  watchdog_timer_.cancel();
  detector_timer_.cancel();
  io_.stop();
}

int Daemon::run() {
  if (!load_config()) return kExitConfig;
  spdlog::info("faultd {} on node {}: {} rule(s) from {} file(s)", FAULTD_VERSION, config_.node,
               config_.rules->size(), config_.rule_files.size());
  if (!open_store()) return kExitStore;
  runner_ = std::make_unique<HookRunner>(io_);
  actions_ = std::make_unique<ActionManager>(
      *runner_, *store_, clock_,
      [this](const ActionRecord& r, const HookResult* res) { on_action_finished(r, res); });
  actions_->configure(action_settings(config_));
  publish_budget();
  if (!start_metrics() || !start_control() || !start_webhook()) return 1;
  start_sources();
  start_signals();
  start_timers();
  try {
    actions_->resume_journal();
  } catch (const StoreError& e) {
    spdlog::error("action journal: {}", e.what());
  }

  uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0) {
    kick_watchdog(std::chrono::microseconds(watchdog_usec / 2));
  }
  sd_notify(0, "READY=1\nSTATUS=detecting");
  spdlog::info("ready");
  io_.run();
  return 0;
}

// The watchdog is kicked from the io thread, so a wedged loop stops the kicks and systemd
// restarts faultd.
void Daemon::kick_watchdog(std::chrono::microseconds period) {
  watchdog_timer_.expires_after(period);
  watchdog_timer_.async_wait([this, period](boost::system::error_code ec) {
    if (ec || stopping_) return;
    sd_notify(0, "WATCHDOG=1");
    kick_watchdog(period);
  });
}

}  // namespace

int run_daemon(const AppOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);  // a hook or client that goes away must not kill faultd
  raise_descriptor_limit();
  try {
    Daemon daemon(options.config_path);
    return daemon.run();
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}

}  // namespace faultd
