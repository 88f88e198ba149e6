// Loading rule YAML: every kind of mistake is reported at its exact file:line:column, parsing
// carries on after an error, and only clean rules come out.
#include <catch2/catch.hpp>

#include "daemon/core/yaml_check.hpp"
#include "rules/rule.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;

namespace {

struct Parsed {
  std::vector<RuleSpec> specs;
  std::vector<std::string> errors;  // "file:line:column: message"
};

Parsed parse(const std::string& text) {
  Parsed p;
  ErrorList errors;
  const yaml::Ctx ctx{"t.yaml", &errors};
  auto doc = yaml::load_text(text, ctx);
  REQUIRE(doc);
  parse_rules((*doc)["rules"], "t.yaml", p.specs, errors);
  for (const auto& e : errors.all()) p.errors.push_back(e.to_string());
  return p;
}

// The single error of `text`, which must start with `prefix`.
void require_one_error(const std::string& text, const std::string& prefix) {
  const Parsed p = parse(text);
  INFO(text);
  INFO(Catch::Detail::stringify(p.errors));
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].substr(0, prefix.size()) == prefix);
  CHECK(p.specs.empty());
}

}  // namespace

TEST_CASE("parse: a complete rule becomes a spec with its position", "[rules][parse]") {
  const Parsed p = parse(R"(
rules:
  - id: ascend.asd.feature-abnormal
    description: anomaly
    sources: [plog, device-log]
    match:
      any: ["accuracy sensitivity feature abnormal"]
      all: [ERROR, abnormal]
      regex: 'device_id=(?P<device>\d+)'
      level: [ERROR, WARNING]
    device: "{device}"
    fault: { code: 80818c00, level: SeparateNPU }
  - id: b
    sources: training
    match: { any: x, level: ERROR }
    fault: { code: "0x80818C05" }
)");
  INFO(Catch::Detail::stringify(p.errors));
  REQUIRE(p.errors.empty());
  REQUIRE(p.specs.size() == 2);
  const RuleSpec& a = p.specs[0];
  CHECK(a.id == "ascend.asd.feature-abnormal");
  CHECK(a.description == "anomaly");
  CHECK(a.sources == std::vector<std::string>{"plog", "device-log"});
  CHECK(a.any == std::vector<std::string>{"accuracy sensitivity feature abnormal"});
  CHECK(a.all == std::vector<std::string>{"ERROR", "abnormal"});
  CHECK(a.regex == R"(device_id=(?P<device>\d+))");
  CHECK(a.levels == std::vector<std::string>{"ERROR", "WARNING"});
  CHECK(a.device == "{device}");
  CHECK(a.code == "80818C00");  // a literal code is stored normalized
  REQUIRE(a.fault_level);
  CHECK(*a.fault_level == FaultLevel::SeparateNPU);
  CHECK(a.file == "t.yaml");
  CHECK(a.line == 3);
  CHECK(a.column == 5);
  const RuleSpec& b = p.specs[1];
  CHECK(b.sources == std::vector<std::string>{"training"});  // a single string is a list of one
  CHECK(b.any == std::vector<std::string>{"x"});
  CHECK(b.levels == std::vector<std::string>{"ERROR"});
  CHECK(b.code == "80818C05");
  CHECK(!b.fault_level);
  CHECK(b.line == 13);
}

TEST_CASE("parse: a plain YAML code scalar and a template are accepted", "[rules][parse]") {
  const Parsed p = parse(R"(
rules:
  - id: plain
    match: { any: x }
    fault: { code: 80818C00 }
  - id: templated
    match: { regex: 'code=(?P<code>[0-9a-f]+)' }
    fault: { code: "{code}" }
)");
  REQUIRE(p.errors.empty());
  CHECK(p.specs[0].code == "80818C00");
  CHECK(p.specs[1].code == "{code}");
}

TEST_CASE("parse: unknown keys are reported where they are", "[rules][parse]") {
  require_one_error(R"(rules:
  - id: a
    match: { any: x }
    colour: red
)",
                    "t.yaml:4:5: unknown key 'colour' in rule (allowed: id, description, sources, "
                    "source_types, match, device, fault, mode, detect, recovery, annotations, "
                    "expect_every, expect_within, after, until)");
  require_one_error(R"(rules:
  - id: a
    match: { any: x }
    source_types: [command, pipe]
)",
                    "t.yaml:4:29: source type 'pipe' is not one of file, command, "
                    "command_output, kmsg, overflow_dump");
  require_one_error(R"(rules:
  - id: a
    match:
      any: x
      never: y
)",
                    "t.yaml:5:7: unknown key 'never' in match");
  require_one_error(R"(rules:
  - id: a
    match: { any: x }
    fault: { code: 80818C00, severity: high }
)",
                    "t.yaml:4:30: unknown key 'severity' in fault");
}

