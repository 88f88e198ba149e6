// The `hang` source: polls the device tools for activity (compute use, memory in use, the
// processes holding each device, network traffic), and gives the hang verdict of
// collectors/activity/hang_judge.hpp, written as one record line per verdict:
//
//   hang: device=<d> cause=<cause> level=<L> pid=<pid> process=<name> state=<S> wchan=<fn>
//         cpu_per_min=<s> util=<percent> memory_mb=<n> polls=<n> silent_for=<duration|never>
//         job_devices_flat=<flat>/<devices>
//
// (one line; `level` is wedge_level for device-wedge, NotHandleFault otherwise), which the
// shipped pack etc/faultd/rules.d/device-hang.yaml turns into the findings device.hang.<cause>.
//
// The probes are ordinary command sources (collectors/command/command_source.hpp: no shell,
// timeouts, output caps, probe health), one per tool, with the activity parsers:
//   npu-smi:    `<npu-smi> info -t usages -i {device}` per device, `<npu-smi> info` (the process
//               table), and `<hccn_tool> -i {device} -stat -g` per device when hccn_tool is set;
//   nvidia-smi: `<nvidia-smi> --query-gpu=index,pci.bus_id,utilization.gpu,memory.used
//               --format=csv,noheader,nounits` and `--query-compute-apps=gpu_bus_id,pid,
//               used_memory --format=csv,noheader,nounits`.
// Their record chunks (activity:, holder:, traffic: and probe: lines) are handed on as they are,
// so probe health reaches the rules; the hang source reads the samples from them first.
//
// Lifecycle: constructed from config with the daemon's LogActivity (which outlives it); no
// probe runs before the first poll_once. Threading: the app's io thread; activity() and
// probes() are read by the exporter's thread under a lock.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectors/activity/hang_judge.hpp"
#include "collectors/collector.hpp"

namespace faultd {

enum class HangTool { NpuSmi, NvidiaSmi };

struct HangSourceConfig {
  std::string name;
  HangTool tool = HangTool::NpuSmi;
  std::string program;    // the npu-smi or nvidia-smi to run
  std::string devices;    // npu-smi: the cards to query ("0-7"); nvidia-smi: unused
  std::string hccn_tool;  // npu-smi: hccn_tool for traffic; empty: none
  Duration timeout = std::chrono::seconds(10);
  uint32_t unresponsive_after = 3;
  FaultLevel wedge_level = FaultLevel::SeparateNPU;
  HangThresholds thresholds;  // thresholds.interval is the poll interval
  friend bool operator==(const HangSourceConfig&, const HangSourceConfig&) = default;
};

// What the exporter shows of a device's activity (3 series per device).
struct DeviceActivity {
  std::string device;
  double utilization = 0;
  uint64_t memory_mb = 0;
  size_t holders = 0;
};

// The verdict's record line (format above).
std::string format_hang_record(const HangVerdict& verdict, FaultLevel wedge_level);

class HangSource final : public Source {
 public:
  // Throws std::invalid_argument on what config validation reports with a position.
  HangSource(HangSourceConfig config, const LogActivity& logs,
             std::unique_ptr<ProcessReader> procs = nullptr);
  ~HangSource() override;
  HangSource(const HangSource&) = delete;
  HangSource& operator=(const HangSource&) = delete;

  const std::string& name() const override;
  bool poll_once(TimePoint now, ChunkSink& sink) override;
  Duration poll_interval() const override;
  int wake_fd() const override;
  void drain_wake_fd() override;
  SourceStats& stats() override;
  std::vector<ProbeUp> probes() const override;

  // The last sample of each device (sorted by device), for the exporter.
  std::vector<DeviceActivity> activity() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultd
