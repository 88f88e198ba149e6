// MindCluster's catalogues, read as an Ascend node already carries them (the Device Plugin's
// build/ directory):
//   - faultCode.json lists fault codes under "<Level>Codes" keys (SeparateNPUCodes,
//     NotHandleFaultCodes, ...); it gives each code its handling level when a rule sets none.
//   - faultCustomization.json holds the escalation policy: FaultFrequency (Times occurrences
//     within TimeWindow seconds → FaultHandling, released after ReleaseTimeWindow),
//     FaultDuration (a fault lasting FaultTimeout seconds → FaultHandling; RecoverTimeout) and
//     GraceTolerance. This module only provides the data; applying it is the state machine's.
//
// Pure parsers: each call reads the file once and returns plain values (immutable afterwards,
// safe to share across threads). Errors name the file, with line:column for JSON syntax.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"
#include "rules/rule.hpp"

namespace faultd {

// Errors (unreadable file, bad JSON with its line:column, unknown level key, malformed code)
// go to `errors`; whatever could be read is returned.
CodeLevels load_mindcluster_fault_codes(const std::string& path, ErrorList& errors);

// `Times` occurrences of any of `codes` within `window` raise the device to `level`;
// `release_window` (when given) is how long it stays there without a new occurrence.
struct FaultFrequency {
  std::vector<std::string> codes;  // upper-case hex, e.g. 80E18005
  Duration window{};
  uint32_t times = 0;
  FaultLevel level = FaultLevel::ManuallySeparateNPU;
  std::optional<Duration> release_window;
};

// A fault of one of `codes` still present after `fault_timeout` raises the device to `level`;
// `recover_timeout` is how long it must be gone to count as recovered.
struct FaultDuration {
  std::vector<std::string> codes;
  Duration fault_timeout{};
  Duration recover_timeout{};
  FaultLevel level = FaultLevel::NotHandleFault;
};

// How long MindCluster waits for the job and the device around a fault (seconds in the file);
// absent values stay nullopt.
struct GraceTolerance {
  std::optional<Duration> wait_process_read_cm;
  std::optional<Duration> wait_device_reset;
  std::optional<Duration> wait_fault_self_healing;
};

struct FaultCustomization {
  std::vector<FaultFrequency> frequency;
  std::vector<FaultDuration> duration;
  GraceTolerance grace;

  // The entry that names `code` (any case, with or without 0x), or nullptr. The lists hold a
  // few dozen codes, so a scan is as fast as an index and cannot go stale.
  const FaultFrequency* frequency_for(std::string_view code) const;
  const FaultDuration* duration_for(std::string_view code) const;
};

// Reads faultCustomization.json. Every problem (missing or mistyped field, unknown handling
// level, malformed code, a code listed twice) is reported with the file name and the entry's
// JSON path (e.g. "FaultFrequency[1].Times"); entries with problems are left out.
FaultCustomization load_fault_customization(const std::string& path, ErrorList& errors);

}  // namespace faultd
