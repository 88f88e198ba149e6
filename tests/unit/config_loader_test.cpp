#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/config/config.hpp"
#include "tests/support/shared_data.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::TempDir;

namespace {

const char* const kRule = R"(
rules:
  - id: test.asd
    match: { any: ["accuracy sensitivity feature abnormal"] }
    fault: { code: 80818C00, level: SeparateNPU }
)";

// Loads `text` as faultd.yaml in `dir`; returns the config or the rendered errors.
std::optional<Config> load(const TempDir& dir, const std::string& text, std::string& errors) {
  const std::string path = dir.write("faultd.yaml", text);
  ErrorList list;
  auto cfg = load_config(path, list);
  errors = list.to_string();
  return cfg;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("a complete config loads with relative paths resolved against its directory",
          "[config]") {
  TempDir dir;
  dir.write("rules.d/a.yaml", kRule);
  std::string errors;
  auto cfg = load(dir, R"(
node: n1
state_dir: state
metrics: { listen: "127.0.0.1:0" }
control: { socket: ctl.sock, group: "" }
include: ["rules.d/*.yaml"]
log: { level: debug }
sources:
  - { name: plog, type: file, paths: ["logs/plog-*.log"], start_at: end }
  - name: device-log
    paths: ["logs/device-*/device-*.log"]
    path_fields: 'device-(?P<device>\d+)/'
    scan_interval: 250ms
    max_line_bytes: 4096
actions:
  isolate: { argv: [hooks/isolate, --now], timeout: 5s, retries: 2 }
  resume: { argv: [/bin/true], after: isolate }
policy:
  max_isolations: { count: 3, window: 30m }
  dry_run: true
)",
                  errors);
  INFO(errors);
  REQUIRE(cfg);
  const std::string base = dir.path().string();
  CHECK(cfg->node == "n1");
  CHECK(cfg->state_dir == base + "/state");
  CHECK(cfg->control_socket == base + "/ctl.sock");
  CHECK(cfg->log.level == "debug");
  REQUIRE(cfg->file_sources().size() == 2);
  CHECK(cfg->file_sources()[0].paths == std::vector<std::string>{base + "/logs/plog-*.log"});
  CHECK(cfg->file_sources()[0].start_at == FileSourceConfig::StartAt::End);
  CHECK(cfg->file_sources()[1].scan_interval == std::chrono::milliseconds(250));
  CHECK(cfg->file_sources()[1].max_line_bytes == 4096);
  CHECK(cfg->file_sources()[1].path_fields == "device-(?P<device>\\d+)/");
  REQUIRE(cfg->actions.count("isolate") == 1);
  CHECK(cfg->actions["isolate"].hook.argv ==
        std::vector<std::string>{base + "/hooks/isolate", "--now"});
  CHECK(cfg->actions["isolate"].hook.timeout == std::chrono::seconds(5));
  CHECK(cfg->actions["isolate"].hook.retries == 2);
  CHECK(cfg->actions["resume"].after == "isolate");
  CHECK(cfg->policy.max_isolations == 3);
  CHECK(cfg->policy.isolation_window == std::chrono::minutes(30));
  CHECK(cfg->policy.dry_run);
  // Defaults: SeparateNPU warns and isolates; resume follows isolate through `after`.
  const auto& sep = cfg->policy.levels[static_cast<size_t>(FaultLevel::SeparateNPU)];
  CHECK(sep.warn);
  CHECK(sep.actions == std::vector<std::string>{"isolate"});
  CHECK_FALSE(cfg->policy.levels[static_cast<size_t>(FaultLevel::NotHandleFault)].warn);
  REQUIRE(cfg->rules);
  CHECK(cfg->rules->size() == 1);
}

