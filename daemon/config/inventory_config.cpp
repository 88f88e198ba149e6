#include "daemon/config/inventory_config.hpp"

#include "collectors/command/command_source.hpp"
#include "daemon/config/paths.hpp"

namespace faultd {
namespace {

// A discoverer's argv: a list (possibly empty: off); a program with a '/' is the config's.
void load_argv(const YAML::Node& n, const char* key, const std::string& base_dir,
               const yaml::Ctx& ctx, std::vector<std::string>& argv) {
  if (!n[key].IsDefined()) return;
  if (!n[key].IsSequence()) {
    ctx.error(n[key], std::string(key) + " must be a list (program, arguments...), [] for none");
    return;
  }
  auto list = yaml::get_string_list(n, key, ctx);
  if (!list) return;
  if (!list->empty() && (*list)[0].empty()) {
    ctx.error(n[key], std::string(key) + " needs the program first");
    return;
  }
  if (!list->empty() && (*list)[0].find('/') != std::string::npos) {
    (*list)[0] = resolve_config_path(base_dir, (*list)[0]);
  }
  argv = std::move(*list);
}

}  // namespace

void load_inventory_config(const YAML::Node& n, const std::string& base_dir, const yaml::Ctx& ctx,
                           InventoryConfig& cfg) {
  if (!yaml::check_map(n, "inventory",
                       {"devices", "expected_devices", "npu_smi", "nvidia_smi", "dev_dir",
                        "interval", "timeout", "lost_level"},
                       ctx)) {
    return;
  }
  if (const auto d = n["devices"]; d.IsDefined()) {
    std::vector<std::string> ids;
    if (d.IsSequence()) {
      for (const auto& item : d) {
        const std::string id = item.IsScalar() ? item.Scalar() : "";
        if (!is_valid_device_id(id)) {
          ctx.error(item, "a device id must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$");
        } else {
          ids.push_back(id);
        }
      }
    } else if (auto spec = yaml::get_string(n, "devices", ctx)) {
      std::string error;
      if (auto list = parse_device_list(*spec, error)) {
        ids = std::move(*list);
      } else {
        ctx.error(d, "devices: " + error);
      }
    }
    cfg.devices = std::move(ids);
  }
  if (auto v = yaml::get_int(n, "expected_devices", ctx, 0, 4096)) {
    cfg.expected_devices = static_cast<int>(*v);
  }
  load_argv(n, "npu_smi", base_dir, ctx, cfg.npu_smi);
  load_argv(n, "nvidia_smi", base_dir, ctx, cfg.nvidia_smi);
  if (auto v = yaml::get_string(n, "dev_dir", ctx)) {
    cfg.dev_dir = v->empty() ? "" : resolve_config_path(base_dir, *v);
  }
  if (auto v = yaml::get_duration(n, "interval", ctx)) {
    if (*v < std::chrono::seconds(1)) {
      ctx.error(n["interval"], "interval must be at least 1s");
    } else {
      cfg.interval = *v;
    }
  }
  if (auto v = yaml::get_duration(n, "timeout", ctx)) {
    if (*v < std::chrono::milliseconds(100) || *v > cfg.interval) {
      ctx.error(n["timeout"], "timeout must be at least 100ms and at most the interval");
    } else {
      cfg.timeout = *v;
    }
  }
  if (auto level = yaml::get_fault_level(n, "lost_level", ctx)) cfg.lost_level = *level;
}

}  // namespace faultd
