// faultd's own log: whatever a message carries (a file name a job chose, a webhook label), the
// record stays one line of printable text (security audit F17).
#include <catch2/catch.hpp>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "daemon/app/logging.hpp"
#include "daemon/core/terminal_text.hpp"

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

// What the logger writes for `message` at `level` in `format`.
std::string logged_as(LogFormat format, spdlog::level::level_enum level, std::string_view message) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_level(spdlog::level::trace);
  logger.set_formatter(log_formatter(format));
  logger.log(level, "{}", message);
  return out.str();
}

nlohmann::json json_line(const std::string& line) {
  REQUIRE(!line.empty());
  REQUIRE(line.back() == '\n');
  REQUIRE(std::count(line.begin(), line.end(), '\n') == 1);
  return nlohmann::json::parse(line);
}

// Sets JOURNAL_STREAM for one scope, as systemd does for a service's stdout and stderr.
class JournalStream {
 public:
  explicit JournalStream(const std::string& value) {
    if (const char* old = std::getenv("JOURNAL_STREAM")) old_ = old;
    setenv("JOURNAL_STREAM", value.c_str(), 1);
  }
  JournalStream(const JournalStream&) = delete;
  JournalStream& operator=(const JournalStream&) = delete;
  ~JournalStream() {
    if (old_) {
      setenv("JOURNAL_STREAM", old_->c_str(), 1);
    } else {
      unsetenv("JOURNAL_STREAM");
    }
  }

 private:
  std::optional<std::string> old_;
};

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

TEST_CASE("journal: each line starts with the sd-daemon priority of its level", "[app][logging]") {
  using spdlog::level::level_enum;
  const std::vector<std::pair<level_enum, std::string>> expected = {
      {level_enum::trace, "<7>[trace] m\n"}, {level_enum::debug, "<7>[debug] m\n"},
      {level_enum::info, "<6>[info] m\n"},   {level_enum::warn, "<4>[warning] m\n"},
      {level_enum::err, "<3>[error] m\n"},   {level_enum::critical, "<2>[critical] m\n"}};
  for (const auto& [level, line] : expected) {
    CHECK(logged_as(LogFormat::Journal, level, "m") == line);
  }
}

TEST_CASE("journal: a message cannot forge a priority or a second entry", "[app][logging]") {
  const std::string line =
      logged_as(LogFormat::Journal, spdlog::level::info, "x\n<3>[error] forged\r\x1b[2K");
  CHECK(line == "<6>[info] x\\x0a<3>[error] forged\\x0d\\x1b[2K\n");
}

TEST_CASE("text: a timestamp, the level and the message", "[app][logging]") {
  const std::string line = logged_as(LogFormat::Text, spdlog::level::warn, "m\x1b");
  CHECK(line.find('<') == std::string::npos);
  CHECK(line.size() == std::string("2026-01-01T00:00:00.000 [warning] m\\x1b\n").size());
  CHECK(line.substr(23) == " [warning] m\\x1b\n");
}

TEST_CASE("json: one valid object a line whatever bytes the message holds", "[app][logging]") {
  std::string hostile;
  for (int b = 0; b < 256; ++b) hostile.push_back(static_cast<char>(b));
  hostile +=
      "\"}\n{\"level\":\"critical\",\"message\":\"forged\"}\xc3\x28\xf0\x9f\x98\x80\xed\xa0\x80";
  const std::string line = logged_as(LogFormat::Json, spdlog::level::warn, hostile);
  const auto j = json_line(line);
  CHECK(j.size() == 3);
  CHECK(j.at("level") == "warning");
  // The message as the text formats have it: escaped, so the same line greps the same way.
  CHECK(j.at("message") == terminal_safe(hostile));
  CHECK(std::none_of(line.begin(), line.end() - 1,
                     [](char c) { return static_cast<unsigned char>(c) < 0x20; }));
  const std::string time = j.at("time");
  CHECK(time.size() == std::string("2026-01-01T00:00:00.000Z").size());
  CHECK(time[10] == 'T');
  CHECK(time.back() == 'Z');
}

TEST_CASE("json: a fault line's fields, which a file name cannot add to or change",
          "[app][logging]") {
  const auto j = json_line(
      logged_as(LogFormat::Json, spdlog::level::warn,
                "fault: rule=hccl.timeout device=3 level=RestartRequest code=0x8C0A at /logs/a "
                "rule=forged job=x device=9.log:12"));
  CHECK(j.at("fields") == nlohmann::json{{"rule", "hccl.timeout"},
                                         {"device", "3"},
                                         {"level", "RestartRequest"},
                                         {"code", "0x8C0A"}});
  CHECK(j.at("level") == "warning");

  // No key=value run right after the subject: no fields, even if the text holds some later.
  CHECK_FALSE(json_line(logged_as(LogFormat::Json, spdlog::level::warn,
                                  "finding for device 3 ignored: not here (rule=r at f:1)"))
                  .contains("fields"));
  CHECK_FALSE(
      json_line(logged_as(LogFormat::Json, spdlog::level::info, "ready")).contains("fields"));
  // An escaped newline in a value stays inside the value.
  CHECK(json_line(logged_as(LogFormat::Json, spdlog::level::info, "shadow: rule=a\nb=c device=1"))
            .at("fields") == nlohmann::json{{"rule", "a\\x0ab=c"}, {"device", "1"}});
}

TEST_CASE("auto is journal when JOURNAL_STREAM names stderr, text otherwise", "[app][logging]") {
  CHECK(resolve_log_format(LogFormat::Auto, true) == LogFormat::Journal);
  CHECK(resolve_log_format(LogFormat::Auto, false) == LogFormat::Text);
  for (const auto format : {LogFormat::Text, LogFormat::Journal, LogFormat::Json}) {
    CHECK(resolve_log_format(format, true) == format);
    CHECK(resolve_log_format(format, false) == format);
  }

  struct stat st {};
  REQUIRE(fstat(STDERR_FILENO, &st) == 0);
  const std::string dev = std::to_string(st.st_dev);
  const std::string ino = std::to_string(st.st_ino);
  {
    JournalStream env(dev + ":" + ino);
    CHECK(stderr_is_journal());
  }
  // Set for another stream (stderr redirected by a wrapper), or unreadable: not the journal.
  for (const auto& other : {dev + ":" + std::to_string(st.st_ino + 1), dev + ":" + ino + "x",
                            dev + ino, std::string(""), std::string(":")}) {
    JournalStream env(other);
    CHECK_FALSE(stderr_is_journal());
  }
}
