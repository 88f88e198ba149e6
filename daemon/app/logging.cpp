#include "daemon/app/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace faultd {

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("faultd");
  if (std::getenv("JOURNAL_STREAM") != nullptr) {
    logger->set_pattern("[%l] %v");
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e [%l] %v");
  }
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace faultd
