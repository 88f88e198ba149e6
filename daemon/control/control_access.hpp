// Who may do what on the control socket, and the one function that turns a request line into a
// reply: parse, check the request's shape, check the peer may run that command, call the
// handler. Kept apart from the socket code so it is tested (and fuzzed) without sockets.
//
// The policy (docs/design.md §10): root, the daemon's own user and members of the
// configured group may run every command; anyone else is refused with a reply that says what
// is needed. Commands are classed as reads (status, events) or mutations (isolate, clear,
// reload, report, and any command this table does not know, so a new command is guarded until
// it is classified). The socket file's mode (0660, group as configured) keeps strangers out first;
// the peer credentials (SO_PEERCRED, SO_PEERGROUPS) are checked as well, because a mode can be
// loosened by hand or lost on a filesystem that ignores it, and because group membership is
// taken from the connecting process (the kernel's view), not from /etc/group.
//
// Lifecycle: plain values and pure functions. Threading: any thread; peer_credentials() reads
// the group database only when the kernel cannot report supplementary groups.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace faultd::control {

enum class Access { Read, Mutate };
Access access_for(std::string_view cmd);

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::vector<gid_t> groups;  // supplementary groups of the connecting process
};

// The credentials of the process at the other end of a connected Unix socket, as of its
// connect(); nullopt if the kernel would not say.
std::optional<PeerCredentials> peer_credentials(int fd);

struct AccessPolicy {
  uid_t daemon_uid = 0;
  std::optional<gid_t> group;  // the configured group, if it exists
  std::string group_name;      // for the refusal text

  // True when `peer` may run commands of this class.
  bool allows(const PeerCredentials& peer, Access access) const;
  // The reply for a peer that may not: names the command (empty: the whole socket) and what
  // would be needed.
  std::string refusal(std::string_view cmd) const;
};

using Handler = std::function<nlohmann::json(const nlohmann::json& request)>;

// One request line (without or with its '\n') → the reply object. Never throws: a line that is
// not a JSON object with a "cmd" string, a field of the wrong type, a refused peer or a handler
// that throws all become {"ok": false, "error": "..."}; the handler sees only requests that
// passed every check. `refused`, when given, is set when the peer may not run the command (the
// server counts it with the connections it refused).
nlohmann::json handle_request(std::string_view line, const PeerCredentials& peer,
                              const AccessPolicy& policy, const Handler& handler,
                              bool* refused = nullptr);

// Limits on request fields, so a client cannot make the daemon keep or scan without bound.
inline constexpr size_t kMaxReasonBytes = 1024;
inline constexpr uint64_t kMaxEventsLimit = 100'000;

}  // namespace faultd::control
