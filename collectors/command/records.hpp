// The record lines a command source hands to the rule engine, and the per-device memory that
// decides when to hand one. A command is polled every few seconds and prints the same state
// every time; only changes are news, so the source remembers what each device (and chip)
// reported and turns a change into one canonical line the ordinary rule engine matches:
//
//   <prefix>: device=<d> [chip=<c>] status=<s> [code=<HEX>] [fault_level=<L>] [info="<text>"]
//   <prefix>: device=<d> [chip=<c>] status=OK recovered
//   nvidia-smi gpu: index=<i> bus_id=<bus id>
//
//   probe: device=<d> status=unresponsive failures=<n> reason="<why the last run failed>"
//   probe: device=<d> status=OK recovered
//
// Prefixes: "npu-smi health" (npu_smi_health), "npu-smi info" (npu_smi_info), "deviceinfo"
// (deviceinfo_cm), "nvidia-smi query" (nvidia_smi_query, `nvidia-smi -q`), "probe" (the command
// itself, whatever its parser). Values made of [A-Za-z0-9._:/+-] are written bare, anything else in
// double quotes with '"' and '\' escaped and control bytes as spaces; info is capped at 1 KiB.
// Rules:
//   - a device that becomes not-OK gets one line per code it reports that it did not report
//     before (one line without code= if it reports none), so a new code on an already sick
//     device is news too; a status change of a sick device with no new code is not;
//   - a device back to OK gets one "recovered" line (only if it was seen not-OK);
//   - the first sight of a healthy device says nothing;
//   - a device missing from an observation keeps its last state (a failed or partial run is
//     not a recovery).
// The nvidia_smi_bus map is emitted whole, one line per GPU, whenever it differs from the last
// one handed on (at start, after a GPU falls off the bus, after a reset renumbers GPUs).
// The probe lines are about the command, not what it printed (ProbeTracker): a device whose
// command failed `unresponsive_after` times in a row gets one unresponsive line (a hung npu-smi
// is often the first sign of a dying device), and one recovered line at its next success. The
// device is the one the command runs for; a command not run per device has none (no device=).
// What a run that exited with an error printed is handed on too, its own lines
// (failed_output_lines), once per distinct output (the last four are remembered) until the
// device's command succeeds again: the vendor tool's own words are a fault report the packs
// match ("Unable to determine the device handle for GPU 0000:C1:00.0: GPU is lost.",
// nvidia-smi exiting with status 15). A run that was killed, or that exited 0 with output its
// parser refuses, says nothing of the kind.
//
// Lifecycle: one HealthTracker and one ProbeTracker per command source, kept for the source's
// life; diff() and failed()/succeeded() say what is news, commit() and handed_on() record what
// was handed on, so a sink that refuses a chunk gets the same news again at the next run.
// Threading: single-threaded (the app's io thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/command/parsers/activity.hpp"
#include "collectors/command/parsers/parsers.hpp"

