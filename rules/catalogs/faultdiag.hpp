// MindCluster FaultDiag's knowledge base (kg-config.json) read as it is, turned into rules:
// every entry of "knowledge-repository" with a log pattern becomes one RuleSpec, so the same
// engine (prefilter, RE2, findings, store) serves the vendor's 1,050 signatures and faultd's
// own packs.
//
//   - regex.in [[a, b], [c]]  → match.any_of (substrings AND-ed inside a list, lists OR-ed);
//     a flat list [a, b] is one AND-group (the file uses both shapes)
//   - regex.regex "..."       → match.regex (RE2, Latin-1); entries RE2 refuses are skipped;
//                               a leading literal of the pattern, when there is one, is added
//                               to match.all so the prefilter can skip lines without it
//   - regex.opt [{all: [[...], ...], max_lines: N}] → match.lines + max_lines (multi-line)
//   - no pattern (entries that only chain to others through "rule") → skipped, counted
//   - source_file "CANN_Plog | OS" → the faultd sources the config maps those classes to;
//     an entry none of whose classes is mapped is skipped (it could never see a line)
//   - id "faultdiag.<entry id>", lower case, characters outside [a-z0-9._-] replaced by '-'
//   - annotations: faultdiag_id, cause (cause_en), description (description_en), suggestion
//     (suggestion_en, joined by a space); description of the rule: cause_en
//   - fault level: FaultDiag entries are diagnoses of what a log shows, not MindCluster fault
//     reports, so their findings are recorded at the configured level (default
//     NotHandleFault: recorded and counted, no device state change), never taken from
//     faultCode.json even when the entry's id is a code (0x80818C00 → code 80818C00).
//
// A pure function of the file and the options; the result is plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"
#include "rules/rule.hpp"

namespace faultd {

struct FaultDiagOptions {
  // FaultDiag log class (NPU_OS, CANN_Plog, TrainLog, ...) → faultd source names.
  std::map<std::string, std::vector<std::string>> source_classes;
  FaultLevel level = FaultLevel::NotHandleFault;
};

struct FaultDiagImport {
  std::vector<RuleSpec> rules;
  size_t entries = 0;  // entries in the file: rules.size() + skipped
  size_t skipped = 0;
  std::map<std::string, size_t> skipped_by_reason;  // reason → count
  std::vector<std::string> skipped_detail;          // "<entry id>: <reason>" for rare reasons
  // One line for --check-config: "1,050 entries: 612 rules, 438 skipped (...)".
  std::string summary() const;
};

// Reads kg-config.json. File-level problems (unreadable, invalid JSON with line:column, no
// "knowledge-repository" object) go to `errors`; a single entry that cannot become a rule is
// skipped and counted with its reason, never an error (the file is the vendor's, read as is).
FaultDiagImport load_faultdiag_knowledge(const std::string& path, const FaultDiagOptions& options,
                                         ErrorList& errors);

}  // namespace faultd
