// The hang verdict: a device held by a process is hung when its activity stays flat for
// `polls` polls in a row and no log line naming it arrived since the flat run began. Each
// verdict carries a cause, which decides what is done about it (docs/detection.md "Hangs"):
//
//   device-wedge     the device sits at busy_above % or more with no progress (memory flat, no
//                    traffic), or the holder sleeps uninterruptibly in the device's driver, or
//                    the device's usage probe fails while the holder is in D state;
//   host             the holder sleeps uninterruptibly on something else (a filesystem);
//   data-stall       the device is idle while the holder is busy on the CPU (state R, or its
//                    CPU time grows by cpu_seconds a minute or more): loading or preprocessing;
//   collective-wait  the device is idle and the holder sleeps: it waits for its peers (a
//                    collective), a victim; `job_devices_idle` says how many of the job's local
//                    devices (those whose holders share its session) are flat too.
//
// The log half: no line naming the device over the flat run (LogActivity), its first poll
// excepted.
//
// Flat: AI Core / SM use under util_below % (or at busy_above % or more, which counts only when
// traffic or a log names the device: a busy device is otherwise simply training), memory in use
// not growing, network traffic (when the tool gives it) under packets_per_minute. Not a hang:
//   - before the device was ever busy with this holder set (compile phase before the first
//     step: nothing to count from);
//   - a flat run shorter than `polls` polls (a checkpoint save, then steps resume);
//   - activity, or a log line, during the run (an evaluation pass computes or prints);
//   - no holder, or a holder that is gone (the job ended: not a hang).
// A verdict is given once per flat run; activity starts a new run.
//
// Defaults are MindCluster's (Ascend/mind-cluster component/ascend-device-plugin,
// build/hangDetectionConfig.json and pkg/device/hangdetection/hang_detector.go): 60 s polls,
// 5 polls, AI Core under 5 %, HBM not growing, under 100 packets a minute, CPU time growing
// under 5 s a minute.
//
// Lifecycle: one per hang source, fed one poll at a time (step); pure logic, `now` passed in.
// Threading: single-threaded.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/activity/log_activity.hpp"
#include "collectors/activity/process_reader.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

struct HangThresholds {
  Duration interval = std::chrono::seconds(60);
  uint32_t polls = 5;
  double util_below = 5;
  double busy_above = 100;
  double cpu_seconds_per_minute = 5;
  double packets_per_minute = 100;
  // wchan prefixes of a device's driver: a holder in D state there is stuck on the device.
  std::vector<std::string> device_wchan = {"devdrv", "hdc",    "davinci", "drv_", "halEsched",
                                           "nv_",    "nvidia", "uvm",     "os_"};
  friend bool operator==(const HangThresholds&, const HangThresholds&) = default;
};

// One poll of one device.
struct DeviceSample {
  std::string device;
  double utilization = 0;
  uint64_t memory_mb = 0;
  std::optional<uint64_t> packets;  // cumulative, when the tool gives traffic
  bool probe_failed = false;        // the usage query failed this poll (the figures are stale)
};

struct Holder {
  int64_t pid = 0;
  std::string name;
  friend bool operator==(const Holder&, const Holder&) = default;
};

struct HangVerdict {
  std::string device;
  std::string cause;  // device-wedge, host, data-stall, collective-wait
  Holder holder;
  char state = '?';
  std::string wchan;
  double cpu_per_minute = 0;
  double utilization = 0;
  uint64_t memory_mb = 0;
  uint32_t polls = 0;
  Duration silent_for{};  // since the last log line naming the device (0: none ever did)
  uint32_t job_devices = 0;
  uint32_t job_devices_flat = 0;
};

inline constexpr std::array<std::string_view, 4> kHangCauses = {"device-wedge", "host",
                                                                "data-stall", "collective-wait"};

class HangJudge {
 public:
  explicit HangJudge(HangThresholds t) : t_(std::move(t)) {}
  // One poll: the devices' samples, the processes holding each device (devices without an
  // entry are held by none), the /proc reader and the log clock. Returns the verdicts reached.
  std::vector<HangVerdict> step(TimePoint now, const std::vector<DeviceSample>& samples,
                                const std::map<std::string, std::vector<Holder>>& holders,
                                const ProcessReader& procs, const LogActivity& logs);
  // Devices currently in a flat run (for tests and self-health).
  size_t flat_devices() const;

 private:
  struct Track {
    std::vector<int64_t> pids;
    bool armed = false;  // seen busy with this holder set
    uint32_t flat = 0;   // polls in the current flat run
    bool reported = false;
    std::optional<DeviceSample> last;
    uint64_t cpu_last = 0;   // holders' CPU ticks at the previous poll
    uint64_t cpu_start = 0;  // ... at the poll before the flat run
    int64_t session = 0;     // the holders' session: one job's ranks share it
  };
  void reset(Track& t, std::vector<int64_t> pids);
  std::string classify(const DeviceSample& s, const ProcessSample& p, double cpu_per_minute) const;

  HangThresholds t_;
  std::map<std::string, Track> tracks_;
};

}  // namespace faultd
