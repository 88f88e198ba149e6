// Rules are data: YAML rule files are loaded into plain `RuleSpec`s (with their positions for
// errors), validated, and compiled once into an immutable `RuleSet`. Matching a Chunk against a
// RuleSet is pure: Chunk + now → Findings. A reload builds a new RuleSet and swaps the pointer;
// the old one stays valid for whoever still holds it.
//
// Cost model: lines that cannot match cost about a memchr. Each rule has trigger literals (its
// `any` strings; else the longest string of each `any_of` alternative or of each `lines` entry;
// else the longest `all` string); the engine scans a whole chunk for the triggers of the
// chunk's source and evaluates the full rule (all substrings, level, RE2) only on the lines that
// contain a trigger. A rule with only a regex and no literal is evaluated on every line of its
// sources (check-config warns about it).
//
// Matching details every rule author relies on:
//   - A line is matched without its '\n' and without a trailing '\r' (CRLF files work).
//   - `any`/`all`/`any_of` are case-sensitive substrings: one `any` string must occur, every
//     `all` string must occur, and every string of at least one `any_of` alternative must occur.
//   - `level` compares the line's leading `[WORD]` (line_level below), read after the launcher
//     prefixes of docs/log-formats.md §4 ("(train pid=1234) ", "(pid=1) ", "[rank7]: ", "rank3: ").
//   - Regexes are RE2 in Latin-1 mode: a log line is bytes, and invalid UTF-8 must not stop `.`
//     from matching. Named groups become fields; path_fields of the chunk fill in the rest (a
//     capture wins over a path field of the same name) — except `device`, which follows
//     docs/log-formats.md §11: the torch_npu tuple "(PID:n, Device:N, RankID:n)" of the line, then
//     the path field (the device-N/ directory), then the rule's own capture.
//   - Templates ("{device}", "{code}", "80818C00", "npu{device}", "{card}-{chip}"): a field that
//     is missing or empty expands to nothing and the rest is kept ("{card}-{chip}" with only
//     card=3 gives "3-"); when a template names fields and none has a value, the whole value is
//     empty (bare literal text such as "npu" names nothing). A device that fails
//     is_valid_device_id is dropped (the finding is kept, without device, and counted); a code
//     is upper-cased with any 0x prefix removed.
//   - Multi-line rules (`lines: [[a, b], [c]]`, `max_lines: N`): each entry is a list of
//     substrings that must all occur on one line; the rule fires on the line that completes the
//     set when every entry has matched a line of the same file within the last N lines (in any
//     order), then starts over. Only the line number of each entry's latest match is kept, in a
//     ScanContext the caller owns per source, so a match spans chunk boundaries as long as the
//     caller passes the same context; without one, a match must lie within one chunk.
//   - Within one line, findings come in rule order; a rule yields at most one finding per line.
//   - A rule with `detect:` yields findings marked `detector_input`, with `fields` = its named
//     captures (and, with `fields: step`, the step-line fields) plus the chunk's path fields
//     (values as text): input for the DetectorBank.
//
// Threading: a RuleSet is immutable and may be shared across threads; scan() keeps no state of
// its own. A ScanContext belongs to one caller (one source) and is not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"
#include "rules/detectors/spec.hpp"
#include "rules/envelope.hpp"

