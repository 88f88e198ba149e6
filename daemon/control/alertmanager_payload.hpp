// The Alertmanager webhook payload (version "4", as documented for Alertmanager's
// webhook_config), turned into plain structs so that the code deciding what an alert means
// never touches JSON. The parser is strict about what faultd acts on (version, statuses, the
// alerts list, label and annotation values being strings) and tolerant of what it does not use
// (unknown fields, the group-level label maps), so a newer Alertmanager that adds fields keeps
// working while garbage is refused with a reason that names the offending field.
//
// Lifecycle: pure function, no state. Threading: any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace faultd {

struct WebhookAlert {
  std::string status;  // "firing" or "resolved"
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string starts_at;  // RFC 3339 text as sent, empty when absent
  std::string ends_at;
  std::string generator_url;
  std::string fingerprint;
};

struct WebhookBatch {
  std::string receiver;
  std::string status;  // of the group: "firing" if any alert fires, else "resolved"
  std::string group_key;
  std::string external_url;
  // Alerts Alertmanager left out because of its max_alerts setting: the batch is incomplete.
  uint64_t truncated_alerts = 0;
  std::vector<WebhookAlert> alerts;
};

// Deeper nesting than this is refused before it can cost stack or memory.
inline constexpr int kMaxPayloadDepth = 32;

// Returns the batch, or an error text naming what is wrong: not JSON, not an object, version
// missing or not "4", status not "firing"/"resolved", alerts missing or not a list, an alert that
// is not an object or lacks labels/status, a label or annotation value that is not a string, ...
std::variant<WebhookBatch, std::string> parse_alertmanager_payload(std::string_view body);

}  // namespace faultd
