// The shared vocabulary of faultd's pipeline:
//
//   collectors ──Chunk/Record──▶ rules ──Finding──▶ state ──Transition──▶ actions / export
//
// Small value types with no library types in them, so every stage can be tested on its own.
// Nothing here allocates behind the caller's back or holds a lock; all types are plain values.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultd {

using SystemClock = std::chrono::system_clock;
using TimePoint = SystemClock::time_point;
using Duration = std::chrono::nanoseconds;

// MindCluster's handling levels, ordered from least to most severe (the order is what
// `more_severe` compares, so a device's incident escalates but never silently de-escalates).
enum class FaultLevel {
  NotHandleFault,
  SubHealthFault,
  RestartRequest,
  RestartBusiness,
  FreeRestartNPU,
  RestartNPU,
  PreSeparateNPU,
  SeparateNPU,
  ManuallySeparateNPU,
};
inline constexpr int kFaultLevelCount = 9;

std::string_view to_string(FaultLevel level);
std::optional<FaultLevel> parse_fault_level(std::string_view text);
std::string fault_level_names();  // "NotHandleFault, SubHealthFault, ..." for error messages
inline bool more_severe(FaultLevel a, FaultLevel b) {
  return static_cast<int>(a) > static_cast<int>(b);
}

enum class DeviceState { Healthy, Warning, Isolated };
inline constexpr int kDeviceStateCount = 3;
std::string_view to_string(DeviceState state);
std::optional<DeviceState> parse_device_state(std::string_view text);

// What may have written a chunk's lines: the source types a config can name, `command_output`
// and `kernel_log` (below). A rule may accept lines from some types only (`source_types`): the
// records a command source writes from npu-smi's output are trusted as such only when a command
// source wrote them, never when a log file says the same; the kernel's driver lines only from
// the kernel. `command_output` is what a command printed itself when its run failed (its error
// message): the tool's words, handed to the rules like a log's, never taken for one of faultd's
// records. `kernel_log` is a file source declared `kernel_log: true`: the host's kernel log as
// syslog writes it (kern.log, dmesg), which jobs cannot write.
inline constexpr std::array<std::string_view, 6> kSourceTypes = {
    "file", "command", "command_output", "kmsg", "overflow_dump", "kernel_log"};
bool is_source_type(std::string_view type);

// A device id as it may appear in a metric label, a hook's environment or the store:
// ^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$ (never an option or a `.`/`..` path component). Anything
// else taken from a log is refused and counted.
bool is_valid_device_id(std::string_view id);

// A job name as journaled and handed to hooks: ^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$ with no
// component starting with a dot and no trailing '/' (Kubernetes namespace/name pairs fit; no
// blanks, no control bytes, never an option, never a `..` path component).
bool is_valid_job_id(std::string_view id);

// Identity of a file independent of its path: a rotated file keeps it, a new file with a
// reused inode does not (the fingerprint is a hash of the first `fingerprint_len` bytes).
struct FileIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t fingerprint = 0;
  uint32_t fingerprint_len = 0;
  // Content generation of this (dev, ino): raised each time the file is found truncated or
  // rewritten, or its inode reused by another file. Part of the journal key, so the same offset
  // in new content is a new line while a re-read of the same content stays a replay.
  uint64_t generation = 0;
  // The last bytes read before `tail_end`: [tail_end - tail_len, tail_end) hashes to
  // tail_hash. A rewrite that kept the first bytes and grew past the read offset changes them.
  uint64_t tail_end = 0;
  uint64_t tail_hash = 0;
  uint32_t tail_len = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// A read position: everything before `offset` (and `line` lines) has been consumed.
