// Crash consistency with real processes: a child writes through the store and dies (exit
// without cleanup, or SIGKILL) at a chosen or arbitrary moment; the parent reopens the file and
// finds every committed transaction whole and no trace of an uncommitted one.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "daemon/state/store.hpp"
#include "tests/support/state_store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::sample_finding;
using faultd::testing::sample_position;
using faultd::testing::TempDir;

namespace {

enum class Death { Exit, Kill };

// Child side: nothing here may return into Catch; every path ends in _exit or a signal.
[[noreturn]] void child_commit_then_die(const std::string& path, Death death) {
  try {
    Store store(path);
    {
      Store::Txn txn(store);
      Finding f = sample_finding(100);
      if (!txn.insert_finding(f)) _exit(3);
      txn.save_position(sample_position(150));
      txn.commit();
    }
    Store::Txn txn(store);
    Finding f = sample_finding(150);
    if (!txn.insert_finding(f)) _exit(3);
    Transition t;
    t.device = f.device;
    t.to = DeviceState::Warning;
    t.fault_id = f.id;
    txn.apply_transition(t);
    txn.save_position(sample_position(200));
    if (death == Death::Kill) raise(SIGKILL);
    _exit(0);  // no destructors: the open transaction is neither committed nor rolled back
  } catch (...) {
    _exit(2);
  }
}

int wait_for(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

}  // namespace

TEST_CASE("a process dying mid-transaction keeps committed rows and loses the rest",
          "[state][crash]") {
  const Death death = GENERATE(Death::Exit, Death::Kill);
  TempDir dir;
  const std::string path = dir.file("state.db");

  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) child_commit_then_die(path, death);

  const int status = wait_for(pid);
  if (death == Death::Kill) {
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
  } else {
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  }

  Store store(path);
  const auto faults = store.query_faults({});
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].offset == 100);
  const auto pos = store.find_position("device-plugin", 2049, 131'075);
  REQUIRE(pos);
  CHECK(pos->offset == 150);
  CHECK(store.load_devices().empty());
  CHECK(store.query_transitions("", 10).empty());

  // The second transaction can now be done again, and is new to the journal.
  Finding retry = sample_finding(150);
  Store::Txn txn(store);
  CHECK(txn.insert_finding(retry));
  txn.commit();
}

TEST_CASE("SIGKILL at an arbitrary moment leaves findings and position in step", "[state][crash]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  { Store create(path); }  // so the child's start-up is not part of the race

  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    try {
      // Each transaction journals the finding at offset i and moves the position past it,
      // so a consistent file always has position == number of findings.
      Store store(path);
      for (uint64_t i = 0;; ++i) {
        Store::Txn txn(store);
        Finding f = sample_finding(i);
        if (!txn.insert_finding(f)) _exit(3);
        txn.save_position(sample_position(i + 1));
        txn.commit();
        if (write(fds[1], "c", 1) != 1) _exit(4);
      }
    } catch (...) {
      _exit(2);
    }
  }
  close(fds[1]);

  // Let it commit a few dozen times, then kill it wherever it is.
  constexpr int kCommitsBeforeKill = 40;
  int seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen < kCommitsBeforeKill && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[64];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child died early; the exit status says why
    seen += static_cast<int>(n);
  }
  kill(pid, SIGKILL);
  const int status = wait_for(pid);
  close(fds[0]);
  INFO("child status " << status);
  REQUIRE(seen >= kCommitsBeforeKill);
  REQUIRE(WIFSIGNALED(status));

  Store store(path);
  FaultQuery all;
  all.limit = 1'000'000;
  const auto faults = store.query_faults(all);
  // Every commit the child reported is there; at most one more may have landed unreported.
  CHECK(faults.size() >= static_cast<size_t>(seen));
  const auto pos = store.find_position("device-plugin", 2049, 131'075);
  REQUIRE(pos);
  CHECK(pos->offset == faults.size());
  std::vector<bool> present(faults.size(), false);
  for (const auto& f : faults) {
    REQUIRE(f.offset < present.size());
    CHECK_FALSE(present[f.offset]);
    present[f.offset] = true;
  }
}
