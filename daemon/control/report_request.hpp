// The `report` command: a fault measured outside faultd by an operator's tool, handed to the
// running faultd so that it gets the usual lifecycle (device state, metrics, journal, hooks,
// `faultctl events`). One check sends it today: `faultctl compare --replicas --report`, naming the
// data-parallel replica whose tensors disagree with the majority. Replicas that must hold the
// same values and do not are the signature of silent data corruption on one device, so the
// finding is a suspicion on that device: a warning, not an isolation.
//
// The client says what it measured, never how faultd treats it: the rule id, the level and the
// code are fixed here, and the finding's text is written here from the checked fields. Every
// field is checked (type, size, spelling) and an unknown field is refused, since every field is
// journaled and handed to hooks. The request is still bounded by the protocol's line limit.
//
// Lifecycle: plain values and pure functions. Threading: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/core/types.hpp"

namespace faultd::control {

inline constexpr std::string_view kReportCommand = "report";
inline constexpr std::string_view kReplicaDivergenceCheck = "replica-divergence";
// What faultd makes of every replica-divergence report.
inline constexpr std::string_view kReplicaDivergenceRule = "compare.replica-divergence";
inline constexpr std::string_view kReplicaDivergenceCode = "REPLICA_DIVERGENCE";
inline constexpr FaultLevel kReplicaDivergenceLevel = FaultLevel::SubHealthFault;

// Limits on a report's fields.
inline constexpr size_t kMaxReportLabelBytes = 128;  // replica labels
inline constexpr size_t kMaxReportNameBytes = 512;   // API and tensor names
inline constexpr size_t kMaxReportMetrics = 32;
inline constexpr size_t kMaxReportMetricNameBytes = 40;
inline constexpr size_t kMaxReportMetricValueBytes = 64;
inline constexpr uint64_t kMaxReportReplicas = 1'000'000;

// One replica outcome of `faultctl compare --replicas`.
struct ReplicaDivergence {
  std::string device;          // the device the suspect replica ran on
  std::string replica;         // the suspect, e.g. rank3
  std::string reference;       // the majority replica its tensor was measured against
  std::string api;             // the first API where the suspect departs from the majority
  std::string tensor;          // the first tensor there
  std::string mode;            // the dumps' mode: statistics, tensor or md5
  uint64_t data_row = 0;       // the tensor's 1-based data row in the suspect's dump
  uint64_t replicas = 0;       // replicas compared (three or more: two cannot name a suspect)
  uint64_t majority = 0;       // replicas holding the majority's value of that tensor
  uint64_t disagreements = 0;  // tensors where the suspect is outside the majority
  uint64_t rows_checked = 0;   // tensors a majority of replicas share
  // The suspect's tensor against the reference's, as the compare table's (header, cell) pairs,
  // in the table's order: Cosine, MaxAbsErr, ... or the statistics diffs, or the checksums.
  std::vector<std::pair<std::string, std::string>> metrics;
};

// The request line's object (faultctl's side).
nlohmann::json report_request(const ReplicaDivergence& report);

// What a client makes of a value its report would be refused for: cut to `max` bytes, and
// bytes that are not printable ASCII replaced by '?' (a Python identifier may be Unicode).
// report_request does it for metric cells; the caller for the names it fills in, so that one
// odd module name cannot make faultd refuse the whole report.
std::string fit_report_text(std::string_view value, size_t max);

// A checked request (faultd's side): the finding to record, with `time` = `now` and a journal
// key made of its fields, so the same outcome reported twice is journaled once. Or why the
// request is refused (the finding is then empty).
struct ParsedReport {
  std::optional<Finding> finding;
  std::string error;
};
ParsedReport parse_report(const nlohmann::json& request, TimePoint now);

}  // namespace faultd::control
