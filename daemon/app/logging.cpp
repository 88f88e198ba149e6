#include "daemon/app/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

#include "daemon/core/terminal_text.hpp"

namespace faultd {
namespace {

class EscapingFormatter final : public spdlog::formatter {
 public:
  explicit EscapingFormatter(std::unique_ptr<spdlog::formatter> inner) : inner_(std::move(inner)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string safe = terminal_safe({msg.payload.data(), msg.payload.size()});
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

}  // namespace

std::unique_ptr<spdlog::formatter> escaping_formatter(const std::string& pattern) {
  return std::make_unique<EscapingFormatter>(std::make_unique<spdlog::pattern_formatter>(pattern));
}

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("faultd");
  logger->set_formatter(escaping_formatter(
      std::getenv("JOURNAL_STREAM") != nullptr ? "[%l] %v" : "%Y-%m-%dT%H:%M:%S.%e [%l] %v"));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace faultd
