#include "rules/catalogs/faultdiag.hpp"

#include <set>

#include "rules/catalogs/json_file.hpp"
#include "rules/spec_check.hpp"

namespace faultd {
namespace {

const char* const kNoPattern = "no log pattern (only chains to other entries)";
const char* const kUnmapped = "log class not mapped to a source";
const char* const kNoClass = "no log class";

std::string rule_id_for(const std::string& entry_id) {
  std::string id = "faultdiag.";
  for (char c : entry_id) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (c >= 'A' && c <= 'Z') {
      id += static_cast<char>(c - 'A' + 'a');
    } else {
      id += keep ? c : '-';
    }
  }
  return id;
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// The literal text every match of `pattern` starts with (after a leading ^), when the pattern
// is a plain sequence: "enqueFailCnt=0, dequeFailCnt=[1-9]" → "enqueFailCnt=0, dequeFailCnt=".
// Empty when there is an alternation or no literal start. A ']' or '}' outside a class or
// quantifier is a literal in RE2 (as in Python's re), so "^\[ERROR]" starts with "[ERROR]".
std::string leading_literal(const std::string& pattern) {
  if (pattern.find('|') != std::string::npos) return {};
  std::string out;
  size_t i = pattern.starts_with('^') ? 1 : 0;
  for (; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size() &&
        std::ispunct(static_cast<unsigned char>(pattern[i + 1]))) {
      out += pattern[++i];
    } else if (std::string_view(".[()*+?{^$\\").find(c) != std::string_view::npos) {
      break;
    } else {
      out += c;
    }
  }
  // A quantifier after the run applies to its last character, which is then optional.
  if (i < pattern.size() && std::string_view("*?{").find(pattern[i]) != std::string_view::npos &&
      !out.empty()) {
    out.pop_back();
  }
  return out;
}

// An `in` or `opt.all` as a list of AND-groups (each non-empty), or nullopt. Two shapes occur
// in the real file: a list of lists ([[a, b], [c]]: a AND b, OR c) and a flat list of strings
// (["map operation:", "[", "] failed"]: one group, all on the line; read as OR, its "[" alone
// would match half of all log lines).
std::optional<std::vector<std::vector<std::string>>> string_groups(const nlohmann::json& j) {
  if (!j.is_array() || j.empty()) return std::nullopt;
  auto usable = [](const nlohmann::json& s) {
    return s.is_string() && !s.get<std::string>().empty() &&
           s.get<std::string>().find('\n') == std::string::npos;
  };
  auto group_of = [&](const nlohmann::json& list) -> std::optional<std::vector<std::string>> {
    if (!list.is_array() || list.empty()) return std::nullopt;
    std::vector<std::string> group;
    for (const auto& s : list) {
      if (!usable(s)) return std::nullopt;
      group.push_back(s.get<std::string>());
    }
    return group;
  };
  std::vector<std::vector<std::string>> out;
  if (j[0].is_string()) {
    auto group = group_of(j);
    if (!group) return std::nullopt;
    out.push_back(std::move(*group));
    return out;
  }
  for (const auto& item : j) {
    auto group = group_of(item);
    if (!group) return std::nullopt;
    out.push_back(std::move(*group));
  }
  return out;
}

std::string text_of(const nlohmann::json& attribute, const char* key) {
  const auto it = attribute.find(key);
  if (it == attribute.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string joined;
    for (const auto& part : *it) {
      if (!part.is_string()) continue;
      if (!joined.empty()) joined += ' ';
      joined += part.get<std::string>();
    }
    return joined;
  }
  return {};
}

// Fills spec's match from the entry's "regex" object; returns the reason it cannot, or "".
std::string set_match(const nlohmann::json& regex, RuleSpec& spec) {
  if (!regex.is_object() || regex.empty()) return kNoPattern;
  if (regex.size() != 1) return "more than one pattern kind";
  const std::string kind = regex.begin().key();
  const nlohmann::json& value = regex.begin().value();
  if (kind == "in") {
    auto groups = string_groups(value);
    if (!groups) return "malformed 'in' (expected a list of lists of strings)";
    spec.any_of = std::move(*groups);
    return {};
  }
  if (kind == "regex") {
    if (!value.is_string() || value.get<std::string>().empty()) return "malformed 'regex'";
    spec.regex = value.get<std::string>();
    std::string error;
    if (!rules::compile_regex(spec.regex, error)) return "regex not accepted by RE2: " + error;
    const std::string literal = leading_literal(spec.regex);
    if (literal.size() >= 4) spec.all.push_back(literal);
    return {};
  }
  if (kind == "opt") {
    if (!value.is_array() || value.size() != 1 || !value[0].is_object()) {
      return "malformed 'opt' (expected one {all, max_lines})";
    }
    const auto& opt = value[0];
    auto groups = opt.contains("all") ? string_groups(opt["all"]) : std::nullopt;
    const auto max_lines = opt.find("max_lines");
    if (!groups || max_lines == opt.end() || !max_lines->is_number_integer() ||
        max_lines->get<int64_t>() < 1 || max_lines->get<int64_t>() > rules::kMaxMultiLineWindow) {
      return "malformed 'opt' (expected one {all, max_lines})";
    }
    spec.lines = std::move(*groups);
    spec.max_lines = static_cast<uint32_t>(max_lines->get<int64_t>());
    return {};
  }
  return "unknown pattern kind '" + kind + "'";
}

}  // namespace

