// A real HangSource: its probes are real command sources running the stand-in npu-smi
// (tests/sim/fake-npu-smi), the holder is a real child process read from /proc. A card held by
// a process that computes, then goes idle while the process sleeps, gets one collective-wait
// verdict; the idle card nobody holds gets none; the activity series and the probes show both.
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "collectors/activity/hang_source.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::TempDir;

namespace {

const std::string kFakeNpuSmi = std::string(FAULTD_SOURCE_DIR) + "/tests/sim/fake-npu-smi";

class Sink final : public ChunkSink {
 public:
  bool on_chunk(const Chunk& c) override {
    size_t pos = 0;
    const std::string data(c.data);
    while (pos < data.size()) {
      const size_t nl = data.find('\n', pos);
      lines.push_back(data.substr(pos, nl - pos));
      pos = nl + 1;
    }
    return true;
  }
  bool has(const std::string& prefix) const {
    for (const auto& l : lines) {
      if (l.starts_with(prefix)) return true;
    }
    return false;
  }
  std::vector<std::string> lines;
};

bool drive(HangSource& source, ChunkSink& sink, const std::function<bool()>& done,
           std::chrono::seconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    while (source.poll_once(SystemClock::now(), sink)) {
    }
    if (done()) return true;
    pollfd p{source.wake_fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) source.drain_wake_fd();
  }
  return done();
}

class NoLogs final : public LogActivity {
 public:
  std::optional<TimePoint> last_line(std::string_view) const override { return std::nullopt; }
};

}  // namespace

TEST_CASE("hang source: a held card that goes idle while its process sleeps") {
  TempDir dir;
  dir.write("script.json", R"({"npus": 2})");
  ::setenv("FAKE_NPU_SMI_SCRIPT", dir.file("script.json").c_str(), 1);
  ::setenv("FAKE_NPU_SMI_STATE", dir.file("state").c_str(), 1);
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    ::execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  auto hold = [&](const std::string& mode) {
    dir.write("state/holders/1", R"({"pid": )" + std::to_string(holder) +
                                     R"(, "name": "python3", "mode": ")" + mode +
                                     R"(", "memory_mb": 30784})");
  };
  hold("train");

  HangSourceConfig config;
  config.name = "npu-hang";
  config.program = kFakeNpuSmi;
  config.devices = "0-1";
  config.timeout = 5s;
  config.thresholds.interval = 1s;
  config.thresholds.polls = 2;
  config.thresholds.busy_above = 95;
  NoLogs logs;
  HangSource source(config, logs);
  Sink sink;

  // Training: card 1 busy, held by the child.
  REQUIRE(drive(source, sink,
                [&] { return sink.has("holder: device=1 pid=" + std::to_string(holder)); }));
  REQUIRE(drive(source, sink, [&] {
    for (const auto& a : source.activity()) {
      if (a.device == "1" && a.utilization >= 60) return true;
    }
    return false;
  }));
  hold("idle");
  REQUIRE(drive(source, sink, [&] { return sink.has("hang: "); }));
  std::vector<std::string> verdicts;
  for (const auto& l : sink.lines) {
    if (l.starts_with("hang: ")) verdicts.push_back(l);
  }
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].starts_with("hang: device=1 cause=collective-wait level=NotHandleFault pid=" +
                                std::to_string(holder) + " process=python3 state=S "));
  CHECK(verdicts[0].find(" polls=2 ") != std::string::npos);

  const auto activity = source.activity();
  REQUIRE(activity.size() == 2);
  CHECK(activity[0].device == "0");
  CHECK(activity[0].holders == 0);
  CHECK(activity[1].holders == 1);
  CHECK(activity[1].utilization == 0);
  for (const auto& p : source.probes()) CHECK(p.up);

  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
}
