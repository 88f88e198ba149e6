#include "collectors/command/command_source.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "daemon/core/child_process.hpp"
#include "daemon/core/hash.hpp"
#include "daemon/core/log_limiter.hpp"
#include "daemon/core/terminal_text.hpp"

extern char** environ;

namespace faultd {

using command_parsers::DeviceHealth;

namespace {

constexpr Duration kKillGrace = std::chrono::seconds(1);
// EOF usually comes a moment before the exit status can be collected; look again this soon.
constexpr Duration kReapRetry = std::chrono::milliseconds(10);
constexpr size_t kMaxDevices = 4096;
// The part of a failed command's output its failure reason quotes.
constexpr size_t kMaxReasonLine = 200;

uint64_t stream_hash(std::string_view source, std::string_view device) {
  uint64_t h = fnv1a64(source, kFnvLegacySeed);  // stored keys were made with this seed
  h = fnv1a64(std::string_view("\0", 1), h);
  h = fnv1a64(device, h);
  return h == 0 ? 1 : h;  // ino 0 would read as "no identity"
}

uint64_t unix_micros(TimePoint t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch());
  return us.count() > 0 ? static_cast<uint64_t>(us.count()) : 0;
}

std::vector<std::string> substitute(const std::vector<std::string>& argv,
                                    const std::string& device) {
  std::vector<std::string> out = argv;
  for (std::string& arg : out) {
    for (size_t pos = arg.find(kDevicePlaceholder); pos != std::string::npos;
         pos = arg.find(kDevicePlaceholder, pos + device.size())) {
      arg.replace(pos, kDevicePlaceholder.size(), device);
    }
  }
  return out;
}

bool has_placeholder(const std::vector<std::string>& argv) {
  return std::any_of(argv.begin(), argv.end(), [](const std::string& a) {
    return a.find(kDevicePlaceholder) != std::string::npos;
  });
}

// The value after `flag` in argv ("-i 3" → "3"), empty if absent.
std::string flag_value(const std::vector<std::string>& argv, std::string_view flag) {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag) return argv[i + 1];
  }
  return {};
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// The first line of `output` that is not blank, trimmed and cut at kMaxReasonLine bytes.
std::string first_line(std::string_view output) {
  while (!output.empty()) {
    const size_t nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view() : output.substr(nl + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.remove_prefix(1);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (!line.empty()) return std::string(line.substr(0, kMaxReasonLine));
  }
  return {};
}

// Why a run that exited failed, "" when it exited with status 0: the exit status or signal, and
// the first line of its output (stdout and stderr share one pipe, so usually the error message).
std::string exit_failure(int status, std::string_view output) {
  std::string why;
  if (status < 0) {
    why = "exit status unknown (reaped elsewhere)";
  } else if (WIFSIGNALED(status)) {
    why = "killed by signal " + std::to_string(WTERMSIG(status));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = "exit status " + std::to_string(WEXITSTATUS(status));
  } else {
    return {};
  }
  const std::string line = first_line(output);
  if (!line.empty()) why += ": " + line;
  return why;
}

std::vector<std::pair<std::string, std::string>> daemon_environment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

}  // namespace

std::optional<std::vector<std::string>> parse_device_list(std::string_view spec,
                                                          std::string& error) {
  std::vector<std::string> ids;
  std::vector<long> seen;
  const auto number = [](std::string_view s, long& out) {
    if (s.empty() || s.size() > 6) return false;
    out = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    return true;
  };
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    long first = 0;
    long last = 0;
    const size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      if (!number(item, first)) {
        error = "invalid device '" + std::string(item) + "' (expected e.g. \"0-7\" or \"0,2,4-5\")";
        return std::nullopt;
      }
      last = first;
    } else if (!number(item.substr(0, dash), first) || !number(item.substr(dash + 1), last) ||
               last < first) {
      error = "invalid device range '" + std::string(item) + "' (expected e.g. \"0-7\")";
      return std::nullopt;
    }
    for (long d = first; d <= last; ++d) {
      if (std::find(seen.begin(), seen.end(), d) != seen.end()) {
        error = "device " + std::to_string(d) + " listed twice";
        return std::nullopt;
      }
      if (seen.size() >= kMaxDevices) {
        error = "more than " + std::to_string(kMaxDevices) + " devices";
        return std::nullopt;
      }
      seen.push_back(d);
      ids.push_back(std::to_string(d));
    }
  }
  if (ids.empty()) {
    error = "empty device list";
    return std::nullopt;
  }
  return ids;
}

