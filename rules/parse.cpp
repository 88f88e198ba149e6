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

void parse_match(const YAML::Node& match, RuleSpec& spec, const Ctx& ctx) {
  if (!yaml::check_map(match, "match", {"any", "all", "regex", "level"}, ctx)) return;
  spec.any = get_items(match, "any", ctx);
  spec.all = get_items(match, "all", ctx);
  if (auto regex = yaml::get_string(match, "regex", ctx)) {
    std::string error;
    if (regex->empty()) {
      ctx.error(match["regex"], "'regex' is empty");
    } else if (!rules::compile_regex(*regex, error)) {
      ctx.error(match["regex"], error);
    }
    spec.regex = *regex;
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
  if (absent(match["any"]) && absent(match["all"]) && absent(match["regex"])) {
    ctx.error(match, "match needs at least one of 'any', 'all' or 'regex'");
  }
}

void parse_fault(const YAML::Node& fault, RuleSpec& spec, const Ctx& ctx) {
  if (!yaml::check_map(fault, "fault", {"code", "level"}, ctx)) return;
  if (auto code = yaml::get_string(fault, "code", ctx)) {
    std::string error;
    if (auto tmpl = rules::parse_template(*code, error)) {
      if (tmpl->is_literal() && !code->empty()) {
        spec.code = rules::normalize_code(*code);
        if (!rules::is_valid_code(spec.code)) {
          ctx.error(fault["code"], "fault code '" + *code + "' is not a code such as 80818C00");
        }
      } else {
        spec.code = *code;
      }
    } else {
      ctx.error(fault["code"], "fault code: " + error);
    }
  }
  if (auto level = yaml::get_string(fault, "level", ctx)) {
    spec.fault_level = parse_fault_level(*level);
    if (!spec.fault_level) {
      std::string names;
      for (int i = 0; i < kFaultLevelCount; ++i) {
        names += (i ? ", " : "") + std::string(to_string(static_cast<FaultLevel>(i)));
      }
      ctx.error(fault["level"], "unknown fault level '" + *level + "' (known: " + names + ")");
    }
  }
}

std::optional<RuleSpec> parse_rule(const YAML::Node& node, const Ctx& ctx) {
  const size_t errors_before = ctx.errors->size();
  if (!yaml::check_map(
          node, "rule",
          {"id", "description", "sources", "match", "device", "fault", "mode", "recovery"}, ctx)) {
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
  if (auto recovery = yaml::get_bool(node, "recovery", ctx)) spec.recovery = *recovery;

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
