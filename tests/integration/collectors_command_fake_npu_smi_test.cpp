// A real CommandSource driving the fake npu-smi (tests/sim/fake-npu-smi) as child processes:
// a device flipping to Warning/80818C00 and back, discovery from `npu-smi info`, and failing,
// hanging, garbled and over-long commands counted without delaying the healthy ones, logged with
// their reasons, and reported as unresponsive (probe records, probes()) until they answer again.
#include <poll.h>
#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "collectors/command/command_source.hpp"
#include "tests/support/captured_log.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::CapturedLog;
using faultd::testing::TempDir;
using Strings = std::vector<std::string>;

namespace {

const std::string kFakeNpuSmi = std::string(FAULTD_SOURCE_DIR) + "/tests/sim/fake-npu-smi";

struct Received {
  std::string path;
  std::string source_type;
  FileIdentity identity;
  uint64_t start_offset = 0;
  uint64_t end_offset = 0;
  std::string data;
};

class Sink final : public ChunkSink {
 public:
  bool on_chunk(const Chunk& c) override {
    chunks.push_back({std::string(c.path), std::string(c.source_type), c.identity, c.start_offset,
                      c.end_offset, std::string(c.data)});
    return true;
  }
  Strings lines() const {
    Strings out;
    for (const auto& c : chunks) {
      size_t pos = 0;
      while (pos < c.data.size()) {
        const size_t nl = c.data.find('\n', pos);
        out.push_back(c.data.substr(pos, nl - pos));
        pos = nl + 1;
      }
    }
    return out;
  }
  std::vector<Received> chunks;
};

// Points the fake at a script in `dir`; the environment is what the source passes on.
void use_script(const TempDir& dir, const std::string& json) {
  const std::string script = dir.write("script.json", json);
  ::setenv("FAKE_NPU_SMI_SCRIPT", script.c_str(), 1);
  ::setenv("FAKE_NPU_SMI_STATE", dir.file("state").c_str(), 1);
}

// Polls the source the way the app does (on wake-fd readiness, at least every 100 ms) until
// `done` or the deadline; returns whether `done` came true.
bool drive(CommandSource& source, ChunkSink& sink, const std::function<bool()>& done,
           std::chrono::seconds limit = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    while (source.poll_once(SystemClock::now(), sink)) {
    }
    if (done()) return true;
    pollfd p{source.wake_fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
  }
  return done();
}

CommandSourceConfig health_config(const std::string& devices) {
  CommandSourceConfig c;
  c.name = "npu-health";
  c.argv = {kFakeNpuSmi, "info", "-t", "health", "-i", "{device}", "-c", "0"};
  c.devices = devices;
  c.interval = 100ms;
  c.timeout = 10s;
  c.parser = CommandParser::NpuSmiHealth;
  return c;
}

uint64_t errors(CommandSource& s, SourceErrorKind k) { return s.stats().error_count(k); }

// The source's probe state of `device`: 1 up, 0 down, -1 no result yet.
int probe_up(const CommandSource& s, const std::string& device) {
  for (const ProbeUp& p : s.probes()) {
    if (p.device == device) return p.up ? 1 : 0;
  }
  return -1;
}

bool contains(const Strings& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The captured log lines that contain every one of `parts`.
size_t logged(const CapturedLog& log, const Strings& parts) {
  size_t n = 0;
  for (const std::string& line : log.lines()) {
    bool all = true;
    for (const std::string& part : parts) all = all && line.find(part) != std::string::npos;
    n += all ? 1 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("command source: a device flips to Warning/80818C00 and back") {
  TempDir dir;
  use_script(dir, R"({"health": {"3": [
      {"calls": 2, "status": "OK"},
      {"calls": 2, "status": "Warning", "codes": ["80818C00"],
       "info": ["node type=SoC, sensor type=Check Sensor, event state=check fail"]},
      {"status": "OK"}]}})");
  CommandSource source(health_config("2-3"));
  Sink sink;
  const uint64_t started_us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(SystemClock::now().time_since_epoch())
          .count());

