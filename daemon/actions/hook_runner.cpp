#include "daemon/actions/hook_runner.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include "daemon/core/child_process.hpp"
#include "daemon/core/enum_names.hpp"

namespace faultd {

namespace asio = boost::asio;

std::string_view to_string(HookResult::Outcome o) {
  static constexpr std::array<std::string_view, 5> kNames = {"exited", "signaled", "timeout",
                                                             "spawn_failed", "cancelled"};
  return name_of(kNames, o);
}

Duration hook_backoff_delay(const HookSpec& spec, int retry) {
  if (spec.backoff_initial <= Duration::zero()) return Duration::zero();
  Duration delay = spec.backoff_initial;
  for (int i = 1; i < retry && delay < spec.backoff_max; ++i) delay *= 2;
  return std::min(delay, spec.backoff_max);
}

namespace {

using SteadyClock = std::chrono::steady_clock;

// Reads per readiness wake-up before yielding to other handlers (a flooding hook must not
// starve the io thread), and the most read once the hook has exited (a grandchild still
// writing must not keep us reading forever).
constexpr int kReadsPerWakeup = 16;
constexpr size_t kFinalDrainLimit = size_t{1} << 20;
// How often a survivor of an earlier faultd is looked at.
constexpr auto kSurvivorPoll = std::chrono::milliseconds(100);
// How often our children are looked at while any runs, whether or not SIGCHLD came: a signal
// can be lost (a library resetting its disposition, a sanitizer's deferred delivery), and a
// hook's exit must not wait for its timeout then.
constexpr auto kExitPoll = std::chrono::milliseconds(500);

std::string format_ms(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

}  // namespace

// One run() call: one or more attempts, each a child process.
struct HookRun {
  uint64_t id = 0;
  HookSpec spec;
  HookInput input;
  std::function<void(HookResult)> done;
  SteadyClock::time_point started;
  int attempts = 0;

  // One timer does the timeout, then the kill grace, then the retry backoff. A generation
  // number identifies the current arming, so a handler already queued when the timer was
  // re-armed or cancelled recognises itself as stale.
  asio::steady_timer timer;
  uint64_t timer_gen = 0;

  // The current child (pid == -1 between attempts).
  pid_t pid = -1;
  std::optional<asio::posix::stream_descriptor> stdin_pipe;
  std::optional<asio::posix::stream_descriptor> output_pipe;
  size_t stdin_written = 0;
  std::string output;
  bool output_truncated = false;
  bool timed_out = false;
  bool kill_sent = false;

  // A result decided inside run() (spawn failure) is delivered from a posted handler, since
  // `done` must never run inside run().
  std::optional<HookResult> pending;

  std::function<void(const ProcessIdentity&)> on_spawn;
  // A run of the same hook left by an earlier faultd: the first attempt waits until it is gone
  // (SIGTERM to its group once `survivor_deadline` passes, SIGKILL after the grace).
  std::optional<ProcessIdentity> survivor;
  SteadyClock::time_point survivor_deadline;
  int survivor_signal = 0;  // the last signal sent to it

  explicit HookRun(asio::io_context& io) : timer(io) {}
};

struct HookRunner::Impl : std::enable_shared_from_this<HookRunner::Impl> {
  explicit Impl(asio::io_context& io_context)
      : io(io_context), sigchld(io_context, SIGCHLD), exit_poll(io_context) {}

  asio::io_context& io;
  asio::signal_set sigchld;
  bool sigchld_armed = false;
  asio::steady_timer exit_poll;
  bool exit_poll_armed = false;
  bool shut_down = false;
  // As PID 1, every orphan below faultd becomes its child: SIGCHLD is always listened to.
  const bool adopts_orphans = ::getpid() == 1;
  uint64_t next_id = 1;
  std::map<uint64_t, std::unique_ptr<HookRun>> runs;
  std::vector<pid_t> orphans;  // SIGKILLed at shutdown, reaped when they get around to dying
  std::array<char, size_t{64} << 10> buffer{};

  HookRun* find(uint64_t id) {
    const auto it = runs.find(id);
    return it == runs.end() ? nullptr : it->second.get();
  }

  // ---- starting

  void run(const HookSpec& spec, HookInput input, std::function<void(HookResult)> done,
           RunOptions options) {
    auto owned = std::make_unique<HookRun>(io);
    HookRun& r = *owned;
    r.id = next_id++;
    r.spec = spec;
    r.input = std::move(input);
    r.done = std::move(done);
    r.on_spawn = std::move(options.on_spawn);
    r.started = SteadyClock::now();
    runs.emplace(r.id, std::move(owned));
    if (shut_down) {
      deliver_later(r, make_result(r, HookResult::Outcome::Cancelled, "hook runner shut down"));
      return;
    }
    if (options.wait_for && is_running(*options.wait_for)) {
      r.survivor = options.wait_for;
      r.survivor_deadline = SteadyClock::now() + r.spec.timeout;
      wait_for_survivor(r);
      return;
    }
    if (std::string error = start_attempt(r); !error.empty()) {
      deliver_later(r, make_result(r, HookResult::Outcome::SpawnFailed, std::move(error)));
    }
  }

