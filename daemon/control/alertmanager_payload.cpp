#include "daemon/control/alertmanager_payload.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

namespace faultd {

namespace {

using nlohmann::json;

// Thrown from the parser callback to stop at the first level too deep; caught below.
struct TooDeep : std::runtime_error {
  TooDeep() : std::runtime_error("too deep") {}
};

// Error texts go back to the client and into the log. nlohmann quotes the token it was reading
// ("last read: '...'"), which for a string is everything since its opening quote: cap it, and
// keep only printable ASCII so that neither the JSON reply nor the log line can be broken.
std::string printable(std::string_view text, size_t max_chars = 160) {
  std::string out;
  for (char c : text.substr(0, max_chars)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

// nlohmann prefixes its messages with "[json.exception.parse_error.101] ": an operator needs
// the part after it.
std::string parse_error_text(const json::exception& e) {
  std::string_view what = e.what();
  if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
  return printable(what);
}

struct Parser {
  std::string error;

  bool fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }

  // Absent or null: empty. Anything but a string: an error naming the field.
  bool optional_string(const json& obj, const char* key, const std::string& where,
                       std::string& out) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return true;
    if (!it->is_string()) return fail(where + key + ": must be a string");
    out = it->get<std::string>();
    return true;
  }

  bool status(const json& obj, const std::string& where, std::string& out) {
    auto it = obj.find("status");
    if (it == obj.end()) return fail(where + "status: missing");
    if (!it->is_string() || (*it != "firing" && *it != "resolved")) {
      return fail(where + "status: must be \"firing\" or \"resolved\"");
    }
    out = it->get<std::string>();
    return true;
  }

  bool string_map(const json& obj, const char* key, bool required, const std::string& where,
                  std::map<std::string, std::string>& out) {
    auto it = obj.find(key);
    if (it == obj.end() || (!required && it->is_null())) {
      return required ? fail(where + key + ": missing") : true;
    }
    if (!it->is_object()) return fail(where + key + ": must be an object");
    for (const auto& [name, value] : it->items()) {
      if (!value.is_string()) {
        return fail(where + key + "." + printable(name, 64) + ": value must be a string");
      }
      out.emplace(name, value.get<std::string>());
    }
    return true;
  }

  bool alert(const json& a, size_t index, WebhookAlert& out) {
    const std::string where = "alerts[" + std::to_string(index) + "].";
    if (!a.is_object()) return fail("alerts[" + std::to_string(index) + "]: must be an object");
    return status(a, where, out.status) && string_map(a, "labels", true, where, out.labels) &&
           string_map(a, "annotations", false, where, out.annotations) &&
           optional_string(a, "startsAt", where, out.starts_at) &&
           optional_string(a, "endsAt", where, out.ends_at) &&
           optional_string(a, "generatorURL", where, out.generator_url) &&
           optional_string(a, "fingerprint", where, out.fingerprint);
  }

  bool truncated(const json& doc, uint64_t& out) {
    auto it = doc.find("truncatedAlerts");
    if (it == doc.end() || it->is_null()) return true;
    if (!it->is_number_unsigned()) return fail("truncatedAlerts: must be a non-negative integer");
    out = it->get<uint64_t>();
    return true;
  }

  bool version(const json& doc) {
    auto it = doc.find("version");
    if (it == doc.end()) return fail("version: missing (expected \"4\")");
    if (!it->is_string()) {
      return fail(std::string("version: must be the string \"4\", not ") + it->type_name());
    }
    if (*it != "4") {
      return fail("version: \"" + printable(it->get<std::string>(), 16) +
                  "\" is not supported (expected \"4\")");
    }
    return true;
  }

  bool batch(const json& doc, WebhookBatch& out) {
    if (!doc.is_object()) return fail("payload must be a JSON object");
    if (!version(doc) || !status(doc, "", out.status) ||
        !optional_string(doc, "receiver", "", out.receiver) ||
        !optional_string(doc, "groupKey", "", out.group_key) ||
        !optional_string(doc, "externalURL", "", out.external_url) ||
        !truncated(doc, out.truncated_alerts)) {
      return false;
    }
    auto alerts = doc.find("alerts");
    if (alerts == doc.end()) return fail("alerts: missing");
    if (!alerts->is_array()) return fail("alerts: must be a list");
    out.alerts.reserve(alerts->size());
    for (size_t i = 0; i < alerts->size(); ++i) {
      if (!alert((*alerts)[i], i, out.alerts.emplace_back())) return false;
    }
    return true;
  }
};

std::optional<json> parse_json(std::string_view body, std::string& error) {
  // The callback sees every container as it opens, so a 1 MiB "[[[[..." is refused at depth
  // kMaxPayloadDepth instead of building (and later recursively destroying) a million levels.
  auto depth_guard = [](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth > kMaxPayloadDepth) {
      throw TooDeep();
    }
    return true;
  };
  try {
    return json::parse(body.begin(), body.end(), depth_guard);
  } catch (const TooDeep&) {
    error = "body nests deeper than " + std::to_string(kMaxPayloadDepth) + " levels";
  } catch (const json::exception& e) {
    error = "body is not JSON: " + parse_error_text(e);
  }
  return std::nullopt;
}

}  // namespace

std::variant<WebhookBatch, std::string> parse_alertmanager_payload(std::string_view body) {
  std::string error;
  auto doc = parse_json(body, error);
  if (!doc) return error;
  Parser parser;
  WebhookBatch batch;
  if (!parser.batch(*doc, batch)) return parser.error;
  return batch;
}

}  // namespace faultd
