#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "daemon/control/alertmanager_payload.hpp"

using namespace faultd;

namespace {

// Alertmanager's documented webhook body (version 4), as its webhook notifier sends it.
const char* const kExample = R"({
  "receiver": "faultd",
  "status": "firing",
  "alerts": [
    {
      "status": "firing",
      "labels": {"alertname": "NpuFeatureAbnormal", "device": "3", "faultd_action": "isolate",
                 "node": "node-17", "severity": "critical"},
      "annotations": {"summary": "accuracy sensitivity feature abnormal on NPU 3"},
      "startsAt": "2024-05-01T10:00:00.000Z",
      "endsAt": "0001-01-01T00:00:00Z",
      "generatorURL": "http://prometheus:9090/graph?g0.expr=faultd_faults_total",
      "fingerprint": "5d2f1e4a9b7c3e01"
    },
    {
      "status": "resolved",
      "labels": {"alertname": "NpuFeatureAbnormal", "device": "5", "node": "node-17"},
      "annotations": {},
      "startsAt": "2024-05-01T09:00:00Z",
      "endsAt": "2024-05-01T09:30:00Z",
      "generatorURL": "",
      "fingerprint": "a1b2c3d4e5f60718"
    }
  ],
  "groupLabels": {"alertname": "NpuFeatureAbnormal"},
  "commonLabels": {"alertname": "NpuFeatureAbnormal", "node": "node-17"},
  "commonAnnotations": {},
  "externalURL": "http://alertmanager:9093",
  "version": "4",
  "groupKey": "{}/{faultd_action=~\"^(?:.+)$\"}:{alertname=\"NpuFeatureAbnormal\"}",
  "truncatedAlerts": 2
})";

// A minimal valid body with `alert` as its only alert.
std::string with_alert(const std::string& alert) {
  return R"({"version":"4","status":"firing","alerts":[)" + alert + "]}";
}

}  // namespace

TEST_CASE("the documented Alertmanager v4 payload parses completely", "[control][payload]") {
  auto parsed = parse_alertmanager_payload(kExample);
  REQUIRE(std::holds_alternative<WebhookBatch>(parsed));
  const auto& b = std::get<WebhookBatch>(parsed);
  CHECK(b.receiver == "faultd");
  CHECK(b.status == "firing");
  CHECK(b.group_key.find("NpuFeatureAbnormal") != std::string::npos);
  CHECK(b.external_url == "http://alertmanager:9093");
  CHECK(b.truncated_alerts == 2);
  REQUIRE(b.alerts.size() == 2);

  const auto& firing = b.alerts[0];
  CHECK(firing.status == "firing");
  CHECK(firing.labels.at("device") == "3");
  CHECK(firing.labels.at("faultd_action") == "isolate");
  CHECK(firing.labels.at("node") == "node-17");
  CHECK(firing.labels.size() == 5);
  CHECK(firing.annotations.at("summary") == "accuracy sensitivity feature abnormal on NPU 3");
  CHECK(firing.starts_at == "2024-05-01T10:00:00.000Z");
  CHECK(firing.ends_at == "0001-01-01T00:00:00Z");
  CHECK(firing.generator_url.find("faultd_faults_total") != std::string::npos);
  CHECK(firing.fingerprint == "5d2f1e4a9b7c3e01");

  const auto& resolved = b.alerts[1];
  CHECK(resolved.status == "resolved");
  CHECK(resolved.labels.at("device") == "5");
  CHECK(resolved.annotations.empty());
  CHECK(resolved.ends_at == "2024-05-01T09:30:00Z");
  CHECK(resolved.fingerprint == "a1b2c3d4e5f60718");
}

TEST_CASE("valid payloads, including the tolerated variations", "[control][payload]") {
  struct Case {
    const char* name;
    std::string body;
    size_t alerts;
  };
  const std::vector<Case> cases = {
      {"no alerts", R"({"version":"4","status":"resolved","alerts":[]})", 0},
      {"only status and labels in an alert", with_alert(R"({"status":"firing","labels":{}})"), 1},
      {"null annotations and times", with_alert(R"({"status":"resolved","labels":{"a":"b"},
          "annotations":null,"startsAt":null,"endsAt":null,"fingerprint":null})"),
       1},
      {"unknown fields are ignored",
       R"({"version":"4","status":"firing","newField":{"x":[1,2]},"alerts":[
           {"status":"firing","labels":{"device":"0"},"silencedBy":[],"extra":1}]})",
       1},
      {"group label maps of any shape are not used",
       R"({"version":"4","status":"firing","groupLabels":5,"commonLabels":[],"alerts":[]})", 0},
      {"unicode label values", with_alert(R"({"status":"firing","labels":{"msg":"热 \u00e9"}})"),
       1},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto parsed = parse_alertmanager_payload(c.body);
    if (auto* error = std::get_if<std::string>(&parsed)) FAIL(*error);
    CHECK(std::get<WebhookBatch>(parsed).alerts.size() == c.alerts);
  }
}