TEST_CASE("a file source's link and memory limits load, and bad values name their position",
          "[config]") {
  TempDir dir;
  std::string errors;
  auto cfg = load(dir, R"(node: n1
sources:
  - { name: a, paths: ["a/**/*.log"] }
  - { name: b, paths: ["b/**/*.log"], follow_symlinks: true, max_directories: 100,
      max_partial_bytes: 65536 }
)",
                  errors);
  INFO(errors);
  REQUIRE(cfg);
  const auto sources = cfg->file_sources();
  REQUIRE(sources.size() == 2);
  const FileSourceConfig& a = sources[0];
  CHECK_FALSE(a.follow_symlinks);  // directory links are not followed unless asked for
  CHECK(a.max_directories == 4096);
  CHECK(a.max_partial_bytes == size_t{8} * 1024 * 1024);
  const FileSourceConfig& b = sources[1];
  CHECK(b.follow_symlinks);
  CHECK(b.max_directories == 100);
  CHECK(b.max_partial_bytes == 65536);

  cfg = load(dir, R"(node: n1
sources:
  - { name: a, paths: ["a/**/*.log"], follow_symlinks: sometimes }
  - { name: b, paths: ["b/**/*.log"], max_directories: 0, max_partial_bytes: 10 }
)",
             errors);
  CHECK_FALSE(cfg);
  const std::string f = dir.file("faultd.yaml");
  CHECK_THAT(errors, Catch::Contains(f + ":3:56: 'follow_symlinks' must be true or false"));
  CHECK_THAT(errors,
             Catch::Contains(f + ":4:56: 'max_directories' must be an integer from 1 to 1000000"));
  CHECK_THAT(
      errors,
      Catch::Contains(f + ":4:78: 'max_partial_bytes' must be an integer from 4096 to 1073741824"));
}

TEST_CASE("every config error is reported with file:line:column", "[config]") {
  TempDir dir;
  std::string errors;
  auto cfg = load(dir, R"(node: n1
sorces: []
metrics: 5
sources:
  - { name: plog, paths: ["x-*.log"], scan_interval: 5 parsecs }
  - { name: plog, paths: ["y.log"], path_fields: '(?P<device>\d+' }
  - { name: k, type: kmsg, colour: red }
  - { name: z, type: journal }
actions:
  resume: { argv: [/bin/true], after: isolat }
  a: { argv: [/bin/true], after: b }
  b: { argv: [/bin/true], after: a }
policy:
  levels:
    SeparateNPU: { state: warning, actions: [isolate] }
    Bogus: { state: warning }
include: ["missing.yaml"]
)",
                  errors);
  CHECK_FALSE(cfg);
  const std::string f = dir.file("faultd.yaml");
  CHECK_THAT(errors, Catch::Contains(f + ":2:1: unknown key 'sorces'"));
  CHECK_THAT(errors, Catch::Contains(f + ":3:10: metrics must be a map"));
  CHECK_THAT(errors, Catch::Contains(f + ":5:54: 'scan_interval' must be a duration"));
  CHECK_THAT(errors, Catch::Contains(f + ":6:13: duplicate source name 'plog'"));
  CHECK_THAT(errors, Catch::Contains(f + ":6:50: invalid RE2 in path_fields"));
  CHECK_THAT(errors, Catch::Contains(f + ":7:28: unknown key 'colour'"));
  CHECK_THAT(errors, Catch::Contains(f + ":8:22: unknown source type 'journal'"));
  CHECK_THAT(errors, Catch::Contains("runs after unknown action 'isolat'"));
  CHECK_THAT(errors, Catch::Contains("is part of an 'after' cycle"));
  CHECK_THAT(errors,
             Catch::Contains(f + ":15:45: level SeparateNPU names unknown action 'isolate'"));
  CHECK_THAT(errors, Catch::Contains(f + ":16:5: unknown fault level 'Bogus'"));
  CHECK_THAT(errors, Catch::Contains("included rule file '" + dir.file("missing.yaml") +
                                     "' does not exist"));
}

