// PyTorch's Flight Recorder dumps, read without Python. On a collective timeout each rank's
// watchdog writes its recorder as a pickle (TORCH_NCCL_DUMP_ON_TIMEOUT into
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank; torch_npu's HCCL recorder the same with TORCH_HCCL_*):
//   {"version": "2.x", "pg_config": {name: {"name", "desc", "ranks": "[0, 1, ...]"}},
//    "pg_status": {pg_id: {"last_enqueued_collective", "last_started_collective",
//                          "last_completed_collective"}},          (absent before 2.3)
//    "entries": [{"pg_id", "process_group": (name, desc), "collective_seq_id", "is_p2p",
//                 "profiling_name", "state": "scheduled"|"started"|"completed", ...}],
//    "nccl_comm_state" | "hccl_comm_state": {...}}
// (PyTorch torch/csrc/distributed/c10d/FlightRecorder.{hpp,cpp}; torch_npu
// torch_npu/csrc/distributed/TraceUtils.h; tests/flight_recorder/README.md has the commits.)
//
// parse_dump() reduces one rank's dump to its progress per process group; find_wavefronts()
// compares the ranks of one job: in a group where some rank entered collective N and waits,
// the ranks whose last entered collective is below N never joined it: they are the culprits,
// the waiting ranks their victims. A wavefront is `complete` only when every rank the group
// lists has a dump among those compared (all ranks on this node); otherwise only the fleet
// can name the culprit (docs/detection.md).
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/flight_recorder/pickle_data.hpp"

namespace faultd::flight_recorder {

struct GroupProgress {
  std::string pg_id;    // the rank's own index of the group ("0")
  std::string pg_name;  // the group's name, the same on every rank ("0", "default_pg")
  std::string pg_desc;
  std::vector<int64_t> ranks;  // the group's global ranks (pg_config); empty when not listed
  int64_t last_enqueued = 0;   // collective sequence ids, 0: none yet
  int64_t last_started = 0;
  int64_t last_completed = 0;
  std::string last_op;  // profiling name of the group's newest collective in the entries
  // "completed", "started" or "scheduled": the state of the newest collective entered.
  std::string state() const;
};

struct Dump {
  std::string version;
  std::vector<GroupProgress> groups;
};

// Throws pickle::PickleError (malformed, hostile or over the limits) or FormatError (a pickle
// that is not a Flight Recorder dump).
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
Dump parse_dump(std::string_view bytes, const pickle::PickleLimits& limits = {});

struct RankDump {
  int64_t rank = 0;
  Dump dump;
};

struct Wavefront {
  std::string pg_name;
  int64_t waited_seq = 0;        // the collective the waiting ranks are in
  std::vector<int64_t> waiting;  // entered waited_seq and never completed it
  std::vector<int64_t> behind;   // never entered it (with their last entered sequence id)
  std::vector<int64_t> behind_last;
  std::vector<int64_t> absent;  // listed in the group, no dump here
  bool complete = false;        // every listed rank has a dump here
};

std::vector<Wavefront> find_wavefronts(const std::vector<RankDump>& ranks);

}  // namespace faultd::flight_recorder
