#include "daemon/app/app.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "collectors/command/command_source.hpp"
#include "collectors/file/file_source.hpp"
#include "collectors/flight_recorder/flight_recorder_source.hpp"
#include "collectors/kmsg/kmsg_source.hpp"
#include "collectors/overflow_dump/overflow_dump_source.hpp"
#include "daemon/actions/action_manager.hpp"
#include "daemon/actions/hook_runner.hpp"
#include "daemon/app/alert_intake.hpp"
#include "daemon/app/commands.hpp"
#include "daemon/app/discovery.hpp"
#include "daemon/app/logging.hpp"
#include "daemon/config/config.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/control/webhook_server.hpp"
#include "daemon/core/child_process.hpp"
#include "daemon/core/clock.hpp"
#include "daemon/core/exit_codes.hpp"
#include "daemon/export/metrics.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/state/store.hpp"
#include "rules/matcher.hpp"

namespace faultd {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

constexpr auto kDetectorTick = std::chrono::seconds(1);
// Retention runs a batch at a time: the first a little after start (the sources have found their
// files by then, so their positions are saved, not pruned), then once a minute, and at once
// again while there is a backlog.
constexpr auto kFirstPrune = std::chrono::seconds(10);
constexpr auto kPruneInterval = std::chrono::minutes(1);
constexpr auto kPruneBacklog = std::chrono::milliseconds(100);
constexpr int64_t kPruneBatch = 1000;
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

// Whether `listen` can be bound now, as its listener binds it (SO_REUSEADDR): civetweb says only
// "possible problem binding to port", so the cause is found here first, and for a port in use,
// how to find its holder. "" when it can be bound, or when the address is not one to probe here
// (the listener then reports it).
std::string listen_problem(std::string_view key, const std::string& listen) {
  const auto parsed = parse_listen_address(listen);
  const auto* addr = std::get_if<ListenAddress>(&parsed);
  if (addr == nullptr || addr->port == 0) return "";
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(addr->host == "localhost" ? "127.0.0.1" : addr->host, ec);
  if (ec) return "";
  asio::io_context io;
  asio::ip::tcp::acceptor probe(io);
  const asio::ip::tcp::endpoint endpoint(ip, addr->port);
  probe.open(endpoint.protocol(), ec);
  if (!ec) probe.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) probe.bind(endpoint, ec);
  if (!ec) return "";
  if (ec == asio::error::address_in_use) {
    return fmt::format(
        "{} {}: address already in use (another faultd? find the holder: ss -ltnp 'sport = :{}')",
        key, listen, addr->port);
  }
  return fmt::format("{} {}: {}", key, listen, ec.message());
}

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
  s.max_concurrent_hooks = c.policy.max_concurrent_hooks;
  s.actions = c.actions;
  return s;
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
        watchdog_timer_(io_) {}
  // A start-up step that fails returns before the loop runs, with hooks and discoverers already
  // started: they are stopped here, while the members their completions touch still exist (the
  // members go in reverse order, the runner after the state its callbacks use: a busy metrics
  // port freed a discoverer's set twice).
  ~Daemon() override {
    try {
      shutdown();
    } catch (...) {  // the process is ending: a stop that fails must not terminate it
    }
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  int run();

 private:
  // Start-up steps, in order.
  bool load_config();
  bool lock_state_dir();
  bool open_store();
  void start_actions();
  bool start_metrics();
  bool start_control();
  bool start_webhook();
  void start_sources();
  void start_signals();
  void start_timers();
  void kick_watchdog(std::chrono::microseconds period);

  // Matching, then the pipeline; apply() carries out what a step asks for.
  bool on_chunk(const Chunk& chunk) override;
  void apply(const Step& step);
  void arm_detector_tick();

  // Sources.
  void add_source(const SourceConfig& cfg);
  std::shared_ptr<Source> make_source(const FileSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const CommandSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const KmsgSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const OverflowDumpSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const FlightRecorderSourceConfig& cfg, bool seen);
  std::shared_ptr<Source> make_source(const HangSourceConfig& cfg, bool seen);
  void watch_wake_fd(const std::shared_ptr<SourceSlot>& slot);
  PositionLookup position_lookup();
  void arm_wake(const std::shared_ptr<SourceSlot>& slot);
  void arm_timer(const std::shared_ptr<SourceSlot>& slot);
  void queue_poll(const std::shared_ptr<SourceSlot>& slot);
  void poll(const std::shared_ptr<SourceSlot>& slot);
  void retire(const std::shared_ptr<SourceSlot>& slot);
  std::vector<std::shared_ptr<Source>> sources() const;
  void save_positions();
  void publish_budget();
  void arm_prune(Duration after);
  void prune_journals();
  void publish_numerics();

  // The node's inventory: the config's devices at once, the discoverers now and every
  // inventory.interval (commands run through the hook runner: never blocking the io thread).
  void start_inventory();
  void discover();
  void run_discoverer(std::string_view by, const std::vector<std::string>& argv);
  void on_discovered(std::string_view by, const std::optional<Discovery>& found,
                     const std::string& failure);

  std::string reload();
  void configure();  // what follows the config: pipeline, matcher, actions, metrics
  void shutdown();

  std::string config_path_;
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer save_timer_;
  asio::steady_timer watchdog_timer_;
  RealClock clock_;
  Config config_;
  UniqueFd state_lock_;  // held for the process's life: one faultd per state_dir
  std::unique_ptr<Store> store_;
  std::unique_ptr<Pipeline> pipeline_;
  Matcher matcher_;
  LogClock log_clock_;  // before the sources that read it (hang sources), so it outlives them
  Metrics metrics_;
  std::unique_ptr<HookRunner> runner_;
  std::unique_ptr<ActionManager> actions_;
  std::unique_ptr<AlertIntake> alerts_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<WebhookServer> webhook_;
  std::vector<std::shared_ptr<SourceSlot>> slots_;
  std::vector<Finding> findings_;  // reused per chunk
  // Every source's positions as last saved: the periodic save writes only those that moved, so
  // an idle node with thousands of files writes nothing.
  using PositionKey = std::tuple<std::string, uint64_t, uint64_t>;  // source, dev, ino
  std::map<PositionKey, ReadPosition> saved_positions_;
  asio::steady_timer detector_timer_{io_};
  asio::steady_timer prune_timer_{io_};
  asio::steady_timer inventory_timer_{io_};
  // Per discoverer: why its last run failed ("" after a success), so that a failure is logged
  // when it starts or changes, not at every run; and which runs are under way.
  std::map<std::string, std::string, std::less<>> discoverer_failures_;
  std::set<std::string, std::less<>> discoverers_running_;
  std::map<std::string, std::optional<DiscovererCommand>, std::less<>> discoverer_commands_;
  // Per discoverer: what its inventory line last said.
  std::map<std::string, std::string, std::less<>> inventory_logged_;
  bool detector_tick_armed_ = false;
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
  apply_log_config(config_.log);
  for (const auto& w : config_.warnings) spdlog::warn("config: {}", w);
  for (const auto& e : config_.setup_errors.all()) spdlog::warn("config: {}", e.to_string());
  return true;
}

