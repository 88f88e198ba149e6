// The `flight_recorder` source: PyTorch's Flight Recorder dumps of the jobs on this node
// (flight_recorder.hpp), one file per rank named `prefix` + rank (TORCH_NCCL_DEBUG_INFO_TEMP_FILE
// or TORCH_HCCL_DEBUG_INFO_TEMP_FILE plus the rank, as the recorder's DebugInfoWriter names
// them), turned into record lines that ordinary rules match (etc/faultd/rules.d/collectives.yaml).
//
// Specification (tests: tests/unit/collectors_flight_recorder_test.cpp):
// - Discovery: the files in `prefix`'s directory whose name is `prefix`'s last component followed
//   by decimal digits (the global rank), every `scan_interval`. A file is read once it has not
//   changed for `settle` (the recorder may still be writing it), again whenever its size, mtime
//   or inode changes. Files are opened as safe_open.hpp says (no FIFOs, no planted links).
// - Limits: a dump over `max_dump_bytes` is not read; a dump the reader refuses (malformed,
//   truncated, hostile: pickle_data.hpp) counts errors{kind=parse} once per version of the file
//   and is logged (rate-limited). At most `max_ranks` dumps are kept (the lowest ranks).
// - The device of a rank is its local rank, rank % `ranks_per_node` (one process per device).
// - Records, one chunk per poll in which a dump changed (faultd's own records: the chunk's
//   source type is `command`, like the command source's, so a job printing the same text into
//   its log raises nothing from rules that require it):
//     flight recorder: rank=R device=D pg=NAME last_enqueued=E last_started=S last_completed=C
//       state=STATE op=OP file=PATH                     (per changed dump and process group)
//   and, for each group in which some rank waits in a collective others never entered:
//     flight recorder: culprit device=D rank=R pg=NAME waited_seq=N last_seq=L victims=3,4
//     flight recorder: victim device=D rank=R pg=NAME waited_seq=N culprits=5
//   only when every rank the group lists has a dump here (a complete wavefront); otherwise
//     flight recorder: waiting device=D rank=R pg=NAME waited_seq=N last_completed=C absent=8-15
//   and the fleet names the culprit (docs/detection.md). A wavefront's lines go out once.
// - Identity: dev 0, ino a hash of the source's name and prefix; the offsets start at the newest
//   dump's mtime in nanoseconds, so the same dumps read after a restart give the same offsets
//   and the fault journal refuses their findings a second time.
//
// Threading: single-threaded (the app's io thread); stats are atomics read by the exporter.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "collectors/collector.hpp"
#include "collectors/flight_recorder/flight_recorder.hpp"

namespace faultd {

struct FlightRecorderSourceConfig {
  std::string name;
  std::string prefix;  // e.g. /var/log/train/nccl_trace_rank_
  Duration scan_interval = std::chrono::seconds(5);
  Duration settle = std::chrono::seconds(1);
  size_t max_dump_bytes = size_t{16} << 20;
  size_t max_ranks = 1024;
  uint32_t ranks_per_node = 8;
  friend bool operator==(const FlightRecorderSourceConfig&,
                         const FlightRecorderSourceConfig&) = default;
};

class FlightRecorderSource final : public Source {
 public:
  explicit FlightRecorderSource(FlightRecorderSourceConfig config);
  ~FlightRecorderSource() override;
  FlightRecorderSource(const FlightRecorderSource&) = delete;
  FlightRecorderSource& operator=(const FlightRecorderSource&) = delete;

  const std::string& name() const override;
  bool poll_once(TimePoint now, ChunkSink& sink) override;
  Duration poll_interval() const override;  // scan_interval
  SourceStats& stats() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultd
