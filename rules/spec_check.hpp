// Checks shared by the YAML loader (which reports them at the offending node) and
// RuleSet::build (which re-checks specs that were built in code, at the rule's position), so a
// RuleSet can never hold a rule that the loader would have refused. Pure functions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "daemon/core/fault_code.hpp"
#include "rules/rule.hpp"

namespace faultd::rules {

inline constexpr size_t kMaxRuleIdLength = 128;
// The widest window a multi-line rule may ask for: its progress is a line number per entry,
// so the bound is about meaning (lines that far apart are rarely one event), not memory.
inline constexpr int64_t kMaxMultiLineWindow = 10000;

// ^[a-z0-9][a-z0-9._-]*$, at most kMaxRuleIdLength: the id is a metric label.
bool is_valid_rule_id(std::string_view id);
// A log level as line_level() returns it: upper-case letters only.
bool is_level_word(std::string_view word);

// Compiles a rule regex the way the engine runs it (Latin-1, no logging, bounded memory) and
// checks its named groups are field names. Returns nullptr and sets `error` on failure.
std::unique_ptr<RE2> compile_regex(const std::string& pattern, std::string& error);

// Every problem of a spec as a message (without position); empty when the spec is valid.
std::vector<std::string> check_spec(const RuleSpec& spec);

}  // namespace faultd::rules
