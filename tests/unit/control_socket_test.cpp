#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <cstring>
#include <functional>
#include <thread>

#include "daemon/control/control_client.hpp"
#include "daemon/control/control_server.hpp"
#include "tests/support/serving_thread.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::ServingThread;
using faultd::testing::TempDir;

namespace {

// The server on its own io thread, as in the daemon; the client blocks like faultctl does.
struct Server {
  explicit Server(ControlLimits l = {}) : limits(l) {}
  ControlLimits limits;
  TempDir dir;
  boost::asio::io_context io;
  std::string path = dir.file("run/control.sock");
  std::vector<nlohmann::json> seen;
  ControlServer server{io, path, "",
                       [this](const nlohmann::json& r) -> nlohmann::json {
                         seen.push_back(r);
                         if (r["cmd"] == "boom") throw std::runtime_error("handler failed");
                         return {{"ok", true}, {"echo", r["cmd"]}};
                       },
                       limits};
  ServingThread<ControlServer> serving{io, server};
};

// A client that keeps its connection open between requests (faultctl does not).
class Session {
 public:
  explicit Session(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~Session() { ::close(fd_); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The reply line, or "" if the server closed the connection or gave no reply within 5 s.
  std::string ask(const std::string& request) {
    const std::string line = request + "\n";
    if (::send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
      return "";
    }
    std::string in;
    while (in.find('\n') == std::string::npos) {
      if (read_some(in, 5000) <= 0) return "";
    }
    return in.substr(0, in.find('\n'));
  }
  // True if the server closed the connection within `timeout`.
  bool closed_within(std::chrono::milliseconds timeout) {
    std::string ignored;
    return read_some(ignored, static_cast<int>(timeout.count())) < 0;
  }

 private:
  // >0 bytes read, 0 nothing within the timeout, <0 closed.
  int read_some(std::string& in, int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return 0;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    in.append(buf, static_cast<size_t>(n));
    return 1;
  }

  int fd_ = -1;
};

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST_CASE("the control socket answers one JSON line per request", "[control]") {
  Server s;
  auto r = control_call(s.path, {{"cmd", "status"}}, 5s);
  REQUIRE(r.status == ControlReply::Status::Ok);
  CHECK(r.body["ok"] == true);
  CHECK(r.body["echo"] == "status");
}

TEST_CASE("the control socket is a 0660 socket and replaces a stale one", "[control]") {
  Server s;
  struct stat st {};
  REQUIRE(::stat(s.path.c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 0777) == 0660);
  // A second server on the same path (the first was killed): it takes over the socket file.
  boost::asio::io_context io2;
  ControlServer second(io2, s.path, "", [](const nlohmann::json&) { return nlohmann::json{}; });
  CHECK_NOTHROW(second.start());
  second.stop();
}

TEST_CASE("a regular file at the socket path is not deleted", "[control]") {
  TempDir dir;
  const std::string path = dir.write("not-a-socket", "precious");
  boost::asio::io_context io;
  ControlServer server(io, path, "", [](const nlohmann::json&) { return nlohmann::json{}; });
  CHECK_THROWS_WITH(server.start(), Catch::Contains("not a socket"));
  CHECK(std::filesystem::exists(path));
}

TEST_CASE("bad requests get an error reply and the server keeps serving", "[control]") {
  Server s;
  auto no_cmd = control_call(s.path, {{"hello", 1}}, 5s);
  REQUIRE(no_cmd.status == ControlReply::Status::Ok);
  CHECK(no_cmd.body["ok"] == false);
  CHECK_THAT(no_cmd.body["error"].get<std::string>(), Catch::Contains("cmd"));
  auto boom = control_call(s.path, {{"cmd", "boom"}}, 5s);
  REQUIRE(boom.status == ControlReply::Status::Ok);
  CHECK(boom.body["ok"] == false);
  CHECK(boom.body["error"] == "handler failed");
  // Over the size limit: the connection is dropped, the server lives on.
  auto huge = control_call(s.path, {{"cmd", std::string(size_t{200} * 1024, 'x')}}, 5s);
  CHECK(huge.status == ControlReply::Status::Failed);
  auto after = control_call(s.path, {{"cmd", "status"}}, 5s);
  REQUIRE(after.status == ControlReply::Status::Ok);
  CHECK(after.body["ok"] == true);
}

TEST_CASE("a missing daemon is reported as unreachable", "[control]") {
  TempDir dir;
  auto r = control_call(dir.file("none.sock"), {{"cmd", "status"}}, 1s);
  CHECK(r.status == ControlReply::Status::Unreachable);
  CHECK_THAT(r.error, Catch::Contains("is faultd running?"));
}

TEST_CASE(
    "the control socket serves at most max_sessions at once; one more is told why "
    "(security audit F24)",
    "[control]") {
  Server s(ControlLimits{std::chrono::minutes(1), 3});
  std::vector<std::unique_ptr<Session>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Session>(s.path));
    REQUIRE(held.back()->ask(R"({"cmd":"status"})") == R"({"echo":"status","ok":true})");
  }
  auto refused = control_call(s.path, {{"cmd", "status"}}, 5s);
  REQUIRE(refused.status == ControlReply::Status::Ok);
  CHECK(refused.body["ok"] == false);
  CHECK_THAT(refused.body["error"].get<std::string>(),
             Catch::Contains("too many control connections (3 open)"));
  CHECK(s.server.stats()->over_capacity == 1);
  // The sessions held still work; once one closes, a new client gets its slot.
  CHECK(held[0]->ask(R"({"cmd":"budget"})") == R"({"echo":"budget","ok":true})");
  held.pop_back();
  CHECK(eventually([&] {
    auto r = control_call(s.path, {{"cmd", "status"}}, 5s);
    return r.status == ControlReply::Status::Ok && r.body["ok"] == true;
  }));
}

TEST_CASE("an idle control session is closed after idle_timeout (security audit F24)",
          "[control]") {
  Server s(ControlLimits{std::chrono::milliseconds(100), 32});
  Session after_a_request(s.path);
  REQUIRE(after_a_request.ask(R"({"cmd":"status"})") == R"({"echo":"status","ok":true})");
  Session silent(s.path);
  CHECK(after_a_request.closed_within(10s));
  CHECK(silent.closed_within(10s));
  CHECK(eventually([&] { return s.server.stats()->idle_timeout == 2; }));
  // The slots are free again.
  auto r = control_call(s.path, {{"cmd", "status"}}, 5s);
  REQUIRE(r.status == ControlReply::Status::Ok);
  CHECK(r.body["ok"] == true);
}

TEST_CASE("a refusal sent before the request was read still reaches the client", "[control]") {
  // A server that answers at once and closes without reading, as faultd does with a client it
  // refuses; the request is too large for the socket's buffers, so sending it fails.
  TempDir dir;
  const std::string path = dir.file("refusing.sock");
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  std::thread refuser([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    const std::string refusal = R"({"error":"too many control connections","ok":false})"
                                "\n";
    (void)!::send(c, refusal.data(), refusal.size(), MSG_NOSIGNAL);
    ::close(c);
  });
  auto r = control_call(path, {{"cmd", std::string(size_t{4} * 1024 * 1024, 'x')}}, 5s);
  refuser.join();
  ::close(listener);
  REQUIRE(r.status == ControlReply::Status::Ok);
  CHECK(r.body["ok"] == false);
  CHECK(r.body["error"] == "too many control connections");
}