// One child process: one run of the command for one device (or the discovery run).
struct Run {
  std::string device;
  std::vector<std::string> argv;
  bool discovery = false;
  pid_t pid = -1;
  UniqueFd output_fd;
  std::string output;
  bool eof = false;
  bool exited = false;
  int status = 0;
  std::string failure;  // why the run failed (counted already); a killed run's output is dropped
  bool exit_failed = false;  // it exited on its own with an error (status or signal)
  bool term_sent = false;
  bool kill_sent = false;
  TimePoint deadline{};
  TimePoint kill_at{};
  TimePoint reap_retry{};

  bool failed() const { return !failure.empty(); }
};

struct CommandSource::Impl {
  CommandSourceConfig config;
  SourceStats stats;
  UniqueFd epoll_fd;
  UniqueFd timer_fd;
  bool per_device = false;
  std::vector<std::string> devices;  // per_device: explicit or discovered
  bool need_discovery = false;
  std::string path_var;
  std::vector<std::pair<std::string, std::string>> env;
  std::map<uint64_t, std::unique_ptr<Run>> runs;  // keyed by stream hash (one run per stream)
  std::optional<TimePoint> next_cycle;            // unset: the first poll starts a cycle
  HealthTracker tracker;
  ProbeTracker probes;
  LogLimiter failure_log{kFailureLogsPerMinute};
  mutable std::mutex probe_mu;  // guards probe_up: the exporter reads it from its thread
  std::vector<ProbeUp> probe_up;
  std::vector<command_parsers::GpuBus> gpu_map;  // last nvidia_smi_bus map handed on
  std::map<uint64_t, uint64_t> stream_end;       // last end offset handed on, per stream

  explicit Impl(CommandSourceConfig c)
      : config(std::move(c)),
        tracker(std::string(record_prefix(config.parser))),
        probes(config.unresponsive_after) {}

  uint64_t stream_of(const Run& run) const {
    return stream_hash(config.name, run.discovery ? std::string_view("\0discovery", 10)
                                                  : std::string_view(run.device));
  }