  // Polls until the survivor is gone, then starts the first attempt. It is not our child (its
  // parent died), so there is no SIGCHLD to wait for.
  void wait_for_survivor(HookRun& r) {
    if (!is_running(*r.survivor)) {
      r.survivor.reset();
      if (std::string error = start_attempt(r); !error.empty()) {
        deliver(r.id, make_result(r, HookResult::Outcome::SpawnFailed, std::move(error)));
      }
      return;
    }
    if (SteadyClock::now() >= r.survivor_deadline && r.survivor_signal != SIGKILL) {
      r.survivor_signal = r.survivor_signal == 0 ? SIGTERM : SIGKILL;
      signal_process_group(r.survivor->pid, r.survivor_signal);
      r.survivor_deadline = SteadyClock::now() + r.spec.kill_grace;
    }
    arm_timer(r, kSurvivorPoll, [this](HookRun& run) { wait_for_survivor(run); });
  }

  // Returns an error when the child could not be started.
  std::string start_attempt(HookRun& r) {
    ++r.attempts;
    r.output.clear();
    r.output_truncated = false;
    r.timed_out = false;
    r.kill_sent = false;
    r.stdin_written = 0;

    if (r.spec.argv.empty() || r.spec.argv.front().empty()) return "empty argv";
    const std::string& name = r.spec.argv.front();
    const auto path = hook_executable(name);
    if (!path) return "execve " + name + ": No such file or directory (not found in PATH)";

    SpawnedProcess child = spawn_process(*path, r.spec.argv, r.input.env);
    if (child.pid < 0) return child.error;

    r.pid = child.pid;
    if (r.on_spawn) {
      r.on_spawn(identify_process(child.pid).value_or(ProcessIdentity{child.pid, 0}));
    }
    r.output_pipe.emplace(io, child.output_fd.release());
    if (r.input.stdin_data.empty()) {
      child.stdin_fd.reset();  // immediate EOF
    } else {
      r.stdin_pipe.emplace(io, child.stdin_fd.release());
      feed_stdin(r);
    }
    read_output(r);
    arm_timer(r, r.spec.timeout, [this](HookRun& run) { on_timeout(run); });
    arm_sigchld();
    return {};
  }

  // ---- stdin and output pipes (we read and write ourselves on readiness, so no bytes ever
  // sit in a queued handler when the attempt ends)

  void feed_stdin(HookRun& r) {
    const std::string& data = r.input.stdin_data;
    while (r.stdin_written < data.size()) {
      const ssize_t n =
          write_no_sigpipe(r.stdin_pipe->native_handle(), data.data() + r.stdin_written,
                           data.size() - r.stdin_written);
      if (n > 0) {
        r.stdin_written += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EAGAIN) {
        wait_on(r, *r.stdin_pipe, asio::posix::descriptor_base::wait_write,
                [this](HookRun& run) { feed_stdin(run); });
        return;
      }
      break;  // EPIPE: the hook does not read its stdin, which is its right
    }
    r.stdin_pipe.reset();  // EOF for the hook
  }

