// `faultd --replay FILE...`: the rules run offline over files, exactly as the daemon would see
// them, for testing rules and for post-mortems. Each file goes to the file sources whose globs
// match its path (else to every file source), so `sources:` filters and path_fields apply as in
// production. Findings are printed as JSON lines (or text), each once; nothing is written to the
// store and no hook runs. `faultd --replay --rules FILE` tries a rule file without a config.
//
// `faultd --replay --parser NAME FILE...`: each file is saved output of a command source's
// command (npu-smi's health block or device table, the Device Plugin's ConfigMap, nvidia-smi's
// bus ids): it is parsed by that parser and its record lines go through the rules as the
// command source's would at its first observation (every device not OK is news). A capture that
// starts with the command line ("npu-smi info -t health -i 0 -c 0") gives its device and chip;
// else the health block names none. A file that is not the parser's output is said on stderr
// and counted (`garbled`), as a failed poll would be, and its own lines go through the rules as
// a failed poll's output does (a tool's error message is a fault report); it fails nothing.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "collectors/command/records.hpp"
#include "daemon/config/config.hpp"

namespace faultd {

struct ReplaySummary {
  size_t files = 0;
  size_t unreadable = 0;
  size_t garbled = 0;  // --parser: files that were not the parser's output
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t findings = 0;
  double seconds = 0;
};

// How findings are printed: one JSON object a line (the contract, docs/design.md §3.1), or a
// line for a person (`-o text`): file:line, rule, level, code, device, then the matched line.
enum class ReplayOutput { Json, Text };

// A file no source claims goes to several routes (every file source, the kernel log); a finding
// of one line by one rule is printed once, whichever routes matched it.
ReplaySummary replay_files(const Config& config, const std::vector<std::string>& files,
                           std::ostream& out, std::ostream& err,
                           ReplayOutput format = ReplayOutput::Json);
// `faultd --replay --rules FILE...`: a config of nothing but these rule files (no source, no
// catalogue, the default policy), so a site can try its own pack against lines without writing a
// config. nullopt on any error, `errors` holding each as file:line:column.
std::optional<Config> rules_only_config(const std::vector<std::string>& rule_files,
                                        ErrorList& errors);

ReplaySummary replay_outputs(const Config& config, CommandParser parser,
                             const std::vector<std::string>& files, std::ostream& out,
                             std::ostream& err);

}  // namespace faultd
