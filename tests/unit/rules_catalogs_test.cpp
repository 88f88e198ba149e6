// The vendor catalogues read as-is: the real MindCluster files, read from the shared directory
// beside the project (tests/support/shared_data.hpp; those cases are skipped, saying so, when it is
// absent), give the levels, escalation data and FaultDiag rules they really hold, and broken
// files give errors that name the file.
#include <catch2/catch.hpp>

#include <set>

#include "rules/catalogs/faultdiag.hpp"
#include "rules/catalogs/mindcluster.hpp"
#include "tests/support/rules_support.hpp"
#include "tests/support/shared_data.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

std::string data(const std::string& name) { return testing::mindcluster_file(name); }

FaultDiagOptions default_classes() {
  FaultDiagOptions options;
  options.source_classes = {{"CANN_Plog", {"plog"}},
                            {"NPU_OS", {"device-os"}},
                            {"TrainLog", {"training"}},
                            {"OS", {"os"}}};
  return options;
}

std::string annotation(const Finding& f, const std::string& name) {
  for (const auto& [n, v] : f.annotations) {
    if (n == name) return v;
  }
  return "<none>";
}

}  // namespace

TEST_CASE("faultCode.json: known codes get the level the real catalogue gives them",
          "[rules][catalogs]") {
  SKIP_WITHOUT_MINDCLUSTER();
  ErrorList errors;
  const CodeLevels levels = load_mindcluster_fault_codes(data("faultCode.json"), errors);
  INFO(errors.to_string());
  REQUIRE(errors.empty());
  CHECK(levels.resolve("80818C00") == FaultLevel::SeparateNPU);
  CHECK(levels.resolve("80818C06") == FaultLevel::SubHealthFault);
  CHECK(levels.resolve("8C084E00") == FaultLevel::FreeRestartNPU);  // docs/log-formats.md §5
  CHECK(levels.resolve("40F84E00") == FaultLevel::RestartNPU);
  CHECK(levels.resolve("81078603") == FaultLevel::NotHandleFault);
  CHECK(levels.resolve("FFFFFFFF") == levels.default_level);
  CHECK(levels.levels.size() > 300);
}

TEST_CASE("faultCustomization.json: frequency, duration and grace entries as written",
          "[rules][catalogs]") {
  SKIP_WITHOUT_MINDCLUSTER();
  ErrorList errors;
  const FaultCustomization c = load_fault_customization(data("faultCustomization.json"), errors);
  INFO(errors.to_string());
  REQUIRE(errors.empty());
  REQUIRE(c.frequency.size() == 3);
  CHECK(c.frequency[0].codes.size() == 41);
  CHECK(c.frequency[0].times == 2);

  const FaultFrequency* f = c.frequency_for("80E18005");
  REQUIRE(f != nullptr);
  CHECK(f->times == 3);
  CHECK(f->window == 86400s);
  CHECK(f->level == FaultLevel::ManuallySeparateNPU);
  CHECK_FALSE(f->release_window);
  CHECK(c.frequency_for("0x80e18005") == f);  // any spelling of the code

  const FaultFrequency* link = c.frequency_for("81078603");
  REQUIRE(link != nullptr);
  CHECK(link->times == 5);
  REQUIRE(link->release_window);
  CHECK(*link->release_window == 172800s);
  CHECK(c.frequency_for("80818C00") == nullptr);

  const FaultDuration* d = c.duration_for("81078603");
  REQUIRE(d != nullptr);
  CHECK(d->fault_timeout == 20s);
  CHECK(d->recover_timeout == 60s);
  CHECK(d->level == FaultLevel::PreSeparateNPU);
  CHECK(c.duration_for("80E18005") == nullptr);

  CHECK(c.grace.wait_process_read_cm == Duration(30s));
  CHECK(c.grace.wait_device_reset == Duration(150s));
  CHECK(c.grace.wait_fault_self_healing == Duration(15s));
}

