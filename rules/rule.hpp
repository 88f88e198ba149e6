// Rules are data: YAML rule files are loaded into plain `RuleSpec`s (with their positions for
// errors), validated, and compiled once into an immutable `RuleSet`. Matching a Chunk against a
// RuleSet is pure: Chunk + now → Findings. A reload builds a new RuleSet and swaps the pointer;
// the old one stays valid for whoever still holds it.
//
// Cost model: lines that cannot match cost about a memchr. Each rule has trigger literals (its
// `any` strings, or the longest `all` string); the engine scans a whole chunk for the triggers
// of the chunk's source and evaluates the full rule (all substrings, level, RE2) only on the
// lines that contain a trigger. A rule with only a regex and no literal is evaluated on every
// line of its sources (check-config warns about it).
//
// Matching details every rule author relies on:
//   - A line is matched without its '\n' and without a trailing '\r' (CRLF files work).
//   - `any`/`all` are case-sensitive substrings; `level` compares the line's leading `[WORD]`
//     (line_level below), so a line with a launcher prefix such as "(pid=1) [ERROR] ..." has no
//     level and never passes a level filter.
//   - Regexes are RE2 in Latin-1 mode: a log line is bytes, and invalid UTF-8 must not stop `.`
//     from matching. Named groups become fields; path_fields of the chunk fill in the rest
//     (a capture wins over a path field of the same name).
//   - Templates ("{device}", "{code}", "80818C00", "npu{device}") expand to "" when a field they
//     name is missing or empty. A device that fails is_valid_device_id is dropped (the finding is
//     kept, without device, and counted); a code is upper-cased with any 0x prefix removed.
//   - Within one line, findings come in rule order; a rule yields at most one finding per line.
//
// Threading: a RuleSet is immutable and may be shared across threads; scan() keeps no state.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

// One rule as written in YAML (see DESIGN.md §3 "Rule sketch").
struct RuleSpec {
  std::string id;
  std::string description;
  std::vector<std::string> sources;  // empty: every source
  std::vector<std::string> any;      // at least one must occur (substring, case-sensitive)
  std::vector<std::string> all;      // every one must occur
  std::string regex;                 // optional RE2; named groups become fields
  std::vector<std::string> levels;   // optional: the line's leading [LEVEL] must be one of these
  std::string device;                // template such as "{device}"; empty: "{device}" if known
  std::string code;                  // template; may be literal ("80818C00") or "{code}"
                                     // (a literal is stored normalized: upper case, no 0x)
  std::optional<FaultLevel> fault_level;
  // `mode: shadow`: findings are journaled and counted, but change no device and start nothing
  // (to try a new rule on a live fleet).
  bool shadow = false;
  // `recovery: true`: the line says the device recovered from `code` (from everything when
  // there is no code), e.g. npu-smi back to OK; sets Finding::recovery.
  bool recovery = false;
  // Where it was defined, for errors found after loading (duplicate ids, ...).
  std::string file;
  int line = 0;
  int column = 0;
};

// Parses the `rules:` list of a YAML document into specs, reporting every problem (unknown
// keys, wrong types, invalid RE2, unknown fault level, empty match, bad templates) in `errors`
// as file:line:column. Only rules without errors are appended to `out`.
void parse_rules(const YAML::Node& rules, const std::string& file, std::vector<RuleSpec>& out,
                 ErrorList& errors);

// Reads one rule file: a map whose only key is `rules:` (YAML syntax errors included).
void load_rule_file(const std::string& path, std::vector<RuleSpec>& out, ErrorList& errors);

// Maps a fault code (upper-case hex, e.g. 80818C00) to its handling level: the MindCluster
// catalogue when configured. Codes it does not know get `default_level`.
struct CodeLevels {
  std::map<std::string, FaultLevel> levels;
  FaultLevel default_level = FaultLevel::NotHandleFault;
  FaultLevel resolve(const std::string& code) const;
};

struct ScanStats {
  uint64_t candidate_lines = 0;  // lines evaluated: with a trigger (all, if a rule has none)
  uint64_t findings = 0;
  uint64_t device_refused = 0;  // device values that failed validation (finding kept, no device)
  uint64_t code_refused = 0;    // codes that were not [A-Z0-9._-]{1,32} (finding kept, no code)
};

class RuleSet {
 public:
  // Compiles specs (RE2 once, trigger tables per source). Reports duplicate ids and anything
  // parse_rules could not see; returns nullptr if there were errors.
  static std::shared_ptr<const RuleSet> build(std::vector<RuleSpec> specs, CodeLevels levels,
                                              ErrorList& errors);
  ~RuleSet();

  size_t size() const;
  std::vector<std::string> rule_ids() const;
  std::vector<std::string> shadow_rule_ids() const;
  // sha256 (hex) over the canonical form of all rules: the `ruleset_sha256` of build_info.
  const std::string& sha256() const;
  // Warnings that are not errors (e.g. a regex-only rule without a literal prefilter).
  const std::vector<std::string>& warnings() const;

  // Matches every line of the chunk for the chunk's source. Appends findings (rule, source,
  // device, level, code, file, line, offset, identity, text capped at kMaxEvidenceBytes,
  // time=now, noticed=chunk.noticed). `stats` is optional.
  void scan(const Chunk& chunk, TimePoint now, std::vector<Finding>& out,
            ScanStats* stats = nullptr) const;

 private:
  RuleSet();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The line's log level: the first `[WORD]` at the start of the line (after blanks), e.g.
// "ERROR" for "[ERROR] AICPU(...)". Empty when the line has none.
std::string_view line_level(std::string_view line);

}  // namespace faultd
