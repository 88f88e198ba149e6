// HookRunner against real child processes (bash scripts in tests/support/hooks/): the process
// boundary is the subject, so nothing here is faked. The io_context is driven by the test until
// the run completes or a deadline passes; nothing sleeps to wait.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/actions/hook_runner.hpp"
#include "tests/support/temp_dir.hpp"

namespace faultd {
namespace {

using namespace std::chrono_literals;
using Outcome = HookResult::Outcome;
using faultd::testing::TempDir;

std::string hook(const std::string& name) {
  return std::string(FAULTD_SOURCE_DIR) + "/tests/support/hooks/" + name;
}

HookSpec spec_for(std::vector<std::string> argv) {
  HookSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = 20s;
  spec.kill_grace = 2s;
  spec.backoff_initial = 10ms;
  spec.backoff_max = 10ms;
  return spec;
}

// Scripts need a PATH for sleep/cat/head; the environment test passes none on purpose.
HookInput with_path(std::string stdin_data = {}) {
  return HookInput{{{"PATH", "/usr/bin:/bin"}}, std::move(stdin_data)};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A process that was reaped, or a zombie nobody reaped yet (e.g. reparented to a pid 1 that
// does not reap), no longer runs.
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

struct Harness {
  boost::asio::io_context io;
  HookRunner runner{io};

  // Drives the io_context until `pred` holds or `limit` passes. When the runner has nothing
  // pending (the condition depends on the kernel alone) it polls at a short interval.
  bool drive_until(const std::function<bool()>& pred, Duration limit = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      if (io.stopped()) io.restart();
      if (io.run_for(5ms) == 0 && io.stopped()) std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  std::optional<HookResult> run(const HookSpec& spec, HookInput input, Duration limit = 10s) {
    std::optional<HookResult> result;
    int calls = 0;
    runner.run(spec, std::move(input), [&](HookResult r) {
      ++calls;
      result = std::move(r);
    });
    drive_until([&] { return result.has_value(); }, limit);
    CHECK(calls <= 1);
    CHECK(runner.running() == 0);
    return result;
  }
};

// Waits for a "<pid> [<pid>]" file written by a test hook.
std::vector<pid_t> read_pids(Harness& h, const std::string& path) {
  h.drive_until([&] { return access(path.c_str(), F_OK) == 0; });
  std::vector<pid_t> pids;
  std::istringstream in(read_file(path));
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

void require_all_gone(Harness& h, const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) {
    INFO("pid " << pid);
    CHECK(h.drive_until([&] { return process_gone(pid); }, 5s));
  }
}

TEST_CASE("hook exiting 0 succeeds with stdout and stderr captured in order", "[hooks]") {
  Harness h;
  const auto r = h.run(spec_for({hook("print_and_exit.sh"), "0"}), with_path());
  REQUIRE(r);
  CHECK(r->success());
  CHECK(r->outcome == Outcome::Exited);
  CHECK(r->exit_code == 0);
  CHECK(r->attempts == 1);
  CHECK(r->output == "to stdout\nto stderr\n");
  CHECK_FALSE(r->output_truncated);
  CHECK(r->error.empty());
  CHECK(r->elapsed > Duration::zero());
}

TEST_CASE("hook exiting non-zero is a failure with its exit code", "[hooks]") {
  Harness h;
  const auto r = h.run(spec_for({hook("print_and_exit.sh"), "3"}), with_path());
  REQUIRE(r);
  CHECK_FALSE(r->success());
  CHECK(r->outcome == Outcome::Exited);
  CHECK(r->exit_code == 3);
  CHECK(r->output == "to stdout\nto stderr\n");
}

TEST_CASE("hook killed by a signal we did not send is Signaled", "[hooks]") {
  Harness h;
  const auto r = h.run(spec_for({hook("kill_self.sh")}), with_path());
  REQUIRE(r);
  CHECK(r->outcome == Outcome::Signaled);
  CHECK(r->signal == SIGUSR1);
  CHECK_FALSE(r->success());
}

TEST_CASE("hook environment is exactly the one given", "[hooks]") {
  Harness h;
  HookInput input{{{"FAULTD_DEVICE", "npu-3"}, {"FAULTD_ACTION", "drain node"}}, {}};
  const auto r = h.run(spec_for({"/usr/bin/env"}), input);
  REQUIRE(r);
  CHECK(r->success());
  CHECK(r->output == "FAULTD_DEVICE=npu-3\nFAULTD_ACTION=drain node\n");
  CHECK(r->output.find("HOME=") == std::string::npos);
  CHECK(r->output.find("PATH=") == std::string::npos);
}

TEST_CASE("bare argv[0] is found through the daemon's PATH", "[hooks]") {
  Harness h;
  const auto r = h.run(spec_for({"env"}), HookInput{{{"A", "1"}}, {}});
  REQUIRE(r);
  CHECK(r->success());
  CHECK(r->output == "A=1\n");
}

TEST_CASE("a hook's exit is noticed even when SIGCHLD never arrives", "[hooks]") {
  // With SIGCHLD blocked on the only thread the signal stays pending and asio's handler never
  // runs: only the runner's own look at its children can see the exit before the timeout.
  sigset_t chld;
  sigset_t old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, &old_mask);
  Harness h;
  const auto r = h.run(spec_for({hook("print_and_exit.sh"), "0"}), with_path());
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  REQUIRE(r);
  CHECK(r->success());
  CHECK(r->outcome == Outcome::Exited);
  CHECK(r->output == "to stdout\nto stderr\n");
}

TEST_CASE("hook runs in its own process group", "[hooks]") {
  Harness h;
  const auto r = h.run(spec_for({"/bin/bash", "-c",
                                 "read -r pid comm state ppid pgrp rest < /proc/$$/stat; "
                                 "echo \"$pid $pgrp\""}),
                       HookInput{});
  REQUIRE(r);
  REQUIRE(r->success());
  std::istringstream in(r->output);
  pid_t pid = 0;
  pid_t pgrp = 0;
  in >> pid >> pgrp;
  CHECK(pid > 0);
  CHECK(pgrp == pid);
  CHECK(pgrp != getpgrp());
}

TEST_CASE("hook gets no fd but 0/1/2 and default signal dispositions", "[hooks]") {
  Harness h;
  // An fd the daemon leaked without CLOEXEC, parked high so the hook would not reuse its number.
  const int leaked = ::open("/dev/null", O_RDONLY);
  REQUIRE(leaked >= 0);
  REQUIRE(::dup2(leaked, 200) == 200);
  ::close(leaked);
  // A daemon typically ignores SIGPIPE and may block signals on its io thread.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_pipe {};
  REQUIRE(::sigaction(SIGPIPE, &ignore, &old_pipe) == 0);
  sigset_t usr2;
  sigset_t old_mask;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &usr2, &old_mask);

  const auto fd_check = h.run(spec_for({"/usr/bin/readlink", "/proc/self/fd/200"}), HookInput{});
  const auto fd0_check = h.run(spec_for({"/usr/bin/readlink", "/proc/self/fd/0"}), HookInput{});
  const auto sig_check =
      h.run(spec_for({"/bin/grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"}), HookInput{});

  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGPIPE, &old_pipe, nullptr);
  ::close(200);

  REQUIRE(fd_check);
  CHECK(fd_check->outcome == Outcome::Exited);
  CHECK(fd_check->exit_code == 1);  // fd 200 does not exist in the hook
  REQUIRE(fd0_check);
  CHECK(fd0_check->success());
  CHECK(fd0_check->output.rfind("pipe:", 0) == 0);  // stdin is our pipe
  REQUIRE(sig_check);
  CHECK(sig_check->success());
  CHECK(sig_check->output == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST_CASE("hook stdin receives the JSON intact, larger than a pipe buffer", "[hooks]") {
  Harness h;
  std::string json = "{\"device\":\"npu-1\",\"evidence\":[";
  for (int i = 0; i < 5000; ++i) {
    if (i > 0) json += ',';
    json += "\"line " + std::to_string(i) + ": HBM ECC error \\\"addr\\\" 0x" +
            std::to_string(i * 7919) + "\"";
  }
  json += "]}\n";
  REQUIRE(json.size() > size_t{200} << 10);
  HookSpec spec = spec_for({hook("echo_stdin.sh")});
  spec.output_cap = size_t{1} << 20;
  const auto r = h.run(spec, with_path(json));
  REQUIRE(r);
  CHECK(r->success());
  CHECK_FALSE(r->output_truncated);
  CHECK(r->output.size() == json.size());
  CHECK(r->output == json);
}

TEST_CASE("hook that does not read its stdin does not hurt the daemon", "[hooks]") {
  // The test binary keeps SIGPIPE at its default (terminate): a write raising it would kill us.
  struct sigaction current {};
  REQUIRE(::sigaction(SIGPIPE, nullptr, &current) == 0);
  REQUIRE(current.sa_handler == SIG_DFL);

  Harness h;
  const auto r =
      h.run(spec_for({hook("print_and_exit.sh"), "0"}), with_path(std::string(4 << 20, 'j')));
  REQUIRE(r);
  CHECK(r->success());
  CHECK(r->output == "to stdout\nto stderr\n");
  sigset_t pending;
  sigpending(&pending);
  CHECK(sigismember(&pending, SIGPIPE) == 0);
}

TEST_CASE("hook output is capped, the rest drained, and the run completes", "[hooks]") {
  Harness h;
  HookSpec spec = spec_for({hook("flood.sh"), std::to_string(6 << 20)});
  spec.output_cap = size_t{64} << 10;
  const auto r = h.run(spec, with_path());
  REQUIRE(r);
  CHECK(r->success());  // the hook was never blocked on a full pipe
  CHECK(r->output.size() == spec.output_cap);
  CHECK(r->output_truncated);
  CHECK(r->output == std::string(spec.output_cap, 'x'));

  SECTION("a cap of zero keeps nothing") {
    spec.output_cap = 0;
    const auto none = h.run(spec, with_path());
    REQUIRE(none);
    CHECK(none->success());
    CHECK(none->output.empty());
    CHECK(none->output_truncated);
  }
}

TEST_CASE("hook past its timeout gets SIGTERM to its whole process group", "[hooks]") {
  TempDir dir;
  Harness h;
  HookSpec spec = spec_for({hook("sleep_with_child.sh"), dir.file("pids")});
  spec.timeout = 500ms;
  spec.kill_grace = 10s;
  const auto r = h.run(spec, with_path());
  REQUIRE(r);
  CHECK(r->outcome == Outcome::TimedOut);
  CHECK(r->signal == SIGTERM);
  CHECK_FALSE(r->success());
  CHECK(r->elapsed >= 500ms);
  CHECK(r->elapsed < 5s);  // SIGTERM was enough, no wait for the grace period
  CHECK(r->error.find("timed out after 500ms") != std::string::npos);

  const auto pids = read_pids(h, dir.file("pids"));
  REQUIRE(pids.size() == 2);  // the hook and its background child
  require_all_gone(h, pids);
}

TEST_CASE("hook ignoring SIGTERM gets SIGKILL after the grace period", "[hooks]") {
  TempDir dir;
  Harness h;
  HookSpec spec = spec_for({hook("ignore_term.sh"), dir.file("pids")});
  spec.timeout = 500ms;
  spec.kill_grace = 300ms;
  const auto r = h.run(spec, with_path());
  REQUIRE(r);
  CHECK(r->outcome == Outcome::TimedOut);
  CHECK(r->signal == SIGKILL);
  CHECK(r->elapsed >= 800ms);
  CHECK(r->error.find("SIGKILL") != std::string::npos);

  const auto pids = read_pids(h, dir.file("pids"));
  REQUIRE(pids.size() == 2);
  require_all_gone(h, pids);
}

TEST_CASE("hook exiting 75 is retried with backoff until it succeeds", "[hooks]") {
  TempDir dir;
  Harness h;
  HookSpec spec = spec_for({hook("tempfail_until.sh"), dir.file("count"), "3"});
  spec.retries = 5;
  const auto r = h.run(spec, with_path());
  REQUIRE(r);
  CHECK(r->success());
  CHECK(r->attempts == 3);
  CHECK(r->output == "attempt 3\n");  // output of the last attempt only
  CHECK(r->elapsed >= 20ms);          // two backoffs of 10ms
  CHECK(read_file(dir.file("count")) == "3\n");
}

TEST_CASE("hook exiting 75 stops after its retries", "[hooks]") {
  TempDir dir;
  Harness h;
  HookSpec spec = spec_for({hook("tempfail_until.sh"), dir.file("count"), "1000"});

  SECTION("retries = 2 makes three attempts") {
    spec.retries = 2;
    const auto r = h.run(spec, with_path());
    REQUIRE(r);
    CHECK(r->outcome == Outcome::Exited);
    CHECK(r->exit_code == kHookExitTempFail);
    CHECK(r->attempts == 3);
    CHECK(r->output == "attempt 3\n");
    CHECK(read_file(dir.file("count")) == "3\n");
  }
  SECTION("retries = 0 makes one attempt") {
    spec.retries = 0;
    const auto r = h.run(spec, with_path());
    REQUIRE(r);
    CHECK(r->exit_code == kHookExitTempFail);
    CHECK(r->attempts == 1);
  }
  SECTION("the backoff doubles up to its cap") {
    spec.retries = 3;
    spec.backoff_initial = 40ms;
    spec.backoff_max = 70ms;
    const auto r = h.run(spec, with_path());
    REQUIRE(r);
    CHECK(r->attempts == 4);
    CHECK(r->elapsed >= 40ms + 70ms + 70ms);
  }
}

TEST_CASE("hook backoff delay doubles and is capped", "[hooks]") {
  HookSpec spec;
  spec.backoff_initial = 1s;
  spec.backoff_max = 5s;
  CHECK(hook_backoff_delay(spec, 1) == 1s);
  CHECK(hook_backoff_delay(spec, 2) == 2s);
  CHECK(hook_backoff_delay(spec, 3) == 4s);
  CHECK(hook_backoff_delay(spec, 4) == 5s);
  CHECK(hook_backoff_delay(spec, 1000) == 5s);  // no overflow
  spec.backoff_initial = Duration::zero();
  CHECK(hook_backoff_delay(spec, 3) == Duration::zero());
}

TEST_CASE("hook that cannot be executed is SpawnFailed, not exit 127", "[hooks]") {
  TempDir dir;
  Harness h;

  SECTION("missing file") {
    const std::string missing = dir.file("no-such-hook");
    bool called_inside_run = false;
    bool in_run = true;
    std::optional<HookResult> r;
    h.runner.run(spec_for({missing}), HookInput{}, [&](HookResult res) {
      called_inside_run = in_run;
      r = std::move(res);
    });
    in_run = false;
    CHECK(h.runner.running() == 1);  // still counts until `done` ran
    REQUIRE(h.drive_until([&] { return r.has_value(); }));
    CHECK_FALSE(called_inside_run);
    CHECK(r->outcome == Outcome::SpawnFailed);
    CHECK(r->error == "execve " + missing + ": No such file or directory");
    CHECK(r->exit_code == -1);
    CHECK(r->attempts == 1);
    CHECK(h.runner.running() == 0);
  }
  SECTION("file without execute permission") {
    const std::string path = dir.write("not-executable.sh", "#!/bin/bash\nexit 0\n");
    ::chmod(path.c_str(), 0644);
    const auto r = h.run(spec_for({path}), HookInput{});
    REQUIRE(r);
    CHECK(r->outcome == Outcome::SpawnFailed);
    CHECK(r->error == "execve " + path + ": Permission denied");
  }
  SECTION("bare name not in PATH") {
    const auto r = h.run(spec_for({"faultd-no-such-hook-xyz"}), HookInput{});
    REQUIRE(r);
    CHECK(r->outcome == Outcome::SpawnFailed);
    CHECK(r->error.find("faultd-no-such-hook-xyz") != std::string::npos);
  }
  SECTION("empty argv") {
    const auto r = h.run(spec_for({}), HookInput{});
    REQUIRE(r);
    CHECK(r->outcome == Outcome::SpawnFailed);
    CHECK(r->error == "empty argv");
  }
  SECTION("malformed environment") {
    const auto r = h.run(spec_for({"/usr/bin/env"}), HookInput{{{"A=B", "c"}}, {}});
    REQUIRE(r);
    CHECK(r->outcome == Outcome::SpawnFailed);
    CHECK(r->error.find("A=B") != std::string::npos);
  }
}

TEST_CASE("hook leaving a daemon that holds its stdout completes when the hook exits", "[hooks]") {
  TempDir dir;
  Harness h;
  HookSpec spec = spec_for({hook("daemonize.sh"), dir.file("pid")});
  spec.timeout = 20s;
  spec.output_cap = size_t{1} << 20;
  const auto r = h.run(spec, with_path(), 10s);
  const auto pids = read_pids(h, dir.file("pid"));
  for (const pid_t pid : pids) ::kill(pid, SIGKILL);  // the daemon is ours to clean up

  REQUIRE(r);  // the daemon sleeps 30s: completing within 10s means we did not wait for it
  CHECK(r->success());
  CHECK(r->output == "started\n");
  CHECK(r->elapsed < 10s);
  REQUIRE(pids.size() == 1);
}

TEST_CASE("output the hook wrote just before exiting is kept though the pipe stays open",
          "[hooks]") {
  // More than a pipe buffer, so the hook is still writing while we read; no EOF ever comes
  // (the daemon holds the pipe), so every byte must be taken on readiness or at the exit.
  TempDir dir;
  Harness h;
  HookSpec spec = spec_for({hook("daemonize.sh"), "", "300000"});
  spec.output_cap = size_t{1} << 20;
  const std::string expected = std::string(300000, 'y') + "started\n";
  for (int i = 0; i < 5; ++i) {
    const std::string pid_file = dir.file("pid" + std::to_string(i));
    spec.argv[1] = pid_file;
    const auto r = h.run(spec, with_path(), 10s);
    for (const pid_t pid : read_pids(h, pid_file)) ::kill(pid, SIGKILL);
    REQUIRE(r);
    CHECK(r->success());
    CHECK(r->output.size() == expected.size());
    CHECK(r->output == expected);
  }
}

TEST_CASE("many concurrent hooks each complete exactly once", "[hooks]") {
  Harness h;
  constexpr int kRuns = 20;
  std::vector<int> calls(kRuns, 0);
  std::vector<HookResult> results(kRuns);
  for (int i = 0; i < kRuns; ++i) {
    h.runner.run(spec_for({hook("print_and_exit.sh"), std::to_string(i % 5)}), with_path(),
                 [&, i](HookResult r) {
                   ++calls[i];
                   results[i] = std::move(r);
                 });
  }
  CHECK(h.runner.running() == kRuns);
  REQUIRE(h.drive_until([&] { return h.runner.running() == 0; }, 30s));
  for (int i = 0; i < kRuns; ++i) {
    INFO("run " << i);
    CHECK(calls[i] == 1);
    CHECK(results[i].outcome == Outcome::Exited);
    CHECK(results[i].exit_code == i % 5);
    CHECK(results[i].output == "to stdout\nto stderr\n");
  }
  h.io.restart();
  h.io.run_for(50ms);  // late SIGCHLDs must not complete anything twice
  for (int i = 0; i < kRuns; ++i) CHECK(calls[i] == 1);
}

TEST_CASE("shutdown kills running hooks and cancels pending retries", "[hooks]") {
  TempDir dir;
  Harness h;
  std::vector<HookResult> results;
  auto record = [&](HookResult r) { results.push_back(std::move(r)); };

  HookSpec sleeper = spec_for({hook("sleep_with_child.sh"), dir.file("pids")});
  sleeper.timeout = 60s;
  h.runner.run(sleeper, with_path(), record);

  HookSpec retrier = spec_for({hook("tempfail_until.sh"), dir.file("count"), "1000"});
  retrier.retries = 5;
  retrier.backoff_initial = 60s;
  retrier.backoff_max = 60s;
  h.runner.run(retrier, with_path(), record);

  const auto pids = read_pids(h, dir.file("pids"));
  REQUIRE(pids.size() == 2);
  REQUIRE(h.drive_until([&] { return read_file(dir.file("count")) == "1\n"; }));
  CHECK(h.runner.running() == 2);
  CHECK(results.empty());

  h.runner.shutdown();
  REQUIRE(results.size() == 2);
  CHECK(h.runner.running() == 0);
  for (const auto& r : results) {
    CHECK(r.outcome == Outcome::Cancelled);
    CHECK(r.attempts == 1);
  }
  require_all_gone(h, pids);

  SECTION("a run after shutdown is cancelled, later and once") {
    int calls = 0;
    h.runner.run(spec_for({hook("print_and_exit.sh")}), with_path(), [&](const HookResult& r) {
      ++calls;
      CHECK(r.outcome == Outcome::Cancelled);
    });
    CHECK(calls == 0);
    REQUIRE(h.drive_until([&] { return calls == 1; }));
    h.runner.shutdown();
    CHECK(calls == 1);
  }
  h.io.restart();
  h.io.run_for(50ms);
  CHECK(results.size() == 2);
}

TEST_CASE("destroying the runner completes its runs and kills their hooks", "[hooks]") {
  TempDir dir;
  boost::asio::io_context io;
  std::optional<HookResult> result;
  std::vector<pid_t> pids;
  {
    HookRunner runner(io);
    HookSpec spec = spec_for({hook("sleep_with_child.sh"), dir.file("pids")});
    runner.run(spec, with_path(), [&](HookResult r) { result = std::move(r); });
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (access(dir.file("pids").c_str(), F_OK) != 0 &&
           std::chrono::steady_clock::now() < deadline) {
      io.run_for(5ms);
    }
    std::istringstream in(read_file(dir.file("pids")));
    for (pid_t pid; in >> pid;) pids.push_back(pid);
  }
  REQUIRE(result);
  CHECK(result->outcome == Outcome::Cancelled);
  REQUIRE(pids.size() == 2);
  // The hook itself stays a zombie of ours (nobody left to reap it); its child is reaped by init.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!(process_gone(pids[0]) && process_gone(pids[1])) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  CHECK(process_gone(pids[0]));
  CHECK(process_gone(pids[1]));
  io.run_for(10ms);  // handlers left in the io_context must not touch the dead runner
}

TEST_CASE("hook outcome names", "[hooks]") {
  CHECK(to_string(Outcome::Exited) == "exited");
  CHECK(to_string(Outcome::Signaled) == "signaled");
  CHECK(to_string(Outcome::TimedOut) == "timeout");
  CHECK(to_string(Outcome::SpawnFailed) == "spawn_failed");
  CHECK(to_string(Outcome::Cancelled) == "cancelled");
}

}  // namespace
}  // namespace faultd
