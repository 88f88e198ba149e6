#include "daemon/config/hang_source_config.hpp"

#include "collectors/command/command_source.hpp"
#include "daemon/config/command_source_config.hpp"
#include "daemon/config/paths.hpp"

namespace faultd {

std::optional<HangSourceConfig> load_hang_source(const YAML::Node& n, const std::string& name,
                                                 const std::string& base_dir,
                                                 const yaml::Ctx& ctx) {
  const size_t errors_before = ctx.errors->size();
  yaml::check_map(n, "a hang source",
                  {"name", "type", "tool", "program", "devices", "hccn_tool", "interval", "timeout",
                   "unresponsive_after", "polls", "util_below", "busy_above", "cpu_seconds",
                   "packets", "wedge_level", "device_wchan"},
                  ctx);
  HangSourceConfig src;
  src.name = name;
  HangThresholds& t = src.thresholds;
  t.busy_above = 95;
  const auto tool = yaml::get_string(n, "tool", ctx);
  if (!tool) {
    if (!n["tool"]) ctx.error(n, "hang source '" + name + "' needs tool (npu_smi or nvidia_smi)");
  } else if (*tool == "npu_smi") {
    src.tool = HangTool::NpuSmi;
  } else if (*tool == "nvidia_smi") {
    src.tool = HangTool::NvidiaSmi;
  } else {
    ctx.error(n["tool"], "unknown tool '" + *tool + "' (one of: npu_smi, nvidia_smi)");
  }
  auto program_path = [&](const char* key, std::string fallback) {
    std::string p = yaml::get_string(n, key, ctx).value_or(std::move(fallback));
    if (p.find('/') != std::string::npos) p = resolve_config_path(base_dir, p);
    return p;
  };
  src.program = program_path("program", src.tool == HangTool::NpuSmi ? "npu-smi" : "nvidia-smi");
  if (n["hccn_tool"]) src.hccn_tool = program_path("hccn_tool", "");
  if (auto v = yaml::get_string(n, "devices", ctx)) {
    std::string error;
    if (!parse_device_list(*v, error)) ctx.error(n["devices"], "devices: " + error);
    src.devices = *v;
  }
  if (src.tool == HangTool::NpuSmi && src.devices.empty() && tool) {
    ctx.error(n, "hang source '" + name + "' with tool npu_smi needs devices (e.g. \"0-7\")");
  }
  if (src.tool == HangTool::NvidiaSmi && (n["devices"] || n["hccn_tool"])) {
    ctx.error(n["devices"] ? n["devices"] : n["hccn_tool"],
              "devices and hccn_tool are for tool npu_smi (nvidia-smi reports every GPU)");
  }
  load_interval_timeout(n, std::chrono::seconds(1), t.interval, src.timeout, ctx);
  if (auto v = yaml::get_int(n, "unresponsive_after", ctx, 1, 1000)) {
    src.unresponsive_after = static_cast<uint32_t>(*v);
  }
  if (auto v = yaml::get_int(n, "polls", ctx, 2, 1000)) t.polls = static_cast<uint32_t>(*v);
  if (auto v = yaml::get_int(n, "util_below", ctx, 0, 100)) t.util_below = static_cast<double>(*v);
  if (auto v = yaml::get_int(n, "busy_above", ctx, 1, 101)) t.busy_above = static_cast<double>(*v);
  if (t.busy_above <= t.util_below) {
    ctx.error(n["busy_above"] ? n["busy_above"] : n, "busy_above must be above util_below");
  }
  if (auto v = yaml::get_int(n, "cpu_seconds", ctx, 0, 60)) {
    t.cpu_seconds_per_minute = static_cast<double>(*v);
  }
  if (auto v = yaml::get_int(n, "packets", ctx, 0, int64_t{1} << 40)) {
    t.packets_per_minute = static_cast<double>(*v);
  }
  if (auto v = yaml::get_fault_level(n, "wedge_level", ctx)) src.wedge_level = *v;
  if (n["device_wchan"]) {
    if (auto v = yaml::get_string_list(n, "device_wchan", ctx)) t.device_wchan = *v;
  }
  if (ctx.errors->size() != errors_before) return std::nullopt;
  return src;
}

}  // namespace faultd