namespace faultd {

// One rule as written in YAML (see docs/design.md §7).
struct RuleSpec {
  std::string id;
  std::string description;
  std::vector<std::string> sources;  // empty: every source
  // Types of source (kSourceTypes) whose lines the rule may match; empty: every type. The
  // records of the command source's parsers are matched only from a `command` source, so a
  // job printing one in its log cannot raise or clear a device's fault with it.
  std::vector<std::string> source_types;
  std::vector<std::string> any;  // at least one must occur (substring, case-sensitive)
  std::vector<std::string> all;  // every one must occur
  // None may occur: the words that turn a failure into an attempt that goes on (", retrying")
  // are said once here instead of as a negative lookahead RE2 cannot express.
  std::vector<std::string> none;
  // OR of ANDs: every string of at least one alternative must occur.
  std::vector<std::vector<std::string>> any_of;
  // Multi-line: each entry's strings must all occur on one line, every entry within max_lines.
  std::vector<std::vector<std::string>> lines;
  uint32_t max_lines = 0;
  std::string regex;  // optional RE2; named groups become fields
  // `fields: step`: the step-line tokenizer (rules/step_fields.hpp) adds the fields it reads
  // (those the regex did not capture); the rule matches only a line that names one besides a
  // step.
  bool step_fields = false;
  std::vector<std::string> levels;  // optional: the line's leading [LEVEL] must be one of these
  std::string device;               // template such as "{device}"; empty: "{device}" if known
  std::string code;                 // template; may be literal ("80818C00") or "{code}"
                                    // (a literal is stored normalized: upper case, no 0x)
  std::optional<FaultLevel> fault_level;
  // `fault: {default_level: L}`: the catalogue's level for the code when it knows the code,
  // else L (an explicit vendor fault report is never left unmarked for want of a catalogue).
  std::optional<FaultLevel> default_level;
  // `fault: {level_from: FIELD}`: the level the event names itself (a Device Plugin event's
  // faultLevelName, a ConfigMap's fault_level) wins when it is a known level; else as above.
  std::string level_from;
  // `mode: shadow`: findings are journaled and counted, but change no device and start nothing
  // (to try a new rule on a live fleet).
  bool shadow = false;
  // `detect:`: the rule's matches feed this stateful detector instead of being faults.
  std::optional<DetectorSpec> detect;
  bool recovery = false;  // findings report the device recovered (Finding::recovery)
  // An entry of an imported knowledge base (FaultDiag): a thousand rules that each rarely
  // match, so their match counters are created at their first match, not at 0.
  bool knowledge_base = false;
  Fields annotations;  // operator knowledge copied into every finding (cause, suggestion...)
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
  bool knows(const std::string& code) const { return levels.count(code) != 0; }
};

struct ScanStats {
  uint64_t candidate_lines = 0;  // lines evaluated: with a trigger (all, if a rule has none)
  uint64_t findings = 0;         // findings appended (a detector input fed several rules is one)
  uint64_t source_type_refused = 0;  // lines of a rule's form from a source type it refuses
  uint64_t device_refused = 0;  // device values that failed validation (finding kept, no device)
  uint64_t code_refused = 0;    // codes that were not [A-Z0-9._-]{1,32} (finding kept, no code)
  uint64_t job_refused = 0;     // job names that failed is_valid_job_id (finding kept, no job)
};

// Per-source matching state that outlives one chunk (multi-line rules' progress per file).
// Owned by the caller (one per source), passed to every scan() of that source; bounded: at most
// kMaxFiles files are tracked, the least recently scanned is forgotten first. A context used
// with another RuleSet (after a reload) starts over.
class ScanContext {
 public:
  static constexpr size_t kMaxFiles = 64;
  ScanContext();
  ~ScanContext();
  ScanContext(const ScanContext&) = delete;
  ScanContext& operator=(const ScanContext&) = delete;
  void clear();
  size_t files_tracked() const;

  struct Impl;  // defined and used by the engine only

 private:
  friend class RuleSet;
  std::unique_ptr<Impl> impl_;
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
  // The rules of the packs (every rule but a knowledge base's entries) that may match a line of
  // one of these source types (kSourceTypes): a rule for a type no source produces never will.
  std::vector<std::string> pack_rule_ids(std::span<const std::string_view> source_types) const;
  std::vector<std::string> shadow_rule_ids() const;
  // The codes the catalogue knows and the rules' literal codes: the codes expected on this
  // node, kept as metric labels whatever else a log names.
  std::set<std::string> known_codes() const;
  // The rules whose device is the plain `device` field (no `device:` template of their own):
  // those a neighbouring line may give a device (rules/neighbour_devices.hpp).
  std::vector<std::string> device_field_rule_ids() const;
  // The source names rules restrict themselves to (`sources:`), each with a rule naming it.
  std::vector<std::pair<std::string, std::string>> named_sources() const;
  // The rules with a `detect:` block, in rule order: what a DetectorBank is configured with.
  std::vector<std::pair<std::string, DetectorSpec>> detectors() const;
  // sha256 (hex) over the canonical form of all rules: the `ruleset_sha256` of build_info.
  const std::string& sha256() const;
  // Warnings that are not errors (e.g. a regex-only rule without a literal prefilter).
  const std::vector<std::string>& warnings() const;

  // Matches every line of the chunk for the chunk's source. Appends findings (rule, source,
  // device, level, code, file, line, offset, identity, text capped at kMaxEvidenceBytes,
  // time=now, noticed=chunk.noticed). `stats` is optional; `context` carries multi-line
  // progress across the chunks of one source (without it, a multi-line match must lie within
  // one chunk).
  void scan(const Chunk& chunk, TimePoint now, std::vector<Finding>& out,
            ScanStats* stats = nullptr, ScanContext* context = nullptr) const;

 private:
  RuleSet();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultd
