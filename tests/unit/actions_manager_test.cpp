#include <catch2/catch.hpp>

#include <algorithm>

#include <boost/asio.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <sys/wait.h>
#include <csignal>

#include "daemon/actions/action_manager.hpp"
#include "daemon/core/child_process.hpp"
#include "daemon/state/store.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::FakeClock;
using faultd::testing::TempDir;

namespace {

const std::string kRecord = std::string(FAULTD_SOURCE_DIR) + "/tests/support/hooks/record.sh";

struct Harness {
  TempDir dir;
  boost::asio::io_context io;
  FakeClock clock;
  Store store{dir.file("state.db")};
  HookRunner runner{io};
  std::vector<ActionRecord> finished;
  ActionManager actions{runner, store, clock, [this](const ActionRecord& r, const HookResult*) {
                          finished.push_back(r);
                        }};
  std::string log = dir.file("hooks.log");

  ActionConfig hook(const std::string& name, int exit_code = 0, std::string after = "") {
    ActionConfig a;
    a.name = name;
    a.hook.argv = {kRecord, log, std::to_string(exit_code)};
    a.hook.timeout = 10s;
    a.after = std::move(after);
    return a;
  }

  void configure(std::vector<ActionConfig> list, int max_isolations = 10, bool dry_run = false,
                 int max_concurrent_hooks = 16) {
    ActionSettings s;
    s.node = "n1";
    s.max_concurrent_hooks = max_concurrent_hooks;
    s.dry_run = dry_run;
    s.max_isolations = max_isolations;
    s.isolation_window = 1h;
    for (auto& a : list) s.actions[a.name] = a;
    actions.configure(std::move(s));
  }

  Finding fault(const std::string& device, int64_t offset) {
    Finding f;
    f.rule = "r";
    f.source = "s";
    f.device = device;
    f.level = FaultLevel::SeparateNPU;
    f.code = "80818C00";
    f.offset = static_cast<uint64_t>(offset);
    f.identity = {1, 2, 3, 4};
    Store::Txn txn(store);
    txn.insert_finding(f);
    txn.commit();
    return f;
  }

  // Runs the loop until no hook is in flight (real child processes: a deadline, no sleeps).
  void settle() {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (actions.in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
      io.run_for(5ms);
      io.restart();
    }
    REQUIRE(actions.in_flight() == 0);
  }

