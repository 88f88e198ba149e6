#include "daemon/config/command_source_config.hpp"

#include "daemon/config/paths.hpp"

#include <filesystem>

namespace faultd {

namespace {
// A probe that must fail more often than this before it counts says nothing useful.
constexpr int64_t kMaxUnresponsiveAfter = 1000;
}  // namespace

void load_interval_timeout(const YAML::Node& n, Duration min_interval, Duration& interval,
                           Duration& timeout, const yaml::Ctx& ctx) {
  if (auto v = yaml::get_duration(n, "interval", ctx)) {
    if (*v < min_interval) {
      ctx.error(n["interval"], "interval must be at least " + format_duration(min_interval));
    } else {
      interval = *v;
    }
  }
  if (auto v = yaml::get_duration(n, "timeout", ctx)) {
    if (*v < std::chrono::milliseconds(10)) {
      ctx.error(n["timeout"], "timeout must be at least 10ms");
    } else {
      timeout = *v;
    }
  }
  if (timeout > interval) {
    ctx.error(n["timeout"] ? n["timeout"] : n, "timeout (" + format_duration(timeout) +
                                                   ") must not exceed interval (" +
                                                   format_duration(interval) + ")");
  }
}

std::optional<CommandSourceConfig> load_command_source(const YAML::Node& n, const std::string& name,
                                                       const std::string& base_dir,
                                                       const yaml::Ctx& ctx) {
  const size_t errors_before = ctx.errors->size();
  yaml::check_map(n, "a command source",
                  {"name", "type", "argv", "devices", "discover", "interval", "timeout",
                   "max_output_bytes", "unresponsive_after", "parser"},
                  ctx);
  CommandSourceConfig src;
  src.name = name;

  if (!n["argv"]) {
    ctx.error(n, "command source '" + name + "' needs argv (a list: program, arguments...)");
  } else if (!n["argv"].IsSequence()) {
    ctx.error(n["argv"], "argv must be a list of strings (no shell is used)");
  } else if (auto argv = yaml::get_string_list(n, "argv", ctx)) {
    if (argv->empty() || (*argv)[0].empty()) {
      ctx.error(n["argv"], "argv needs at least the program");
    } else {
      std::string& program = (*argv)[0];
      // A bare name is looked up on PATH; a relative path is the config's, like every path.
      if (program.find('/') != std::string::npos) program = resolve_config_path(base_dir, program);
      src.argv = std::move(*argv);
    }
  }
  bool uses_device = false;
  for (const std::string& arg : src.argv) {
    uses_device = uses_device || arg.find(kDevicePlaceholder) != std::string::npos;
  }

  if (auto v = yaml::get_string(n, "devices", ctx)) {
    std::string error;
    if (!parse_device_list(*v, error)) {
      ctx.error(n["devices"], "devices: " + error);
    } else if (!uses_device && !src.argv.empty()) {
      ctx.error(n["devices"], "devices is set but argv has no \"{device}\" to substitute");
    }
    src.devices = *v;
  }
  if (auto v = yaml::get_bool(n, "discover", ctx)) {
    src.discover = *v;
    if (*v && !uses_device && !src.argv.empty()) {
      ctx.error(n["discover"], "discover is set but argv has no \"{device}\" to substitute");
    }
  }
  if (uses_device && src.devices.empty() && !src.discover) {
    ctx.error(n["argv"], "argv uses \"{device}\": set devices (e.g. \"0-7\") or discover: true");
  }

  load_interval_timeout(n, std::chrono::milliseconds(100), src.interval, src.timeout, ctx);
  if (auto v = yaml::get_int(n, "max_output_bytes", ctx, 1024, int64_t{16} * 1024 * 1024)) {
    src.max_output_bytes = static_cast<size_t>(*v);
  }
  if (auto v = yaml::get_int(n, "unresponsive_after", ctx, 1, kMaxUnresponsiveAfter)) {
    src.unresponsive_after = static_cast<uint32_t>(*v);
  }
  if (auto v = yaml::get_string(n, "parser", ctx)) {
    if (auto parser = parse_command_parser(*v)) {
      src.parser = *parser;
    } else {
      ctx.error(n["parser"],
                "unknown parser '" + *v + "' (one of: " + command_parser_names() + ")");
    }
  } else if (!n["parser"]) {
    ctx.error(
        n, "command source '" + name + "' needs a parser (one of: " + command_parser_names() + ")");
  }
  if (ctx.errors->size() != errors_before) return std::nullopt;
  return src;
}

}  // namespace faultd
