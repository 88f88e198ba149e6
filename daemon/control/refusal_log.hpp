// Log lines about refused clients (a bad request, a connection over a limit, a timeout), at most
// `burst` per `interval`. A client refused thousands of times a second must not flood the
// journal: journald's rate limit would then drop faultd's own fault lines with them. Refusals past
// the burst are only counted, and summed up in one line ("webhook: 19199 more refusals in the
// last 60 s were not logged") when the interval ends. The servers' counters still count every
// refusal; this only decides what is written.
//
// Lifecycle: owned by a server; stop() writes a pending summary at once.
// Threading: io thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include <boost/asio/steady_timer.hpp>

namespace faultd {

class RefusalLog {
 public:
  static constexpr size_t kDefaultBurst = 10;
  static constexpr std::chrono::milliseconds kDefaultInterval{60'000};

  // `what` starts the summary line ("webhook", "control socket").
  RefusalLog(boost::asio::io_context& io, std::string what, size_t burst = kDefaultBurst,
             std::chrono::milliseconds interval = kDefaultInterval);

  // True when this refusal may be logged; false when the interval's burst is used up (it is then
  // counted for the summary).
  bool admit();
  void stop();

 private:
  void summarize();

  boost::asio::steady_timer timer_;
  std::string what_;
  size_t burst_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point window_end_{};
  size_t logged_ = 0;
  size_t suppressed_ = 0;
};

}  // namespace faultd