TEST_CASE("YAML syntax errors and rule errors in included files name their own file", "[config]") {
  TempDir dir;
  dir.write("rules.d/bad.yaml",
            "rules:\n  - id: x\n    match: { any: [\"a\"] }\n    fault: { level: Sometimes }\n");
  dir.write("rules.d/broken.yaml", "rules: [\n");
  std::string errors;
  auto cfg = load(dir, "include: [\"rules.d/*.yaml\"]\n", errors);
  CHECK_FALSE(cfg);
  CHECK_THAT(errors, Catch::Contains(dir.file("rules.d/bad.yaml") + ":4:"));
  CHECK_THAT(errors, Catch::Contains("Sometimes"));
  CHECK_THAT(errors, Catch::Contains(dir.file("rules.d/broken.yaml") + ":2:"));
}

TEST_CASE("include: takes the sources' glob dialect, ** included, in sorted order", "[config]") {
  TempDir dir;
  std::string second = kRule;
  second.replace(second.find("test.asd"), 8, "test.two");
  dir.write("rules.d/vendor/b/two.yaml", second);
  dir.write("rules.d/a/one.yaml", kRule);
  dir.write("rules.d/a/notes.txt", "not a rule file");
  std::string errors;
  auto cfg = load(dir, "include: [\"rules.d/**/*.yaml\"]\n", errors);
  INFO(errors);
  REQUIRE(cfg);
  REQUIRE(cfg->rule_files.size() == 2);
  CHECK(cfg->rule_files[0] == dir.file("rules.d/a/one.yaml"));
  CHECK(cfg->rule_files[1] == dir.file("rules.d/vendor/b/two.yaml"));
  CHECK(cfg->rules->size() == 2);
}

TEST_CASE("duplicate rule ids across files are refused", "[config]") {
  TempDir dir;
  dir.write("rules.d/a.yaml", kRule);
  dir.write("rules.d/b.yaml", kRule);
  std::string errors;
  CHECK_FALSE(load(dir, "include: [\"rules.d/*.yaml\"]\n", errors));
  CHECK_THAT(errors, Catch::Contains("duplicate rule id 'test.asd'"));
}

TEST_CASE("a default level policy quietly skips actions that are not configured", "[config]") {
  TempDir dir;
  std::string errors;
  auto cfg = load(dir, std::string("include: []\n") + kRule, errors);
  INFO(errors);
  REQUIRE(cfg);
  CHECK(cfg->actions.empty());
  CHECK(cfg->policy.levels[static_cast<size_t>(FaultLevel::SeparateNPU)].actions.empty());
  CHECK(cfg->policy.levels[static_cast<size_t>(FaultLevel::SeparateNPU)].warn);
}

TEST_CASE("the MindCluster catalogue gives codes their handling level", "[config]") {
  TempDir dir;
  dir.write("faultCode.json",
            R"({"SeparateNPUCodes": ["80818C00"], "NotHandleFaultCodes": ["a4025021"]})");
  std::string errors;
  auto cfg = load(dir, R"(include: []
catalogs: { mindcluster_fault_codes: faultCode.json }
rules:
  - { id: r1, match: { any: ["x"] }, fault: { code: "80818c00" } }
)",
                  errors);
  INFO(errors);
  REQUIRE(cfg);
  Chunk c;
  c.source = "s";
  c.path = "/p";
  c.data = "x\n";
  c.end_offset = 2;
  c.end_line = 1;
  std::vector<Finding> out;
  cfg->rules->scan(c, TimePoint{}, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].code == "80818C00");
  CHECK(out[0].level == FaultLevel::SeparateNPU);

  dir.write("faultCode.json", "{\"SeparateNPUCodes\": [\"80818C00\",\n  ]}");
  CHECK_FALSE(
      load(dir, "include: []\ncatalogs: { mindcluster_fault_codes: faultCode.json }\n", errors));
  CHECK_THAT(errors, Catch::Contains(dir.file("faultCode.json") + ":2:"));
}