// Two faultd on one state_dir would follow the same read positions and both run hooks, so the
// second one stops here: an exclusive flock on state_dir/faultd.lock, held (the descriptor kept
// open) for the process's life and dropped by the kernel however it ends. O_CLOEXEC: a hook
// that outlives faultd must not keep the next one out. The file holds the owner's pid, to name
// it.
bool Daemon::lock_state_dir() {
  std::error_code ec;
  std::filesystem::create_directories(config_.state_dir, ec);
  const std::string path = config_.state_dir + "/faultd.lock";
  state_lock_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  const bool read_only = !state_lock_.valid() && errno == EROFS;
  if (read_only) {
    // A read-only state directory is the store's to explain (state.db cannot be written); a
    // lock file left there still locks when opened for reading.
    state_lock_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!state_lock_.valid() && errno == ENOENT) return true;
  }
  if (!state_lock_.valid()) {
    spdlog::critical("state: cannot open the lock file {}: {}", path, std::strerror(errno));
    return false;
  }
  if (::flock(state_lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) {
      spdlog::critical("state: cannot lock {}: {}", path, std::strerror(err));
      return false;
    }
    std::array<char, 32> buf{};
    const ssize_t n = ::pread(state_lock_.get(), buf.data(), buf.size() - 1, 0);
    std::string pid(buf.data(), n > 0 ? static_cast<size_t>(n) : 0);
    pid.erase(std::find_if(pid.begin(), pid.end(), [](char c) { return c < '0' || c > '9'; }),
              pid.end());
    spdlog::critical(
        "another faultd (pid {}) uses the state directory {} (it holds {}): one faultd per "
        "state_dir; stop that one first, or give this one another state_dir",
        pid.empty() ? "unknown" : pid, config_.state_dir, path);
    return false;
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (read_only) return true;
  if (::ftruncate(state_lock_.get(), 0) != 0 ||
      ::pwrite(state_lock_.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    spdlog::warn("state: cannot write the pid to {}: {}", path, std::strerror(errno));
  }
  return true;
}

bool Daemon::open_store() {
  try {
    store_ = std::make_unique<Store>(config_.state_dir + "/state.db");
    try {
      store_->enable_incremental_vacuum();
    } catch (const StoreError& e) {
      spdlog::warn("state store: {}; pruned space is reused but the file will not shrink",
                   e.what());
    }
    pipeline_ = std::make_unique<Pipeline>(*store_, clock_);
    pipeline_->configure(config_);
    pipeline_->load();
  } catch (const StoreError& e) {
    spdlog::critical("state store: {}", e.what());
    return false;
  }
  size_t not_healthy = 0;
  for (const auto& [id, d] : pipeline_->devices()) not_healthy += d.state != DeviceState::Healthy;
  spdlog::info("state: {} device(s) known, {} not healthy (from {}/state.db)",
               pipeline_->devices().size(), not_healthy, config_.state_dir);
  return true;
}

void Daemon::start_actions() {
  runner_ = std::make_unique<HookRunner>(io_);
  actions_ = std::make_unique<ActionManager>(
      *runner_, *store_, clock_, [this](const ActionRecord& r, const HookResult* res) {
        metrics_.on_action(r.action, r.status, res != nullptr ? res->elapsed : Duration{0});
        apply(pipeline_->on_action_finished(r));
      });
  actions_->configure(action_settings(config_));
}

bool Daemon::start_metrics() {
  metrics_.set_devices(pipeline_->device_view());
  metrics_.set_refusals(matcher_.refusals());
  if (config_.metrics_listen.empty()) return true;
  if (auto problem = listen_problem("metrics.listen", config_.metrics_listen); !problem.empty()) {
    spdlog::critical("{}", problem);
    return false;
  }
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
  CommandContext context{config_,
                         *store_,
                         *pipeline_,
                         *actions_,
                         clock_,
                         [this] { return sources(); },
                         [this](const Step& step) { apply(step); },
                         [this] { return reload(); }};
  ControlLimits limits;
  if (config_.control_idle_timeout) {
    limits.idle_timeout =
        std::chrono::duration_cast<std::chrono::milliseconds>(*config_.control_idle_timeout);
  }
  control_ = std::make_unique<ControlServer>(
      io_, config_.control_socket, config_.control_group,
      [context](const nlohmann::json& r) { return handle_command(context, r); }, limits);
  try {
    control_->start();
  } catch (const std::exception& e) {
    spdlog::critical("control socket: {}", e.what());
    return false;
  }
  metrics_.set_control_counts([stats = control_->stats()] { return stats->counts(); });
  spdlog::info("control socket at {}", config_.control_socket);
  return true;
}

void Daemon::start_sources() {
  for (const auto& cfg : config_.sources) add_source(cfg);
  metrics_.set_sources(sources());
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

std::shared_ptr<Source> Daemon::make_source(const FlightRecorderSourceConfig& cfg, bool) {
  spdlog::info("source {}: Flight Recorder dumps {}<rank>", cfg.name, cfg.prefix);
  return std::make_shared<FlightRecorderSource>(cfg);
}

std::shared_ptr<Source> Daemon::make_source(const HangSourceConfig& cfg, bool) {
  spdlog::info("source {}: hang verdict from {} every {} ({} polls)", cfg.name, cfg.program,
               format_duration(cfg.thresholds.interval), cfg.thresholds.polls);
  return std::make_shared<HangSource>(cfg, log_clock_);
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
  bool more = false;
  try {
    more = slot->source->poll_once(clock_.now(), *this);
  } catch (const std::exception& e) {
    spdlog::error("source {}: {}", slot->name, e.what());
    slot->source->stats().count_error(SourceErrorKind::Read);
  }
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

std::vector<std::shared_ptr<Source>> Daemon::sources() const {
  std::vector<std::shared_ptr<Source>> out;
  for (const auto& s : slots_) out.push_back(s->source);
  return out;
}

void Daemon::publish_budget() {
  metrics_.on_isolation_budget(config_.policy.max_isolations - actions_->isolations_in_window());
}

void Daemon::save_positions() {
  std::map<PositionKey, ReadPosition> now;
  std::vector<ReadPosition> moved;
  for (const auto& s : slots_) {
    for (const auto& p : s->source->positions()) {
      ReadPosition clamped = matcher_.clamp(p);
      PositionKey key{clamped.source, clamped.identity.dev, clamped.identity.ino};
      const auto saved = saved_positions_.find(key);
      if (saved == saved_positions_.end() || !(saved->second == clamped)) moved.push_back(clamped);
      now.emplace(std::move(key), std::move(clamped));
    }
  }
  if (!moved.empty()) {
    try {
      store_->save_positions(moved);
    } catch (const StoreError& e) {
      metrics_.on_store_error();
      spdlog::error("state store: cannot save read positions: {}", e.what());
      return;  // saved again next time
    }
  }
  saved_positions_ = std::move(now);  // files no longer followed are forgotten
}

bool Daemon::on_chunk(const Chunk& chunk) {
  log_clock_.on_chunk(chunk, clock_.now());  // the hang verdict's "log silent" half
  findings_.clear();
  const size_t matches = matcher_.match(chunk, clock_.now(), findings_);
  if (matcher_.detectors_active() && matches > 0) publish_numerics();
  arm_detector_tick();                 // a finding may wait for the lines after it
  if (findings_.empty()) return true;  // the position is saved with the next periodic save
  // A finding held for the lines after it is not yet journaled: the saved position stops
  // before it, so a crash re-reads it.
  const ReadPosition position = matcher_.clamp({std::string(chunk.source), std::string(chunk.path),
                                                chunk.identity, chunk.end_offset, chunk.end_line});
  const Step step = pipeline_->record(findings_, &position);
  // The step saved its own position: the next periodic save writes this file's again.
  saved_positions_.erase({position.source, position.identity.dev, position.identity.ino});
  apply(step);
  return step.store_error.empty();  // else the source offers the chunk again
}

// The training series per (device, rank). Once the inventory is known only its devices (and
// series that name none) are exported, under their canonical ids: a log cannot add series.
void Daemon::publish_numerics() {
  auto series = matcher_.series_stats();
  const Inventory& inventory = pipeline_->inventory();
  if (inventory.known()) {
    std::erase_if(series, [&](DetectorBank::SeriesStats& s) {
      if (s.device.empty()) return false;
      auto id = inventory.resolve(s.device);
      if (!id) return true;
      s.device = *id;
      return false;
    });
  }
  metrics_.on_numerics(std::move(series));
}

// What a committed step changed goes to the metrics and the log; the hooks it asks for start.
void Daemon::apply(const Step& step) {
  if (!step.store_error.empty()) {
    metrics_.on_store_error();
    return;
  }
  const TimePoint committed = clock_.now();
  for (const auto& f : step.journaled) {
    metrics_.on_finding(f, committed);
    spdlog::warn("{}: rule={} device={} level={} code={} at {}:{}",
                 f.recovery ? "recovery" : "fault", f.rule, f.device.empty() ? "-" : f.device,
                 to_string(f.level), f.code, f.file, f.line);
  }
  for (const auto& f : step.grouped) {
    metrics_.on_finding(f, committed);
    metrics_.on_grouped(f);
  }
  for (const auto& f : step.shadow) {
    metrics_.on_shadow(f);
    spdlog::info("shadow: rule={} device={} level={} (mode: shadow, nothing done)", f.rule,
                 f.device.empty() ? "-" : f.device, to_string(f.level));
  }
  for (const auto& rule : step.outside) metrics_.on_outside_inventory(rule);
  for (const auto& f : step.outside_journaled) {
    spdlog::warn("finding for device {} ignored: {} (rule={} at {}:{})", f.device,
                 f.annotations.empty() ? "" : f.annotations.back().second, f.rule, f.file, f.line);
  }
  for (const auto& rule : step.folded) metrics_.on_folded(rule);
  if (step.storms_refused > 0) metrics_.on_storms_refused(step.storms_refused);
  for (const auto& s : step.storms) {
    metrics_.on_storm(rule_of_signature(s.file));  // the rule alone: its code is the log's
    spdlog::error("node-level incident {}: {}", s.id, s.text);
  }
  if (!step.ignored.empty()) spdlog::warn("action isolate: {}", step.ignored);
  for (const auto& a : step.skipped) {
    metrics_.on_action(a.action, ActionStatus::Skipped, Duration{0});
    spdlog::warn("action {} for device {} fault {}: skipped ({})", a.action, a.device, a.fault_id,
                 a.detail);
  }
  for (auto level : step.escalations) metrics_.on_escalation(level);
  if (step.verdict) metrics_.on_verdict(*step.verdict);
  metrics_.on_incidents_open(step.open_incidents);
  for (const auto& t : step.transitions) {
    spdlog::warn("device {}: {} -> {} ({})", t.device, to_string(t.from), to_string(t.to),
                 t.reason);
  }
  for (const auto& a : step.actions) {
    try {
      actions_->start(a.actions, a.fault, a.by_operator);
    } catch (const StoreError& e) {
      metrics_.on_store_error();
      spdlog::error("actions for device {} not started: {}", a.fault.device, e.what());
    }
  }
  if (!step.actions.empty() || !step.transitions.empty()) publish_budget();
}

// Time-based detector verdicts (stalls) and findings held for their neighbouring lines past
// their time. The timer runs only while a detector rule is loaded or a finding is held, so an
// idle faultd without them stays idle.
void Daemon::arm_detector_tick() {
  if (!matcher_.needs_tick() || detector_tick_armed_ || stopping_) return;
  detector_tick_armed_ = true;
  detector_timer_.expires_after(kDetectorTick);
  detector_timer_.async_wait([this](boost::system::error_code ec) {
    detector_tick_armed_ = false;
    if (ec || stopping_) return;
    auto verdicts = matcher_.tick(clock_.now());
    if (!verdicts.empty()) apply(pipeline_->record(verdicts, nullptr));
    arm_detector_tick();
  });
}

bool Daemon::start_webhook() {
  if (config_.webhook_listen.empty()) return true;
  if (auto problem = listen_problem("webhook.listen", config_.webhook_listen); !problem.empty()) {
    spdlog::critical("{}", problem);
    return false;
  }
  WebhookServer::Options options;
  options.listen = config_.webhook_listen;
  try {
    const auto token = read_webhook_token(config_.webhook_token_file);
    if (token.loose_permissions) {
      spdlog::warn("webhook: {} is readable by group or others", config_.webhook_token_file);
    }
    options.token = token.token;
    alerts_ = std::make_unique<AlertIntake>(config_, *pipeline_, clock_,
                                            [this](const Step& step) { apply(step); });
    webhook_ = std::make_unique<WebhookServer>(
        io_, options, [this](const WebhookBatch& b) { return alerts_->on_alerts(b); });
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
  needs_restart("control.idle_timeout", cfg->control_idle_timeout != config_.control_idle_timeout);
  needs_restart("webhook.listen", cfg->webhook_listen != config_.webhook_listen);
  cfg->state_dir = config_.state_dir;
  cfg->metrics_listen = config_.metrics_listen;
  cfg->control_socket = config_.control_socket;
  cfg->control_idle_timeout = config_.control_idle_timeout;
  cfg->webhook_listen = config_.webhook_listen;
  // A rotated webhook token takes effect now: the token file is read again, and a file that
  // cannot serve fails the reload (the running token stays) rather than leaving the old one
  // silently in force.
  std::optional<std::string> token;
  if (webhook_) {
    try {
      const auto read = read_webhook_token(cfg->webhook_token_file);
      if (read.loose_permissions) {
        spdlog::warn("webhook: {} is readable by group or others", cfg->webhook_token_file);
      }
      token = read.token;
    } catch (const std::exception& e) {
      metrics_.on_reload(false);
      spdlog::error("reload failed; keeping the running configuration: webhook: {}", e.what());
      sd_notify(0, "READY=1");
      return std::string("webhook: ") + e.what();
    }
  }

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
  if (token) webhook_->set_token(std::move(*token));
  apply_log_config(config_.log);
  for (const auto& w : config_.warnings) spdlog::warn("config: {}", w);
  for (const auto& e : config_.setup_errors.all()) spdlog::warn("config: {}", e.to_string());
  configure();
  for (const auto& a : added) add_source(a);
  metrics_.set_sources(sources());
  metrics_.on_reload(true);
  spdlog::info("reloaded: {} rule(s), {} source(s) ({} new)", config_.rules->size(), slots_.size(),
               added.size());
  sd_notify(0, "READY=1");
  return "";
}

// Everything that follows the config in force, at start and on every reload.
void Daemon::configure() {
  pipeline_->configure(config_);
  matcher_.configure(config_.rules);  // unchanged detector rules keep their state
  if (!matcher_.needs_tick()) detector_timer_.cancel();
  arm_detector_tick();
  actions_->configure(action_settings(config_));
  publish_budget();
  metrics_.on_rules(*config_.rules, chunk_source_types(config_.sources));
  metrics_.on_actions_configured(action_names(config_));
  if (!stopping_ && runner_) start_inventory();
}

void Daemon::start_inventory() {
  discoverer_commands_.clear();
  apply(pipeline_->discovered(discovery_from_config(config_.inventory.devices)));
  inventory_timer_.cancel();
  discover();
}

void Daemon::discover() {
  const InventoryConfig& inv = config_.inventory;
  if (!inv.dev_dir.empty()) {
    try {
      on_discovered(kDevDiscoverer, discovery_from_dev(inv.dev_dir), "");
    } catch (const std::exception& e) {
      on_discovered(kDevDiscoverer, std::nullopt, e.what());
    }
  }
  if (!inv.npu_smi.empty()) run_discoverer(kNpuSmiDiscoverer, inv.npu_smi);
  if (!inv.nvidia_smi.empty()) run_discoverer(kNvidiaSmiDiscoverer, inv.nvidia_smi);
  inventory_timer_.expires_after(inv.interval);
  inventory_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec && !stopping_) discover();
  });
}

void Daemon::run_discoverer(std::string_view by, const std::vector<std::string>& argv) {
  // The program is looked up once per config (start_inventory), again while it is not found.
  auto& command = discoverer_commands_[std::string(by)];
  if (!command) {
    std::string error;
    command = discoverer_command(argv, error);
    if (!command) return on_discovered(by, std::nullopt, error);
    spdlog::info("inventory: {} runs {}", by, command->argv.front());
  }
  if (!discoverers_running_.emplace(by).second) return;  // the last run still runs
  HookSpec spec;
  spec.argv = command->argv;
  spec.timeout = config_.inventory.timeout;
  spec.kill_grace = std::chrono::seconds(1);
  spec.output_cap = 1 << 20;
  HookInput input;
  input.env = command->env;
  runner_->run(spec, std::move(input), [this, by = std::string(by)](const HookResult& r) {
    discoverers_running_.erase(by);
    if (stopping_) return;
    std::string failure;
    std::optional<Discovery> found;
    if (r.outcome == HookResult::Outcome::TimedOut) {
      failure = "timed out after " + format_duration(config_.inventory.timeout);
    } else if (!r.success()) {
      const std::string first_line = r.output.substr(0, r.output.find('\n')).substr(0, 200);
      failure = !r.error.empty() ? r.error
                : r.outcome == HookResult::Outcome::Signaled
                    ? "killed by signal " + std::to_string(r.signal)
                    : "exit " + std::to_string(r.exit_code) + ": " + first_line;
    } else if (by == kNpuSmiDiscoverer) {
      if (auto table = command_parsers::parse_npu_smi_info(r.output, failure)) {
        found = discovery_from_npu_smi(*table);
      }
    } else if (auto gpus = command_parsers::parse_nvidia_smi_gpus(r.output, failure)) {
      if (std::all_of(gpus->begin(), gpus->end(), [](const auto& g) { return !g.index.empty(); })) {
        found = discovery_from_nvidia_smi(*gpus);
      } else {
        failure = "the query has no index column";
      }
    }
    on_discovered(by, found, failure);
  });
}

// A failed run changes nothing (a tool that cannot answer has not lost the devices); the failure
// is logged when it starts or its reason changes, and when the discoverer works again.
void Daemon::on_discovered(std::string_view by, const std::optional<Discovery>& found,
                           const std::string& failure) {
  metrics_.on_discovery(by, found.has_value());
  auto [it, first] = discoverer_failures_.try_emplace(std::string(by));
  if (!found) {
    if (it->second != failure) {
      spdlog::warn("inventory: {} failed: {}{}", by, failure,
                   first ? " (not used for the inventory until it works)" : "");
    }
    it->second = failure;
    return;
  }
  if (!it->second.empty()) spdlog::info("inventory: {} works again", by);
  it->second.clear();
  const Step step = pipeline_->discovered(*found);
  // Logged the first time and when it changes, not at every run: a run always "changes" the
  // inventory (each device's last_seen), and the line said the same thing every interval.
  std::string summary =
      fmt::format("{} device(s); {} known, {} expected", found->devices.size(),
                  pipeline_->inventory().devices().size(), pipeline_->inventory().expected());
  if (auto& logged = inventory_logged_[std::string(by)]; logged != summary) {
    spdlog::info("inventory: {} lists {}", by, summary);
    logged = std::move(summary);
  }
  apply(step);
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

void Daemon::arm_prune(Duration after) {
  prune_timer_.expires_after(after);
  prune_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec && !stopping_) prune_journals();
  });
}

