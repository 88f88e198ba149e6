// The config's `log:` section: how much faultd logs and in which form (daemon/app/logging.hpp
// writes it).
//
//   log:
//     level: info      # trace, debug, info, warn, error
//     format: auto     # auto, text, journal, json
//
// Lifecycle and threading: a pure function of its inputs, called while a config is loaded.
#pragma once

#include <yaml-cpp/yaml.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/core/yaml_check.hpp"

namespace faultd {

// journal: the sd-daemon priority prefix ("<4>") on each line, no timestamp (journald has
// one); text: a timestamp and the level; json: one object a line. auto: journal when stderr is
// the journal's stream (JOURNAL_STREAM), text otherwise.
enum class LogFormat { Auto, Text, Journal, Json };
inline constexpr std::array<std::string_view, 4> kLogFormatNames = {"auto", "text", "journal",
                                                                    "json"};
std::string_view to_string(LogFormat format);

struct LogConfig {
  std::string level = "info";
  LogFormat format = LogFormat::Auto;
};

void load_log_config(const YAML::Node& log, const yaml::Ctx& ctx, LogConfig& cfg);

}  // namespace faultd
