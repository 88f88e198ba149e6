#include "rules/spec_check.hpp"

#include "rules/template.hpp"

namespace faultd::rules {
namespace {
// Enough for any sane log regex; a pattern beyond it fails to compile instead of growing.
constexpr int64_t kRegexMaxMem = 8 << 20;
}  // namespace

bool is_valid_rule_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxRuleIdLength) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!(alnum || (i > 0 && (c == '.' || c == '_' || c == '-')))) return false;
  }
  return true;
}

bool is_level_word(std::string_view word) {
  if (word.empty()) return false;
  for (char c : word) {
    if (c < 'A' || c > 'Z') return false;
  }
  return true;
}

std::unique_ptr<RE2> compile_regex(const std::string& pattern, std::string& error) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_encoding(RE2::Options::EncodingLatin1);
  options.set_max_mem(kRegexMaxMem);
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) {
    error = "invalid regex: " + re->error();
    if (re->error().find("(?<") != std::string::npos) {
      error += " (named groups are written (?P<name>...))";
    }
    return nullptr;
  }
  for (const auto& [name, index] : re->NamedCapturingGroups()) {
    if (!is_field_name(name)) {
      error = "regex group name '" + name + "' is not a field name ([A-Za-z_][A-Za-z0-9_]*)";
      return nullptr;
    }
  }
  return re;
}

namespace {
void check_strings(const std::vector<std::string>& list, const char* key,
                   std::vector<std::string>& problems) {
  for (const auto& s : list) {
    if (s.empty()) problems.push_back(std::string("empty string in '") + key + "'");
    if (s.find('\n') != std::string::npos) {
      problems.push_back(std::string("'") + key + "' strings cannot contain a newline");
    }
  }
}
}  // namespace

std::vector<std::string> check_spec(const RuleSpec& spec) {
  std::vector<std::string> problems;
  if (!is_valid_rule_id(spec.id)) {
    problems.push_back("rule id '" + spec.id + "' must match ^[a-z0-9][a-z0-9._-]*$ (at most " +
                       std::to_string(kMaxRuleIdLength) + " characters)");
  }
  if (spec.any.empty() && spec.all.empty() && spec.any_of.empty() && spec.lines.empty() &&
      spec.regex.empty()) {
    problems.push_back("match needs at least one of 'any', 'all', 'any_of', 'lines' or 'regex'");
  }
  check_strings(spec.any, "any", problems);
  check_strings(spec.all, "all", problems);
  for (const auto& group : spec.any_of) {
    if (group.empty()) problems.push_back("empty alternative in 'any_of'");
    check_strings(group, "any_of", problems);
  }
  for (const auto& group : spec.lines) {
    if (group.empty()) problems.push_back("empty entry in 'lines'");
    check_strings(group, "lines", problems);
  }
  if (!spec.lines.empty()) {
    if (spec.max_lines < 1 || spec.max_lines > kMaxMultiLineWindow) {
      problems.push_back("'max_lines' must be between 1 and " +
                         std::to_string(kMaxMultiLineWindow));
    }
    if (!spec.any.empty() || !spec.all.empty() || !spec.any_of.empty() || !spec.regex.empty() ||
        !spec.levels.empty()) {
      problems.push_back(
          "'lines' cannot be combined with 'any', 'all', 'any_of', 'regex' or "
          "'level'");
    }
  } else if (spec.max_lines != 0) {
    problems.push_back("'max_lines' is only for a multi-line rule ('lines')");
  }
  for (const auto& [name, value] : spec.annotations) {
    if (!is_field_name(name)) problems.push_back("annotation name '" + name + "' is not a name");
  }
  for (const auto& s : spec.sources) {
    if (s.empty()) problems.push_back("empty string in 'sources'");
  }
  for (const auto& t : spec.source_types) {
    if (!is_source_type(t)) problems.push_back("source type '" + t + "' is not a source type");
  }
  for (const auto& level : spec.levels) {
    if (!is_level_word(level)) {
      problems.push_back("level '" + level + "' is not an upper-case word such as ERROR");
    }
  }
  if (!spec.regex.empty()) {
    std::string error;
    if (!compile_regex(spec.regex, error)) problems.push_back(error);
  }
  std::string error;
  if (!parse_template(spec.device, error)) problems.push_back("device template: " + error);
  if (auto code = parse_template(spec.code, error)) {
    if (code->is_literal() && !spec.code.empty() && !is_valid_code(normalize_code(spec.code))) {
      problems.push_back("fault code '" + spec.code + "' is not a code such as 80818C00");
    }
  } else {
    problems.push_back("code template: " + error);
  }
  return problems;
}

}  // namespace faultd::rules