  void read_output(HookRun& r) {
    for (int i = 0; i < kReadsPerWakeup; ++i) {
      const ssize_t n = ::read(r.output_pipe->native_handle(), buffer.data(), buffer.size());
      if (n > 0) {
        keep_output(r, static_cast<size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        break;
      } else {
        r.output_pipe.reset();  // EOF or error; completion still waits for the exit status
        return;
      }
    }
    wait_on(r, *r.output_pipe, asio::posix::descriptor_base::wait_read,
            [this](HookRun& run) { read_output(run); });
  }

  // Keeps at most output_cap bytes; the rest is read and dropped so the hook never blocks on
  // a full pipe and a flood costs no memory.
  void keep_output(HookRun& r, size_t n) {
    const size_t room = r.spec.output_cap - std::min(r.spec.output_cap, r.output.size());
    const size_t keep = std::min(room, n);
    r.output.append(buffer.data(), keep);
    if (keep < n) r.output_truncated = true;
  }

  // What the hook wrote before it exited is already in the pipe; take it (bounded: a daemonised
  // grandchild may still hold the pipe and keep writing) and stop listening.
  void drain_output(HookRun& r) {
    if (!r.output_pipe) return;
    size_t drained = 0;
    while (drained < kFinalDrainLimit) {
      const ssize_t n = ::read(r.output_pipe->native_handle(), buffer.data(), buffer.size());
      if (n > 0) {
        keep_output(r, static_cast<size_t>(n));
        drained += static_cast<size_t>(n);
      } else if (!(n < 0 && errno == EINTR)) {
        break;
      }
    }
    r.output_pipe.reset();
  }

  template <typename Step>
  void wait_on(HookRun& r, asio::posix::stream_descriptor& pipe,
               asio::posix::descriptor_base::wait_type what, Step step) {
    pipe.async_wait(what, [weak = weak_from_this(), id = r.id, attempt = r.attempts, what,
                           step](const boost::system::error_code& ec) {
      const auto self = weak.lock();
      if (!self || ec) return;
      HookRun* run = self->find(id);
      if (!run || run->attempts != attempt || run->pid < 0) return;
      const auto& pipe_now =
          what == asio::posix::descriptor_base::wait_read ? run->output_pipe : run->stdin_pipe;
      if (pipe_now) step(*run);
    });
  }

  // ---- timer: timeout, kill grace, backoff

  template <typename Step>
  void arm_timer(HookRun& r, Duration after, Step step) {
    const uint64_t gen = ++r.timer_gen;
    r.timer.expires_after(after);
    r.timer.async_wait(
        [weak = weak_from_this(), id = r.id, gen, step](const boost::system::error_code&) {
          const auto self = weak.lock();
          if (!self) return;
          HookRun* run = self->find(id);
          if (run && run->timer_gen == gen) step(*run);
        });
  }

  void disarm_timer(HookRun& r) {
    ++r.timer_gen;
    r.timer.cancel();
  }

  void on_timeout(HookRun& r) {
    if (r.pid < 0) return;
    r.timed_out = true;
    signal_process_group(r.pid, SIGTERM);
    arm_timer(r, r.spec.kill_grace, [](HookRun& run) {
      if (run.pid < 0) return;
      run.kill_sent = true;
      signal_process_group(run.pid, SIGKILL);
    });
  }

  // ---- exit detection

  void arm_sigchld() {
    arm_exit_poll();
    if (sigchld_armed) return;
    sigchld_armed = true;
    sigchld.async_wait([weak = weak_from_this()](const boost::system::error_code& ec, int) {
      const auto self = weak.lock();
      if (!self) return;
      self->sigchld_armed = false;
      if (!ec) self->on_sigchld();
    });
  }

  void arm_exit_poll() {
    if (exit_poll_armed || !has_children()) return;
    exit_poll_armed = true;
    exit_poll.expires_after(kExitPoll);
    exit_poll.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      const auto self = weak.lock();
      if (!self) return;
      self->exit_poll_armed = false;
      if (!ec) self->on_sigchld();
    });
  }

  bool has_children() const {
    if (!orphans.empty()) return true;
    for (const auto& [id, r] : runs) {
      if (r->pid > 0) return true;
    }
    return false;
  }

  // SIGCHLD says "some child changed state", not which; ask each of ours (never waitpid(-1):
  // other children of the daemon belong to other code).
  void on_sigchld() {
    std::vector<uint64_t> ids;
    for (const auto& [id, r] : runs) {
      if (r->pid > 0) ids.push_back(id);
    }
    for (const uint64_t id : ids) {
      HookRun* r = find(id);  // a `done` called earlier in this loop may have changed `runs`
      if (r && r->pid > 0) poll_child(*r);
    }
    reap_orphans();
    reap_adopted_children();
    if (has_children() || adopts_orphans) arm_sigchld();
    if (!has_children()) exit_poll.cancel();  // an idle runner leaves no timer behind
  }

  void poll_child(HookRun& r) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    // Peek without reaping: while the zombie leader exists its pid cannot be reused, so the
    // group can still be killed safely.
    if (::waitid(P_PID, static_cast<id_t>(r.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == ECHILD) {
        finish_attempt(r, std::nullopt);  // someone else reaped it (SIGCHLD set to SIG_IGN?)
      }
      return;
    }
    if (info.si_pid == 0) return;                           // still running (or merely stopped)
    if (r.timed_out) signal_process_group(r.pid, SIGKILL);  // leftovers that ignored SIGTERM
    int status = 0;
    const pid_t got = reap_child(r.pid, &status, /*block=*/false);
    finish_attempt(r, got == r.pid ? std::optional<int>(status) : std::nullopt);
  }

  void reap_orphans() {
    std::erase_if(orphans, [](pid_t pid) {
      const pid_t got = reap_child(pid, nullptr, /*block=*/false);
      return got == pid || (got < 0 && errno == ECHILD);
    });
  }