  void start_run(TimePoint now, const std::string& device, bool discovery) {
    auto run = std::make_unique<Run>();
    run->device = device;
    run->discovery = discovery;
    run->argv = discovery ? std::vector<std::string>{config.argv[0], "info"}
                          : substitute(config.argv, device);
    run->deadline = now + config.timeout;
    const uint64_t key = stream_of(*run);
    if (runs.count(key) != 0) return;  // the previous run still runs: skip this interval

    const auto exe = resolve_executable(run->argv[0], path_var);
    SpawnedProcess child;
    if (exe) child = spawn_process(*exe, run->argv, env);
    if (child.pid < 0) {
      // Nothing runs: the run is over, and finished (its failure reported) in this poll.
      stats.count_error(SourceErrorKind::Command);
      run->failure = "cannot start: " + (exe ? child.error : run->argv[0] + " not found on PATH");
      run->exited = true;
      run->eof = true;
      runs.emplace(key, std::move(run));
      return;
    }
    child.stdin_fd.reset();  // the command gets EOF on stdin
    run->pid = child.pid;
    run->output_fd = std::move(child.output_fd);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = key;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, run->output_fd.get(), &ev);
    runs.emplace(key, std::move(run));
  }

  void start_cycle(TimePoint now) {
    if (need_discovery) {
      start_run(now, "", /*discovery=*/true);
      return;
    }
    if (!per_device) {
      start_run(now, "", false);
      return;
    }
    for (const std::string& d : devices) start_run(now, d, false);
  }

  void close_output(Run& run) {
    if (!run.output_fd.valid()) return;
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, run.output_fd.get(), nullptr);
    run.output_fd.reset();
    run.eof = true;
  }

  void kill_run(Run& run, int sig) {
    if (!run.exited) signal_process_group(run.pid, sig);
  }

  void read_output(Run& run) {
    char buf[16384];
    while (run.output_fd.valid()) {
      const ssize_t n = ::read(run.output_fd.get(), buf, sizeof buf);
      if (n > 0) {
        stats.bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        if (run.failed()) continue;  // draining a killed run
        if (run.output.size() + static_cast<size_t>(n) > config.max_output_bytes) {
          run.failure = "output over " + std::to_string(config.max_output_bytes) + " bytes";
          run.output.clear();
          stats.count_error(SourceErrorKind::Command);
          kill_run(run, SIGKILL);
          run.kill_sent = true;
          continue;
        }
        run.output.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        close_output(run);
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return;
      } else {
        close_output(run);
      }
    }
  }

  void reap(Run& run, TimePoint now) {
    if (run.exited) return;
    int status = 0;
    const pid_t got = reap_child(run.pid, &status, /*block=*/false);
    if (got == run.pid || (got < 0 && errno == ECHILD)) {
      run.exited = true;
      run.status = got == run.pid ? status : -1;
      return;
    }
    if (run.eof) run.reap_retry = now + kReapRetry;
  }

  void enforce_limits(Run& run, TimePoint now) {
    if (run.exited) return;
    if (!run.term_sent && now >= run.deadline) {
      run.term_sent = true;
      run.kill_at = now + kKillGrace;
      if (!run.failed()) {
        run.failure = "timed out after " + format_duration(config.timeout);
        stats.count_error(SourceErrorKind::Command);
      }
      kill_run(run, SIGTERM);
    } else if (run.term_sent && !run.kill_sent && now >= run.kill_at) {
      run.kill_sent = true;
      kill_run(run, SIGKILL);
    }
  }

  // A run is over once its exit status is known and its output is complete: EOF, or (a
  // grandchild kept the pipe open) its deadline passed.
  bool over(const Run& run, TimePoint now) const {
    return run.exited && (run.eof || now >= run.deadline);
  }

  // Turns a finished run into records (or counts and reports why not); returns true if the app
  // should poll again at once (discovery just succeeded).
  bool finish(Run& run, TimePoint now, ChunkSink& sink) {
    if (!run.failed()) {
      run.failure = exit_failure(run.status, run.output);
      run.exit_failed = run.failed();
      if (run.failed()) stats.count_error(SourceErrorKind::Command);
    }
    if (run.failed()) {
      hand_on(run, now, {}, sink);
      return false;
    }
    std::string error;
    if (run.discovery) {
      const auto table = command_parsers::parse_npu_smi_info(run.output, error);
      if (!table || table->empty()) {
        stats.count_error(SourceErrorKind::Parse);
        run.failure = table ? "no devices in the output" : "unparsable output: " + error;
        hand_on(run, now, {}, sink);
        return false;
      }
      hand_on(run, now, {}, sink);
      probes.forget(probe_device(run));  // the devices' own probes take over
      publish_probes();
      devices = command_parsers::npu_ids(*table);
      need_discovery = false;
      next_cycle = now;
      return true;
    }
    const std::string device = probe_device(run);
    auto observation =
        observe(config.parser, run.output, device, flag_value(run.argv, "-c"), error);
    if (!observation) {
      stats.count_error(SourceErrorKind::Parse);
      run.failure = "unparsable output: " + error;
      hand_on(run, now, {}, sink);
      return false;
    }
    if (observation->truncated) {  // a failure, but what it had is handed on
      stats.count_error(SourceErrorKind::Parse);
      run.failure = "output cut short: " + error;
    }
    if (is_sample_parser(config.parser)) {  // a sample at every run, not only news
      hand_on(run, now, std::move(observation->samples), sink);
      return false;
    }
    if (config.parser == CommandParser::NvidiaSmiBus) {
      std::vector<std::string> lines;
      if (observation->gpus != gpu_map) {
        for (const auto& gpu : observation->gpus) lines.push_back(format_gpu_record(gpu));
      }
      if (hand_on(run, now, lines, sink)) gpu_map = std::move(observation->gpus);
      return false;
    }
    std::vector<DeviceHealth> observed = std::move(observation->health);
    std::erase_if(observed, [this](const DeviceHealth& h) {
      const bool refused = (!h.device.empty() && !is_valid_device_id(h.device)) ||
                           (!h.chip.empty() && !is_valid_device_id(h.chip));
      if (refused) stats.count_error(SourceErrorKind::Device);
      return refused;
    });
    if (hand_on(run, now, tracker.diff(observed), sink)) tracker.commit(observed);
    return false;
  }

  // The device a run is for: `{device}`'s value, else the command's `-i`, else none ("").
  static std::string probe_device(const Run& run) {
    if (run.discovery) return {};
    return run.device.empty() ? flag_value(run.argv, "-i") : run.device;
  }

  // Settles the probe of the run's device (and logs a failure), then hands on `lines` behind
  // the probe line that makes, if any. Returns whether `lines` went out (true when there was
  // nothing to hand on).
  bool hand_on(const Run& run, TimePoint now, std::vector<std::string> lines, ChunkSink& sink) {
    const std::string device = probe_device(run);
    std::optional<std::string> probe_line;
    std::vector<std::string> printed;  // what the failed run printed, when it is news
    if (run.failed()) {
      probe_line = probes.failed(device, run.failure);
      // A command that exits with an error says why in its output; one that was killed (or
      // printed what its parser refuses) has no such word.
      if (run.exit_failed) printed = probes.failed_output(device, run.output);
      log_failure(run, device, now, probe_line.has_value());
    } else {
      const uint32_t failures = probes.failures(device);
      probe_line = probes.succeeded(device);
      if (probe_line) {
        spdlog::info("source {}: {} answers again after {} failed run(s)", config.name,
                     what_ran(run, device), failures);
      }
    }
    publish_probes();
    // The tool's own words go out as their own chunk (source type command_output), before the
    // records: no rule that trusts only faultd's records reads them. Each part is marked handed
    // on when its chunk is taken, so a refused one is offered again, alone.
    if (!printed.empty()) {
      if (!emit(run, now, printed, "command_output", sink)) return false;
      probes.output_handed_on(device);
    }
    const bool probed = probe_line.has_value();
    if (probe_line) lines.insert(lines.begin(), std::move(*probe_line));
    if (lines.empty()) return true;
    if (!emit(run, now, lines, "command", sink)) return false;
    if (probed) probes.handed_on(device);
    return true;
  }

  // "device 3", "device discovery (npu-smi info)" or the command line.
  static std::string what_ran(const Run& run, const std::string& device) {
    if (run.discovery) return "device discovery (" + join(run.argv) + ")";
    if (!device.empty()) return "device " + device;
    return join(run.argv);
  }

  // A failed run is logged with its reason, at most kFailureLogsPerMinute lines a minute; the
  // one that makes a device unresponsive always.
  void log_failure(const Run& run, const std::string& device, TimePoint now, bool unresponsive) {
    const std::string what = what_ran(run, device);
    const std::string why = terminal_safe(run.failure);
    if (unresponsive) {
      spdlog::warn("source {}: {} unresponsive after {} failed run(s) in a row, the last: {}",
                   config.name, what, probes.failures(device), why);
      return;
    }
    failure_log.warn(now, fmt::format("source {}: {} failed: {}", config.name, what, why));
  }

  void publish_probes() {
    std::vector<ProbeUp> up = probes.up();
    std::lock_guard lock(probe_mu);
    probe_up = std::move(up);
  }

  bool emit(const Run& run, TimePoint now, const std::vector<std::string>& lines,
            std::string_view source_type, ChunkSink& sink) {
    std::string data;
    for (const std::string& line : lines) {
      data += line;
      data += '\n';
    }
    const std::string path = join(run.argv);
    const uint64_t stream = stream_of(run);
    uint64_t& end = stream_end[stream];
    Chunk chunk;
    chunk.source = config.name;
    chunk.source_type = source_type;
    chunk.path = path;
    chunk.identity.dev = 0;
    chunk.identity.ino = stream;
    chunk.start_offset = std::max(unix_micros(now), end);
    chunk.end_offset = chunk.start_offset + data.size();
    chunk.first_line = 1;
    chunk.end_line = lines.size();
    chunk.data = data;
    chunk.noticed = now;
    if (!sink.on_chunk(chunk)) {
      stats.count_error(SourceErrorKind::Commit);
      return false;
    }
    end = chunk.end_offset;
    stats.lines.fetch_add(lines.size(), std::memory_order_relaxed);
    return true;
  }

  void arm_timer(TimePoint now) {
    std::optional<TimePoint> wake = next_cycle;
    const auto earlier = [&wake](TimePoint t) {
      if (!wake || t < *wake) wake = t;
    };
    for (const auto& [_, run] : runs) {
      if (!run->exited) earlier(run->term_sent ? run->kill_at : run->deadline);
      if (run->eof && !run->exited) earlier(run->reap_retry);
      if (run->exited && !run->eof) earlier(run->deadline);
    }
    itimerspec spec{};
    if (wake) {
      const auto delay = std::max<Duration>(*wake - now, std::chrono::microseconds(100));
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(delay);
      spec.it_value.tv_sec = secs.count();
      spec.it_value.tv_nsec = (delay - secs).count();
    }
    ::timerfd_settime(timer_fd.get(), 0, &spec, nullptr);
  }

  void drain_timer() {
    uint64_t expirations;
    while (::read(timer_fd.get(), &expirations, sizeof expirations) > 0) {
    }
  }
};

