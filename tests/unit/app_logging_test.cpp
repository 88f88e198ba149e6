// faultd's own log: whatever a message carries (a file name a job chose, a webhook label), the
// record stays one line of printable text (security audit F17).
#include <catch2/catch.hpp>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <sstream>

#include "daemon/app/logging.hpp"

using namespace faultd;

namespace {

// What faultd's logger writes for one message, with the daemon's formatter and `pattern`.
std::string logged(std::string_view message, const std::string& pattern = "[%l] %v") {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(escaping_formatter(pattern));
  logger.warn("fault: rule=r device=7 at {}:{}", message, 3);
  return out.str();
}

}  // namespace

TEST_CASE("a file name with a newline and terminal escapes cannot forge a log record",
          "[app][logging]") {
  const std::string name =
      "/logs/x\x1b]0;pwned\a\n[2026-01-01 00:00:00] [warning] fault: rule=forged.rule device=5 "
      "\x1b[2K\r.log";
  const std::string line = logged(name);
  CHECK(line ==
        "[warning] fault: rule=r device=7 at /logs/x\\x1b]0;pwned\\x07\\x0a[2026-01-01 00:00:00] "
        "[warning] fault: rule=forged.rule device=5 \\x1b[2K\\x0d.log:3\n");
  // One record: a single newline, the pattern's own, and no control byte anywhere.
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  CHECK(std::none_of(line.begin(), line.end() - 1,
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }));
}

TEST_CASE("a backslash is doubled so that an escape cannot be forged either", "[app][logging]") {
  CHECK(logged("a\\x0ab") == "[warning] fault: rule=r device=7 at a\\\\x0ab:3\n");
}

TEST_CASE("UTF-8 names are kept, bytes that are not UTF-8 and C1 controls are escaped",
          "[app][logging]") {
  CHECK(logged("/logs/训练-ü.log") == "[warning] fault: rule=r device=7 at /logs/训练-ü.log:3\n");
  CHECK(logged("a\xff\xc2\x9b"
               "b") == "[warning] fault: rule=r device=7 at a\\xff\\xc2\\x9bb:3\n");
}

TEST_CASE("the pattern's own parts (time, level) are kept as they are", "[app][logging]") {
  const std::string line = logged("x", "%Y-%m-%dT%H:%M:%S [%l] %v");
  CHECK(line.size() > 20);
  CHECK(line.find(" [warning] fault: rule=r device=7 at x:3\n") != std::string::npos);
}
