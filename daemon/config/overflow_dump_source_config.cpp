#include "daemon/config/overflow_dump_source_config.hpp"

#include "daemon/config/paths.hpp"

namespace faultd {

std::optional<OverflowDumpSourceConfig> load_overflow_dump_source(const YAML::Node& n,
                                                                  const std::string& name,
                                                                  const std::string& base_dir,
                                                                  const yaml::Ctx& ctx) {
  const size_t before = ctx.errors->size();
  OverflowDumpSourceConfig c;
  c.name = name;
  yaml::check_map(
      n, "an overflow_dump source",
      {"name", "type", "root", "scan_interval", "settle", "max_files_per_poll", "max_directories"},
      ctx);
  if (auto v = yaml::get_string(n, "root", ctx)) {
    if (v->empty()) {
      ctx.error(n["root"], "root must not be empty");
    } else if (has_wildcard(*v)) {
      ctx.error(n["root"], "root is a directory, not a glob (the whole tree below it is watched)");
    }
    c.root = resolve_config_path(base_dir, *v);
    while (c.root.size() > 1 && c.root.back() == '/') c.root.pop_back();
  } else if (n.IsMap() && !n["root"].IsDefined()) {
    ctx.error(n, "overflow_dump source '" + name + "' needs a root (the dump directory)");
  }
  if (auto v = yaml::get_duration(n, "scan_interval", ctx)) {
    if (*v < std::chrono::milliseconds(10)) {
      ctx.error(n["scan_interval"], "scan_interval must be at least 10ms");
    }
    c.scan_interval = *v;
  }
  if (auto v = yaml::get_duration(n, "settle", ctx)) c.settle = *v;
  if (auto v = yaml::get_int(n, "max_files_per_poll", ctx, 1, 1000000)) {
    c.max_files_per_poll = static_cast<size_t>(*v);
  }
  if (auto v = yaml::get_int(n, "max_directories", ctx, 1, 1000000)) {
    c.max_directories = static_cast<size_t>(*v);
  }
  if (ctx.errors->size() != before) return std::nullopt;
  return c;
}

}  // namespace faultd