CommandSource::CommandSource(CommandSourceConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {
  Impl& s = *impl_;
  if (s.config.argv.empty() || s.config.argv[0].empty()) {
    throw std::invalid_argument("command source " + s.config.name + ": empty argv");
  }
  s.per_device = has_placeholder(s.config.argv);
  if (!s.config.devices.empty()) {
    std::string error;
    auto ids = parse_device_list(s.config.devices, error);
    if (!ids) throw std::invalid_argument("command source " + s.config.name + ": " + error);
    s.devices = std::move(*ids);
  }
  s.need_discovery = s.per_device && s.config.discover && s.devices.empty();
  if (s.per_device && s.devices.empty() && !s.need_discovery) {
    throw std::invalid_argument("command source " + s.config.name +
                                ": argv uses {device} but neither devices nor discover is set");
  }
  const char* path = std::getenv("PATH");
  s.path_var = path != nullptr ? std::string(path) : std::string(kChildPath);
  s.env = daemon_environment();
  s.epoll_fd.reset(::epoll_create1(EPOLL_CLOEXEC));
  s.timer_fd.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!s.epoll_fd.valid() || !s.timer_fd.valid()) {
    throw std::runtime_error("command source " + s.config.name + ": epoll/timerfd unavailable");
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;
  ::epoll_ctl(s.epoll_fd.get(), EPOLL_CTL_ADD, s.timer_fd.get(), &ev);
}

CommandSource::~CommandSource() {
  for (auto& [_, run] : impl_->runs) {
    if (run->exited) continue;
    signal_process_group(run->pid, SIGKILL);
    reap_child(run->pid, nullptr, /*block=*/true);
  }
}

const std::string& CommandSource::name() const { return impl_->config.name; }

bool CommandSource::poll_once(TimePoint now, ChunkSink& sink) {
  Impl& s = *impl_;
  s.drain_timer();
  if (!s.next_cycle || now >= *s.next_cycle) {
    s.next_cycle = now + s.config.interval;
    s.start_cycle(now);
  }
  bool again = false;
  for (auto it = s.runs.begin(); it != s.runs.end();) {
    Run& run = *it->second;
    s.read_output(run);
    s.reap(run, now);
    s.enforce_limits(run, now);
    if (s.over(run, now)) {
      s.close_output(run);
      again = s.finish(run, now, sink) || again;
      it = s.runs.erase(it);
    } else {
      ++it;
    }
  }
  s.arm_timer(now);
  return again;
}

Duration CommandSource::poll_interval() const {
  return std::min(impl_->config.interval, impl_->config.timeout);
}

int CommandSource::wake_fd() const { return impl_->epoll_fd.get(); }

void CommandSource::drain_wake_fd() { impl_->drain_timer(); }

SourceStats& CommandSource::stats() { return impl_->stats; }

size_t CommandSource::running() const { return impl_->runs.size(); }

std::vector<ProbeUp> CommandSource::probes() const {
  std::lock_guard lock(impl_->probe_mu);
  return impl_->probe_up;
}

}  // namespace faultd