namespace faultd {

enum class CommandParser {
  NpuSmiHealth,
  NpuSmiInfo,
  DeviceInfoCm,
  NvidiaSmiBus,
  // Activity samples (collectors/command/parsers/activity.hpp): handed on at every run, not
  // only on change, as the sample lines below; the hang verdict's source reads them.
  NpuSmiUsages,
  NpuSmiProcesses,
  NvidiaSmiActivity,
  NvidiaSmiApps,
  HccnStat,
  NvidiaSmiQuery,  // nvidia-smi -q: each GPU's problems as health records
};
// Whether the parser's runs give activity samples (every run) rather than health news.
bool is_sample_parser(CommandParser parser);
std::optional<CommandParser> parse_command_parser(std::string_view name);
std::string_view to_string(CommandParser parser);
// "npu_smi_health, npu_smi_info, ..." (for error messages).
std::string command_parser_names();
// The record prefix of a parser, e.g. "npu-smi health".
std::string_view record_prefix(CommandParser parser);

std::string format_health_record(std::string_view prefix, const command_parsers::DeviceHealth& h,
                                 std::string_view code);
std::string format_recovery_record(std::string_view prefix, std::string_view device,
                                   std::string_view chip);
std::string format_gpu_record(const command_parsers::GpuBus& gpu);
std::string format_unresponsive_record(std::string_view device, uint32_t failures,
                                       std::string_view reason);
// The lines of a failed run's output as the rules read them: blank lines dropped, trailing
// blanks trimmed, at most kMaxFailedOutputLines lines of at most 1 KiB each.
inline constexpr size_t kMaxFailedOutputLines = 64;
std::vector<std::string> failed_output_lines(std::string_view output);

// The sample lines of the activity parsers, one run's worth each time:
//   activity: device=<d> [bus_id=<b>] util=<percent> memory_mb=<n>
//   holders: count=<n>                       (first line of a process table's run)
//   holder: device=<d>|bus_id=<b> pid=<pid> name=<name> memory_mb=<n>
//   traffic: device=<d> packets=<tx+rx, cumulative>
std::string format_activity_record(const command_parsers::DeviceUsage& usage);
std::string format_holder_record(const command_parsers::DeviceProcess& process);
std::string format_traffic_record(std::string_view device, uint64_t packets);

// What one run of `parser`'s command printed, parsed: the devices' health (npu-smi, the
// ConfigMap) or the GPU bus map (nvidia-smi). `device`/`chip` name the device of a health
// report, whose output names none (`npu-smi info -t health -i N -c C`). Nothing, with `error`
// set, when the output cannot be parsed.
struct Observation {
  std::vector<command_parsers::DeviceHealth> health;
  std::vector<command_parsers::GpuBus> gpus;
  // Activity parsers: the run's sample lines (format above).
  std::vector<std::string> samples;
  // The output was cut short (`error` says where): `health` holds what came before the cut.
  bool truncated = false;
};
std::optional<Observation> observe(CommandParser parser, std::string_view output,
                                   std::string_view device, std::string_view chip,
                                   std::string& error);

class HealthTracker {
 public:
  explicit HealthTracker(std::string prefix) : prefix_(std::move(prefix)) {}
  // The record lines (without '\n') for what changed between the remembered state and
  // `observed`.
  std::vector<std::string> diff(const std::vector<command_parsers::DeviceHealth>& observed) const;
  // Remembers `observed` as handed on.
  void commit(const std::vector<command_parsers::DeviceHealth>& observed);

 private:
  struct Seen {
    std::string status;
    std::vector<std::string> codes;
  };
  std::string prefix_;
  std::map<std::pair<std::string, std::string>, Seen> seen_;  // (device, chip) → last report
};

// Consecutive failed runs per device, and the probe lines they make.
class ProbeTracker {
 public:
  explicit ProbeTracker(uint32_t unresponsive_after) : unresponsive_after_(unresponsive_after) {}
  // A run for `device` failed for `reason`: the unresponsive line when this failure makes (or
  // keeps, until handed on) the device unresponsive.
  std::optional<std::string> failed(const std::string& device, std::string_view reason);
  // A run for `device` succeeded: the recovered line when it was reported unresponsive.
  std::optional<std::string> succeeded(const std::string& device);
  // The lines of what a failed run for `device` printed, when none of the last few failed
  // runs handed on printed it (since the device last answered); else none.
  std::vector<std::string> failed_output(const std::string& device, std::string_view output);
  // The line failed() or succeeded() returned for `device` was handed on.
  void handed_on(const std::string& device);
  // The lines failed_output() returned for `device` were handed on.
  void output_handed_on(const std::string& device);
  void forget(const std::string& device) { probes_.erase(device); }

  // Whether each device's last run succeeded, sorted by device (devices with a run only).
  std::vector<ProbeUp> up() const;
  uint32_t failures(const std::string& device) const;

 private:
  struct Probe {
    bool up = true;
    uint32_t failures = 0;  // in a row
    bool reported = false;  // the unresponsive line was handed on, the recovered one not yet
    // Hashes of the failed outputs handed on since the device last answered, the newest
    // last (at most kFailedOutputsKept: a tool that alternates between two messages, or
    // prints a changing number, is not news at every run), and of the one failed_output()
    // just returned.
    std::vector<size_t> outputs_handed;
    std::optional<size_t> output_pending;
  };
  static constexpr size_t kFailedOutputsKept = 4;
  uint32_t unresponsive_after_;
  std::map<std::string, Probe> probes_;
};

}  // namespace faultd