  // ---- ending an attempt and a run

  void finish_attempt(HookRun& r, std::optional<int> status) {
    drain_output(r);
    r.stdin_pipe.reset();
    disarm_timer(r);
    r.pid = -1;

    if (!status) {
      HookResult result =
          make_result(r, HookResult::Outcome::Exited, "exit status lost: child reaped elsewhere");
      deliver(r.id, std::move(result));
      return;
    }
    HookResult result = make_result(r, HookResult::Outcome::Exited, {});
    if (WIFEXITED(*status)) result.exit_code = WEXITSTATUS(*status);
    if (WIFSIGNALED(*status)) {
      result.outcome = HookResult::Outcome::Signaled;
      result.signal = WTERMSIG(*status);
    }
    if (r.timed_out) {
      result.outcome = HookResult::Outcome::TimedOut;
      result.error = "timed out after " + format_ms(r.spec.timeout) +
                     (r.kill_sent ? ", SIGKILL after " + format_ms(r.spec.kill_grace) : "");
    }

    if (result.outcome == HookResult::Outcome::Exited && result.exit_code == kHookExitTempFail &&
        r.attempts <= r.spec.retries) {
      arm_timer(r, hook_backoff_delay(r.spec, r.attempts), [this](HookRun& run) { retry(run); });
      return;
    }
    deliver(r.id, std::move(result));
  }

  void retry(HookRun& r) {
    if (std::string error = start_attempt(r); !error.empty()) {
      deliver(r.id, make_result(r, HookResult::Outcome::SpawnFailed, std::move(error)));
    }
  }

  HookResult make_result(const HookRun& r, HookResult::Outcome outcome, std::string error) const {
    HookResult result;
    result.outcome = outcome;
    result.attempts = r.attempts;
    result.output = r.output;
    result.output_truncated = r.output_truncated;
    result.elapsed = std::chrono::duration_cast<Duration>(SteadyClock::now() - r.started);
    result.error = std::move(error);
    return result;
  }

  void deliver_later(HookRun& r, HookResult result) {
    r.pending = std::move(result);
    asio::post(io, [weak = weak_from_this(), id = r.id] {
      const auto self = weak.lock();
      if (!self) return;
      if (HookRun* run = self->find(id); run && run->pending) {
        self->deliver(id, std::move(*run->pending));
      }
    });
  }

  // Removes the run before calling `done`, so `done` may call run() or shutdown() freely.
  void deliver(uint64_t id, HookResult result) {
    const auto it = runs.find(id);
    if (it == runs.end()) return;
    std::unique_ptr<HookRun> r = std::move(it->second);
    runs.erase(it);
    disarm_timer(*r);
    auto done = std::move(r->done);
    r.reset();
    if (done) done(std::move(result));
  }

  // ---- shutdown

  void shutdown() {
    shut_down = true;
    std::vector<std::pair<std::function<void(HookResult)>, HookResult>> completions;
    auto all = std::move(runs);
    runs.clear();
    for (auto& [id, r] : all) {
      if (r->pid > 0) {
        signal_process_group(r->pid, SIGKILL);
        orphans.push_back(r->pid);
        r->pid = -1;
      }
      r->stdin_pipe.reset();
      r->output_pipe.reset();
      disarm_timer(*r);
      HookResult result =
          r->pending ? std::move(*r->pending)
                     : make_result(*r, HookResult::Outcome::Cancelled, "cancelled by shutdown");
      completions.emplace_back(std::move(r->done), std::move(result));
    }
    all.clear();
    reap_orphans();
    if (!orphans.empty()) arm_sigchld();
    for (auto& [done, result] : completions) {
      if (done) done(std::move(result));
    }
  }
};

HookRunner::HookRunner(asio::io_context& io) : impl_(std::make_shared<Impl>(io)) {}

// NOLINTNEXTLINE(bugprone-exception-escape): only a throwing `done` can throw here.
HookRunner::~HookRunner() { impl_->shutdown(); }

void HookRunner::run(const HookSpec& spec, HookInput input, std::function<void(HookResult)> done,
                     RunOptions options) {
  impl_->run(spec, std::move(input), std::move(done), std::move(options));
}

size_t HookRunner::running() const { return impl_->runs.size(); }

void HookRunner::shutdown() { impl_->shutdown(); }

// The daemon's own PATH is where a bare argv[0] is looked up; the hook itself gets none.
std::optional<std::string> hook_executable(std::string_view argv0) {
  const char* daemon_path = std::getenv("PATH");
  return resolve_executable(argv0,
                            daemon_path != nullptr ? std::string_view(daemon_path) : kChildPath);
}

}  // namespace faultd
