// Loading rule YAML into RuleSpecs. Every problem is reported at the node it concerns and
// parsing carries on, so one run of --check-config lists them all.
#include <optional>

#include "daemon/core/yaml_check.hpp"
#include "rules/rule.hpp"
#include "rules/spec_check.hpp"
#include "rules/template.hpp"

namespace faultd {
namespace {

using yaml::Ctx;

bool absent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

// A string or list of strings whose items must be non-empty and single-line; each bad item is
// reported at its own position.
std::vector<std::string> get_items(const YAML::Node& map, const char* key, const Ctx& ctx) {
  auto list = yaml::get_string_list(map, key, ctx);
  if (!list) return {};
  const YAML::Node node = map[key];
  if (list->empty()) ctx.error(node, std::string("'") + key + "' is an empty list");
  auto check = [&](const YAML::Node& item) {
    if (item.Scalar().empty()) ctx.error(item, std::string("empty string in '") + key + "'");
    if (item.Scalar().find('\n') != std::string::npos) {
      ctx.error(item, std::string("'") + key + "' strings cannot contain a newline");
    }
  };
  if (node.IsScalar()) {
    check(node);
  } else {
    for (const auto& item : node) check(item);
  }
  return *list;
}

// A list whose items are each a string or a list of strings (`any_of`, `lines`): every item
// becomes a non-empty list of non-empty, single-line strings.
std::vector<std::vector<std::string>> get_groups(const YAML::Node& map, const char* key,
                                                 const Ctx& ctx) {
  std::vector<std::vector<std::string>> groups;
  const YAML::Node node = map[key];
  if (absent(node)) return groups;
  if (!node.IsSequence() || node.size() == 0) {
    ctx.error(node, std::string("'") + key + "' must be a non-empty list of lists of strings");
    return groups;
  }
  for (const auto& item : node) {
    if (item.IsScalar()) {
      groups.emplace_back();
      groups.back().push_back(item.Scalar());
    } else if (item.IsSequence() && item.size() > 0) {
      groups.emplace_back();
      for (const auto& s : item) {
        if (!s.IsScalar()) {
          ctx.error(s, std::string("'") + key + "' items must be strings");
          continue;
        }
        groups.back().push_back(s.Scalar());
      }
    } else {
      ctx.error(item, std::string("each item of '") + key +
                          "' is a string or a non-empty list of strings");
      continue;
    }
    for (const auto& s : groups.back()) {
      if (s.empty()) ctx.error(item, std::string("empty string in '") + key + "'");
      if (s.find('\n') != std::string::npos) {
        ctx.error(item, std::string("'") + key + "' strings cannot contain a newline");
      }
    }
  }
  return groups;
}

void parse_match(const YAML::Node& match, RuleSpec& spec, const Ctx& ctx) {
  if (!yaml::check_map(
          match, "match",
          {"any", "all", "any_of", "none", "lines", "max_lines", "regex", "level", "fields"},
          ctx)) {
    return;
  }
  spec.any = get_items(match, "any", ctx);
  spec.all = get_items(match, "all", ctx);
  spec.none = get_items(match, "none", ctx);
  spec.any_of = get_groups(match, "any_of", ctx);
  spec.lines = get_groups(match, "lines", ctx);
  if (auto n = yaml::get_int(match, "max_lines", ctx, 1, rules::kMaxMultiLineWindow)) {
    spec.max_lines = static_cast<uint32_t>(*n);
  }
  if (!absent(match["lines"])) {
    for (const char* other : {"any", "all", "any_of", "none", "regex", "level", "fields"}) {
      if (!absent(match[other])) {
        ctx.error(match[other], std::string("'") + other +
                                    "' cannot be combined with 'lines' (a multi-line rule "
                                    "matches only its lines)");
      }
    }
    if (absent(match["max_lines"])) ctx.error(match, "'lines' needs 'max_lines'");
  } else if (!absent(match["max_lines"])) {
    ctx.error(match["max_lines"], "'max_lines' is only for a multi-line rule ('lines')");
  }
  if (auto regex = yaml::get_string(match, "regex", ctx)) {
    std::string error;
    if (regex->empty()) {
      ctx.error(match["regex"], "'regex' is empty");
    } else if (!rules::compile_regex(*regex, error)) {
      ctx.error(match["regex"], error);
    }
    spec.regex = *regex;
  }
  if (auto fields = yaml::get_string(match, "fields", ctx)) {
    if (*fields == "step") {
      spec.step_fields = true;
    } else {
      ctx.error(match["fields"], "unknown 'fields' reader '" + *fields + "' (known: step)");
    }
  }
  if (auto levels = yaml::get_string_list(match, "level", ctx)) {
    const YAML::Node node = match["level"];
    auto check = [&](const YAML::Node& item) {
      if (!rules::is_level_word(item.Scalar())) {
        ctx.error(item, "level '" + item.Scalar() +
                            "' never matches: line levels are upper-case words such as ERROR");
      }
    };
    if (node.IsScalar()) {
      check(node);
    } else {
      for (const auto& item : node) check(item);
    }
    if (levels->empty()) ctx.error(node, "'level' is an empty list");
    spec.levels = *levels;
  }
  // Judged on the keys, not their values: a bad value was reported already.
  if (absent(match["any"]) && absent(match["all"]) && absent(match["any_of"]) &&
      absent(match["lines"]) && absent(match["regex"])) {
    ctx.error(match, "match needs at least one of 'any', 'all', 'any_of', 'lines' or 'regex'");
  }
}

void parse_fault(const YAML::Node& fault, RuleSpec& spec, const Ctx& ctx) {
  if (!yaml::check_map(fault, "fault", {"code", "level", "default_level", "level_from"}, ctx))
    return;
  if (auto field = yaml::get_string(fault, "level_from", ctx)) spec.level_from = *field;
  if (auto code = yaml::get_string(fault, "code", ctx)) {
    std::string error;
    if (auto tmpl = rules::parse_template(*code, error)) {
      if (tmpl->is_literal() && !code->empty()) {
        spec.code = normalize_code(*code);
        if (!is_valid_code(spec.code)) {
          ctx.error(fault["code"], "fault code '" + *code + "' is not a code such as 80818C00");
        }
      } else {
        spec.code = *code;
      }
    } else {
      ctx.error(fault["code"], "fault code: " + error);
    }
  }
  spec.fault_level = yaml::get_fault_level(fault, "level", ctx);
  spec.default_level = yaml::get_fault_level(fault, "default_level", ctx);
  if (spec.fault_level && spec.default_level) {
    ctx.error(fault["default_level"], "fault: give `level` or `default_level`, not both");
  }
}

// A liveness rule's `after` and `until` strings pick some of the rule's own lines: each must
// be able to occur on a line the match takes, i.e. overlap one of its trigger literals (an `any`
// string or a string of an `any_of` alternative). Anything else would never start or end a wait.
void check_liveness_lines(const YAML::Node& node, const RuleSpec& spec, const DetectorSpec& live,
                          const Ctx& ctx) {
  if (!spec.lines.empty() || (spec.any.empty() && spec.any_of.empty())) {
    ctx.error(node[live.type == DetectorType::ExpectEvery ? "expect_every" : "expect_within"],
              "a liveness rule needs `match: {any: [...]}` or `any_of` (one line each)");
    return;
  }
  auto overlaps = [](const std::string& a, const std::string& b) {
    return a.find(b) != std::string::npos || b.find(a) != std::string::npos;
  };
  auto matchable = [&](const std::string& text) {
    for (const auto& t : spec.any) {
      if (overlaps(text, t)) return true;
    }
    for (const auto& alternative : spec.any_of) {
      for (const auto& t : alternative) {
        if (overlaps(text, t)) return true;
      }
    }
    return false;
  };
  for (const char* key : {"after", "until"}) {
    const auto& list = std::string_view(key) == "after" ? live.after : live.until;
    const YAML::Node n = node[key];
    for (size_t i = 0; i < list.size(); ++i) {
      if (matchable(list[i])) continue;
      ctx.error(n.IsSequence() ? n[i] : n,
                std::string("'") + key + "' string '" + list[i] +
                    "' overlaps none of the rule's `any`/`any_of` strings: no line it matches "
                    "would carry it");
    }
  }
}

std::optional<RuleSpec> parse_rule(const YAML::Node& node, const Ctx& ctx) {
  const size_t errors_before = ctx.errors->size();
  if (!yaml::check_map(
          node, "rule",
          {"id", "description", "sources", "source_types", "match", "device", "fault", "mode",
           "detect", "recovery", "annotations", "expect_every", "expect_within", "after", "until"},
          ctx)) {
    return std::nullopt;
  }
  RuleSpec spec;
  spec.file = ctx.file;
  spec.line = node.Mark().line + 1;
  spec.column = node.Mark().column + 1;

  if (auto id = yaml::get_string(node, "id", ctx)) {
    spec.id = *id;
    if (!rules::is_valid_rule_id(*id)) {
      ctx.error(node["id"], "rule id '" + *id + "' must match ^[a-z0-9][a-z0-9._-]*$ (at most " +
                                std::to_string(rules::kMaxRuleIdLength) +
                                " characters): it is a metric label");
    }
  } else if (absent(node["id"])) {
    ctx.error(node, "rule has no 'id'");
  }
  if (auto description = yaml::get_string(node, "description", ctx))
    spec.description = *description;
  spec.sources = get_items(node, "sources", ctx);
  spec.source_types = get_items(node, "source_types", ctx);
  if (!spec.source_types.empty()) {
    const YAML::Node types = node["source_types"];
    for (size_t i = 0; i < spec.source_types.size(); ++i) {
      if (is_source_type(spec.source_types[i])) continue;
      std::string known;
      for (const auto k : kSourceTypes) known += (known.empty() ? "" : ", ") + std::string(k);
      ctx.error(types.IsSequence() ? types[i] : types,
                "source type '" + spec.source_types[i] + "' is not one of " + known);
    }
  }

  if (absent(node["match"])) {
    ctx.error(node, "rule '" + spec.id + "' has no 'match'");
  } else {
    parse_match(node["match"], spec, ctx);
  }
  if (auto device = yaml::get_string(node, "device", ctx)) {
    std::string error;
    if (!rules::parse_template(*device, error)) ctx.error(node["device"], "device: " + error);
    spec.device = *device;
  }
  if (!absent(node["fault"])) parse_fault(node["fault"], spec, ctx);
  if (auto mode = yaml::get_string(node, "mode", ctx)) {
    if (*mode == "shadow") {
      spec.shadow = true;
    } else if (*mode != "enforce") {
      ctx.error(node["mode"], "mode must be 'enforce' or 'shadow'");
    }
  }
  if (!absent(node["detect"]))
    spec.detect = parse_detector_spec(node["detect"], ctx.file, *ctx.errors);
  if (auto liveness = parse_liveness_spec(node, ctx.file, *ctx.errors)) {
    check_liveness_lines(node, spec, *liveness, ctx);
    spec.detect = std::move(liveness);
  }
  if (auto recovery = yaml::get_bool(node, "recovery", ctx)) spec.recovery = *recovery;
  if (const YAML::Node annotations = node["annotations"]; !absent(annotations)) {
    if (!annotations.IsMap()) {
      ctx.error(annotations, "'annotations' must be a map of names to strings");
    } else {
      for (const auto& kv : annotations) {
        const std::string name = kv.first.Scalar();
        if (!rules::is_field_name(name)) {
          ctx.error(kv.first,
                    "annotation name '" + name + "' is not a name ([A-Za-z_][A-Za-z0-9_]*)");
        } else if (!kv.second.IsScalar()) {
          ctx.error(kv.second, "annotation '" + name + "' must be a string");
        } else {
          spec.annotations.emplace_back(name, kv.second.Scalar());
        }
      }
    }
  }

  if (ctx.errors->size() != errors_before) return std::nullopt;
  return spec;
}

}  // namespace

void parse_rules(const YAML::Node& rules, const std::string& file, std::vector<RuleSpec>& out,
                 ErrorList& errors) {
  const Ctx ctx{file, &errors};
  if (absent(rules)) return;
  if (!rules.IsSequence()) {
    ctx.error(rules, "'rules' must be a list of rules");
    return;
  }
  for (const auto& item : rules) {
    if (auto spec = parse_rule(item, ctx)) out.push_back(std::move(*spec));
  }
}

void load_rule_file(const std::string& path, std::vector<RuleSpec>& out, ErrorList& errors) {
  const Ctx ctx{path, &errors};
  auto doc = yaml::load_file(path, ctx);
  if (!doc || doc->IsNull()) return;  // unreadable (reported) or empty: no rules
  if (!yaml::check_map(*doc, "rule file", {"rules"}, ctx)) return;
  parse_rules((*doc)["rules"], path, out, errors);
}

}  // namespace faultd
