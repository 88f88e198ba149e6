#include "daemon/config/kmsg_source_config.hpp"

#include "daemon/config/paths.hpp"

#include <filesystem>

namespace faultd {

std::optional<KmsgSourceConfig> load_kmsg_source(const YAML::Node& n, const std::string& name,
                                                 const std::string& base_dir,
                                                 const yaml::Ctx& ctx) {
  const size_t before = ctx.errors->size();
  KmsgSourceConfig c;
  c.name = name;
  yaml::check_map(n, "a kmsg source",
                  {"name", "type", "path", "boot_id_path", "poll_interval", "max_records_per_poll"},
                  ctx);
  if (auto v = yaml::get_string(n, "path", ctx)) {
    if (v->empty()) ctx.error(n["path"], "path must not be empty");
    c.path = resolve_config_path(base_dir, *v);
  }
  if (auto v = yaml::get_string(n, "boot_id_path", ctx)) {
    if (v->empty()) ctx.error(n["boot_id_path"], "boot_id_path must not be empty");
    c.boot_id_path = resolve_config_path(base_dir, *v);
  }
  if (auto v = yaml::get_duration(n, "poll_interval", ctx)) {
    if (*v < std::chrono::milliseconds(10)) {
      ctx.error(n["poll_interval"], "poll_interval must be at least 10ms");
    }
    c.poll_interval = *v;
  }
  if (auto v = yaml::get_int(n, "max_records_per_poll", ctx, 1, 1000000)) {
    c.max_records_per_poll = static_cast<size_t>(*v);
  }
  if (ctx.errors->size() != before) return std::nullopt;
  return c;
}

}  // namespace faultd
