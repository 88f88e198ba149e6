// Logging set-up: spdlog to stderr. Under systemd (JOURNAL_STREAM set) lines carry no timestamp
// of their own, since journald adds one; on a terminal they do.
#pragma once

#include <string>

namespace faultd {

void setup_logging();
void set_log_level(const std::string& level);  // trace, debug, info, warn, error

}  // namespace faultd
