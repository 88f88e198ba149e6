// The `report` request (daemon/control/report_request.hpp): what faultctl sends parses into the
// finding faultd records, with the rule, level and code fixed by faultd; and hostile requests
// (oversize fields, bad devices, unknown fields, wrong types, numbers that cannot be) are
// refused with a reason, never turned into a finding.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "daemon/control/control_access.hpp"
#include "daemon/control/report_request.hpp"

using namespace faultd;
using namespace faultd::control;
using json = nlohmann::json;

namespace {

ReplicaDivergence sample() {
  return {.device = "2",
          .replica = "rank2",
          .reference = "rank0",
          .api = "Module.fc.Linear.forward.0",
          .tensor = "Module.fc.Linear.forward.0.parameters.weight",
          .mode = "tensor",
          .data_row = 2,
          .replicas = 4,
          .majority = 3,
          .disagreements = 1,
          .rows_checked = 3,
          .metrics = {{"Cosine", "0.993999088548"}, {"MaxAbsErr", "1.0"}, {"Result", "pass"}}};
}

const TimePoint kNow = from_unix_ms(1'790'000'000'000);

std::string refusal(const json& request) {
  const auto parsed = parse_report(request, kNow);
  CHECK_FALSE(parsed.finding);
  return parsed.error;
}

std::string annotation(const Finding& f, const std::string& key) {
  for (const auto& [k, v] : f.annotations) {
    if (k == key) return v;
  }
  return "(none)";
}

}  // namespace

TEST_CASE("report: faultctl's request becomes a warning-level finding on the device",
          "[control][report]") {
  const json request = report_request(sample());
  CHECK(request["cmd"] == "report");
  CHECK(request["check"] == "replica-divergence");
  const auto parsed = parse_report(request, kNow);
  INFO(parsed.error);
  REQUIRE(parsed.finding);
  const Finding& f = *parsed.finding;
  // Fixed by faultd, whatever the client would like.
  CHECK(f.rule == "compare.replica-divergence");
  CHECK(f.level == FaultLevel::SubHealthFault);
  CHECK(f.code == "REPLICA_DIVERGENCE");
  CHECK(f.source == "faultctl");
  CHECK(f.device == "2");
  CHECK(f.file == "rank2");
  CHECK(f.line == 2);
  CHECK(f.time == kNow);
  CHECK(f.text ==
        "replica rank2 disagrees with the majority (3 of 4 replicas) at "
        "Module.fc.Linear.forward.0.parameters.weight (Module.fc.Linear.forward.0, data row 2; 1 "
        "of 3 shared tensors differ), measured against rank0: Cosine 0.993999088548, MaxAbsErr "
        "1.0, Result pass");
  CHECK(annotation(f, "tensor") == "Module.fc.Linear.forward.0.parameters.weight");
  CHECK(annotation(f, "replica") == "rank2");
  CHECK(annotation(f, "majority") == "3");
  CHECK(annotation(f, "Cosine") == "0.993999088548");
  CHECK(annotation(f, "MaxAbsErr") == "1.0");
  CHECK(f.identity.ino != 0);

  // The journal key is the outcome: the same report again has the same key, another one not.
  CHECK(parse_report(request, kNow + std::chrono::hours(1)).finding->identity.ino ==
        f.identity.ino);
  auto other = sample();
  other.metrics[0].second = "0.5";
  CHECK(parse_report(report_request(other), kNow).finding->identity.ino != f.identity.ino);
  other = sample();
  other.device = "3";
  CHECK(parse_report(report_request(other), kNow).finding->identity.ino != f.identity.ino);
}

TEST_CASE("report: the client cannot choose the rule, the level or unknown fields",
          "[control][report]") {
  for (const char* field : {"rule", "level", "code", "text", "annotations", "source", "hook", ""}) {
    INFO(field);
    json r = report_request(sample());
    r[field] = "SeparateNPU";
    CHECK(refusal(r) == "unknown field '" + std::string(field) + "'");
  }
  json r = report_request(sample());
  r["check"] = "isolate-now";
  CHECK(refusal(r) == "check must be 'replica-divergence'");
  r.erase("check");
  CHECK(refusal(r) == "check must be a string");
  // A field name that is not text is shown escaped, and cut.
  r = report_request(sample());
  r[std::string("x\x1b[31m") + std::string(100, 'y')] = 1;
  const std::string why = refusal(r);
  CHECK(why.find('\x1b') == std::string::npos);
  CHECK(why.size() < 100);
}

TEST_CASE("report: device ids are checked as everywhere else", "[control][report]") {
  for (const std::string& bad : std::vector<std::string>{"", "../x", "0;rm -rf /", "a b", "-1",
                                                         std::string(65, '7'), "3\n4", "\xff"}) {
    INFO(bad);
    auto r = sample();
    r.device = bad;
    const std::string why = refusal(report_request(r));
    CHECK((why == "invalid device id" || why.rfind("device must be", 0) == 0));
  }
  json r = report_request(sample());
  r["device"] = 3;
  CHECK(refusal(r) == "device must be a string");
  auto ok = sample();
  ok.device = "npu-0:1.2";
  CHECK(parse_report(report_request(ok), kNow).finding);
}