  REQUIRE(drive(source, sink, [&] { return sink.lines().size() >= 2; }));
  CHECK(sink.lines() ==
        Strings{"npu-smi health: device=3 chip=0 status=Warning code=80818C00 info=\"node "
                "type=SoC, sensor type=Check Sensor, event state=check fail\"",
                "npu-smi health: device=3 chip=0 status=OK recovered"});
  REQUIRE(sink.chunks.size() == 2);
  const Received& fault = sink.chunks[0];
  const Received& recovery = sink.chunks[1];
  CHECK(fault.path == kFakeNpuSmi + " info -t health -i 3 -c 0");
  CHECK(fault.identity.dev == 0);
  CHECK(fault.identity.ino != 0);
  CHECK(recovery.identity == fault.identity);  // one stream per device
  CHECK(fault.start_offset >= started_us);     // the poll's unix time in microseconds
  CHECK(fault.end_offset == fault.start_offset + fault.data.size());
  CHECK(recovery.start_offset >= fault.end_offset);
  CHECK(errors(source, SourceErrorKind::Command) == 0);
  CHECK(errors(source, SourceErrorKind::Parse) == 0);
  CHECK(source.stats().lines.load() == 2);

  // Healthy again and staying so: more runs, no more records.
  const uint64_t bytes_before = source.stats().bytes.load();
  REQUIRE(drive(source, sink, [&] { return source.stats().bytes.load() > bytes_before + 500; }));
  CHECK(sink.lines().size() == 2);
}

TEST_CASE("command source: devices discovered from npu-smi info (A3 layout)") {
  TempDir dir;
  use_script(dir, R"({"npus": 2, "layout": "a3", "health": {
      "1": [{"status": "Alarm", "codes": ["A4025021", "8C084E00"]}]}})");
  CommandSourceConfig c = health_config("");
  c.discover = true;
  c.argv = {kFakeNpuSmi, "info", "-t", "health", "-i", "{device}"};
  CommandSource source(c);
  Sink sink;
  REQUIRE(drive(source, sink, [&] { return sink.lines().size() >= 2; }));
  CHECK(sink.lines() == Strings{"npu-smi health: device=1 status=Alarm code=A4025021",
                                "npu-smi health: device=1 status=Alarm code=8C084E00"});
}

