// Logging set-up: spdlog to stderr. Under systemd (JOURNAL_STREAM set) lines carry no timestamp
// of their own, since journald adds one; on a terminal they do.
//
// Every message is escaped on its way out (daemon/core/terminal_text.hpp), whoever logged it:
// file names, paths, webhook labels and a tool's output are chosen by whoever wrote them, and a
// newline would start a record of their making (journald makes each line its own entry), an ESC
// would drive the operator's terminal. One home for this, so that no call site can forget it.
#pragma once

#include <memory>
#include <string>

#include <spdlog/formatter.h>

namespace faultd {

void setup_logging();
void set_log_level(const std::string& level);  // trace, debug, info, warn, error

// spdlog's pattern formatter with the message escaped first: control bytes and invalid UTF-8 as
// \xNN, '\' as "\\". What setup_logging installs; for tests.
std::unique_ptr<spdlog::formatter> escaping_formatter(const std::string& pattern);

}  // namespace faultd
