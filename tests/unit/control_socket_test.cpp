#include <catch2/catch.hpp>

#include <boost/asio.hpp>
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
  TempDir dir;
  boost::asio::io_context io;
  std::string path = dir.file("run/control.sock");
  std::vector<nlohmann::json> seen;
  ControlServer server{io, path, "", [this](const nlohmann::json& r) -> nlohmann::json {
                         seen.push_back(r);
                         if (r["cmd"] == "boom") throw std::runtime_error("handler failed");
                         return {{"ok", true}, {"echo", r["cmd"]}};
                       }};
  ServingThread<ControlServer> serving{io, server};
};

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
  auto huge = control_call(s.path, {{"cmd", std::string(200 * 1024, 'x')}}, 5s);
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
