// Runs operator hooks as untrusted subprocesses: argv only (no shell), a clean environment,
// the fault as JSON on stdin, stdout+stderr captured together and capped, a timeout that sends
// SIGTERM to the hook's process group and SIGKILL after a grace period, and retries with
// exponential backoff while the hook exits 75 (EX_TEMPFAIL).
//
// Lifecycle: one HookRunner per app, bound to the app's io_context. `run()` returns at once;
// `done` is called later on the io thread, exactly once per run(), after the final attempt.
// `shutdown()` kills every running hook's process group and completes their runs with
// Outcome::Cancelled.
//
// Threading: io thread only. Child exit is learned from SIGCHLD (asio::signal_set) and reaped
// with waitpid(pid, WNOHANG), so no thread blocks and kernels without pidfd work too. Only our
// own pids are reaped: the rest of the daemon must not waitpid(-1) nor set SIGCHLD to SIG_IGN
// (a run whose child was reaped elsewhere completes as Exited, exit_code -1, with an error).
// The one exception: as PID 1 the runner also reaps the orphans re-parented to faultd
// (reap_adopted_children), never a child spawn_process started.
// asio installs its SIGCHLD handler without SA_RESTART, so threads that make blocking calls
// should block SIGCHLD or retry on EINTR.
//
// Process details: argv[0] without a '/' is looked up in the daemon's PATH; the hook runs in a
// new process group with exactly HookInput.env, default signal dispositions and no fd but
// 0/1/2. A hook that does not read its stdin cannot hurt the daemon: writes to it never raise
// SIGPIPE (the app should still set SIGPIPE to SIG_IGN for everything else). The run completes
// when the hook itself exits, even if a daemonised grandchild still holds its stdout. spawn
// blocks the io thread only until the child has called execve.
//
// The destructor calls shutdown(), so `done` callbacks may run from it; call shutdown() first
// if they touch objects that die before the runner.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/core/child_process.hpp"
#include "daemon/core/types.hpp"

namespace boost::asio {
class io_context;
}

namespace faultd {

struct HookSpec {
  std::vector<std::string> argv;  // argv[0] is an absolute path or found via PATH of the daemon
  Duration timeout = std::chrono::seconds(60);
  Duration kill_grace = std::chrono::seconds(5);  // SIGTERM → SIGKILL
  int retries = 0;                                // extra attempts after exit 75
  Duration backoff_initial = std::chrono::seconds(1);
  Duration backoff_max = std::chrono::seconds(60);
  size_t output_cap = 64 * 1024;
};

struct HookInput {
  std::vector<std::pair<std::string, std::string>> env;  // the whole environment of the hook
  std::string stdin_data;
};

struct HookResult {
  enum class Outcome {
    Exited,       // exit_code is set
    Signaled,     // killed by a signal we did not send (signal is set)
    TimedOut,     // we sent SIGTERM (and maybe SIGKILL) after the timeout (signal: what ended it)
    SpawnFailed,  // could not start: error says why ("execve /x: No such file or directory")
    Cancelled,    // shutdown() while running or waiting to retry
  };
  Outcome outcome = Outcome::SpawnFailed;
  int exit_code = -1;
  int signal = 0;
  int attempts = 0;
  std::string output;  // of the last attempt, at most output_cap bytes
  bool output_truncated = false;
  Duration elapsed{0};  // of all attempts together, backoff included
  std::string error;

  bool success() const { return outcome == Outcome::Exited && exit_code == 0; }
};
std::string_view to_string(HookResult::Outcome o);

struct RunOptions {
  // A run of this hook that an earlier faultd left behind (it was killed while the hook ran):
  // the first attempt starts once that process is gone. It is given the hook's timeout to
  // finish, then its process group gets SIGTERM and, after kill_grace, SIGKILL.
  std::optional<ProcessIdentity> wait_for;
  // Called with each attempt's process as soon as it runs (to journal it).
  std::function<void(const ProcessIdentity&)> on_spawn;
};

inline constexpr int kHookExitTempFail = 75;

// The wait before retry number `retry` (1 = the wait after the first attempt exited 75):
// backoff_initial doubled per retry, capped at backoff_max.
Duration hook_backoff_delay(const HookSpec& spec, int retry);

// Where the runner executes a hook's argv[0] from: itself when it holds a '/', else the first
// executable file of that name in the daemon's PATH (a fixed system path when it has none).
// nullopt when a bare name is found nowhere.
std::optional<std::string> hook_executable(std::string_view argv0);

class HookRunner {
 public:
  explicit HookRunner(boost::asio::io_context& io);
  ~HookRunner();
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  void run(const HookSpec& spec, HookInput input, std::function<void(HookResult)> done,
           RunOptions options = {});
  size_t running() const;  // runs not yet completed (including those waiting to retry)
  void shutdown();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace faultd