TEST_CASE("faultCustomization.json: every problem is reported with the file and the entry",
          "[rules][catalogs]") {
  testing::TempDir dir;
  ErrorList missing;
  load_fault_customization(dir.file("absent.json"), missing);
  CHECK(missing.to_string().find("absent.json") != std::string::npos);

  ErrorList syntax;
  load_fault_customization(dir.write("bad.json", "{\n  \"FaultFrequency\": [,]\n}\n"), syntax);
  REQUIRE(syntax.size() == 1);
  CHECK(syntax.all()[0].to_string().starts_with(dir.file("bad.json") + ":2:22: invalid JSON"));

  ErrorList entries;
  const auto c = load_fault_customization(dir.write("entries.json", R"({
  "FaultFrequency": [
    {"EventId": ["80E18005"], "TimeWindow": 60, "Times": 3, "FaultHandling": "ManuallySeparateNPU"},
    {"EventId": ["zz"], "TimeWindow": -1, "Times": 0, "FaultHandling": "Explode"},
    {"EventId": ["80e18005"], "TimeWindow": 60, "Times": 1, "FaultHandling": "SeparateNPU"}
  ],
  "FaultDuration": [{"EventId": ["81078603"], "FaultHandling": "PreSeparateNPU"}],
  "Colour": 1
})"),
                                          entries);
  const std::string text = entries.to_string();
  INFO(text);
  CHECK(text.find("unknown key \"Colour\"") != std::string::npos);
  CHECK(text.find("FaultFrequency[1].EventId: malformed code \"zz\"") != std::string::npos);
  CHECK(text.find("FaultFrequency[1].TimeWindow: must be a whole number of seconds > 0") !=
        std::string::npos);
  CHECK(text.find("FaultFrequency[1].Times") != std::string::npos);
  CHECK(text.find("FaultFrequency[1].FaultHandling") != std::string::npos);
  CHECK(text.find("FaultFrequency[2].EventId: code 80E18005 is listed by more than one entry") !=
        std::string::npos);
  CHECK(text.find("FaultDuration[0].FaultTimeout: is missing") != std::string::npos);
  CHECK(text.find("entries.json") != std::string::npos);
  REQUIRE(c.frequency.size() == 1);  // only the clean entry
  CHECK(c.duration.empty());
}

TEST_CASE("kg-config.json: all 1,050 entries are loaded or skipped with a reason",
          "[rules][catalogs]") {
  SKIP_WITHOUT_MINDCLUSTER();
  FaultDiagOptions every_class;
  const std::string classes[] = {"NPU_OS",
                                 "CANN_Plog",
                                 "TrainLog",
                                 "MindIE",
                                 "NodeDLog",
                                 "BMCLogDumpLog",
                                 "NPU_Host",
                                 "OS",
                                 "DL_DevicePlugin",
                                 "LCNELog",
                                 "PyMotor_vLLM_Log",
                                 "LCNE_LOG",
                                 "CANN_Amct",
                                 "CANN_Device",
                                 "OS-dmesg",
                                 "OS-vmcore-dmesg",
                                 "NPU_History",
                                 "OS-sysmon",
                                 "DL_Volcano_Scheduler",
                                 "DL_Npu_Exporter",
                                 "MindIO",
                                 "NPU_Device",
                                 "DL_Volcano_Controller",
                                 "DL_Docker_Runtime"};
  for (const auto& c : classes) every_class.source_classes[c] = {"all"};
  ErrorList errors;
  const FaultDiagImport all = load_faultdiag_knowledge(data("kg-config.json"), every_class, errors);
  INFO(errors.to_string());
  INFO(all.summary());
  REQUIRE(errors.empty());
  CHECK(all.entries == 1050);
  CHECK(all.rules.size() + all.skipped == 1050);
  // 13 entries only chain to others; every other entry has a class once all are mapped.
  CHECK(all.skipped_by_reason.at("no log pattern (only chains to other entries)") == 13);
  CHECK(all.skipped_by_reason.count("log class not mapped to a source") == 0);
  CHECK(all.skipped_by_reason.count("regex not accepted by RE2") == 0);  // all 4 compile
  CHECK(all.rules.size() == 1050 - all.skipped);

  size_t regex = 0, multi_line = 0, any_of = 0;
  std::set<std::string> ids;
  for (const auto& r : all.rules) {
    CHECK(ids.insert(r.id).second);
    CHECK(r.id.starts_with("faultdiag."));
    CHECK(r.fault_level == FaultLevel::NotHandleFault);
    regex += !r.regex.empty();
    multi_line += !r.lines.empty();
    any_of += !r.any_of.empty();
  }
  CHECK(regex == 4);
  CHECK(multi_line == 1);
  CHECK(any_of == 1032);

  // The whole import compiles into one rule set with faultd's own checks.
  ErrorList build_errors;
  const auto set = RuleSet::build(all.rules, CodeLevels{}, build_errors);
  INFO(build_errors.to_string());
  CHECK(set != nullptr);

  // With the sketch's mapping, entries of unmapped classes are skipped and counted.
  ErrorList errors2;
  FaultDiagOptions three;
  three.source_classes = {
      {"CANN_Plog", {"plog"}}, {"NPU_OS", {"device-os"}}, {"TrainLog", {"training"}}};
  const FaultDiagImport some = load_faultdiag_knowledge(data("kg-config.json"), three, errors2);
  CHECK(some.rules.size() + some.skipped == 1050);
  CHECK(some.skipped_by_reason.at("log class not mapped to a source") > 300);
  CHECK(some.rules.size() > 650);
  CHECK(some.summary().starts_with("1050 entries: " + std::to_string(some.rules.size()) +
                                   " rules, "));
}

TEST_CASE("kg-config.json: real entries match real-looking lines, not their look-alikes",
          "[rules][catalogs]") {
  SKIP_WITHOUT_MINDCLUSTER();
  ErrorList errors;
  auto kg = load_faultdiag_knowledge(data("kg-config.json"), default_classes(), errors);
  REQUIRE(errors.empty());
  const auto set = RuleSet::build(std::move(kg.rules), CodeLevels{}, errors);
  INFO(errors.to_string());
  REQUIRE(set != nullptr);
  auto rules_on = [&](std::string_view source, std::string_view line) {
    std::vector<std::string> ids;
    for (const auto& f : testing::scan(*set, std::string(line) + "\n", source).findings) {
      ids.push_back(f.rule);
    }
    return ids;
  };
  using Strings = std::vector<std::string>;

  // docs/log-formats.md §7: the device-OS event of 0x80818C00, and its look-alikes.
  const auto found =
      testing::scan(*set,
                    "[EVENT] TDT(4717,tsdaemon):2023-10-31-16:41:39.406.087 [tsdaemon.cpp:1811]"
                    "[RunSpecialProcess][tid:4717] [TsdEVENT] Event id=0x80818c00.\n",
                    "device-os");
  REQUIRE(found.findings.size() == 1);
  const Finding& f = found.findings[0];
  CHECK(f.rule == "faultdiag.0x80818c00");
  CHECK(f.code == "80818C00");
  CHECK(f.level == FaultLevel::NotHandleFault);  // a diagnosis: recorded only by default
  CHECK(annotation(f, "faultdiag_id") == "0x80818C00");
  CHECK(annotation(f, "cause").find("precision-sensitive") != std::string::npos);
  CHECK(annotation(f, "suggestion") != "<none>");
  CHECK(annotation(f, "description") != "<none>");
  CHECK(rules_on("device-os", "[EVENT] TDT Event id=0x80818C00.").empty());  // case matters
  CHECK(rules_on("plog", "[EVENT] TDT Event id=0x80818c00.").empty());       // other class
  CHECK(rules_on("device-os", "Node Type=0x40; Sensor Type=0xc6; event_state=0)") ==
        Strings{"faultdiag.0x80818c00"});
  CHECK(rules_on("device-os", "Node Type=0x40; Sensor Type=0xc6; event_state=1)").empty());

  // docs/log-formats.md §8: the driver's heartbeat loss in the OS log.
  CHECK(rules_on("os",
                 "[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] <kworker/5:1H:39365> "
                 "Heartbeat lost! (device=1; old_count=1104; new_count=1104)") ==
        Strings{"faultdiag.0x40f84e00"});
  CHECK(rules_on("os", "[ascend] [INFO] [drv_soft_fault] Heartbeat lost! (device=1;").empty());

  // docs/log-formats.md §2: the newer RUNTIME halMemAlloc failure in a host plog.
  const auto hal = rules_on(
      "plog",
      "[ERROR] RUNTIME(10972,python):2023-09-23-05:41:40.256.365 [npu_driver.cc:1100]49835 "
      "DevMemAllocHugePageManaged:[INIT][DEFAULT][drv api] halMemAlloc failed:size=2097152(Byte), "
      "... device_id=0!");
  CHECK(std::find(hal.begin(), hal.end(), "faultdiag.aisw_cann_runtime_054") != hal.end());
  CHECK(rules_on("plog", "[INFO] RUNTIME(1,python): halMemAlloc succeeded").empty());

  // docs/log-formats.md §8: HCCL notify timeout in a training log (EI0002 with its text).
  const auto notify = rules_on(
      "training",
      "EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register "
      "times out. Reason: The Notify register has not received the Notify record from remote "
      "rank [1]. base information: [streamID:[3], taskID[4]] task information: [x]");
  CHECK(std::find(notify.begin(), notify.end(), "faultdiag.aisw_cann_errmsg_custom_03") !=
        notify.end());
  CHECK(rules_on("training", "EI0002: 2025-10-11 some other text").size() <= 1);
}