TEST_CASE("parse: wrong types are reported at the value", "[rules][parse]") {
  require_one_error("rules:\n  - id: [a, b]\n    match: { any: x }\n",
                    "t.yaml:2:9: 'id' must be a string, not a list");
  require_one_error("rules:\n  - id: a\n    match: { any: { x: 1 } }\n",
                    "t.yaml:3:19: 'any' must be a string or a list of strings");
  require_one_error("rules:\n  - id: a\n    match: { all: [x, [y]] }\n",
                    "t.yaml:3:23: an item of 'all' must be a string, not a list");
  require_one_error("rules:\n  - id: a\n    match: [x]\n",
                    "t.yaml:3:12: match must be a map, not a list");
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    fault: 80818C00\n",
                    "t.yaml:4:12: fault must be a map, not a scalar");
  require_one_error("rules:\n  - just a string\n", "t.yaml:2:5: rule must be a map, not a scalar");
  const Parsed p = parse("rules: {id: a}\n");
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "t.yaml:1:8: 'rules' must be a list of rules");
}

TEST_CASE("parse: an invalid regex is reported at the regex with RE2's reason", "[rules][parse]") {
  require_one_error("rules:\n  - id: a\n    match:\n      regex: 'device=(\\d+'\n",
                    "t.yaml:4:14: invalid regex: missing ): device=(\\d+");
  require_one_error("rules:\n  - id: a\n    match:\n      regex: '(?<dev>\\d+)'\n",
                    "t.yaml:4:14: invalid regex: invalid perl operator: (?< (named groups are "
                    "written (?P<name>...))");
  require_one_error("rules:\n  - id: a\n    match:\n      regex: '(?P<1dev>\\d+)'\n",
                    "t.yaml:4:14: regex group name '1dev' is not a field name");
  require_one_error("rules:\n  - id: a\n    match:\n      regex: ''\n",
                    "t.yaml:4:14: 'regex' is empty");
}

TEST_CASE("parse: fields names a known field reader", "[rules][parse]") {
  require_one_error("rules:\n  - id: a\n    match: { any: x, fields: steps }\n",
                    "t.yaml:3:30: unknown 'fields' reader 'steps' (known: step)");
  const Parsed ok = parse("rules:\n  - id: a\n    match: { any: loss, fields: step }\n");
  REQUIRE(ok.specs.size() == 1);
  CHECK(ok.specs[0].step_fields);
}

TEST_CASE("parse: an unknown fault level lists the known ones", "[rules][parse]") {
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    fault: { level: Sometimes }\n",
                    "t.yaml:4:21: unknown fault level 'Sometimes' (known: NotHandleFault, "
                    "SubHealthFault, RestartRequest, RestartBusiness, FreeRestartNPU, RestartNPU, "
                    "PreSeparateNPU, SeparateNPU, ManuallySeparateNPU)");
}

TEST_CASE("parse: a match without any, all or regex is an error", "[rules][parse]") {
  require_one_error(
      "rules:\n  - id: a\n    match: { level: ERROR }\n",
      "t.yaml:3:12: match needs at least one of 'any', 'all', 'any_of', 'lines' or 'regex'");
  require_one_error("rules:\n  - id: a\n", "t.yaml:2:5: rule 'a' has no 'match'");
}

TEST_CASE("parse: empty strings and lists in a match are errors at the item", "[rules][parse]") {
  require_one_error("rules:\n  - id: a\n    match: { any: [ok, \"\"] }\n",
                    "t.yaml:3:24: empty string in 'any'");
  require_one_error("rules:\n  - id: a\n    match: { any: x, all: \"\" }\n",
                    "t.yaml:3:27: empty string in 'all'");
  require_one_error("rules:\n  - id: a\n    match: { any: [] }\n",
                    "t.yaml:3:19: 'any' is an empty list");
  require_one_error("rules:\n  - id: a\n    match: { any: \"two\\nlines\" }\n",
                    "t.yaml:3:19: 'any' strings cannot contain a newline");
}

TEST_CASE("parse: ids must be label-safe and present", "[rules][parse]") {
  require_one_error("rules:\n  - id: Bad_Id\n    match: { any: x }\n",
                    "t.yaml:2:9: rule id 'Bad_Id' must match ^[a-z0-9][a-z0-9._-]*$");
  require_one_error("rules:\n  - id: .hidden\n    match: { any: x }\n",
                    "t.yaml:2:9: rule id '.hidden' must match");
  require_one_error("rules:\n  - id: a\"b\n    match: { any: x }\n", "t.yaml:2:9: rule id 'a\"b'");
  require_one_error("rules:\n  - id: " + std::string(129, 'a') + "\n    match: { any: x }\n",
                    "t.yaml:2:9: rule id '");
  require_one_error("rules:\n  - description: no id\n    match: { any: x }\n",
                    "t.yaml:2:5: rule has no 'id'");
}