TEST_CASE("invalid payloads are refused with a reason naming the problem", "[control][payload]") {
  struct Case {
    const char* name;
    std::string body;
    const char* error;  // a substring the error must contain
  };
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string deep_in_label = with_alert(R"({"status":"firing","labels":{"a":)" +
                                               std::string(40, '[') + std::string(40, ']') + "}}");
  const std::vector<Case> cases = {
      {"empty body", "", "not JSON"},
      {"not JSON", "hello", "not JSON"},
      {"truncated JSON", R"({"version":"4","status":"firing","alerts":[)", "not JSON"},
      {"invalid UTF-8 in a string", "{\"version\":\"4\xff\"}", "not JSON"},
      {"JSON but not an object", R"([1,2,3])", "must be a JSON object"},
      {"version missing", R"({"status":"firing","alerts":[]})", "version: missing"},
      {"version 3", R"({"version":"3","status":"firing","alerts":[]})", "\"3\" is not supported"},
      {"version as a number", R"({"version":4,"status":"firing","alerts":[]})",
       "must be the string \"4\""},
      {"status missing", R"({"version":"4","alerts":[]})", "status: missing"},
      {"status unknown", R"({"version":"4","status":"burning","alerts":[]})",
       "status: must be \"firing\" or \"resolved\""},
      {"alerts missing", R"({"version":"4","status":"firing"})", "alerts: missing"},
      {"alerts not a list", R"({"version":"4","status":"firing","alerts":{"a":1}})",
       "alerts: must be a list"},
      {"an alert that is not an object", with_alert(R"("firing")"), "alerts[0]: must be an object"},
      {"an alert without status", with_alert(R"({"labels":{}})"), "alerts[0].status: missing"},
      {"an alert with a bad status", with_alert(R"({"status":"FIRING","labels":{}})"),
       "alerts[0].status"},
      {"an alert without labels", with_alert(R"({"status":"firing"})"),
       "alerts[0].labels: missing"},
      {"labels not an object", with_alert(R"({"status":"firing","labels":["device"]})"),
       "alerts[0].labels: must be an object"},
      {"a label value that is a number", with_alert(R"({"status":"firing","labels":{"device":3}})"),
       "alerts[0].labels.device: value must be a string"},
      {"an annotation value that is null",
       with_alert(R"({"status":"firing","labels":{},"annotations":{"summary":null}})"),
       "alerts[0].annotations.summary: value must be a string"},
      {"a fingerprint that is not a string",
       with_alert(R"({"status":"firing","labels":{},"fingerprint":12})"),
       "alerts[0].fingerprint: must be a string"},
      {"the second alert is the bad one",
       R"({"version":"4","status":"firing","alerts":[{"status":"firing","labels":{}},{"status":"firing"}]})",
       "alerts[1].labels: missing"},
      {"receiver not a string", R"({"version":"4","status":"firing","receiver":1,"alerts":[]})",
       "receiver: must be a string"},
      {"negative truncatedAlerts",
       R"({"version":"4","status":"firing","truncatedAlerts":-1,"alerts":[]})",
       "truncatedAlerts: must be a non-negative integer"},
      {"nesting 100000 deep", deep, "deeper than 32"},
      {"deep nesting inside a label", deep_in_label, "deeper than 32"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto parsed = parse_alertmanager_payload(c.body);
    REQUIRE(std::holds_alternative<std::string>(parsed));
    CHECK_THAT(std::get<std::string>(parsed), Catch::Contains(c.error));
  }
}

TEST_CASE("payload errors are short printable ASCII whatever the body holds",
          "[control][payload]") {
  // A long string with a bad byte at its end: the parser's "last read" would quote all of it.
  const std::string body = "{\"version\":\"" + std::string(100000, 'x') + "\x01\"}";
  auto parsed = parse_alertmanager_payload(body);
  REQUIRE(std::holds_alternative<std::string>(parsed));
  const auto& error = std::get<std::string>(parsed);
  CHECK(error.size() < 300);
  for (char c : error) CHECK((c >= 0x20 && c < 0x7f));

  auto bad_version = parse_alertmanager_payload(R"({"version":")" + std::string(1000, 'v') +
                                                "\xc3\xa9" + R"(","status":"firing","alerts":[]})");
  REQUIRE(std::holds_alternative<std::string>(bad_version));
  CHECK(std::get<std::string>(bad_version).size() < 100);
}
