#include "daemon/control/control_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/control/protocol.hpp"
#include "daemon/core/json.hpp"

namespace faultd {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

}  // namespace

ControlReply control_call(const std::string& socket_path, const nlohmann::json& request,
                          std::chrono::milliseconds timeout) {
  ControlReply reply;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    reply.status = ControlReply::Status::Unreachable;
    reply.error = socket_path + ": socket path too long";
    return reply;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0 || ::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    reply.status = ControlReply::Status::Unreachable;
    reply.error = socket_path + ": " + std::strerror(errno) + " (is faultd running?)";
    return reply;
  }
  const std::string line = dump_json(request) + "\n";
  size_t sent = 0;
  std::string send_error;
  while (sent < line.size()) {
    const ssize_t n = ::send(s.fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // faultd may have refused the connection (a full session table, a peer without access)
      // and closed it before reading: its answer is still there to read.
      send_error = std::string("send: ") + std::strerror(errno);
      break;
    }
    sent += static_cast<size_t>(n);
  }
  std::string in;
  char buf[65536];
  while (in.find('\n') == std::string::npos) {
    pollfd p{s.fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      reply.error = "no reply from faultd within " + std::to_string(timeout.count()) + " ms";
      return reply;
    }
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reply.error = send_error.empty() ? "faultd closed the connection" : send_error;
      return reply;
    }
    in.append(buf, static_cast<size_t>(n));
  }
  try {
    reply.body = nlohmann::json::parse(in.substr(0, in.find('\n')));
  } catch (const nlohmann::json::exception& e) {
    reply.error = std::string("reply is not JSON: ") + e.what();
    return reply;
  }
  reply.status = ControlReply::Status::Ok;
  return reply;
}

}  // namespace faultd
