// The match forms beyond any/all: OR of ANDs (`any_of`), multi-line rules (`lines`,
// `max_lines`) across chunk boundaries with a caller-owned ScanContext, and what a rule adds to
// its findings (`recovery`, `annotations`).
#include <catch2/catch.hpp>

#include "daemon/core/yaml_check.hpp"
#include "rules/rule.hpp"
#include "tests/support/rules_support.hpp"

using namespace faultd;
using testing::build;
using testing::rules_of;
using testing::scan;
using Strings = std::vector<std::string>;

namespace {

std::vector<std::string> errors_of(const std::string& text) {
  ErrorList errors;
  const yaml::Ctx ctx{"t.yaml", &errors};
  auto doc = yaml::load_text(text, ctx);
  REQUIRE(doc);
  std::vector<RuleSpec> specs;
  parse_rules((*doc)["rules"], "t.yaml", specs, errors);
  std::vector<std::string> out;
  for (const auto& e : errors.all()) out.push_back(e.to_string());
  if (out.empty()) CHECK(specs.size() == 1);
  return out;
}

}  // namespace

TEST_CASE("any_of: every string of one alternative must occur on the line", "[rules][match]") {
  const auto set = build(R"(rules:
  - id: hb
    match:
      any_of:
        - ["[ERROR] [drv_soft_fault]", "Heartbeat lost", "(device="]
        - ["Device lost heartbeat"]
        - "Device lost heartbeart"
)");
  const auto s = scan(*set,
                      "[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] Heartbeat lost! "
                      "(device=1; old_count=1104)\n"
                      "[ascend] [ERROR] [drv_soft_fault] Heartbeat lost! but no device\n"
                      "Heartbeat lost (device=1; without the module\n"
                      "x Device lost heartbeat y\n"
                      "x Device lost heartbeart y\n"
                      "Device lost heart\n");
  CHECK(rules_of(s) == Strings{"hb@1", "hb@4", "hb@5"});
  // Only lines holding the longest literal of some alternative are evaluated (line 3 lacks
  // "[ERROR] [drv_soft_fault]").
  CHECK(s.stats.candidate_lines == 4);
}

TEST_CASE("any_of combines with any, all, level and regex (all must hold)", "[rules][match]") {
  const auto set = build(R"(rules:
  - id: r
    match:
      any_of: [[alpha, beta], [gamma]]
      all: [delta]
      level: ERROR
      regex: 'dev=(?P<device>\d+)'
)");
  const auto s = scan(*set,
                      "[ERROR] alpha beta delta dev=1\n"
                      "[ERROR] alpha delta dev=2\n"
                      "[ERROR] gamma dev=3\n"
                      "[INFO] gamma delta dev=4\n"
                      "(train pid=9) [ERROR] gamma delta dev=5\n"
                      "[ERROR] gamma delta\n");
  REQUIRE(rules_of(s) == Strings{"r@1", "r@5"});
  CHECK(s.findings[0].device == "1");
  CHECK(s.findings[1].device == "5");
}

