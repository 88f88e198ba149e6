// The control socket that `faultctl` talks to: a Unix stream socket (mode 0660, group as
// configured) speaking JSON lines (daemon/control/protocol.hpp). The peer's credentials are
// checked on accept (SO_PEERCRED): root, the daemon's own user, or a member of the configured
// group; anyone else gets an error and the connection is closed. Each command is checked again
// by its class (control_access.hpp).
//
// Sessions are bounded like the descriptors they use, which are shared with hooks and SQLite:
// at most max_sessions at once (one more is told why and closed), and a session that waits
// longer than idle_timeout for its next request, or for its client to read a reply, is closed.
// Refusals are counted and logged at most 10 a minute (RefusalLog).
//
// Lifecycle: start() binds (replacing a stale socket file), stop() closes and unlinks.
// Threading: io thread only; the handler runs on the io thread, so it may touch daemon state.
// The stats are atomics so the metrics exporter's threads can read them.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace boost::asio {
class io_context;
}

namespace faultd {

struct ControlLimits {
  std::chrono::milliseconds idle_timeout{60'000};
  size_t max_sessions = 32;
};

// Connections refused or closed, for faultd_control_refusals_total{reason=...}.
struct ControlStats {
  // Not root, not the daemon's user, not in the group: connections, and commands of a class
  // the peer may not run.
  std::atomic<uint64_t> permission{0};
  std::atomic<uint64_t> over_capacity{0};  // max_sessions already open
  std::atomic<uint64_t> idle_timeout{0};   // closed after idle_timeout without a request

  // (reason, count) for every counter above, in this order: "permission", "over_capacity",
  // "idle_timeout".
  std::vector<std::pair<std::string_view, uint64_t>> counts() const;
};

class ControlServer {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  // `group` empty or unknown: only root and the daemon's user may connect.
  ControlServer(boost::asio::io_context& io, std::string path, std::string group, Handler handler,
                ControlLimits limits = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();  // throws std::runtime_error naming the path and the cause
  void stop();

  // Shared so an exporter may keep reading it after the server is gone.
  std::shared_ptr<const ControlStats> stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace faultd
