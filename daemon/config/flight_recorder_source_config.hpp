// Config loading for the `flight_recorder` source: one entry of `sources:` with
// `type: flight_recorder` into a FlightRecorderSourceConfig, every problem reported at its
// file:line:column.
//
//   - { name: flight-recorder, type: flight_recorder, prefix: /var/log/train/nccl_trace_rank_ }
//   - { name: fr, type: flight_recorder, prefix: fr/hccl_trace_rank_, scan_interval: 5s,
//       settle: 1s, max_dump_bytes: 16777216, max_ranks: 1024, ranks_per_node: 8 }
//
// `prefix` is required (the recorder's TORCH_*_DEBUG_INFO_TEMP_FILE); relative to the config
// file's directory when relative. Lifecycle: called by the config loader once per entry.
// Threading: none shared.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "collectors/flight_recorder/flight_recorder_source.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {

std::optional<FlightRecorderSourceConfig> load_flight_recorder_source(const YAML::Node& n,
                                                                      const std::string& name,
                                                                      const std::string& base_dir,
                                                                      const yaml::Ctx& ctx);

}  // namespace faultd
