#include <catch2/catch.hpp>

#include "daemon/control/control_access.hpp"

using namespace faultd::control;

namespace {

AccessPolicy policy() {
  AccessPolicy p;
  p.daemon_uid = 0;
  p.group = 4242;
  p.group_name = "faultd";
  return p;
}

PeerCredentials peer(uid_t uid, gid_t gid, std::vector<gid_t> groups = {}) {
  PeerCredentials p;
  p.uid = uid;
  p.gid = gid;
  p.groups = std::move(groups);
  return p;
}

struct Recorder {
  int calls = 0;
  Handler handler() {
    return [this](const nlohmann::json& r) -> nlohmann::json {
      ++calls;
      return {{"ok", true}, {"cmd", r["cmd"]}};
    };
  }
};

}  // namespace

TEST_CASE("control access: reads are status and events, everything else mutates",
          "[control][security]") {
  CHECK(access_for("status") == Access::Read);
  CHECK(access_for("events") == Access::Read);
  for (const char* cmd : {"isolate", "clear", "reload", "ack", "report", "something-new", ""}) {
    INFO(cmd);
    CHECK(access_for(cmd) == Access::Mutate);  // unknown commands are guarded, not open
  }
}

TEST_CASE("control access: root, the daemon's user and group members; nobody else",
          "[control][security]") {
  auto p = policy();
  p.daemon_uid = 999;
  for (auto access : {Access::Read, Access::Mutate}) {
    CHECK(p.allows(peer(0, 0), access));
    CHECK(p.allows(peer(999, 999), access));
    CHECK(p.allows(peer(1000, 4242), access));             // primary group
    CHECK(p.allows(peer(1000, 1000, {7, 4242}), access));  // supplementary group
    CHECK_FALSE(p.allows(peer(1000, 1000, {7, 100}), access));
  }
  p.group.reset();  // the configured group does not exist
  CHECK_FALSE(p.allows(peer(1000, 4242), Access::Read));
  CHECK(p.allows(peer(0, 0), Access::Mutate));
}

TEST_CASE("control access: a refused request never reaches the handler and says why",
          "[control][security]") {
  Recorder rec;
  const auto stranger = peer(1001, 1001, {1001});
  for (const char* line :
       {R"({"cmd":"status"})", R"({"cmd":"isolate","device":"3","reason":"x"})"}) {
    auto reply = handle_request(line, stranger, policy(), rec.handler());
    CHECK(reply["ok"] == false);
    CHECK_THAT(reply["error"].get<std::string>(),
               Catch::StartsWith("permission denied: '") &&
                   Catch::Contains("is for root or members of group 'faultd'"));
  }
  CHECK(rec.calls == 0);
  auto member = handle_request(R"({"cmd":"isolate","device":"3","reason":"x"})",
                               peer(1000, 1000, {4242}), policy(), rec.handler());
  CHECK(member["ok"] == true);
  CHECK(rec.calls == 1);
}

TEST_CASE("control access: malformed requests and fields of the wrong type are refused",
          "[control][security]") {
  Recorder rec;
  const auto root = peer(0, 0);
  struct Case {
    const char* line;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"not json", "not JSON"},
      {"[1,2]", "\"cmd\" string"},
      {R"({"cmd":3})", "\"cmd\" string"},
      {R"({"cmd":"isolate","device":3,"reason":"x"})", "isolate: device must be a string"},
      {R"({"cmd":"events","since":30})", "since must be a string"},
      {R"({"cmd":"events","limit":-1})", "limit must be a whole number"},
      {R"({"cmd":"events","limit":1.5})", "limit must be a whole number"},
      {R"({"cmd":"events","limit":100001})", "limit must be a whole number"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    auto reply = handle_request(c.line, root, policy(), rec.handler());
    CHECK(reply["ok"] == false);
    CHECK_THAT(reply["error"].get<std::string>(), Catch::Contains(c.error));
  }
  const std::string long_reason =
      R"({"cmd":"isolate","device":"3","reason":")" + std::string(kMaxReasonBytes + 1, 'r') + "\"}";
  auto reply = handle_request(long_reason, root, policy(), rec.handler());
  CHECK_THAT(reply["error"].get<std::string>(), Catch::Contains("reason is longer than 1024"));
  CHECK(rec.calls == 0);
  // The limits themselves pass.
  const std::string at_limit =
      R"({"cmd":"isolate","device":"3","reason":")" + std::string(kMaxReasonBytes, 'r') + "\"}";
  CHECK(handle_request(at_limit, root, policy(), rec.handler())["ok"] == true);
  CHECK(handle_request(R"({"cmd":"events","limit":100000})", root, policy(), rec.handler())["ok"] ==
        true);
  CHECK(rec.calls == 2);
}

TEST_CASE("control access: a handler's exception becomes an error reply", "[control]") {
  auto reply = handle_request(
      R"({"cmd":"status"})", peer(0, 0), policy(),
      [](const nlohmann::json&) -> nlohmann::json { throw std::runtime_error("store is gone"); });
  CHECK(reply["ok"] == false);
  CHECK(reply["error"] == "store is gone");
}