TEST_CASE("multi-line: every entry within max_lines, in any order, fires once", "[rules][match]") {
  const auto set = build(R"(rules:
  - id: mooncake
    match:
      lines:
        - ["send request to", "connection refused"]
        - ["Initialize mooncake failed", "metadata_server"]
      max_lines: 3
)");
  SECTION("within one chunk") {
    const auto s = scan(*set,
                        "send request to 10.0.0.1 failed: connection refused\n"
                        "noise\n"
                        "Initialize mooncake failed, metadata_server=x\n"  // completes: line 3
                        "Initialize mooncake failed, metadata_server=x\n"  // starts over
                        "noise\nnoise\nnoise\n"
                        "send request to b: connection refused\n"  // line 8: 4 lines after 4
                        "Initialize mooncake failed, metadata_server=y\n"  // completes: line 9
                        "Initialize mooncake failed, metadata_server=z\n"
                        "send request to c: connection refused\n");  // other order: line 11
    CHECK(rules_of(s) == Strings{"mooncake@3", "mooncake@9", "mooncake@11"});
    REQUIRE(!s.findings.empty());
    CHECK(s.findings[0].text == "Initialize mooncake failed, metadata_server=x");
    CHECK(s.findings[0].offset == 58);
  }
  SECTION("too far apart") {
    const auto s = scan(*set,
                        "send request to a: connection refused\n"
                        "noise\nnoise\n"
                        "Initialize mooncake failed, metadata_server=x\n");
    CHECK(s.findings.empty());
  }
  SECTION("one entry's strings must share a line") {
    const auto s = scan(*set,
                        "send request to a\n"
                        "connection refused\n"
                        "Initialize mooncake failed, metadata_server=x\n");
    CHECK(s.findings.empty());
  }
  SECTION("across chunks with a context, not without one") {
    const std::string first = "send request to a: connection refused\nnoise\n";
    const std::string second = "Initialize mooncake failed, metadata_server=x\n";
    ScanContext context;
    CHECK(scan(*set, first, "plog", nullptr, 1, 0, &context).findings.empty());
    CHECK(context.files_tracked() == 1);
    CHECK(rules_of(scan(*set, second, "plog", nullptr, 3, first.size(), &context)) ==
          Strings{"mooncake@3"});
    CHECK(scan(*set, first, "plog", nullptr, 1, 0).findings.empty());
    CHECK(scan(*set, second, "plog", nullptr, 3, first.size()).findings.empty());
  }
  SECTION("files of one source keep apart") {
    ScanContext context;
    scan(*set, "send request to a: connection refused\n", "plog", nullptr, 1, 0, &context, "/a");
    CHECK(scan(*set, "x\nInitialize mooncake failed, metadata_server=x\n", "plog", nullptr, 1, 0,
               &context, "/b")
              .findings.empty());
    CHECK(rules_of(scan(*set, "x\nInitialize mooncake failed, metadata_server=x\n", "plog", nullptr,
                        2, 100, &context, "/a")) == Strings{"mooncake@3"});
  }
  SECTION("a truncated file does not complete old progress") {
    ScanContext context;
    scan(*set, "send request to a: connection refused\n", "plog", nullptr, 50, 0, &context);
    CHECK(scan(*set, "Initialize mooncake failed, metadata_server=x\n", "plog", nullptr, 1, 0,
               &context)
              .findings.empty());
  }
  SECTION("the context is bounded and starts over with another rule set") {
    ScanContext context;
    for (size_t i = 0; i < ScanContext::kMaxFiles + 10; ++i) {
      scan(*set, "send request to a: connection refused\n", "plog", nullptr, 1, 0, &context,
           "/f" + std::to_string(i));
    }
    CHECK(context.files_tracked() == ScanContext::kMaxFiles);
    const auto other = build(R"(rules:
  - id: mooncake
    match: { lines: [[send request to, connection refused], [Initialize mooncake failed]], max_lines: 3 }
)");
    scan(*set, "send request to a: connection refused\n", "plog", nullptr, 1, 0, &context, "/g");
    CHECK(scan(*other, "Initialize mooncake failed\n", "plog", nullptr, 2, 40, &context, "/g")
              .findings.empty());
    CHECK(context.files_tracked() == 1);
  }
}

TEST_CASE("recovery and annotations are copied into findings", "[rules][match]") {
  const auto set = build(R"(rules:
  - id: back
    match: { any: "assertion:Recovery" }
    fault: { code: 80818C00 }
    recovery: true
  - id: diag
    match: { any: "Event id=0x80818c00" }
    annotations: { faultdiag_id: "0x80818C00", cause: "AI CPU check", suggestion: "1. isolate" }
)");
  const auto s = scan(*set, "x assertion:Recovery\n[EVENT] TDT Event id=0x80818c00.\n");
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].recovery);
  CHECK(s.findings[0].code == "80818C00");
  CHECK(s.findings[0].annotations.empty());
  CHECK_FALSE(s.findings[1].recovery);
  CHECK(s.findings[1].annotations == Fields{{"faultdiag_id", "0x80818C00"},
                                            {"cause", "AI CPU check"},
                                            {"suggestion", "1. isolate"}});
}