TEST_CASE("command source: failing, hanging and garbled commands are counted, others go on") {
  TempDir dir;
  use_script(dir, R"({"health": {
      "4": [{"status": "Warning", "codes": ["80818C00"]}],
      "5": [{"behaviour": "hang"}],
      "6": [{"behaviour": "fail"}],
      "7": [{"behaviour": "garbage"}]}})");
  CommandSourceConfig c = health_config("4-7");
  c.interval = 200ms;
  c.timeout = 3s;
  CommandSource source(c);
  Sink sink;

  // Device 4's record arrives while device 5's command still hangs. 6 and 7 may have become
  // unresponsive by then (3 failed runs), and 6's error message is handed on: neither is a
  // health record.
  const auto health_lines = [&] {
    Strings out;
    for (const std::string& line : sink.lines()) {
      if (line.rfind("npu-smi health: ", 0) == 0) out.push_back(line);
    }
    return out;
  };
  REQUIRE(drive(source, sink, [&] { return !health_lines().empty(); }));
  CHECK(health_lines() == Strings{"npu-smi health: device=4 chip=0 status=Warning code=80818C00"});
  // The fake writes its pid after creating the file: wait for the number, not the file.
  const std::string pid_file = dir.file("state/hang-5.pid");
  pid_t hung = 0;
  REQUIRE(drive(source, sink, [&] {
    std::ifstream in(pid_file);
    return static_cast<bool>(in >> hung) && hung > 0;
  }));
  CHECK(::kill(hung, 0) == 0);  // still hanging (its timeout is 3 s away)
  CHECK(source.running() >= 1);

  // The hung command is timed out, killed and counted; the failure and the garbage too.
  REQUIRE(drive(source, sink, [&] {
    return errors(source, SourceErrorKind::Command) >= 3 &&  // 6 fails twice, 5 times out
           errors(source, SourceErrorKind::Parse) >= 2;
  }));
  REQUIRE(drive(source, sink, [&] { return ::kill(hung, 0) != 0 && errno == ESRCH; }));
  // Garbage and failures changed no device's health; they made probes unresponsive.
  CHECK(health_lines().size() == 1);
  // The failing command's own words went to the rules once, though it failed three times and
  // more; the garbage (exit status 0) and the killed run's output did not.
  const Strings all = sink.lines();
  CHECK(std::count(all.begin(), all.end(), "Error: device not found or permission denied") == 1);
  CHECK(std::count_if(all.begin(), all.end(), [](const std::string& line) {
          return line.rfind("npu-smi health: ", 0) != 0 && line.rfind("probe: ", 0) != 0 &&
                 line != "Error: device not found or permission denied";
        }) == 0);
  CHECK(contains(sink.lines(),
                 "probe: device=6 status=unresponsive failures=3 reason=\"exit "
                 "status 1: Error: device not found or permission denied\""));
  // The tool's words come in chunks of their own type, faultd's records as `command`: a rule
  // that trusts only records (source_types: [command]) never reads what a tool printed.
  for (const Received& chunk : sink.chunks) {
    const bool told = chunk.data == "Error: device not found or permission denied\n";
    CHECK(chunk.source_type == (told ? "command_output" : "command"));
  }
}

TEST_CASE("command source: a hung card is unresponsive after N timeouts, then recovers") {
  CapturedLog log;
  TempDir dir;
  use_script(dir, R"({"health": {"5": [{"calls": 2, "behaviour": "hang"}, {"status": "OK"}]}})");
  CommandSourceConfig c = health_config("5");
  c.interval = 2s;
  c.timeout = 2s;
  c.unresponsive_after = 2;
  CommandSource source(c);
  Sink sink;

  const std::string unresponsive =
      "probe: device=5 status=unresponsive failures=2 reason=\"timed out after 2s\"";
  REQUIRE(drive(
      source, sink, [&] { return contains(sink.lines(), unresponsive); }, 60s));
  CHECK(sink.lines() == Strings{unresponsive});
  CHECK(probe_up(source, "5") == 0);
  CHECK(logged(log, {"source npu-health: device 5 failed: timed out after 2s"}) == 1);
  CHECK(logged(log, {"source npu-health: device 5 unresponsive after 2 failed run(s) in a row",
                     "timed out after 2s"}) == 1);
  CHECK(errors(source, SourceErrorKind::Command) == 2);
  // The chunk names the command that hung, on the device's own stream.
  CHECK(sink.chunks.back().path == kFakeNpuSmi + " info -t health -i 5 -c 0");

  // The hung child was killed.
  pid_t hung = 0;
  std::ifstream(dir.file("state/hang-5.pid")) >> hung;
  REQUIRE(hung > 0);
  REQUIRE(drive(source, sink, [&] { return ::kill(hung, 0) != 0 && errno == ESRCH; }));

  // Its third call answers OK: one recovered line, the probe up again.
  REQUIRE(drive(
      source, sink, [&] { return sink.lines().size() >= 2; }, 60s));
  CHECK(sink.lines() == Strings{unresponsive, "probe: device=5 status=OK recovered"});
  CHECK(probe_up(source, "5") == 1);
  CHECK(logged(log, {"device 5 answers again after 2 failed run(s)"}) == 1);
  CHECK(source.probes().size() == 1);  // one per device of the list
}

