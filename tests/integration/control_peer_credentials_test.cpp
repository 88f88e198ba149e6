// The control socket's access control against real processes of other users: the test (root)
// forks clients that drop to another uid and gid (no user database entry is needed), connect
// through the real socket file and report what they got. The group is the system's `nogroup`,
// which exists on every Debian system and which nobody normally has.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "daemon/control/control_server.hpp"
#include "tests/support/serving_thread.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::TempDir;

namespace {

constexpr const char* kGroupName = "nogroup";

struct Identity {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
};

struct ClientResult {
  int connect_errno = 0;  // 0: connected
  std::string reply;      // the reply line, when connected
};

// Forks a client that takes `who`'s identity, connects to `path`, sends `request` and reads one
// line. The child only makes system calls (the parent has threads), and exits with _exit.
ClientResult run_client_as(const Identity& who, const std::string& path,
                           const std::string& request) {
  int pipefd[2];
  REQUIRE(::pipe2(pipefd, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    const int out = pipefd[1];
    auto report = [out](const char* tag, const char* data, size_t n) {
      (void)!::write(out, tag, 1);
      (void)!::write(out, data, n);
      ::_exit(0);
    };
    if (::setgroups(who.groups.size(), who.groups.data()) != 0 || ::setgid(who.gid) != 0 ||
        ::setuid(who.uid) != 0) {
      report("X", "", 0);
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      const int e = errno;
      report("E", reinterpret_cast<const char*>(&e), sizeof e);
    }
    // A refused client may find the connection closed already: no SIGPIPE, read the refusal.
    (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buf[4096];
    size_t got = 0;
    while (got < sizeof buf) {
      const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
      if (std::memchr(buf, '\n', got) != nullptr) break;
    }
    report("R", buf, got);
  }
  ::close(pipefd[1]);
  std::string from_child;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0)
    from_child.append(buf, static_cast<size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("client wait status " << status);
  REQUIRE(!from_child.empty());
  REQUIRE(from_child[0] != 'X');  // could not take the identity
  ClientResult r;
  if (from_child[0] == 'E') {
    std::memcpy(&r.connect_errno, from_child.data() + 1, sizeof r.connect_errno);
  } else {
    r.reply = from_child.substr(1);
  }
  return r;
}

struct Server {
  TempDir dir;
  boost::asio::io_context io;
  std::string path = dir.file("run/control.sock");
  std::atomic<int> handled{0};
  ControlServer server{io, path, kGroupName, [this](const nlohmann::json& r) -> nlohmann::json {
                         ++handled;
                         return {{"ok", true}, {"did", r["cmd"]}};
                       }};
  std::optional<faultd::testing::ServingThread<ControlServer>> serving;

  Server() {
    // Other users must be able to reach the socket's directory; the socket's mode is the gate.
    std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
    serving.emplace(io, server);
  }
};

bool can_switch_users() { return ::geteuid() == 0 && ::getgrnam(kGroupName) != nullptr; }

}  // namespace

TEST_CASE("control socket: group members may read and mutate, others are refused",
          "[control][security]") {
  if (!can_switch_users()) {
    WARN("needs root and group " << kGroupName << " to run clients as other users");
    return;
  }
  const gid_t group = ::getgrnam(kGroupName)->gr_gid;
  Server s;
  struct stat st {};
  REQUIRE(::stat(s.path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  CHECK(st.st_gid == group);

  SECTION("a member by primary group") {
    const Identity member{40001, group, {}};
    auto status = run_client_as(member, s.path, "{\"cmd\":\"status\"}\n");
    CHECK(status.connect_errno == 0);
    CHECK_THAT(status.reply, Catch::Contains("\"ok\":true"));
    auto isolate =
        run_client_as(member, s.path, "{\"cmd\":\"isolate\",\"device\":\"3\",\"reason\":\"r\"}\n");
    CHECK_THAT(isolate.reply, Catch::Contains("\"did\":\"isolate\""));
    CHECK(s.handled == 2);
  }
  SECTION("a member by a supplementary group only (as the kernel reports it)") {
    const Identity member{40002, 40002, {group}};
    auto reload = run_client_as(member, s.path, "{\"cmd\":\"reload\"}\n");
    CHECK(reload.connect_errno == 0);
    CHECK_THAT(reload.reply, Catch::Contains("\"did\":\"reload\""));
    CHECK(s.handled == 1);
  }
  SECTION("a stranger cannot even connect through the 0660 socket") {
    const Identity stranger{40003, 40003, {}};
    auto r = run_client_as(stranger, s.path, "{\"cmd\":\"status\"}\n");
    CHECK(r.connect_errno == EACCES);
    CHECK(s.handled == 0);
  }
  SECTION("a stranger who gets through a loosened mode is refused by its credentials") {
    // The mode is the first gate; chmod by hand, or a filesystem that ignores modes, must not
    // open the daemon to everyone.
    REQUIRE(::chmod(s.path.c_str(), 0666) == 0);
    const Identity stranger{40003, 40003, {}};
    for (const char* request : {"{\"cmd\":\"status\"}\n",
                                "{\"cmd\":\"isolate\",\"device\":\"3\","
                                "\"reason\":\"r\"}\n",
                                "{\"cmd\":\"clear\",\"device\":\"3\",\"reason\":\"r\"}\n",
                                "{\"cmd\":\"report\",\"check\":\"replica-divergence\","
                                "\"device\":\"3\"}\n"}) {
      INFO(request);
      auto r = run_client_as(stranger, s.path, request);
      CHECK(r.connect_errno == 0);
      CHECK_THAT(r.reply, Catch::Contains("\"ok\":false"));
      CHECK_THAT(r.reply, Catch::Contains("permission denied"));
      CHECK_THAT(r.reply, Catch::Contains(std::string("group '") + kGroupName + "'"));
    }
    CHECK(s.handled == 0);
  }
}

TEST_CASE("control socket: without a configured group only root and the daemon's user get in",
          "[control][security]") {
  if (!can_switch_users()) {
    WARN("needs root to run clients as other users");
    return;
  }
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  boost::asio::io_context io;
  const std::string path = dir.file("control.sock");
  int handled = 0;
  ControlServer server(io, path, "", [&](const nlohmann::json&) -> nlohmann::json {
    ++handled;
    return {{"ok", true}};
  });
  server.start();
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  std::thread t([&] {
    auto guard = boost::asio::make_work_guard(io);
    io.run();
  });
  auto r =
      run_client_as({40004, 40004, {static_cast<gid_t>(65534)}}, path, "{\"cmd\":\"status\"}\n");
  boost::asio::post(io, [&] {
    server.stop();
    io.stop();
  });
  t.join();
  CHECK_THAT(r.reply, Catch::Contains("permission denied: the control socket is for root"));
  CHECK(handled == 0);
}
