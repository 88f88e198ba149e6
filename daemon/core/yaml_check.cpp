#include "daemon/core/yaml_check.hpp"

#include <fstream>
#include <sstream>

namespace faultd::yaml {

void Ctx::error(const YAML::Mark& at, const std::string& message) const {
  if (at.is_null()) {
    errors->add(file, 0, 0, message);
  } else {
    errors->add(file, at.line + 1, at.column + 1, message);
  }
}

void Ctx::error(const YAML::Node& at, const std::string& message) const {
  // A node looked up under a key of a scalar or sequence is invalid, and yaml-cpp's Mark()
  // throws for it: the error is still reported, without a position.
  error(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), message);
}

std::optional<YAML::Node> load_text(const std::string& text, const Ctx& ctx) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    ctx.error(e.mark, e.msg);
  } catch (const YAML::Exception& e) {
    ctx.error(e.mark, e.msg);
  }
  return std::nullopt;
}

std::optional<YAML::Node> load_file(const std::string& path, const Ctx& ctx) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ctx.errors->add(path, 0, 0, "cannot read file");
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_text(text.str(), ctx);
}

namespace {
std::string type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "undefined";
  }
}
}  // namespace

bool check_map(const YAML::Node& map, std::string_view what,
               std::initializer_list<std::string_view> allowed, const Ctx& ctx) {
  if (!map.IsMap()) {
    ctx.error(map, std::string(what) + " must be a map, not " + type_name(map));
    return false;
  }
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      ctx.error(kv.first,
                "unknown key '" + key + "' in " + std::string(what) + " (allowed: " + list + ")");
    }
  }
  return true;
}

std::optional<std::string> as_string(const YAML::Node& node, std::string_view what,
                                     const Ctx& ctx) {
  if (!node.IsScalar()) {
    ctx.error(node, std::string(what) + " must be a string, not " + type_name(node));
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<std::string> get_string(const YAML::Node& map, const char* key, const Ctx& ctx) {
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return as_string(n, std::string("'") + key + "'", ctx);
}

std::optional<bool> get_bool(const YAML::Node& map, const char* key, const Ctx& ctx) {
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  ctx.error(n, std::string("'") + key + "' must be true or false");
  return std::nullopt;
}

std::optional<int64_t> get_int(const YAML::Node& map, const char* key, const Ctx& ctx, int64_t min,
                               int64_t max) {
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    try {
      size_t used = 0;
      const long long v = std::stoll(s, &used, 10);
      if (used == s.size() && v >= min && v <= max) return v;
    } catch (const std::exception&) {
    }
  }
  ctx.error(n, std::string("'") + key + "' must be an integer from " + std::to_string(min) +
                   " to " + std::to_string(max));
  return std::nullopt;
}

std::optional<Duration> get_duration(const YAML::Node& map, const char* key, const Ctx& ctx) {
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  if (n.IsScalar()) {
    if (auto d = parse_duration(n.Scalar())) return d;
  }
  ctx.error(n, std::string("'") + key + "' must be a duration such as 500ms, 30s, 5m or 24h");
  return std::nullopt;
}

std::optional<FaultLevel> as_fault_level(const YAML::Node& node, const Ctx& ctx) {
  if (node.IsScalar()) {
    if (auto level = parse_fault_level(node.Scalar())) return level;
  }
  ctx.error(node, "unknown fault level '" + (node.IsScalar() ? node.Scalar() : std::string()) +
                      "' (known: " + fault_level_names() + ")");
  return std::nullopt;
}

std::optional<FaultLevel> get_fault_level(const YAML::Node& map, const char* key, const Ctx& ctx) {
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return as_fault_level(n, ctx);
}

std::optional<std::vector<std::string>> get_string_list(const YAML::Node& map, const char* key,
                                                        const Ctx& ctx) {
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  std::vector<std::string> out;
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return out;
  }
  if (!n.IsSequence()) {
    ctx.error(n, std::string("'") + key + "' must be a string or a list of strings");
    return std::nullopt;
  }
  bool ok = true;
  for (const auto& item : n) {
    if (auto s = as_string(item, std::string("an item of '") + key + "'", ctx)) {
      out.push_back(*s);
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace faultd::yaml
