#include "daemon/control/control_access.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <limits>

namespace faultd::control {

namespace {

constexpr std::array<std::string_view, 5> kReadCommands = {"status", "events", "history",
                                                           "incidents", "budget"};

// Every field a known command reads, with the JSON type it must have; the handler can then
// read them without type errors. Unknown fields are tolerated (newer faultctl, older daemon).
struct FieldRule {
  const char* name;
  nlohmann::json::value_t type;
};
bool is_type(const nlohmann::json& v, nlohmann::json::value_t type) {
  if (type == nlohmann::json::value_t::number_unsigned) return v.is_number_unsigned();
  return v.type() == type;
}

std::string check_fields(const nlohmann::json& request) {
  using T = nlohmann::json::value_t;
  static const std::vector<FieldRule> string_fields = {
      {"device", T::string}, {"reason", T::string}, {"since", T::string}};
  for (const auto& rule : string_fields) {
    auto it = request.find(rule.name);
    if (it != request.end() && !is_type(*it, rule.type)) {
      return std::string(rule.name) + " must be a string";
    }
  }
  for (const char* name : {"all", "verbose", "faults", "actions", "transitions", "incidents"}) {
    if (auto it = request.find(name); it != request.end() && !it->is_boolean()) {
      return std::string(name) + " must be true or false";
    }
  }
  for (const char* name : {"before", "actions_before", "incidents_before"}) {
    auto it = request.find(name);
    if (it != request.end() &&
        (!it->is_number_unsigned() ||
         it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))) {
      return std::string(name) + " must be a journal id";
    }
  }
  if (auto it = request.find("limit"); it != request.end()) {
    if (!it->is_number_unsigned() || it->get<uint64_t>() > kMaxEventsLimit) {
      return "limit must be a whole number from 0 to " + std::to_string(kMaxEventsLimit);
    }
  }
  if (auto it = request.find("reason");
      it != request.end() && it->get_ref<const std::string&>().size() > kMaxReasonBytes) {
    return "reason is longer than " + std::to_string(kMaxReasonBytes) + " bytes";
  }
  return {};
}

nlohmann::json error_reply(std::string message) {
  return {{"ok", false}, {"error", std::move(message)}};
}

}  // namespace

Access access_for(std::string_view cmd) {
  return std::find(kReadCommands.begin(), kReadCommands.end(), cmd) != kReadCommands.end()
             ? Access::Read
             : Access::Mutate;
}

std::optional<PeerCredentials> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  PeerCredentials peer;
  peer.pid = cred.pid;
  peer.uid = cred.uid;
  peer.gid = cred.gid;
  // The peer's supplementary groups as the kernel recorded them at connect (Linux 4.13+).
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) == 0) {
      groups.resize(glen / sizeof(gid_t));
      peer.groups = std::move(groups);
      return peer;
    }
    if (errno != ERANGE) break;
    groups.resize(glen / sizeof(gid_t) + 1);
  }
  // Older kernels: the groups the group database gives the peer's user. A process that has
  // dropped a group may be let in where the kernel would have said no; that is the price of an
  // old kernel, and the socket's mode still applies.
  if (passwd* pw = getpwuid(cred.uid)) {
    int n = 64;
    std::vector<gid_t> db(static_cast<size_t>(n));
    if (getgrouplist(pw->pw_name, cred.gid, db.data(), &n) < 0) {
      db.resize(static_cast<size_t>(n));
      getgrouplist(pw->pw_name, cred.gid, db.data(), &n);
    }
    db.resize(static_cast<size_t>(std::max(n, 0)));
    peer.groups = std::move(db);
  }
  return peer;
}

bool AccessPolicy::allows(const PeerCredentials& peer, Access access) const {
  // Reads and mutations need the same today; the class is kept so a read-only group can be
  // added without touching the dispatch.
  (void)access;
  if (peer.uid == 0 || peer.uid == daemon_uid) return true;
  if (!group) return false;
  if (peer.gid == *group) return true;
  return std::find(peer.groups.begin(), peer.groups.end(), *group) != peer.groups.end();
}

std::string AccessPolicy::refusal(std::string_view cmd) const {
  constexpr size_t kShownCommand = 64;  // the client wrote it; echo no more than a name's worth
  if (cmd.size() > kShownCommand) cmd = cmd.substr(0, kShownCommand);
  std::string who = "root";
  if (group) who += " or members of group '" + group_name + "'";
  if (cmd.empty()) return "permission denied: the control socket is for " + who;
  return "permission denied: '" + std::string(cmd) + "' is for " + who;
}

nlohmann::json handle_request(std::string_view line, const PeerCredentials& peer,
                              const AccessPolicy& policy, const Handler& handler, bool* refused) {
  nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return error_reply("request is not JSON");
  if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string()) {
    return error_reply("request needs a \"cmd\" string");
  }
  const std::string cmd = request["cmd"].get<std::string>();
  if (!policy.allows(peer, access_for(cmd))) {
    if (refused != nullptr) *refused = true;
    return error_reply(policy.refusal(cmd));
  }
  if (std::string problem = check_fields(request); !problem.empty()) {
    return error_reply(cmd + ": " + problem);
  }
  try {
    return handler(request);
  } catch (const std::exception& e) {
    return error_reply(e.what());
  }
}

}  // namespace faultd::control
