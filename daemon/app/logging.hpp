// Logging set-up: spdlog to stderr, in the form the config's `log.format` asks for
// (daemon/config/log_config.hpp):
//   text     2026-01-01T00:00:00.000 [warning] message         (a terminal, a file)
//   journal  <4>[warning] message                              (journald: the sd-daemon(3)
//            priority prefix sets the entry's priority, so `journalctl -p warning` works, and
//            journald adds the time)
//   json     {"time":"2026-01-01T00:00:00.000Z","level":"warning","message":"...",
//             "fields":{"rule":"...","device":"3"}}            (a log pipeline)
// `auto` (the default) is journal when stderr is journald's stream, text otherwise.
//
// Every message is escaped on its way out (daemon/core/terminal_text.hpp), whoever logged it and
// whatever the format: file names, paths, webhook labels and a tool's output are chosen by
// whoever wrote them, and a newline would start a record of their making (journald makes each
// line its own entry), an ESC would drive the operator's terminal. One home for this, so that no
// call site can forget it.
//
// Threading: the formatter is swapped under the sink's lock, so a reload may change the format
// while other threads log.
#pragma once

#include <spdlog/common.h>
#include <spdlog/formatter.h>

#include <memory>
#include <string>
#include <string_view>

#include "daemon/config/log_config.hpp"

namespace faultd {

// At start, before the config is read: stderr, format auto, level info.
void setup_logging();
// The config's `log:` section: at start and on every reload.
void apply_log_config(const LogConfig& cfg);

// Whether stderr is journald's stream: JOURNAL_STREAM names its device and inode
// (systemd.exec(5)); a stderr redirected elsewhere by a wrapper is not.
bool stderr_is_journal();
// `format` with auto resolved.
LogFormat resolve_log_format(LogFormat format, bool journal);

// The formatter of a resolved format (auto is taken as text), messages escaped. For tests.
std::unique_ptr<spdlog::formatter> log_formatter(LogFormat format);
// spdlog's pattern formatter with the message escaped first: control bytes and invalid UTF-8 as
// \xNN, '\' as "\\". For tests.
std::unique_ptr<spdlog::formatter> escaping_formatter(const std::string& pattern);
// The sd-daemon(3) prefix of a level: "<7>" (trace, debug) ... "<2>" (critical).
std::string_view journal_priority(spdlog::level::level_enum level);

}  // namespace faultd