TEST_CASE("new keys change the rule set's hash; old rule sets keep theirs", "[rules][match]") {
  const std::string base = "rules:\n  - id: r\n    match: { any: x }\n";
  const auto plain = build(base);
  CHECK(build(base + "    recovery: true\n")->sha256() != plain->sha256());
  CHECK(build(base + "    annotations: { cause: c }\n")->sha256() != plain->sha256());
  CHECK(build(base + "    recovery: false\n")->sha256() == plain->sha256());
}

TEST_CASE("parse: mistakes in the new match forms are reported where they are", "[rules][match]") {
  CHECK(errors_of("rules:\n  - id: a\n    match: { any_of: [] }\n") ==
        Strings{"t.yaml:3:22: 'any_of' must be a non-empty list of lists of strings"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { any_of: [[a, \"\"]] }\n") ==
        Strings{"t.yaml:3:23: empty string in 'any_of'"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { any_of: [[]] }\n") ==
        Strings{"t.yaml:3:23: each item of 'any_of' is a string or a non-empty list of strings"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { lines: [[a], [b]] }\n") ==
        Strings{"t.yaml:3:12: 'lines' needs 'max_lines'"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { lines: [a], max_lines: 0 }\n").size() == 1);
  CHECK(errors_of("rules:\n  - id: a\n    match: { any: a, max_lines: 3 }\n") ==
        Strings{"t.yaml:3:33: 'max_lines' is only for a multi-line rule ('lines')"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { lines: [a], max_lines: 2, regex: x }\n") ==
        Strings{"t.yaml:3:47: 'regex' cannot be combined with 'lines' (a multi-line rule "
                "matches only its lines)"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { any: a }\n    recovery: maybe\n").size() == 1);
  CHECK(errors_of("rules:\n  - id: a\n    match: { any: a }\n    annotations: [x]\n") ==
        Strings{"t.yaml:4:18: 'annotations' must be a map of names to strings"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { any: a }\n    annotations: { 9x: y }\n") ==
        Strings{"t.yaml:4:20: annotation name '9x' is not a name ([A-Za-z_][A-Za-z0-9_]*)"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { any: a }\n    annotations: { x: [y] }\n") ==
        Strings{"t.yaml:4:23: annotation 'x' must be a string"});
  CHECK(errors_of("rules:\n  - id: a\n    match: { any_of: [[a, b], c] }\n").empty());
}

TEST_CASE("specs built in code are checked like loaded ones", "[rules][match]") {
  RuleSpec spec;
  spec.id = "m";
  spec.lines = {{"a"}, {"b"}};
  ErrorList errors;
  CHECK(RuleSet::build({spec}, CodeLevels{}, errors) == nullptr);  // no max_lines
  CHECK(errors.to_string().find("'max_lines' must be between 1 and") != std::string::npos);
  spec.max_lines = 2;
  spec.any = {"a"};
  ErrorList errors2;
  CHECK(RuleSet::build({spec}, CodeLevels{}, errors2) == nullptr);
  spec.any.clear();
  spec.any_of = {{}};
  spec.lines.clear();
  spec.max_lines = 0;
  ErrorList errors3;
  CHECK(RuleSet::build({spec}, CodeLevels{}, errors3) == nullptr);
  CHECK(errors3.to_string().find("empty alternative in 'any_of'") != std::string::npos);
}

TEST_CASE("a rule without a literal is searched over the chunk, beside prefiltered rules",
          "[rules][match]") {
  const auto set = build(R"(rules:
  - id: literal
    match: { any: "Heartbeat lost" }
  - id: code
    match: { regex: '[EWI][A-Z0-9][0-9]{4}[):]' }
  - id: both
    match: { all: ["EI0002"] }
)");
  const auto s = scan(*set,
                      "noise\n"
                      "EI0002: notify timeout\n"
                      "Heartbeat lost EE1002:\n"
                      "Heartbeat lost\n");
  CHECK(rules_of(s) == Strings{"code@2", "both@2", "literal@3", "code@3", "literal@4"});
  CHECK(s.stats.candidate_lines == 3);  // "noise" is never evaluated; the others once each
}
