// The control socket that `faultctl` talks to: a Unix stream socket (mode 0660, group as
// configured) speaking JSON lines (daemon/control/protocol.hpp). The peer's credentials are
// checked on accept (SO_PEERCRED): root, the daemon's own user, or a member of the configured
// group; anyone else gets an error and the connection is closed.
//
// Lifecycle: start() binds (replacing a stale socket file), stop() closes and unlinks.
// Threading: io thread only; the handler runs on the io thread, so it may touch daemon state.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace boost::asio {
class io_context;
}

namespace faultd {

class ControlServer {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

  // `group` empty or unknown: only root and the daemon's user may connect.
  ControlServer(boost::asio::io_context& io, std::string path, std::string group, Handler handler);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void start();  // throws std::runtime_error naming the path and the cause
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace faultd
