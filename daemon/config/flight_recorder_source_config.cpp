#include "daemon/config/flight_recorder_source_config.hpp"

#include "daemon/config/paths.hpp"

namespace faultd {

std::optional<FlightRecorderSourceConfig> load_flight_recorder_source(const YAML::Node& n,
                                                                      const std::string& name,
                                                                      const std::string& base_dir,
                                                                      const yaml::Ctx& ctx) {
  const size_t before = ctx.errors->size();
  FlightRecorderSourceConfig c;
  c.name = name;
  yaml::check_map(n, "a flight_recorder source",
                  {"name", "type", "prefix", "scan_interval", "settle", "max_dump_bytes",
                   "max_ranks", "ranks_per_node"},
                  ctx);
  if (auto v = yaml::get_string(n, "prefix", ctx)) {
    if (v->empty() || v->back() == '/') {
      ctx.error(n["prefix"],
                "prefix is the dump files' path up to the rank (up to .../nccl_trace_rank_)");
    } else if (has_wildcard(*v)) {
      ctx.error(n["prefix"], "prefix is a path, not a glob (the rank follows it)");
    }
    c.prefix = resolve_config_path(base_dir, *v);
  } else if (n.IsMap() && !n["prefix"].IsDefined()) {
    ctx.error(n, "flight_recorder source '" + name +
                     "' needs a prefix (TORCH_NCCL_DEBUG_INFO_TEMP_FILE or "
                     "TORCH_HCCL_DEBUG_INFO_TEMP_FILE)");
  }
  if (auto v = yaml::get_duration(n, "scan_interval", ctx)) {
    if (*v < std::chrono::milliseconds(10)) {
      ctx.error(n["scan_interval"], "scan_interval must be at least 10ms");
    }
    c.scan_interval = *v;
  }
  if (auto v = yaml::get_duration(n, "settle", ctx)) c.settle = *v;
  if (auto v = yaml::get_int(n, "max_dump_bytes", ctx, 1024, int64_t{1} << 30)) {
    c.max_dump_bytes = static_cast<size_t>(*v);
  }
  if (auto v = yaml::get_int(n, "max_ranks", ctx, 1, 65536)) c.max_ranks = static_cast<size_t>(*v);
  if (auto v = yaml::get_int(n, "ranks_per_node", ctx, 1, 1024)) {
    c.ranks_per_node = static_cast<uint32_t>(*v);
  }
  if (ctx.errors->size() != before) return std::nullopt;
  return c;
}

}  // namespace faultd
