#include "daemon/config/log_config.hpp"

#include <algorithm>

#include "daemon/core/enum_names.hpp"

namespace faultd {

std::string_view to_string(LogFormat format) { return name_of(kLogFormatNames, format); }

void load_log_config(const YAML::Node& log, const yaml::Ctx& ctx, LogConfig& cfg) {
  if (!yaml::check_map(log, "log", {"level", "format"}, ctx)) return;
  if (auto v = yaml::get_string(log, "level", ctx)) {
    constexpr std::array<std::string_view, 5> kLevels = {"trace", "debug", "info", "warn", "error"};
    if (std::find(kLevels.begin(), kLevels.end(), *v) != kLevels.end()) {
      cfg.level = *v;
    } else {
      ctx.error(log["level"], "log level must be one of " + joined_names(kLevels));
    }
  }
  if (auto v = yaml::get_string(log, "format", ctx)) {
    if (auto format = enum_named<LogFormat>(kLogFormatNames, *v)) {
      cfg.format = *format;
    } else {
      ctx.error(log["format"], "log format must be one of " + joined_names(kLogFormatNames));
    }
  }
}

}  // namespace faultd