TEST_CASE("parse: levels, templates and codes are validated", "[rules][parse]") {
  require_one_error("rules:\n  - id: a\n    match: { any: x, level: [ERROR, error] }\n",
                    "t.yaml:3:37: level 'error' never matches: line levels are upper-case words");
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    device: \"{device\"\n",
                    "t.yaml:4:13: device: unclosed '{' at offset 0");
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    device: \"dev}\"\n",
                    "t.yaml:4:13: device: unmatched '}' at offset 3");
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    device: \"{dev-id}\"\n",
                    "t.yaml:4:13: device: '{dev-id}' is not a field name");
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    fault: { code: \"80 81\" }\n",
                    "t.yaml:4:20: fault code '80 81' is not a code such as 80818C00");
  require_one_error("rules:\n  - id: a\n    match: { any: x }\n    fault: { code: \"{c\" }\n",
                    "t.yaml:4:20: fault code: unclosed '{'");
  require_one_error("rules:\n  - id: a\n    sources: [plog, \"\"]\n    match: { any: x }\n",
                    "t.yaml:3:21: empty string in 'sources'");
}

TEST_CASE("parse: every error is reported and the good rules still come out", "[rules][parse]") {
  const Parsed p = parse(R"(rules:
  - id: good-1
    match: { any: x }
  - id: Bad
    match: { any: x }
  - id: also-bad
    match: { regex: '(' }
    fault: { level: Never }
  - id: good-2
    match: { all: [x, y] }
)");
  REQUIRE(p.errors.size() == 3);
  CHECK(p.errors[0].rfind("t.yaml:4:9: ", 0) == 0);
  CHECK(p.errors[1].rfind("t.yaml:7:21: invalid regex", 0) == 0);
  CHECK(p.errors[2].rfind("t.yaml:8:21: unknown fault level 'Never'", 0) == 0);
  REQUIRE(p.specs.size() == 2);
  CHECK(p.specs[0].id == "good-1");
  CHECK(p.specs[1].id == "good-2");
}

TEST_CASE("parse: duplicate ids are reported by build at the second definition", "[rules][parse]") {
  Parsed p = parse(R"(rules:
  - id: dup
    match: { any: x }
  - id: other
    match: { any: y }
  - id: dup
    match: { any: z }
)");
  REQUIRE(p.errors.empty());
  ErrorList errors;
  const auto set = RuleSet::build(p.specs, CodeLevels{}, errors);
  CHECK(set == nullptr);
  REQUIRE(errors.size() == 1);
  CHECK(errors.all()[0].to_string() ==
        "t.yaml:6:5: duplicate rule id 'dup' (first defined at t.yaml:2:5)");
}

TEST_CASE("parse: build re-checks specs made in code", "[rules][parse]") {
  RuleSpec s;
  s.id = "Not Valid";
  s.file = "code";
  s.line = 1;
  s.column = 1;
  s.regex = "(";
  ErrorList errors;
  CHECK(RuleSet::build({s}, CodeLevels{}, errors) == nullptr);
  REQUIRE(errors.size() == 2);
  CHECK(errors.all()[0].to_string().rfind("code:1:1: rule 'Not Valid': rule id", 0) == 0);
  CHECK(errors.all()[1].to_string().rfind("code:1:1: rule 'Not Valid': invalid regex", 0) == 0);
}

TEST_CASE("parse: load_rule_file reports file-level problems", "[rules][parse]") {
  faultd::testing::TempDir dir;
  std::vector<RuleSpec> specs;

  SECTION("unknown top-level key") {
    const auto path = dir.write("r.yaml", "rules: []\nrule: []\n");
    ErrorList errors;
    load_rule_file(path, specs, errors);
    REQUIRE(errors.size() == 1);
    CHECK(errors.all()[0].to_string() ==
          path + ":2:1: unknown key 'rule' in rule file (allowed: rules)");
  }
  SECTION("YAML syntax error with its position") {
    const auto path = dir.write("r.yaml", "rules:\n  - id: a\n    match: { any: [x }\n");
    ErrorList errors;
    load_rule_file(path, specs, errors);
    REQUIRE(errors.size() == 1);
    CHECK(errors.all()[0].file == path);
    CHECK(errors.all()[0].line == 3);
  }
  SECTION("missing file") {
    ErrorList errors;
    load_rule_file(dir.file("absent.yaml"), specs, errors);
    REQUIRE(errors.size() == 1);
    CHECK(errors.all()[0].message == "cannot read file");
  }
  SECTION("an empty file has no rules and no error") {
    ErrorList errors;
    load_rule_file(dir.write("r.yaml", "# nothing yet\n"), specs, errors);
    CHECK(errors.empty());
    CHECK(specs.empty());
  }
  SECTION("rules are read with the file's name") {
    const auto path = dir.write("r.yaml", "rules:\n  - id: a\n    match: { any: x }\n");
    ErrorList errors;
    load_rule_file(path, specs, errors);
    CHECK(errors.empty());
    REQUIRE(specs.size() == 1);
    CHECK(specs[0].file == path);
    CHECK(specs[0].line == 2);
  }
}