std::string FaultDiagImport::summary() const {
  std::string out = std::to_string(entries) + " entries: " + std::to_string(rules.size()) +
                    " rules, " + std::to_string(skipped) + " skipped";
  if (!skipped_by_reason.empty()) {
    out += " (";
    bool first = true;
    for (const auto& [reason, count] : skipped_by_reason) {
      out += (first ? "" : "; ") + std::to_string(count) + " " + reason;
      first = false;
    }
    out += ")";
  }
  return out;
}

FaultDiagImport load_faultdiag_knowledge(const std::string& path, const FaultDiagOptions& options,
                                         ErrorList& errors) {
  FaultDiagImport out;
  const auto doc = catalogs::read_json_file(path, "FaultDiag knowledge base", errors);
  if (!doc) return out;
  const auto repo = doc->is_object() ? doc->find("knowledge-repository") : doc->end();
  if (!doc->is_object() || repo == doc->end() || !repo->is_object()) {
    errors.add(path, 1, 1, "expected an object with a \"knowledge-repository\" object");
    return out;
  }
  std::set<std::string> ids;
  auto skip = [&](const std::string& entry_id, const std::string& reason, bool detail) {
    ++out.skipped;
    // Reasons that carry details (an RE2 error) are grouped under their kind.
    const std::string kind = reason.substr(0, reason.find(':'));
    ++out.skipped_by_reason[kind];
    if (detail) out.skipped_detail.push_back(entry_id + ": " + reason);
  };
  for (const auto& [entry_id, entry] : repo->items()) {
    ++out.entries;
    if (!entry.is_object()) {
      skip(entry_id, "entry is not an object", true);
      continue;
    }
    RuleSpec spec;
    spec.id = rule_id_for(entry_id);
    spec.file = path;
    if (!rules::is_valid_rule_id(spec.id)) {
      skip(entry_id, "id too long for a rule id", true);
      continue;
    }
    if (!ids.insert(spec.id).second) {
      skip(entry_id, "id collides with another entry's once sanitised", true);
      continue;
    }
    const auto regex = entry.find("regex");
    if (const std::string reason =
            set_match(regex == entry.end() ? nlohmann::json() : *regex, spec);
        !reason.empty()) {
      skip(entry_id, reason, reason != kNoPattern);
      continue;
    }
    const auto source_file = entry.find("source_file");
    const std::string classes = source_file != entry.end() && source_file->is_string()
                                    ? source_file->get<std::string>()
                                    : "";
    std::set<std::string> sources;
    bool any_class = false;
    for (size_t start = 0; start <= classes.size();) {
      const size_t bar = std::min(classes.find('|', start), classes.size());
      const std::string cls = trim(std::string_view(classes).substr(start, bar - start));
      start = bar + 1;
      if (cls.empty()) continue;
      any_class = true;
      if (const auto it = options.source_classes.find(cls); it != options.source_classes.end()) {
        sources.insert(it->second.begin(), it->second.end());
      }
    }
    if (!any_class) {
      skip(entry_id, kNoClass, true);
      continue;
    }
    if (sources.empty()) {
      skip(entry_id, kUnmapped, false);
      continue;
    }
    spec.sources.assign(sources.begin(), sources.end());
    const auto attribute_it = entry.find("attribute");
    const nlohmann::json attribute = attribute_it != entry.end() && attribute_it->is_object()
                                         ? *attribute_it
                                         : nlohmann::json::object();
    spec.description = text_of(attribute, "cause_en");
    spec.knowledge_base = true;
    spec.annotations.emplace_back("faultdiag_id", entry_id);
    for (const auto& [name, key] :
         {std::pair{"cause", "cause_en"}, std::pair{"description", "description_en"},
          std::pair{"suggestion", "suggestion_en"}}) {
      if (std::string text = text_of(attribute, key); !text.empty()) {
        spec.annotations.emplace_back(name, std::move(text));
      }
    }
    if (const std::string code = hex_code(entry_id);
        entry_id.starts_with("0x") && code.size() == 8) {
      spec.code = code;
    }
    spec.fault_level = options.level;
    out.rules.push_back(std::move(spec));
  }
  return out;
}

}  // namespace faultd
