#include "daemon/app/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "daemon/core/terminal_text.hpp"

namespace faultd {
namespace {

std::string escaped_payload(const spdlog::details::log_msg& msg) {
  return terminal_safe({msg.payload.data(), msg.payload.size()});
}

class EscapingFormatter final : public spdlog::formatter {
 public:
  explicit EscapingFormatter(std::unique_ptr<spdlog::formatter> inner) : inner_(std::move(inner)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string safe = escaped_payload(msg);
    spdlog::details::log_msg escaped(msg);
    escaped.payload = spdlog::string_view_t(safe.data(), safe.size());
    inner_->format(escaped, dest);
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<EscapingFormatter>(inner_->clone());
  }

 private:
  std::unique_ptr<spdlog::formatter> inner_;
};

// The sd-daemon priority, then the line as the inner formatter writes it.
class JournalFormatter final : public spdlog::formatter {
 public:
  explicit JournalFormatter(std::unique_ptr<spdlog::formatter> inner) : inner_(std::move(inner)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view prefix = journal_priority(msg.level);
    dest.append(prefix.data(), prefix.data() + prefix.size());
    inner_->format(msg, dest);
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JournalFormatter>(inner_->clone());
  }

 private:
  std::unique_ptr<spdlog::formatter> inner_;
};

// The fields a message states as a run of key=value words after its subject ("fault: rule=r
// device=3 level=L code=C at FILE:LINE"). Only the words right after the first ": " count and
// only these keys, the first of each: what follows (a file name, a tool's output) is chosen by
// others and must not add or change a field.
nlohmann::ordered_json message_fields(std::string_view text) {
  static constexpr std::array<std::string_view, 4> kKeys = {"rule", "device", "level", "code"};
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();
  const size_t subject = text.find(": ");
  if (subject == std::string_view::npos) return fields;
  text.remove_prefix(subject + 2);
  while (!text.empty()) {
    const std::string_view word = text.substr(0, text.find(' '));
    const size_t eq = word.find('=');
    if (eq == 0 || eq == std::string_view::npos || eq + 1 == word.size()) break;
    const std::string key(word.substr(0, eq));
    if (std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end() && !fields.contains(key)) {
      fields[key] = std::string(word.substr(eq + 1));
    }
    text.remove_prefix(std::min(text.size(), word.size() + 1));
  }
  return fields;
}

// "2026-01-01T00:00:00.123Z": UTC, so that lines from nodes in other zones sort together.
std::string utc_time(spdlog::log_clock::time_point t) {
  const auto since_epoch = t.time_since_epoch();
  const std::time_t secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf, n) + fmt::format(".{:03}Z", ms);
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string text = escaped_payload(msg);
    const auto level = spdlog::level::to_string_view(msg.level);
    nlohmann::ordered_json line = {{"time", utc_time(msg.time)},
                                   {"level", std::string(level.data(), level.size())},
                                   {"message", text}};
    if (auto fields = message_fields(text); !fields.empty()) line["fields"] = std::move(fields);
    // The text is UTF-8 once escaped; `replace` only so that no byte can make dump() throw.
    const std::string out = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(out.data(), out.data() + out.size());
    dest.push_back('\n');
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::string_view journal_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical:
      return SD_CRIT;
    case spdlog::level::err:
      return SD_ERR;
    case spdlog::level::warn:
      return SD_WARNING;
    case spdlog::level::info:
      return SD_INFO;
    default:
      return SD_DEBUG;
  }
}

std::unique_ptr<spdlog::formatter> escaping_formatter(const std::string& pattern) {
  return std::make_unique<EscapingFormatter>(std::make_unique<spdlog::pattern_formatter>(pattern));
}

std::unique_ptr<spdlog::formatter> log_formatter(LogFormat format) {
  switch (format) {
    case LogFormat::Journal:
      return std::make_unique<JournalFormatter>(escaping_formatter("[%l] %v"));
    case LogFormat::Json:
      return std::make_unique<JsonFormatter>();
    case LogFormat::Auto:
    case LogFormat::Text:
      break;
  }
  return escaping_formatter("%Y-%m-%dT%H:%M:%S.%e [%l] %v");
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  const std::string_view text(stream);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  const char* end = text.data() + text.size();
  if (std::from_chars(text.data(), text.data() + colon, dev).ec != std::errc() ||
      std::from_chars(text.data() + colon + 1, end, ino).ptr != end) {
    return false;
  }
  struct stat st {};
  return fstat(STDERR_FILENO, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

LogFormat resolve_log_format(LogFormat format, bool journal) {
  if (format != LogFormat::Auto) return format;
  return journal ? LogFormat::Journal : LogFormat::Text;
}

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("faultd");
  logger->set_formatter(log_formatter(resolve_log_format(LogFormat::Auto, stderr_is_journal())));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void apply_log_config(const LogConfig& cfg) {
  spdlog::set_level(spdlog::level::from_str(cfg.level));
  spdlog::default_logger()->set_formatter(
      log_formatter(resolve_log_format(cfg.format, stderr_is_journal())));
}

}  // namespace faultd
