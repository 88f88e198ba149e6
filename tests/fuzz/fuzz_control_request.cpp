// Fuzzes the control-socket protocol: one request line from a local client → handle_request
// (JSON parse, shape and field checks, the peer's authorization, the handler) → the reply line
// as the server writes it. Any local user who can reach the socket controls these bytes.
//
// The first byte picks the peer (root, a member of the control group, a stranger); the rest is
// the line. The handler stands in for the daemon's: it reads the fields the real one reads, in
// the way it reads them, and echoes them into its reply so that hostile text reaches the
// reply's serialisation too.
//
// Invariants: a stranger never reaches the handler; the handler only sees a JSON object with a
// "cmd" string and fields of the documented types; a `report` it lets through is a finding with
// faultd's own rule, level and code, a valid device and bounded evidence; the reply is one line
// of valid JSON with an "ok" boolean.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/control/control_access.hpp"
#include "daemon/control/report_request.hpp"
#include "daemon/core/json.hpp"
#include "tests/support/fuzz_support.hpp"

namespace {

constexpr gid_t kGroup = 4242;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace faultd::control;
  AccessPolicy policy;
  policy.daemon_uid = 0;
  policy.group = kGroup;
  policy.group_name = "faultd";
  PeerCredentials peer;
  switch (data[0] % 3) {
    case 0:
      peer.uid = 0;
      peer.gid = 0;
      break;
    case 1:
      peer.uid = 1000;
      peer.gid = 1000;
      peer.groups = {1000, kGroup};
      break;
    default:
      peer.uid = 1001;
      peer.gid = 1001;
      peer.groups = {1001};
      break;
  }
  const bool stranger = data[0] % 3 == 2;
  const std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);

  bool called = false;
  auto reply = handle_request(line, peer, policy, [&](const nlohmann::json& r) -> nlohmann::json {
    called = true;
    FAULTD_FUZZ_CHECK(r.is_object() && r.at("cmd").is_string());
    // What the daemon's handler does with the fields; a wrong type would throw here.
    const std::string device = r.value("device", "");
    const std::string reason = r.value("reason", "");
    const std::string since = r.value("since", "");
    const auto limit = r.value("limit", static_cast<size_t>(1000));
    FAULTD_FUZZ_CHECK(reason.size() <= kMaxReasonBytes);
    FAULTD_FUZZ_CHECK(limit <= kMaxEventsLimit);
    if (r["cmd"] == "boom") throw std::runtime_error("handler failed: " + device);
    if (r["cmd"] == "report") {
      // The daemon's own check: whatever it lets through is a finding faultd would write.
      const auto parsed = parse_report(r, faultd::TimePoint{});
      if (!parsed.finding) return {{"ok", false}, {"error", parsed.error}};
      const auto& f = *parsed.finding;
      FAULTD_FUZZ_CHECK(f.rule == kReplicaDivergenceRule && f.code == kReplicaDivergenceCode);
      FAULTD_FUZZ_CHECK(f.level == kReplicaDivergenceLevel);
      FAULTD_FUZZ_CHECK(faultd::is_valid_device_id(f.device));
      FAULTD_FUZZ_CHECK(f.text.size() <= faultd::kMaxEvidenceBytes);
      FAULTD_FUZZ_CHECK(f.annotations.size() <= 9 + kMaxReportMetrics);
      return {{"ok", true}, {"text", f.text}};
    }
    return {{"ok", true}, {"cmd", r["cmd"]}, {"device", device}, {"since", since}};
  });
  FAULTD_FUZZ_CHECK(!(stranger && called));
  const std::string out = faultd::dump_json(reply);
  FAULTD_FUZZ_CHECK(out.find('\n') == std::string::npos);
  const auto back = nlohmann::json::parse(out, nullptr, false);
  FAULTD_FUZZ_CHECK(!back.is_discarded() && back.is_object() && back.at("ok").is_boolean());
  return 0;
}