  std::vector<std::string> runs() const {
    std::ifstream in(log);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
};

}  // namespace

TEST_CASE("isolate runs, then the actions that run after it", "[actions]") {
  Harness h;
  h.configure(
      {h.hook("isolate"), h.hook("resume", 0, "isolate"), h.hook("diagnose", 0, "isolate")});
  const Finding f = h.fault("3", 1);
  h.actions.start({"isolate"}, f, false);
  h.settle();
  const auto id = std::to_string(f.id);
  REQUIRE(h.runs().size() == 3);
  CHECK(h.runs()[0] == "isolate 3 " + id + " 0");
  // The dependents run side by side once isolate succeeded: they record in either order.
  std::vector<std::string> dependents{h.runs()[1], h.runs()[2]};
  std::sort(dependents.begin(), dependents.end());
  CHECK(dependents == std::vector<std::string>{"diagnose 3 " + id + " 0", "resume 3 " + id + " 0"});
  REQUIRE(h.finished.size() == 3);
  CHECK(h.finished[0].action == "isolate");
  CHECK(h.finished[0].status == ActionStatus::Success);
  CHECK(h.finished[0].attempts == 1);
  auto journal = h.store.query_actions("3", 10);
  REQUIRE(journal.size() == 3);
  for (const auto& a : journal) CHECK(a.status == ActionStatus::Success);
}

TEST_CASE("a hook that succeeded never runs again for the same fault", "[actions]") {
  Harness h;
  h.configure({h.hook("isolate"), h.hook("resume", 0, "isolate")});
  const Finding f = h.fault("3", 1);
  h.actions.start({"isolate"}, f, false);
  h.settle();
  h.actions.start({"isolate"}, f, true);
  h.settle();
  CHECK(h.runs().size() == 2);
  // ...also from a fresh manager over the same store (a restart).
  ActionManager again(h.runner, h.store, h.clock, nullptr);
  ActionSettings s;
  s.actions["isolate"] = h.hook("isolate");
  again.configure(s);
  again.start({"isolate"}, f, false);
  again.resume_journal();
  CHECK(again.in_flight() == 0);
  CHECK(h.runs().size() == 2);
  // A new fault on the same device is a new key.
  h.actions.start({"isolate"}, h.fault("3", 2), false);
  h.settle();
  CHECK(h.runs().size() == 4);
}

TEST_CASE("when isolate fails, its dependents are skipped, not run", "[actions]") {
  Harness h;
  h.configure({h.hook("isolate", 1), h.hook("resume", 0, "isolate")});
  const Finding f = h.fault("4", 1);
  h.actions.start({"isolate"}, f, false);
  h.settle();
  CHECK(h.runs().size() == 1);
  REQUIRE(h.finished.size() == 2);
  CHECK(h.finished[0].status == ActionStatus::Failure);
  CHECK(h.finished[0].exit_code == 1);
  CHECK(h.finished[1].action == "resume");
  CHECK(h.finished[1].status == ActionStatus::Skipped);
  CHECK_THAT(h.finished[1].detail, Catch::Contains("isolate"));
}

TEST_CASE("automatic isolations stop at the blast-radius budget; operators are not limited",
          "[actions]") {
  Harness h;
  h.configure({h.hook("isolate")}, /*max_isolations=*/2);
  h.actions.start({"isolate"}, h.fault("0", 1), false);
  h.actions.start({"isolate"}, h.fault("1", 2), false);
  h.actions.start({"isolate"}, h.fault("2", 3), false);
  h.settle();
  CHECK(h.runs().size() == 2);
  REQUIRE(h.finished.size() == 3);
  const auto skipped = std::count_if(h.finished.begin(), h.finished.end(), [](const auto& r) {
    return r.status == ActionStatus::Skipped;
  });
  CHECK(skipped == 1);
  CHECK(h.actions.isolations_in_window() == 2);
  h.actions.start({"isolate"}, h.fault("4", 4), /*by_operator=*/true);
  h.settle();
  CHECK(h.runs().size() == 3);
  // The window passes: the budget is back.
  h.clock.advance(61min);
  CHECK(h.actions.isolations_in_window() == 0);
  h.actions.start({"isolate"}, h.fault("5", 5), false);
  h.settle();
  CHECK(h.runs().size() == 4);
}

TEST_CASE("the isolation budget survives a restart", "[actions]") {
  Harness h;
  h.configure({h.hook("isolate")}, 1);
  h.actions.start({"isolate"}, h.fault("0", 1), false);
  h.settle();
  ActionManager again(h.runner, h.store, h.clock, nullptr);
  ActionSettings s;
  s.max_isolations = 1;
  s.actions["isolate"] = h.hook("isolate");
  again.configure(s);
  CHECK(again.isolations_in_window() == 1);
}

TEST_CASE("actions that were running when faultd died are run again at start", "[actions]") {
  Harness h;
  h.configure({h.hook("isolate"), h.hook("resume", 0, "isolate")});
  const Finding f = h.fault("6", 1);
  ActionRecord r = h.store.ensure_action("isolate", "6", f.id, h.clock.now());
  r.status = ActionStatus::Running;
  r.attempts = 1;
  h.store.update_action(r);
  h.actions.resume_journal();
  h.settle();
  const auto id = std::to_string(f.id);
  CHECK(h.runs() == std::vector<std::string>{"isolate 6 " + id + " 0", "resume 6 " + id + " 0"});
}

TEST_CASE("dry run hands FAULTD_DRY_RUN=1 to hooks", "[actions]") {
  Harness h;
  h.configure({h.hook("isolate")}, 10, /*dry_run=*/true);
  const Finding f = h.fault("7", 1);
  h.actions.start({"isolate"}, f, false);
  h.settle();
  REQUIRE(h.runs().size() == 1);
  CHECK(h.runs()[0] == "isolate 7 " + std::to_string(f.id) + " 1");
}

TEST_CASE("an action that is not configured is skipped with a log, nothing runs", "[actions]") {
  Harness h;
  h.configure({});
  h.actions.start({"isolate"}, h.fault("8", 1), false);
  CHECK(h.actions.in_flight() == 0);
  CHECK(h.store.query_actions("8", 10).empty());
}

TEST_CASE(
    "a hook gets the allow-listed environment, its configured argv, and log text only on "
    "stdin",
    "[actions][security]") {
  Harness h;
  // Something the daemon's own environment holds must not leak to hooks.
  ::setenv("FAULTD_TEST_DAEMON_SECRET", "do-not-pass", 1);
  const std::string dump = h.dir.file("exec.txt");
  const std::string marker = h.dir.file("pwned");
  ActionConfig a;
  a.name = "isolate";
  a.hook.argv = {std::string(FAULTD_SOURCE_DIR) + "/tests/support/hooks/dump_exec.sh", dump};
  a.hook.timeout = 10s;
  h.configure({a});
  Finding f = h.fault("4", 1);
  // A log line written to make a shell run something: it must stay data.
  f.text = "[ERROR] device 4 $(touch " + marker + ") `touch " + marker + "`; touch " + marker;
  h.actions.start({"isolate"}, f, false);
  h.settle();
  ::unsetenv("FAULTD_TEST_DAEMON_SECRET");

  std::ifstream in(dump);
  std::vector<std::string> args;
  std::set<std::string> env_names;
  std::set<std::string> env_lines;
  std::string stdin_text;
  bool in_stdin = false;
  for (std::string line; std::getline(in, line);) {
    if (in_stdin) {
      stdin_text += line + "\n";
    } else if (line.rfind("ARG:", 0) == 0) {
      args.push_back(line.substr(4));
    } else if (line.rfind("ENV:", 0) == 0) {
      env_names.insert(line.substr(4, line.find('=') - 4));
      env_lines.insert(line.substr(4));
    } else if (line == "STDIN:") {
      in_stdin = true;
    }
  }
  CHECK(args == std::vector<std::string>{dump});  // the configured argv, nothing from the log
  CHECK(env_names == std::set<std::string>{"PATH", "FAULTD_ACTION", "FAULTD_NODE", "FAULTD_DEVICE",
                                           "FAULTD_RULE", "FAULTD_CODE", "FAULTD_LEVEL",
                                           "FAULTD_FAULT_ID", "FAULTD_DRY_RUN", "FAULTD_ATTEMPT",
                                           "FAULTD_JOB"});
  CHECK(env_lines.count("FAULTD_JOB=") == 1);       // the finding names no job
  CHECK(env_lines.count("FAULTD_ATTEMPT=1") == 1);  // the first run of this action
  CHECK_THAT(stdin_text, Catch::Contains("$(touch " + marker + ")"));  // the evidence, as data
  CHECK_FALSE(std::filesystem::exists(marker));                        // no shell ever saw it
}

namespace {

// An executable shell script in the test's directory.
std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  std::string path = dir.file(name);
  std::ofstream(path) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("at most max_concurrent_hooks hooks run at once, the rest wait their turn and all run",
          "[actions]") {
  Harness h;
  // Each run notes how many runs were under way when it started (its own marker included).
  const std::string slots = h.dir.file("slots");
  std::filesystem::create_directory(slots);
  ActionConfig notify;
  notify.name = "notify";
  notify.hook.argv = {script(h.dir, "count.sh",
                             "touch \"$1/$FAULTD_DEVICE\"\n"
                             "ls \"$1\" | wc -l >> \"$2\"\n"
                             "sleep 0.3\n"
                             "rm \"$1/$FAULTD_DEVICE\"\n"),
                      slots, h.log};
  notify.hook.timeout = 10s;
  h.configure({notify}, 10, false, /*max_concurrent_hooks=*/2);
  for (int d = 0; d < 6; ++d) h.actions.start({"notify"}, h.fault(std::to_string(d), d), false);
  CHECK(h.actions.in_flight() == 2);
  CHECK(h.actions.queued() == 4);
  const auto waiting = h.store.unfinished_actions();
  CHECK(std::count_if(waiting.begin(), waiting.end(), [](const ActionRecord& a) {
          return a.status == ActionStatus::Pending &&
                 a.detail.find("max_concurrent_hooks") != std::string::npos;
        }) == 4);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while ((h.actions.in_flight() > 0 || h.actions.queued() > 0) &&
         std::chrono::steady_clock::now() < deadline) {
    h.io.run_for(5ms);
    h.io.restart();
  }
  const auto counts = h.runs();
  REQUIRE(counts.size() == 6);
  for (const auto& c : counts) CHECK(std::stoi(c) <= 2);
  CHECK(h.finished.size() == 6);
  for (const auto& a : h.finished) CHECK(a.status == ActionStatus::Success);
}

TEST_CASE(
    "a hook that outlived the previous faultd is waited for and then killed before its re-run",
    "[actions]") {
  Harness h;
  // The run left behind: a real process in its own group, still going.
  SpawnedProcess survivor = spawn_process("/bin/sleep", {"sleep", "60"}, {});
  REQUIRE(survivor.pid > 0);
  const auto identity = identify_process(survivor.pid);
  REQUIRE(identity);
  CHECK(is_running(*identity));

  // The re-run notes the survivor's state when it starts (gone, or a zombie) and its attempt.
  const std::string seen = h.dir.file("seen");
  ActionConfig isolate;
  isolate.name = "isolate";
  isolate.hook.argv = {
      script(h.dir, "isolate.sh",
             "state=$(cut -d' ' -f3 /proc/$1/stat 2>/dev/null)\n"
             "echo \"survivor=${state:-gone} attempt=$FAULTD_ATTEMPT\" >> \"$2\"\n"),
      std::to_string(survivor.pid), seen};
  isolate.hook.timeout = 300ms;  // the survivor's time to finish
  isolate.hook.kill_grace = 100ms;
  h.configure({isolate});
  const Finding f = h.fault("4", 1);
  ActionRecord r = h.store.ensure_action("isolate", "4", f.id, h.clock.now());
  r.status = ActionStatus::Running;
  r.attempts = 1;
  r.process = *identity;
  h.store.update_action(r);

  h.actions.resume_journal();
  CHECK(h.store.unfinished_actions().at(0).detail.find("waiting for the run left") !=
        std::string::npos);
  h.settle();
  int status = 0;
  REQUIRE(reap_child(survivor.pid, &status, /*block=*/true) == survivor.pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);  // it ignored nothing: the first signal ended it
  CHECK(lines_of(seen) == std::vector<std::string>{"survivor=Z attempt=2"});
  REQUIRE(h.finished.size() == 1);
  CHECK(h.finished[0].status == ActionStatus::Success);
  CHECK(h.finished[0].attempts == 2);
  CHECK(h.finished[0].process.pid == 0);  // nothing left running
}

TEST_CASE(
    "a journaled process that is gone, or a pid now used by another process, is not waited for",
    "[actions]") {
  Harness h;
  h.configure({h.hook("isolate")});
  const Finding f = h.fault("5", 1);
  ActionRecord r = h.store.ensure_action("isolate", "5", f.id, h.clock.now());
  r.status = ActionStatus::Running;
  r.attempts = 1;
  // This very test process, but with another start time: the pid was reused.
  const auto self = identify_process(::getpid());
  REQUIRE(self);
  r.process = {self->pid, self->start_ticks + 1};
  CHECK_FALSE(is_running(r.process));
  h.store.update_action(r);
  h.actions.resume_journal();
  h.settle();
  CHECK(h.runs() == std::vector<std::string>{"isolate 5 " + std::to_string(f.id) + " 0"});
}

TEST_CASE("an operator's isolations neither spend the automatic budget nor are limited by it",
          "[actions]") {
  Harness h;
  h.configure({h.hook("isolate")}, /*max_isolations=*/1);
  auto operator_fault = [&h](const std::string& device, uint64_t offset) {
    Finding f;  // as Pipeline::isolate journals it
    f.rule = kOperatorIsolateRule;
    f.source = "faultctl";
    f.device = device;
    f.level = FaultLevel::ManuallySeparateNPU;
    f.offset = offset;
    Store::Txn txn(h.store);
    txn.insert_finding(f);
    txn.commit();
    return f;
  };
  h.actions.start({"isolate"}, operator_fault("0", 1), /*by_operator=*/true);
  h.actions.start({"isolate"}, operator_fault("1", 2), /*by_operator=*/true);
  h.settle();
  CHECK(h.runs().size() == 2);
  CHECK(h.actions.isolations_in_window() == 0);
  CHECK(h.actions.operator_isolations_in_window() == 2);
  // A real fault still finds the whole budget.
  h.actions.start({"isolate"}, h.fault("3", 3), false);
  h.settle();
  CHECK(h.runs().size() == 3);
  CHECK(h.actions.isolations_in_window() == 1);
  // The next restart tells them apart from the journal.
  ActionManager again(h.runner, h.store, h.clock, nullptr);
  ActionSettings s;
  s.max_isolations = 1;
  s.actions["isolate"] = h.hook("isolate");
  again.configure(s);
  CHECK(again.isolations_in_window() == 1);
  CHECK(again.operator_isolations_in_window() == 2);
}

TEST_CASE("a dependent the pipeline journaled as skipped is never started", "[actions]") {
  Harness h;
  h.configure({h.hook("isolate"), h.hook("resume", 0, "isolate")});
  // What Pipeline::on_action_finished does to an isolate result it ignores.
  ActionManager manager(h.runner, h.store, h.clock, [&h](const ActionRecord& r, const HookResult*) {
    if (r.action != "isolate") return;
    ActionRecord dep = h.store.ensure_action("resume", r.device, r.fault_id, h.clock.now());
    dep.status = ActionStatus::Skipped;
    dep.detail = "'isolate' result ignored";
    h.store.update_action(dep);
  });
  ActionSettings s;
  s.actions["isolate"] = h.hook("isolate");
  s.actions["resume"] = h.hook("resume", 0, "isolate");
  manager.configure(s);
  const Finding f = h.fault("3", 1);
  manager.start({"isolate"}, f, false);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (manager.in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    h.io.run_for(5ms);
    h.io.restart();
  }
  REQUIRE(manager.in_flight() == 0);
  REQUIRE(h.runs().size() == 1);
  CHECK(h.runs()[0].rfind("isolate 3", 0) == 0);
  manager.resume_journal();  // nor does a restart
  CHECK(manager.in_flight() == 0);
}