TEST_CASE("command source: each failure is logged with its reason, a few a minute per source") {
  CapturedLog log;
  TempDir dir;
  use_script(dir, R"({"health": {
      "4": [{"behaviour": "truncated", "status": "Warning", "codes": ["80818C00"]}],
      "6": [{"behaviour": "fail"}],
      "7": [{"behaviour": "garbage"}]}})");
  CommandSourceConfig c = health_config("4,6-7");
  c.interval = 100ms;
  c.timeout = 10s;
  c.unresponsive_after = 1;
  CommandSource source(c);
  Sink sink;
  const auto started = std::chrono::steady_clock::now();
  const auto failures = [&] {
    return errors(source, SourceErrorKind::Command) + errors(source, SourceErrorKind::Parse);
  };
  REQUIRE(drive(
      source, sink, [&] { return failures() >= 30; }, 120s));

  // The first failure of each card makes it unresponsive (N = 1), with its reason.
  const std::string fail_reason = "exit status 1: Error: device not found or permission denied";
  CHECK(contains(sink.lines(),
                 "probe: device=6 status=unresponsive failures=1 reason=\"" + fail_reason + "\""));
  CHECK(logged(log, {"device 6 unresponsive", fail_reason}) == 1);
  CHECK(logged(log, {"device 7 unresponsive", "unparsable output: "}) == 1);
  CHECK(logged(log, {"device 4 unresponsive", "unparsable output: "}) == 1);
  CHECK(probe_up(source, "4") == 0);
  CHECK(probe_up(source, "6") == 0);
  CHECK(probe_up(source, "7") == 0);
  // One unresponsive line per card and card 6's error message once (it failed ten times and
  // more), no health records.
  CHECK(sink.lines().size() == 4);
  CHECK(contains(sink.lines(), "Error: device not found or permission denied"));

  // Later failures: at most kFailureLogsPerMinute lines a minute for the source, not one each.
  const auto minutes =
      std::chrono::duration_cast<std::chrono::minutes>(std::chrono::steady_clock::now() - started)
          .count();
  const size_t failure_lines = logged(log, {"source npu-health: device ", " failed: "});
  CHECK(failure_lines >= 1);
  CHECK(failure_lines <= kFailureLogsPerMinute * static_cast<size_t>(minutes + 1));
  CHECK(failure_lines < failures());
}

TEST_CASE("command source: over-long output, a missing program and a signal are failures") {
  CapturedLog log;
  CommandSourceConfig c;
  c.name = "chatty";
  c.argv = {"/bin/sh", "-c", "while :; do echo 0, 00000000:3B:00.0; done"};
  c.interval = 100ms;
  c.timeout = 10s;
  c.max_output_bytes = 4096;
  c.unresponsive_after = 1;
  c.parser = CommandParser::NvidiaSmiBus;
  CommandSource chatty(c);
  Sink sink;
  REQUIRE(drive(chatty, sink, [&] { return !sink.chunks.empty(); }));
  CHECK(sink.lines() ==
        Strings{"probe: status=unresponsive failures=1 reason=\"output over 4096 bytes\""});
  CHECK(probe_up(chatty, "") == 0);
  CHECK(logged(log, {"source chatty: /bin/sh -c ", "output over 4096 bytes"}) == 1);

  c.name = "missing";
  c.argv = {"/nonexistent/nvidia-smi"};
  CommandSource missing(c);
  REQUIRE(drive(missing, sink, [&] { return probe_up(missing, "") == 0; }));
  CHECK(logged(log, {"source missing: /nonexistent/nvidia-smi unresponsive", "cannot start: "}) ==
        1);
  CHECK(errors(missing, SourceErrorKind::Command) >= 1);
  CHECK(missing.running() == 0);

  c.name = "exits";
  c.argv = {"/bin/sh", "-c", "echo; echo '  nvidia-smi: GPU is lost  '; kill -9 $$"};
  CommandSource exits(c);
  REQUIRE(drive(exits, sink, [&] { return probe_up(exits, "") == 0; }));
  CHECK(logged(log, {"source exits: ", "killed by signal 9: nvidia-smi: GPU is lost"}) == 1);
}