struct ReadPosition {
  std::string source;
  std::string path;  // last path seen, for operators; the identity is the key
  FileIdentity identity;
  uint64_t offset = 0;
  uint64_t line = 0;  // lines consumed before `offset`
  friend bool operator==(const ReadPosition&, const ReadPosition&) = default;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

// A block of complete lines read from one file by one source. `data` holds whole lines, each
// ending in '\n' except a partial last line flushed on rotation or deletion. Valid only during
// the sink call.
struct Chunk {
  std::string_view source;       // source name
  std::string_view source_type;  // its type (kSourceTypes): what may have written these bytes
  std::string_view path;         // path the bytes were read from
  FileIdentity identity;
  uint64_t start_offset = 0;  // file offset of data[0]
  // Where the source resumes after this chunk. Usually start_offset + data.size(); larger when
  // an over-long line was truncated (the dropped bytes are consumed, not handed on).
  uint64_t end_offset = 0;
  uint64_t first_line = 1;  // 1-based line number of the first line in data
  uint64_t end_line = 0;    // lines consumed once this chunk is committed
  std::string_view data;
  // The line marks of data (daemon/core/newlines.hpp) where its reader left them; null or short
  // when it did not (the engine then counts what they do not cover).
  const std::vector<uint32_t>* line_marks = nullptr;
  const Fields* path_fields = nullptr;  // captures of the source's path_fields over the path
  TimePoint noticed{};                  // when the source noticed the input (detection latency)
};

// One matched rule on one line. Text is capped (kMaxEvidenceBytes) and never a metric label.
struct Finding {
  std::string rule;
  std::string source;
  std::string device;  // empty when unknown; validated by is_valid_device_id otherwise
  // How the device was found: "line" (named on the line), "path" (the file's directory),
  // "context" (an earlier line of the same process); empty when the finding names none, or its
  // device came from elsewhere (an operator, an alert, a command's output).
  std::string device_from;
  // The serial (or, without one, the UUID) of the device when the inventory knows it: the card,
  // followed across slots and nodes (`faultctl history --serial`).
  std::string serial;
  // The training job the line belongs to, when the source says (a `job` path field such as
  // /var/log/training/<job>/, or the rule's own `job` capture): journaled, shown and handed to
  // hooks (FAULTD_JOB), never a metric label (it would multiply series). Validated by
  // is_valid_job_id; empty otherwise.
  std::string job;
  FaultLevel level = FaultLevel::NotHandleFault;
  std::string code;  // e.g. 80818C00; empty when none
  std::string file;
  uint64_t line = 0;    // 1-based
  uint64_t offset = 0;  // file offset of the line start
  FileIdentity identity;
  std::string text;
  TimePoint time{};
  TimePoint noticed{};
  int64_t id = 0;  // fault journal id, set once committed
  // The source reports the device recovered from `code` (from everything when `code` is empty),
  // e.g. npu-smi back to OK or a Device Plugin `Recovery` event. Policy decides what it changes.
  bool recovery = false;
  // Named captures of the rule's regex plus path fields, kept only for rules that consume them
  // (stateful detectors); empty otherwise, so plain matches allocate nothing for them.
  Fields fields;
  // Knowledge attached by the rule for operators (e.g. a FaultDiag entry's id, cause and
  // suggestion), shown by `faultctl events`; never a metric label.
  Fields annotations;
  // A match of a detector rule (RuleSpec::detect): input for the DetectorBank, never journaled
  // as a fault itself; `fields` holds its captures.
  bool detector_input = false;
  // The other detector rules the same line fed with the same device, code and fields (a step
  // line feeds several): one input per line, each rule with its own level. The ids view the
  // rule set that scanned the line (no copy per line); the Matcher hands the input to the
  // detectors before that rule set can be replaced, and they drop the list at once.
  std::vector<std::pair<std::string_view, FaultLevel>> more_detectors;
};
inline constexpr size_t kMaxEvidenceBytes = 4096;

// A change of a device's state or of the incident that holds it there. Actions and metrics
// react to transitions, never to raw findings.
struct Transition {
  std::string device;
  DeviceState from = DeviceState::Healthy;
  DeviceState to = DeviceState::Healthy;
  std::string reason;    // rule id, "operator: ...", "action isolate succeeded", ...
  int64_t fault_id = 0;  // the finding that caused it, 0 for operator actions
  FaultLevel level = FaultLevel::NotHandleFault;
  std::string rule;
  std::string code;
  TimePoint time{};
  int64_t id = 0;  // its journal row, once stored (a page's cursor)
};

// Durations as in the config: "500ms", "30s", "5m", "24h" (and "1h30m").
std::optional<Duration> parse_duration(std::string_view text);
std::string format_duration(Duration d);

// RFC 3339 UTC with milliseconds, e.g. 2026-01-02T03:04:05.678Z.
std::string format_time(TimePoint t);
int64_t to_unix_ms(TimePoint t);
TimePoint from_unix_ms(int64_t ms);

}  // namespace faultd