TEST_CASE("recovery: true marks a rule's findings as recoveries") {
  const Parsed p = parse(R"(
rules:
  - id: r.recovered
    match: { any: ["recovered"] }
    recovery: true
  - id: r.fault
    match: { any: ["fault"] }
)");
  INFO(Catch::Detail::stringify(p.errors));
  REQUIRE(p.specs.size() == 2);
  CHECK(p.specs[0].recovery);
  CHECK_FALSE(p.specs[1].recovery);
  require_one_error(R"(
rules:
  - id: r.bad
    match: { any: ["x"] }
    recovery: maybe
)",
                    "t.yaml:5:15:");
}

TEST_CASE("parse: liveness keys become the rule's detector", "[rules][liveness][parse]") {
  const Parsed p = parse(R"(rules:
  - id: a
    match: { any: ["Starting Training Model", "overflow cond:", "Training Over!"] }
    after: "Starting Training"
    until: ["Training Over!"]
    expect_within: 90m
  - id: b
    match: { any_of: [["heart", "beat"]] }
    expect_every: 30s
)");
  INFO(Catch::Detail::stringify(p.errors));
  REQUIRE(p.errors.empty());
  REQUIRE(p.specs.size() == 2);
  REQUIRE(p.specs[0].detect);
  CHECK(p.specs[0].detect->type == DetectorType::ExpectWithin);
  CHECK(p.specs[0].detect->expect == 90min);
  CHECK(p.specs[0].detect->after == std::vector<std::string>{"Starting Training"});
  CHECK(p.specs[0].detect->until == std::vector<std::string>{"Training Over!"});
  REQUIRE(p.specs[1].detect);
  CHECK(p.specs[1].detect->type == DetectorType::ExpectEvery);
  CHECK(p.specs[1].detect->expect == 30s);
}

TEST_CASE("parse: liveness mistakes are reported at file:line:column", "[rules][liveness][parse]") {
  require_one_error(R"(rules:
  - id: a
    match: { any: [x, y] }
    expect_within: 10m
)",
                    "t.yaml:4:20: 'expect_within' needs 'after': the lines that start the wait");
  require_one_error(R"(rules:
  - id: a
    match: { any: [x] }
    expect_every: 0s
)",
                    "t.yaml:4:19: 'expect_every' must be longer than 0s");
  require_one_error(R"(rules:
  - id: a
    match: { any: [x] }
    until: [done]
)",
                    "t.yaml:4:12: 'until' needs 'expect_every' or 'expect_within'");
  require_one_error(R"(rules:
  - id: a
    match: { any: [x] }
    expect_every: 1m
    expect_within: 1m
)",
                    "t.yaml:5:20: give 'expect_every' or 'expect_within', not both");
  require_one_error(R"(rules:
  - id: a
    match: { any: ["Rendezvous complete", "Starting elastic"] }
    after: ["Starting elastic", "Launching"]
    expect_within: 1m
)",
                    "t.yaml:4:33: 'after' string 'Launching' overlaps none of the rule's "
                    "`any`/`any_of` strings: no line it matches would carry it");
  require_one_error(R"(rules:
  - id: a
    match: { any: [x] }
    expect_every: 1m
    detect: { type: stall }
)",
                    "t.yaml:4:19: a liveness rule ('expect_every', 'expect_within') has no "
                    "'detect'");
  require_one_error(R"(rules:
  - id: a
    match: { any: [x] }
    detect: { type: expect_every }
)",
                    "t.yaml:4:21: 'expect_every' is a rule key: write `expect_every: T` beside "
                    "`match:`, not in `detect:`");
  require_one_error(R"(rules:
  - id: a
    match: { regex: 'x(?P<y>\d)' }
    expect_every: 1m
)",
                    "t.yaml:4:19: a liveness rule needs `match: {any: [...]}` or `any_of` (one "
                    "line each)");
}