TEST_CASE("a catalogue with a number too large for a double is an error, not a crash", "[config]") {
  // Found by fuzzing: valid JSON syntax that the JSON library refuses with out_of_range.
  TempDir dir;
  dir.write("faultCode.json", R"({"SeparateNPUCodes": ["80818C00"], "x": 1e999})");
  std::string errors;
  CHECK_FALSE(
      load(dir, "include: []\ncatalogs: { mindcluster_fault_codes: faultCode.json }\n", errors));
  CHECK_THAT(errors, Catch::Contains(dir.file("faultCode.json") + ":1:1: invalid JSON"));
}

TEST_CASE("the shipped default and demo configs are valid", "[config]") {
  const std::string src = FAULTD_SOURCE_DIR;
  ErrorList errors;
  auto cfg = load_config(src + "/etc/faultd/faultd.yaml", errors);
  INFO(errors.to_string());
  REQUIRE(cfg);
  CHECK(cfg->file_sources().size() == 3);
  CHECK(cfg->actions.size() == 3);

  // The demo config lives in etc/demo and is used from var/demo (two levels below the root).
  TempDir dir;
  const auto demo_dir = dir.path() / "var" / "demo";
  std::filesystem::create_directories(demo_dir);
  std::filesystem::create_directory_symlink(src + "/etc", dir.path() / "etc");
  std::filesystem::create_directory_symlink(src + "/tests", dir.path() / "tests");
  std::string text = read_file(src + "/etc/demo/faultd.yaml");
  std::ofstream(demo_dir / "faultd.yaml") << text;
  ErrorList demo_errors;
  auto demo = load_config((demo_dir / "faultd.yaml").string(), demo_errors);
  INFO(demo_errors.to_string());
  REQUIRE(demo);
  CHECK(demo->rules->size() >= 8);

  // The demo's own code-to-level file (etc/demo/fault-levels.json) gives the npu-smi rule,
  // which sets no level, the level of the code device 6 reports.
  Chunk c;
  c.source = "npu-health";
  c.source_type = "command";
  c.path = "npu-smi";
  c.data = "npu-smi health: device=6 chip=0 status=Warning code=80818C06\n";
  c.end_offset = c.data.size();
  c.end_line = 1;
  std::vector<Finding> out;
  demo->rules->scan(c, TimePoint{}, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].code == "80818C06");
  CHECK(out[0].level == FaultLevel::SubHealthFault);
}

TEST_CASE("catalogs: customization and FaultDiag knowledge are loaded from the config",
          "[config]") {
  SKIP_WITHOUT_MINDCLUSTER();
  TempDir dir;
  const std::string data = faultd::testing::mindcluster_dir().string() + "/";
  std::string errors;
  auto cfg = load(dir,
                  R"(include: []
catalogs:
  mindcluster_fault_codes: )" +
                      data + R"(faultCode.json
  mindcluster_customization: )" +
                      data + R"(faultCustomization.json
  faultdiag_knowledge:
    path: )" + data + R"(kg-config.json
    source_classes: { CANN_Plog: [plog], NPU_OS: [device-os], TrainLog: [training] }
    level: SubHealthFault
)",
                  errors);
  INFO(errors);
  REQUIRE(cfg);
  REQUIRE(cfg->customization);
  const FaultFrequency* f = cfg->customization->frequency_for("80E18005");
  REQUIRE(f != nullptr);
  CHECK(f->times == 3);
  CHECK(cfg->faultdiag.level == FaultLevel::SubHealthFault);
  CHECK(cfg->rules->size() > 650);
  CHECK_THAT(cfg->faultdiag_summary, Catch::Contains("1050 entries: "));
  CHECK_THAT(cfg->faultdiag_summary, Catch::Contains("log class not mapped to a source"));
}

