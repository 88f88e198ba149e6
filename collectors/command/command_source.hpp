// The `command` source: runs a device-health command (npu-smi, kubectl, nvidia-smi, ...) every
// `interval`, parses its output with a named parser, and hands what changed to the rule engine
// as one-line text records (format in collectors/command/records.hpp), so operators match them
// with ordinary rules and may write their own.
//
// Specification (tests: tests/unit/collectors_command_*_test.cpp,
// tests/integration/collectors_command_fake_npu_smi_test.cpp):
// - argv is executed as is (no shell), the executable looked up in the daemon's PATH, with the
//   daemon's environment; stdin is closed, stdout and stderr go to one pipe.
// - `{device}` in any argv entry is replaced by each device id of `devices` ("0-7",
//   "0,2,4-5"), one child per device, all started together every interval. Without
//   `{device}` the command runs once per interval. With `discover: true` the device list comes
//   from `<argv[0]> info` parsed as the npu-smi table (run at the first poll, again each
//   interval until it succeeds; a later change of the card set needs a restart or reload).
// - Never blocks the caller: children write into non-blocking pipes watched by an epoll fd
//   (wake_fd()), which also watches a timerfd set to the next interval start, timeout or kill.
//   poll_once() reads what is ready, reaps what exited, and enforces the limits:
//     * timeout: SIGTERM to the child's process group, SIGKILL after 1 s; counted as
//       errors{kind=command}; the run's output is discarded;
//     * output over max_output_bytes: the group is killed, errors{kind=command};
//     * non-zero exit, death by signal, or a program that cannot be started:
//       errors{kind=command};
//     * output the parser refuses (truncated, garbled, another tool's): errors{kind=parse};
//     * a device id that fails is_valid_device_id (from a ConfigMap): errors{kind=device}.
//   A failed run changes nothing: each device keeps its last known state. A device whose
//   previous run still runs is skipped for this interval, so a hanging command never piles up
//   children and never delays the other devices.
// - Probe health: every failed run (each of the above but a refused device id) is logged with
//   its reason ("timed out after 3s", "exit status 1: <first line of output>", "killed by
//   signal 9", "output over 65536 bytes", "cannot start: ...", "unparsable output: <parser's
//   error>", "output cut short: ..."), at most kFailureLogsPerMinute lines a minute per source
//   (the next line written says how many were left out). probes() says per device whether its
//   last run succeeded (faultd_probe_up). The device is the run's: `{device}`'s value, else the
//   command's `-i` argument, else none ("": one probe for the command; the discovery run is
//   that probe until discovery succeeds); so the probes are bounded by the config's device list
//   or the discovered cards, never by output text. After `unresponsive_after` failed runs of a
//   device in a row, one `probe: device=<d> status=unresponsive failures=<n> reason="<why>"`
//   record goes out (and a warning that is never left out), at its next success one
//   `probe: device=<d> status=OK recovered` record (records.hpp).
// - Records: each run's new records make one Chunk: source = name, path = the argv joined with
//   spaces (display only), identity dev 0 and ino = a stable hash of (source name, device), so
//   every device is its own stream; start_offset = the poll's unix time in microseconds (kept
//   increasing per stream), the records at increasing byte offsets after it: unique across
//   restarts, which is what the fault journal's (source, identity, offset, rule) key needs. A
//   sink that refuses the chunk (errors{kind=commit}) gets the same news at the next run.
// - Stats: bytes = command output read; lines = records handed on.
//
// Lifecycle: constructed from config (no child runs before the first poll_once); the
// destructor SIGKILLs and reaps every child still running.
// Threading: single-threaded (the app's io thread); stats are atomics read by the exporter.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/command/records.hpp"

namespace faultd {

struct CommandSourceConfig {
  std::string name;
  std::vector<std::string> argv;
  std::string devices;    // "0-7", "0,2,4-5"; empty: run once per interval (or discover)
  bool discover = false;  // devices from `<argv[0]> info` (the npu-smi table)
  Duration interval = std::chrono::seconds(10);
  Duration timeout = std::chrono::seconds(5);
  size_t max_output_bytes = 64 * 1024;
  uint32_t unresponsive_after = 3;  // failed runs of a device in a row that make it unresponsive
  CommandParser parser = CommandParser::NpuSmiHealth;
  friend bool operator==(const CommandSourceConfig&, const CommandSourceConfig&) = default;
};

inline constexpr std::string_view kDevicePlaceholder = "{device}";
// Failed runs logged per source and minute (the unresponsive warnings are not counted).
inline constexpr uint32_t kFailureLogsPerMinute = 5;

// "0-7", "0,2,4-5", "3" → the ids in order. nullopt with `error` set on bad syntax, a
// descending range, a duplicate or more than 4096 ids.
std::optional<std::vector<std::string>> parse_device_list(std::string_view spec,
                                                          std::string& error);

class CommandSource final : public Source {
 public:
  // Throws std::invalid_argument on what config validation reports with a position (empty
  // argv, bad device list); this is the backstop.
  explicit CommandSource(CommandSourceConfig config);
  ~CommandSource() override;
  CommandSource(const CommandSource&) = delete;
  CommandSource& operator=(const CommandSource&) = delete;

  const std::string& name() const override;
  bool poll_once(TimePoint now, ChunkSink& sink) override;
  Duration poll_interval() const override;  // min(interval, timeout): the fallback cadence
  int wake_fd() const override;             // epoll over the children's pipes and the timer
  void drain_wake_fd() override;
  SourceStats& stats() override;
  std::vector<ProbeUp> probes() const override;

  // Children currently running (for tests and self-health).
  size_t running() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultd
