#include "compare/layer_mapping.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "daemon/core/errors.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd::compare {

namespace {

constexpr const char* kTopLayer = "TopLayer";
constexpr const char* kOldTopLayer = "Cell";  // msprobe's name for the top before TopLayer

std::string join(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i == from ? "" : ".") + parts[i];
  return out;
}

// A name of the mapping: one or more non-empty levels separated by dots.
std::optional<std::vector<std::string>> levels(const YAML::Node& node, const yaml::Ctx& ctx,
                                               bool is_value) {
  auto text = yaml::as_string(node, "a layer name", ctx);
  if (!text) return std::nullopt;
  if (is_value) text = text->substr(0, text->find('('));  // "name(Class)": the name
  auto parts = split_dots(*text);
  if (text->empty() ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    ctx.error(node, "'" + *text + "' is not a layer name (names separated by single dots)");
    return std::nullopt;
  }
  return parts;
}

// A module row's name, taken apart:
//   {Cell|Module}.{path...}.{Class}.{forward|backward|parameters_grad}.{call}[.{argument...}]
struct ModuleName {
  std::vector<std::string> path;
  std::string cls;
  std::string rest;  // direction, call and argument: what must be equal on both sides
};

std::optional<ModuleName> module_name(const std::string& name) {
  const auto parts = split_dots(name);
  if (parts.size() < 4 || (parts[0] != "Cell" && parts[0] != "Module")) return std::nullopt;
  // The direction is the last forward/backward/parameters_grad followed by a call index: a
  // layer may be called "forward" too.
  for (size_t i = parts.size() - 1; i-- > 2;) {
    const auto& d = parts[i];
    const auto& call = parts[i + 1];
    if ((d == "forward" || d == "backward" || d == "parameters_grad") && !call.empty() &&
        std::all_of(call.begin(), call.end(), ::isdigit)) {
      ModuleName m;
      m.path.assign(parts.begin() + 1, parts.begin() + static_cast<std::ptrdiff_t>(i) - 1);
      m.cls = parts[i - 1];
      m.rest = join(parts, i, parts.size());
      return m;
    }
  }
  return std::nullopt;
}

}  // namespace

LayerMapping parse_layer_mapping(const std::string& text, const std::string& file) {
  ErrorList errors;
  const yaml::Ctx ctx{file, &errors};
  LayerMapping out;
  const auto root = yaml::load_text(text, ctx);
  if (root && !root->IsMap()) {
    ctx.error(*root, "a layer mapping is a map of layer class to {NPU name: bench name}");
  } else if (root) {
    std::optional<YAML::Mark> top_at;
    for (const auto& entry : *root) {
      auto cls = yaml::as_string(entry.first, "a layer class", ctx);
      if (!cls) continue;
      if (*cls == kOldTopLayer) *cls = kTopLayer;
      if (*cls == kTopLayer) {
        if (top_at) {
          ctx.error(entry.first, "the top layer is given twice (Cell is TopLayer's older name)");
          continue;
        }
        top_at = entry.first.Mark();
      }
      if (!entry.second.IsMap()) {
        ctx.error(entry.second.IsNull() ? entry.first : entry.second,
                  "layer class " + *cls + ": expected a map of NPU name to bench name");
        continue;
      }
      auto& rules = out.by_class[*cls];
      for (const auto& kv : entry.second) {
        auto from = levels(kv.first, ctx, false);
        auto to = levels(kv.second, ctx, true);
        if (!from || !to) continue;
        const bool again =
            std::any_of(rules.begin(), rules.end(),
                        [&](const LayerMapping::Rule& r) { return r.from == *from; });
        if (again) {
          ctx.error(kv.first, "'" + join(*from, 0, from->size()) + "' is mapped twice in " + *cls);
          continue;
        }
        rules.push_back({std::move(*from), std::move(*to)});
      }
      std::stable_sort(rules.begin(), rules.end(),
                       [](const LayerMapping::Rule& a, const LayerMapping::Rule& b) {
                         return a.from.size() > b.from.size();
                       });
    }
  }
  if (!errors.empty()) {
    std::string message = errors.to_string();
    message.pop_back();  // the last newline
    throw InputError(message);
  }
  return out;
}

LayerMapping load_layer_mapping(const std::string& path) {
  return parse_layer_mapping(read_text_file(path), path);
}

std::map<std::string, std::string> layer_data_mapping(const Dump& npu, const Dump& bench,
                                                      const LayerMapping& mapping) {
  std::map<std::string, std::string> out;
  if (mapping.by_class.empty()) return out;
  // The class of every layer the NPU dump names, by its path.
  std::unordered_map<std::string, std::string> class_of;
  for (const auto& r : npu.rows) {
    if (auto m = module_name(r.name)) class_of.emplace(join(m->path, 0, m->path.size()), m->cls);
  }
  // The bench's module rows by path, direction, call and argument (not by class or prefix).
  std::unordered_map<std::string, const std::string*> bench_rows;
  for (const auto& r : bench.rows) {
    if (auto m = module_name(r.name)) {
      bench_rows.emplace(join(m->path, 0, m->path.size()) + "|" + m->rest, &r.name);
    }
  }
  std::unordered_map<std::string, std::string> translated;  // NPU path -> bench path
  auto translate = [&](const std::vector<std::string>& path) {
    const std::string whole = join(path, 0, path.size());
    if (auto it = translated.find(whole); it != translated.end()) return it->second;
    std::vector<std::string> to;
    size_t i = 0;
    while (i < path.size()) {
      std::string parent = kTopLayer;
      if (i > 0) {
        const auto c = class_of.find(join(path, 0, i));
        parent = c == class_of.end() ? std::string() : c->second;
      }
      size_t step = 1;
      std::vector<std::string> name = {path[i]};
      if (const auto rules = mapping.by_class.find(parent); rules != mapping.by_class.end()) {
        for (const auto& rule : rules->second) {
          if (i + rule.from.size() <= path.size() &&
              std::equal(rule.from.begin(), rule.from.end(),
                         path.begin() + static_cast<std::ptrdiff_t>(i))) {
            step = rule.from.size();
            name = rule.to;
            break;
          }
        }
      }
      to.insert(to.end(), name.begin(), name.end());
      i += step;
    }
    return translated[whole] = join(to, 0, to.size());
  };
  for (const auto& r : npu.rows) {
    const auto m = module_name(r.name);
    if (!m) continue;
    if (const auto b = bench_rows.find(translate(m->path) + "|" + m->rest); b != bench_rows.end()) {
      out.emplace(r.name, *b->second);
    }
  }
  return out;
}

}  // namespace faultd::compare