TEST_CASE("catalogs: without the keys there is an empty customization, and bad ones are errors",
          "[config]") {
  TempDir dir;
  std::string errors;
  // Without the keys there is an empty customization, never a null one.
  auto plain = load(dir, "include: []\n", errors);
  REQUIRE(plain);
  REQUIRE(plain->customization);
  CHECK(plain->customization->frequency.empty());
  CHECK(plain->faultdiag_summary.empty());

  CHECK_FALSE(
      load(dir, "include: []\ncatalogs: { faultdiag_knowledge: { level: Loud } }\n", errors));
  CHECK_THAT(errors, Catch::Contains("needs a 'path'"));
  CHECK_THAT(errors, Catch::Contains("unknown fault level 'Loud'"));
  CHECK_FALSE(
      load(dir, "include: []\ncatalogs: { mindcluster_customization: nope.json }\n", errors));
  CHECK_THAT(errors, Catch::Contains(dir.file("nope.json")));
}

TEST_CASE("the webhook listens on loopback unless told otherwise and needs a token file",
          "[config][security]") {
  TempDir dir;
  dir.write("webhook.token", "t0ken\n");
  std::string errors;
  auto cfg = load(dir, "include: []\nwebhook: { token_file: webhook.token }\n", errors);
  INFO(errors);
  REQUIRE(cfg);
  CHECK(cfg->webhook_listen == "127.0.0.1:9848");
  CHECK(cfg->webhook_token_file == dir.file("webhook.token"));
  // Not configured at all: off.
  auto off = load(dir, "include: []\n", errors);
  REQUIRE(off);
  CHECK(off->webhook_listen.empty());
  // On without a token: refused at load, not served open.
  CHECK_FALSE(load(dir, "include: []\nwebhook: { listen: \"127.0.0.1:9848\" }\n", errors));
  CHECK_THAT(errors, Catch::Contains("webhook needs a token_file"));
}

TEST_CASE("control.idle_timeout is a duration of at least 1s, unset the server's default holds",
          "[config][security]") {
  TempDir dir;
  std::string errors;
  auto set = load(dir, "include: []\ncontrol: { socket: c.sock, idle_timeout: 90s }\n", errors);
  INFO(errors);
  REQUIRE(set);
  CHECK(set->control_idle_timeout == std::chrono::seconds(90));
  auto unset = load(dir, "include: []\ncontrol: { socket: c.sock }\n", errors);
  REQUIRE(unset);
  CHECK_FALSE(unset->control_idle_timeout);

  const std::string f = dir.file("faultd.yaml");
  CHECK_FALSE(load(dir, "include: []\ncontrol: { idle_timeout: 500ms }\n", errors));
  CHECK_THAT(errors, Catch::Contains(f + ":2:26: idle_timeout must be at least 1s"));
  CHECK_FALSE(load(dir, "include: []\ncontrol: { idle_timeout: soon }\n", errors));
  CHECK_THAT(errors, Catch::Contains(f + ":2:26: 'idle_timeout' must be a duration"));
}