void Daemon::prune_journals() {
  const TimePoint now = clock_.now();
  try {
    // A followed file's position is saved only when it moves; save them all before the old
    // ones go, so that a quiet file keeps its place.
    if (auto oldest = store_->oldest_position_update();
        oldest && *oldest < now - config_.retention.max_age) {
      saved_positions_.clear();
      save_positions();
    }
    const PruneReport report = store_->prune(config_.retention, now, kPruneBatch);
    metrics_.on_pruned(report);
    arm_prune(report.more ? Duration(kPruneBacklog) : Duration(kPruneInterval));
  } catch (const StoreError& e) {
    metrics_.on_store_error();
    spdlog::error("state store: retention: {}", e.what());
    arm_prune(kPruneInterval);
  }
}

void Daemon::start_timers() {
  save_timer_.expires_after(config_.position_save_interval);
  save_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_) return;
    save_positions();
    apply(pipeline_->tick());
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
  if (runner_) runner_->shutdown();
  signals_.cancel();
  save_timer_.cancel();
  watchdog_timer_.cancel();
  detector_timer_.cancel();
  prune_timer_.cancel();
  inventory_timer_.cancel();
  io_.stop();
}

int Daemon::run() {
  if (!load_config()) return kExitConfig;
  spdlog::info("faultd {} on node {}: {} rule(s) from {} file(s)", FAULTD_VERSION, config_.node,
               config_.rules->size(), config_.rule_files.size());
  if (!lock_state_dir() || !open_store()) return kExitStore;
  start_actions();
  configure();
  if (!start_metrics() || !start_control() || !start_webhook()) return 1;
  start_sources();
  start_signals();
  start_timers();
  arm_prune(kFirstPrune);
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
