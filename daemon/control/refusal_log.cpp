#include "daemon/control/refusal_log.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/io_context.hpp>

#include "daemon/core/types.hpp"

namespace faultd {

RefusalLog::RefusalLog(boost::asio::io_context& io, std::string what, size_t burst,
                       std::chrono::milliseconds interval)
    : timer_(io), what_(std::move(what)), burst_(burst), interval_(interval) {}

bool RefusalLog::admit() {
  const auto now = std::chrono::steady_clock::now();
  // While refusals are held back, the window ends with the timer that sums them up.
  if (suppressed_ == 0 && now >= window_end_) {
    window_end_ = now + interval_;
    logged_ = 0;
  }
  if (logged_ < burst_) {
    ++logged_;
    return true;
  }
  if (suppressed_++ == 0) {
    timer_.expires_at(window_end_);
    timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) summarize();
    });
  }
  return false;
}

void RefusalLog::stop() {
  timer_.cancel();
  summarize();
}

void RefusalLog::summarize() {
  if (suppressed_ > 0) {
    spdlog::warn("{}: {} more refusal(s) in the last {} were not logged", what_, suppressed_,
                 format_duration(interval_));
  }
  suppressed_ = 0;
  logged_ = 0;
  window_end_ = {};
}

}  // namespace faultd