TEST_CASE("command source: nvidia-smi bus map handed on once, and again when it changes") {
  TempDir dir;
  const std::string out = dir.write("map.csv", "0, 00000000:3B:00.0\n1, 00000000:86:00.0\n");
  CommandSourceConfig c;
  c.name = "gpu-map";
  c.argv = {"/bin/cat", out};
  c.interval = 50ms;
  c.parser = CommandParser::NvidiaSmiBus;
  CommandSource source(c);
  Sink sink;
  REQUIRE(drive(source, sink, [&] { return !sink.lines().empty(); }));
  const uint64_t bytes = source.stats().bytes.load();
  REQUIRE(drive(source, sink, [&] { return source.stats().bytes.load() >= bytes * 3; }));
  CHECK(sink.lines() == Strings{"nvidia-smi gpu: index=0 bus_id=00000000:3B:00.0",
                                "nvidia-smi gpu: index=1 bus_id=00000000:86:00.0"});
  dir.write("map.csv", "0, 00000000:86:00.0\n");
  REQUIRE(drive(source, sink, [&] { return sink.lines().size() >= 3; }));
  CHECK(sink.lines().back() == "nvidia-smi gpu: index=0 bus_id=00000000:86:00.0");
}

namespace {

// A sink that refuses the first `refuse` chunks, as a failing store does.
class RefusingSink final : public ChunkSink {
 public:
  explicit RefusingSink(int refuse) : refuse_(refuse) {}
  bool on_chunk(const Chunk& c) override {
    if (refuse_ > 0) {
      --refuse_;
      return false;
    }
    return inner.on_chunk(c);
  }
  Sink inner;

 private:
  int refuse_;
};

const char kWarning[] =
    "\tHealth Status                  : Warning\n"
    "\tError Code                     : 80818C00\n"
    "\tError Information              : NA\n";
const char kOk[] =
    "\tHealth Status                  : OK\n"
    "\tError Code                     : NA\n"
    "\tError Information              : NA\n";

}  // namespace

TEST_CASE("command source: garbled output keeps the previous state, a refused chunk comes back") {
  TempDir dir;
  const std::string out = dir.write("health.txt", kWarning);
  CommandSourceConfig c;
  c.name = "health-file";
  // A stand-in that prints the file; "-i 4" is read back as the device, as for npu-smi.
  const std::string tool = dir.write("print-health", "#!/bin/sh\nexec cat '" + out + "'\n");
  std::filesystem::permissions(tool, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  c.argv = {tool, "info", "-t", "health", "-i", "4"};
  c.interval = 50ms;
  c.parser = CommandParser::NpuSmiHealth;
  CommandSource source(c);
  RefusingSink sink(1);
  const auto drive_refusing = [&](const std::function<bool()>& done) {
    return drive(source, sink, done);
  };

  // The first record is refused (counted), and handed on again by the next run.
  REQUIRE(drive_refusing([&] { return !sink.inner.lines().empty(); }));
  CHECK(errors(source, SourceErrorKind::Commit) >= 1);
  CHECK(sink.inner.lines() == Strings{"npu-smi health: device=4 status=Warning code=80818C00"});

  // Garbage: counted, the device stays sick (no recovery, and no repeat when it comes back).
  const uint64_t parse_errors = errors(source, SourceErrorKind::Parse);
  dir.write("health.txt", "\tHealth Status : Warn\n");
  REQUIRE(drive_refusing([&] { return errors(source, SourceErrorKind::Parse) > parse_errors; }));
  dir.write("health.txt", kWarning);
  const uint64_t bytes = source.stats().bytes.load();
  REQUIRE(drive_refusing([&] { return source.stats().bytes.load() > bytes + 300; }));
  CHECK(sink.inner.lines().size() == 1);

  dir.write("health.txt", kOk);
  REQUIRE(drive_refusing([&] { return sink.inner.lines().size() >= 2; }));
  CHECK(sink.inner.lines().back() == "npu-smi health: device=4 status=OK recovered");
}