TEST_CASE("kg-config.json: the multi-line entry needs both lines within its window",
          "[rules][catalogs]") {
  SKIP_WITHOUT_MINDCLUSTER();
  ErrorList errors;
  FaultDiagOptions options;
  options.source_classes = {{"PyMotor_vLLM_Log", {"vllm"}}};
  options.level = FaultLevel::SubHealthFault;  // the config knob raises them all
  auto kg = load_faultdiag_knowledge(data("kg-config.json"), options, errors);
  const auto set = RuleSet::build(std::move(kg.rules), CodeLevels{}, errors);
  REQUIRE(set != nullptr);
  const std::string first = "E send request to 10.0.0.2:8080 failed: connection refused\n";
  const std::string second =
      "E Initialize mooncake failed: metadata_server http://x, protocol P2PHANDSHAKE. Check "
      "mooncake config and network\n";
  ScanContext context;
  CHECK(testing::scan(*set, first, "vllm", nullptr, 1, 0, &context).findings.empty());
  const auto s =
      testing::scan(*set, "noise\n" + second, "vllm", nullptr, 2, first.size(), &context);
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].rule == "faultdiag.aisw_vllm_ascend_kv_pool_mooncake_002");
  CHECK(s.findings[0].line == 3);
  CHECK(s.findings[0].level == FaultLevel::SubHealthFault);
  std::string far = first;
  for (int i = 0; i < 25; ++i) far += "noise\n";
  CHECK(testing::scan(*set, far + second, "vllm").findings.empty());
}

TEST_CASE("kg-config.json: file-level problems are errors, odd entries are skipped",
          "[rules][catalogs]") {
  testing::TempDir dir;
  ErrorList syntax;
  load_faultdiag_knowledge(dir.write("kg.json", "{\"knowledge-repository\": {\n  \"a\": }"),
                           default_classes(), syntax);
  REQUIRE(syntax.size() == 1);
  CHECK(syntax.all()[0].to_string().starts_with(dir.file("kg.json") + ":2:8: invalid JSON"));

  ErrorList shape;
  load_faultdiag_knowledge(dir.write("shape.json", "[]"), default_classes(), shape);
  CHECK(shape.to_string().find("knowledge-repository") != std::string::npos);

  ErrorList errors;
  const auto kg = load_faultdiag_knowledge(dir.write("odd.json", R"({"knowledge-repository": {
    "Bad Regex": {"attribute": {}, "source_file": "CANN_Plog", "regex": {"regex": "(?<=x)y"}},
    "NoClass": {"attribute": {}, "source_file": "", "regex": {"in": ["x y z"]}},
    "Odd": {"attribute": {}, "source_file": "CANN_Plog", "regex": {"in": [[]]}},
    "Fine": {"attribute": {"cause_en": "c", "suggestion_en": ["1. a", "2. b"]},
             "source_file": "Unknown | CANN_Plog", "regex": {"regex": "^\\[ERROR].{0,4}enqueFail"}}
  }})"),
                                           default_classes(), errors);
  INFO(errors.to_string());
  CHECK(errors.empty());
  CHECK(kg.entries == 4);
  REQUIRE(kg.rules.size() == 1);
  CHECK(kg.rules[0].id == "faultdiag.fine");
  CHECK(kg.rules[0].sources == std::vector<std::string>{"plog"});
  CHECK(kg.rules[0].all == std::vector<std::string>{"[ERROR]"});  // the regex's literal start
  CHECK(kg.rules[0].description == "c");
  CHECK(kg.rules[0].annotations ==
        Fields{{"faultdiag_id", "Fine"}, {"cause", "c"}, {"suggestion", "1. a 2. b"}});
  CHECK(kg.skipped == 3);
  REQUIRE(kg.skipped_detail.size() == 3);
  CHECK(kg.skipped_detail[0].starts_with("Bad Regex: regex not accepted by RE2: invalid regex"));
  CHECK(kg.skipped_detail[1] == "NoClass: no log class");
  CHECK(kg.skipped_detail[2].starts_with("Odd: malformed 'in'"));
}