TEST_CASE("report: oversize and non-text fields are refused", "[control][report]") {
  auto r = sample();
  r.api = std::string(kMaxReportNameBytes, 'a');
  CHECK(parse_report(report_request(r), kNow).finding);
  r.api += "a";
  CHECK(refusal(report_request(r)) == "api must be 1 to 512 bytes");
  r = sample();
  r.tensor = std::string(60 * 1024, 't');  // fits the protocol's 64 KiB line, not a field
  CHECK(refusal(report_request(r)) == "tensor must be 1 to 512 bytes");
  r = sample();
  r.replica = std::string(kMaxReportLabelBytes + 1, 'r');
  CHECK(refusal(report_request(r)) == "replica must be 1 to 128 bytes");
  r = sample();
  r.reference = "";
  CHECK(refusal(report_request(r)) == "reference must be 1 to 128 bytes");
  r = sample();
  r.tensor = "weight\n[ERROR] forged log line";
  CHECK(refusal(report_request(r)) == "tensor must be printable ASCII");
  r = sample();
  r.mode = "xor";
  CHECK(refusal(report_request(r)) == "mode must be statistics, tensor or md5");
}

TEST_CASE("report: counts must describe a majority and a suspect outside it", "[control][report]") {
  auto r = sample();
  r.replicas = 2;  // two replicas cannot name a suspect
  CHECK(refusal(report_request(r)) == "replicas must be a whole number from 3 to 1000000");
  r = sample();
  r.majority = 2;  // 2 of 4 is no majority
  CHECK(refusal(report_request(r)) == "majority must be a whole number from 3 to 3");
  r.majority = 4;  // everyone agrees: nothing to report
  CHECK(refusal(report_request(r)) == "majority must be a whole number from 3 to 3");
  r = sample();
  r.disagreements = 4;  // more than the tensors checked
  CHECK(refusal(report_request(r)) == "disagreements must be a whole number from 1 to 3");
  r = sample();
  r.data_row = 0;
  CHECK(refusal(report_request(r)).rfind("data_row must be a whole number from 1", 0) == 0);
  json j = report_request(sample());
  j["replicas"] = -4;
  CHECK(refusal(j) == "replicas must be a whole number from 3 to 1000000");
  j["replicas"] = 4.5;
  CHECK(refusal(j) == "replicas must be a whole number from 3 to 1000000");
  j["replicas"] = "4";
  CHECK(refusal(j) == "replicas must be a whole number from 3 to 1000000");
}

TEST_CASE("report: metrics are bounded [name, value] pairs named like table columns",
          "[control][report]") {
  auto with_metrics = [](const json& metrics) {
    json r = report_request(sample());
    r["metrics"] = metrics;
    return r;
  };
  auto pair = [](const json& name, const json& value) {
    return json::array({json::array({name, value})});
  };
  json many = json::array();
  for (size_t i = 0; i <= kMaxReportMetrics; ++i) many.push_back({"M" + std::to_string(i), "1"});
  CHECK(refusal(with_metrics(many)).rfind("metrics must be a list of at most 32", 0) == 0);
  CHECK(refusal(with_metrics(json::object())).rfind("metrics must be a list", 0) == 0);
  CHECK(refusal(with_metrics(json::array({json::array({"Cosine"})}))) ==
        "each metric must be a [name, value] pair of strings");
  CHECK(refusal(with_metrics(pair("Cosine", 0.5))) ==
        "each metric must be a [name, value] pair of strings");
  // Lower case names are the finding's own annotations ("detector" has a meaning of its own).
  for (const std::string& name :
       std::vector<std::string>{"detector", "replica", "Cos\nine", "", std::string(41, 'C')}) {
    INFO(name);
    CHECK(refusal(with_metrics(pair(name, "1"))).find("a name is a capital letter") !=
          std::string::npos);
  }
  CHECK(refusal(with_metrics(pair("Cosine", std::string(65, '9')))) ==
        "metric 'Cosine': the value must be printable ASCII of at most 64 bytes");
  CHECK(refusal(with_metrics(
            json::array({json::array({"Cosine", "1"}), json::array({"Cosine", "2"})}))) ==
        "metric 'Cosine' is given twice");
  // faultctl's side cuts what it would be refused for: long or non-ASCII cells, too many.
  auto r = sample();
  r.metrics = {{"Suspect max", std::string(100, '1')}, {"Result", "\xe2\x9c\x93"}};
  for (size_t i = 0; i < 40; ++i) r.metrics.emplace_back("M" + std::to_string(i), "0");
  const auto parsed = parse_report(report_request(r), kNow);
  INFO(parsed.error);
  REQUIRE(parsed.finding);
  CHECK(annotation(*parsed.finding, "Suspect max") == std::string(64, '1'));
  CHECK(annotation(*parsed.finding, "Result") == "???");
  CHECK(parsed.finding->annotations.size() == 9 + kMaxReportMetrics);
}

TEST_CASE("report: a mutation, for the same peers as isolate; refused peers are flagged",
          "[control][report][security]") {
  CHECK(access_for("report") == Access::Mutate);
  AccessPolicy policy;
  policy.daemon_uid = 0;
  policy.group = 4242;
  policy.group_name = "faultd";
  int calls = 0;
  const Handler handler = [&calls](const json&) -> json {
    ++calls;
    return {{"ok", true}};
  };
  const std::string line = report_request(sample()).dump();
  PeerCredentials job;  // a training job's process: not root, not in the group
  job.uid = 1000;
  job.gid = 1000;
  bool refused = false;
  const json reply = handle_request(line, job, policy, handler, &refused);
  CHECK(refused);
  CHECK(reply["ok"] == false);
  CHECK(reply["error"] == "permission denied: 'report' is for root or members of group 'faultd'");
  CHECK(calls == 0);
  PeerCredentials member = job;
  member.groups = {4242};
  refused = false;
  CHECK(handle_request(line, member, policy, handler, &refused)["ok"] == true);
  CHECK_FALSE(refused);
  CHECK(calls == 1);
}