TEST_CASE("a config that cannot do its job says so at the place it names it", "[config]") {
  TempDir dir;
  dir.write("rules.d/a.yaml", kRule);
  const std::string ok_hook = dir.write("hooks/ok", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(ok_hook, std::filesystem::perms::owner_all);
  dir.write("hooks/not-executable", "#!/bin/sh\nexit 0\n");
  std::string errors;

  SECTION("a complete setup has no setup error") {
    auto cfg = load(dir, R"(include: ["rules.d/*.yaml"]
sources: [{ name: plog, paths: ["logs/*.log"] }]
actions: { isolate: { argv: [hooks/ok] }, resume: { argv: [sh, -c, "exit 0"], after: isolate } }
)",
                    errors);
    REQUIRE(cfg);
    CHECK(cfg->setup_errors.empty());
  }
  SECTION("no rule: a missing rules directory names the include") {
    auto cfg = load(dir, R"(sources: [{ name: plog, paths: ["logs/*.log"] }]
include: ["missing.d/*.yaml"]
)",
                    errors);
    REQUIRE(cfg);
    CHECK(cfg->rules->size() == 0);
    CHECK_THAT(cfg->setup_errors.to_string(),
               Catch::Contains(dir.file("faultd.yaml") + ":2:10: no rules") &&
                   Catch::Contains("missing.d/*.yaml"));
  }
  SECTION("no source, without a webhook: an error; with one: a warning saying why") {
    auto cfg = load(dir, "include: [\"rules.d/*.yaml\"]\nsources: []\n", errors);
    REQUIRE(cfg);
    CHECK_THAT(cfg->setup_errors.to_string(),
               Catch::Contains(dir.file("faultd.yaml") + ":2:10: no sources"));
    dir.write("token", "s3cret\n");
    cfg = load(dir, "include: [\"rules.d/*.yaml\"]\nwebhook: { token_file: token }\n", errors);
    REQUIRE(cfg);
    CHECK(cfg->setup_errors.empty());
    CHECK_THAT(cfg->warnings.back(), Catch::Contains("no sources") && Catch::Contains("webhook"));
  }
  SECTION("a hook that does not exist, is not executable or is not in PATH") {
    auto cfg = load(dir, R"(include: ["rules.d/*.yaml"]
sources: [{ name: plog, paths: ["logs/*.log"] }]
actions:
  isolate: { argv: [hooks/isolate-devcie] }
  resume: { argv: [hooks/not-executable], after: isolate }
  clear: { argv: [faultd-no-such-hook-xyz] }
  diagnose: { argv: [hooks/], after: isolate }
)",
                    errors);
    REQUIRE(cfg);
    const std::string e = cfg->setup_errors.to_string();
    INFO(e);
    CHECK(cfg->setup_errors.size() == 4);
    CHECK_THAT(e, Catch::Contains(dir.file("faultd.yaml") + ":4:21: action 'isolate': hook '" +
                                  dir.file("hooks/isolate-devcie") + "' does not exist"));
    CHECK_THAT(e,
               Catch::Contains(":5:20: action 'resume'") && Catch::Contains("is not executable"));
    CHECK_THAT(e, Catch::Contains(":6:19: action 'clear': hook 'faultd-no-such-hook-xyz' is "
                                  "not found in PATH"));
    CHECK_THAT(e, Catch::Contains(":7:22: action 'diagnose'") && Catch::Contains("is not a file"));
  }
}

TEST_CASE("log.format is auto unless set to text, journal or json, any other value is an error",
          "[config]") {
  TempDir dir;
  std::string errors;
  auto unset = load(dir, "include: []\nlog: { level: warn }\n", errors);
  INFO(errors);
  REQUIRE(unset);
  CHECK(unset->log.format == LogFormat::Auto);
  CHECK(unset->log.level == "warn");
  for (const auto format :
       {LogFormat::Auto, LogFormat::Text, LogFormat::Journal, LogFormat::Json}) {
    auto cfg =
        load(dir, "include: []\nlog: { format: " + std::string(to_string(format)) + " }\n", errors);
    REQUIRE(cfg);
    CHECK(cfg->log.format == format);
  }

  const std::string f = dir.file("faultd.yaml");
  CHECK_FALSE(load(dir, "include: []\nlog:\n  format: syslog\n  colour: red\n", errors));
  CHECK_THAT(errors,
             Catch::Contains(f + ":3:11: log format must be one of auto, text, journal, json"));
  CHECK_THAT(errors, Catch::Contains(f + ":4:3: unknown key 'colour'"));
  CHECK_FALSE(load(dir, "include: []\nlog: { level: loud }\n", errors));
  CHECK_THAT(errors, Catch::Contains(
                         f + ":2:15: log level must be one of trace, debug, info, warn, error"));
}
