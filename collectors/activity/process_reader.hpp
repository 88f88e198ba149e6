// What the hang verdict reads of the processes holding a device: their scheduler state, the
// CPU time they used, their session (the ranks a launcher started share it: one job) and the
// kernel function they sleep in (wchan). Read from /proc/PID/stat and /proc/PID/wchan behind a
// one-method interface so the verdict's tests feed it directly.
//
// Pids are those the device tools report; npu-smi and nvidia-smi run in the host's pid
// namespace (faultd's, on a node agent), so they are looked up as they are.
//
// Lifecycle: stateless. Threading: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace faultd {

struct ProcessSample {
  char state = '?';        // R, S, D, Z, T, I, ... (field 3 of /proc/PID/stat)
  uint64_t cpu_ticks = 0;  // utime + stime, in clock ticks
  int64_t session = 0;     // session id (field 6)
  std::string wchan;       // the kernel function a sleeping process waits in ("" if unknown)
};

// /proc/PID/stat's text → the sample (without wchan); nullopt when it is not such a line (the
// command name may hold blanks and parentheses: fields are counted after the last ')').
std::optional<ProcessSample> parse_proc_stat(std::string_view stat);

class ProcessReader {
 public:
  virtual ~ProcessReader() = default;
  // nullopt when the process does not exist (any more) or cannot be read.
  virtual std::optional<ProcessSample> read(int64_t pid) const = 0;
  // Clock ticks per second of cpu_ticks.
  virtual double ticks_per_second() const = 0;
};

class ProcfsReader final : public ProcessReader {
 public:
  explicit ProcfsReader(std::string root = "/proc");
  std::optional<ProcessSample> read(int64_t pid) const override;
  double ticks_per_second() const override { return ticks_; }

 private:
  std::string root_;
  double ticks_;
};

}  // namespace faultd
