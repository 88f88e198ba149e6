// Matching semantics of RuleSet::scan: what matches, what a finding holds, and where.
#include <catch2/catch.hpp>

#include "daemon/core/newlines.hpp"
#include "rules/rule.hpp"
#include "tests/support/rules_support.hpp"

using namespace faultd;

namespace {

using testing::build;
using testing::rules_of;
using testing::scan;
using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("line_level: the first [WORD] at the start of the line", "[rules][engine]") {
  CHECK(line_level("[ERROR] AICPU(26533,aicpu_scheduler):2025 ...") == "ERROR");
  CHECK(line_level("[WARNING] DEBUG(2950752,fffee7e591e0,python):...") == "WARNING");
  CHECK(line_level(" \t[EVENT] TDT(4717,tsdaemon)") == "EVENT");
  CHECK(line_level("[ERROR]") == "ERROR");
  // Launcher prefixes (docs/log-formats.md §4) are skipped, several of them too.
  CHECK(line_level("(train pid=8464) [ERROR] x") == "ERROR");
  CHECK(line_level("(pid=1) [WARNING] x") == "WARNING");
  CHECK(line_level("(EngineCore_DP0 pid=1228) [ERROR] x") == "ERROR");
  CHECK(line_level("[rank7]: [ERROR] x") == "ERROR");
  CHECK(line_level("rank3: [EVENT] x") == "EVENT");
  CHECK(line_level("(train pid=1) [rank12]: [ERROR] x") == "ERROR");
  // Look-alikes are not prefixes.
  CHECK(line_level("(pid=) [ERROR] x") == "");
  CHECK(line_level("(train pid=12a) [ERROR] x") == "");
  CHECK(line_level("(trainpid=1) [ERROR] x") == "");
  CHECK(line_level("[rank]: [ERROR] x") == "");
  CHECK(line_level("[rank7] [ERROR] x") == "");
  CHECK(line_level("ranks3: [ERROR] x") == "");
  CHECK(line_level("(" + std::string(80, 'a') + " pid=1) [ERROR] x") == "");
  CHECK(strip_launcher_prefix("(train pid=8464) [rank1953]: EI0002: x") == "EI0002: x");
  CHECK(strip_launcher_prefix("no prefix") == "no prefix");
  CHECK(line_level("[Error] x") == "");
  CHECK(line_level("[] x") == "");
  CHECK(line_level("[ERROR x") == "");
  CHECK(line_level("[ERROR") == "");
  CHECK(line_level("") == "");
  CHECK(line_level("ERROR] x") == "");
  CHECK(line_level("[INFO] - INFO - step") == "INFO");
}

TEST_CASE("engine: none refuses a line that holds one of its strings", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: gave-up
    match: { any: "connect failed", none: [", retrying", "error Connection refused"] }
)");
  const auto s = scan(*set,
                      "connect failed: timed out\n"                            // 1
                      "connect failed: timed out, retrying\n"                  // 2: goes on
                      "connect failed, error Connection refused, revents 8\n"  // 3: goes on
                      "[rank1]: connect failed, retrying\n"  // 4: behind an envelope
                      "connect failed after 35 tries\n");    // 5
  CHECK(rules_of(s) == Strings{"gave-up@1", "gave-up@5"});
}

TEST_CASE("engine: any needs one of its strings, all needs every one", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: any
    match: { any: [alpha, beta] }
  - id: all
    match: { all: [alpha, gamma] }
  - id: both
    match: { any: [beta], all: [delta] }
)");
  const auto s = scan(*set,
                      "alpha\n"         // any
                      "beta\n"          // any
                      "gamma alpha\n"   // any, all
                      "gamma\n"         // nothing
                      "delta beta\n"    // any, both
                      "delta only\n"    // nothing
                      "ALPHA BETA\n");  // nothing: case-sensitive
  CHECK(rules_of(s) == Strings{"any@1", "any@2", "any@3", "all@3", "any@5", "both@5"});
}

TEST_CASE("engine: the level filter compares the line's leading [WORD]", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: err
    match: { any: boom, level: ERROR }
  - id: warn-or-err
    match: { any: boom, level: [WARNING, ERROR] }
)");
  const auto s = scan(*set,
                      "[ERROR] RUNTIME(1,python): boom\n"
                      "[WARNING] RUNTIME(1,python): boom\n"
                      "[INFO] RUNTIME(1,python): boom [ERROR]\n"
                      "boom [ERROR]\n"
                      "  [ERROR] boom\n");
  CHECK(rules_of(s) ==
        Strings{"err@1", "warn-or-err@1", "warn-or-err@2", "err@5", "warn-or-err@5"});
}

TEST_CASE("engine: a regex must match, and its named groups become fields", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match:
      any: "Task exception"
      regex: 'device_id=(?P<device>\d+), stream_id=(?P<stream>\d+)'
    fault: { code: "{stream}" }
)");
  const auto s =
      scan(*set,
           "[ERROR] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 [engine.cc:1263]163618 "
           "ReportExceptProc:Task exception! device_id=3, stream_id=17, task_id=43\n"
           "Task exception without ids\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].device == "3");  // default device template "{device}"
  CHECK(s.findings[0].code == "17");
  CHECK(s.stats.candidate_lines == 2);
  CHECK(s.stats.findings == 1);
}

TEST_CASE("engine: the device follows docs/log-formats.md 11: tuple, path field, capture",
          "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match:
      any: "feature abnormal"
      regex: '^(?:.*?device_id=(?P<device>\d+))?(?:.*?host=(?P<host>\w+))?'
    fault: { code: "{host}" }
)");
  const Fields fields = {{"device", "5"}, {"host", "n1"}};
  const std::string data =
      "feature abnormal\n"
      "feature abnormal device_id=2 host=h2\n"
      "[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:7, RankID:8) feature abnormal device_id=2\n"
      "feature abnormal (PID: 1, Device: 6, RankID:-1)\n"
      "feature abnormal (PID:1, RankID:2) device_id=2\n";
  const auto s = scan(*set, data, "device-log", &fields);
  REQUIRE(s.findings.size() == 5);
  CHECK(s.findings[0].device == "5");  // from the path
  CHECK(s.findings[1].device == "5");  // the path field outranks an inline id
  CHECK(s.findings[2].device == "7");  // the torch_npu tuple outranks both
  CHECK(s.findings[3].device == "6");
  CHECK(s.findings[4].device == "5");  // a tuple without Device: names none
  const auto inline_only = scan(*set, data, "device-log", nullptr);
  REQUIRE(inline_only.findings.size() == 5);
  CHECK(inline_only.findings[0].device == "");
  CHECK(inline_only.findings[1].device == "2");  // no path field: the capture
  CHECK(inline_only.findings[2].device == "7");
  CHECK(inline_only.findings[4].device == "2");
  CHECK(torch_npu_device("(PID:13075, Device:0, RankID:8)") == "0");
  CHECK(torch_npu_device("(PID:1) Device:3") == "");  // outside the tuple
  CHECK(torch_npu_device("no tuple") == "");
}

TEST_CASE("engine: other fields: a capture wins over a path field", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: "hit", regex: '^(?:.*?host=(?P<host>\w+))?' }
    device: "{host}"
)");
  const Fields fields = {{"host", "n1"}};
  const auto s = scan(*set, "hit\nhit host=n2\n", "x", &fields);
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].device == "n1");
  CHECK(s.findings[1].device == "n2");
}

TEST_CASE("engine: templates combine text and fields, a missing field expands to nothing",
          "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: hit, regex: 'chip=(?P<chip>\w*)' }
    device: "npu{device}-chip{chip}"
  - id: literal
    match: { any: hit }
    device: "npu0"
)");
  const Fields fields = {{"device", "4"}};
  const auto s = scan(*set, "hit chip=1\n", "x", &fields);
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].device == "npu4-chip1");
  CHECK(s.findings[1].device == "npu0");
  // One missing field costs its own part only.
  const auto missing = scan(*set, "hit chip=1\n", "x", nullptr);
  CHECK(missing.findings[0].device == "npu-chip1");
  // No field at all: the bare literal text names nothing, so the value is unknown.
  const auto neither = scan(*set, "hit chip=\n", "x", nullptr);
  REQUIRE(neither.findings.size() == 2);
  CHECK(neither.findings[0].device == "");
  CHECK(neither.stats.device_refused == 0);  // unknown is not refused
}

TEST_CASE("engine: a device that is not a valid id is refused and counted", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: "dev=", regex: 'dev=(?P<device>\S+)' }
    fault: { level: SeparateNPU }
)");
  const auto s = scan(*set, "dev=../../x\ndev=7\ndev=" + std::string(65, '1') + "\n");
  REQUIRE(s.findings.size() == 3);
  CHECK(s.findings[0].device == "");
  CHECK(s.findings[0].level == FaultLevel::SeparateNPU);  // the finding itself is kept
  CHECK(s.findings[1].device == "7");
  CHECK(s.findings[2].device == "");
  CHECK(s.stats.device_refused == 2);
}

TEST_CASE(
    "engine: the job comes from the rule's capture, else the path field; a bad one is refused",
    "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: "failed", regex: '(?:job=(?P<job>\S+) )?failed' }
    fault: { level: SubHealthFault }
)");
  const Fields path_fields = {{"job", "ns1/pretrain-7b"}};
  const auto s = scan(*set,
                      "failed\n"                  // the path's job
                      "job=finetune.v2 failed\n"  // the line's own
                      "job=-rf failed\n"          // an option: refused, not the path's
                      "job=a/../b failed\n"       // a `..` component
                      "job=" +
                          std::string(129, 'j') + " failed\n",
                      "x", &path_fields);
  REQUIRE(s.findings.size() == 5);
  CHECK(s.findings[0].job == "ns1/pretrain-7b");
  CHECK(s.findings[1].job == "finetune.v2");
  CHECK(s.findings[2].job == "");
  CHECK(s.findings[3].job == "");
  CHECK(s.findings[4].job == "");
  CHECK(s.findings[4].level == FaultLevel::SubHealthFault);  // the finding itself is kept
  CHECK(s.stats.job_refused == 3);
  // No path field and no capture: no job, nothing refused.
  const auto none = scan(*set, "failed\n");
  REQUIRE(none.findings.size() == 1);
  CHECK(none.findings[0].job == "");
  CHECK(none.stats.job_refused == 0);
}

TEST_CASE("engine: codes are upper-cased and their level comes from the catalogue",
          "[rules][engine]") {
  CodeLevels levels;
  levels.levels["80818C00"] = FaultLevel::SeparateNPU;
  levels.levels["8C084E00"] = FaultLevel::FreeRestartNPU;
  levels.default_level = FaultLevel::SubHealthFault;
  const auto set = build(R"(rules:
  - id: from-line
    match: { any: "event_id=", regex: 'event_id=(?P<code>\w+)' }
    fault: { code: "{code}" }
  - id: pinned
    match: { any: "event_id=" }
    fault: { code: 8c084e00, level: RestartBusiness }
  - id: no-code
    match: { any: "event_id=" }
)",
                         levels);
  const auto s = scan(*set,
                      "event_id=0x80818c00\n"
                      "event_id=a4025021\n"
                      "event_id=not+valid\n");
  REQUIRE(s.findings.size() == 9);
  CHECK(s.findings[0].code == "80818C00");
  CHECK(s.findings[0].level == FaultLevel::SeparateNPU);
  CHECK(s.findings[1].code == "8C084E00");
  CHECK(s.findings[1].level == FaultLevel::RestartBusiness);  // the rule's level wins
  CHECK(s.findings[2].code == "");
  CHECK(s.findings[2].level == FaultLevel::SubHealthFault);  // no code: the default
  CHECK(s.findings[3].code == "A4025021");
  CHECK(s.findings[3].level == FaultLevel::SubHealthFault);  // unknown to the catalogue
  CHECK(s.findings[6].rule == "from-line");
  CHECK(s.findings[6].code == "NOT");  // \w stops at '+'
  CHECK(CodeLevels{}.resolve("80818C00") == FaultLevel::NotHandleFault);
}

TEST_CASE("engine: a code that is not label-safe is dropped and counted", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: "code=", regex: 'code=(?P<code>\S+)' }
    fault: { code: "{code}" }
)");
  const auto s = scan(*set, "code=a/b\ncode=" + std::string(33, 'A') + "\ncode=ok\n");
  REQUIRE(s.findings.size() == 3);
  CHECK(s.findings[0].code == "");
  CHECK(s.findings[1].code == "");
  CHECK(s.findings[2].code == "OK");
  CHECK(s.stats.code_refused == 2);
}

TEST_CASE("engine: sources restrict a rule, other sources use the unrestricted rules",
          "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: plog-only
    sources: plog
    match: { any: hit }
  - id: two
    sources: [plog, training]
    match: { any: hit }
  - id: everywhere
    match: { any: hit }
)");
  CHECK(rules_of(scan(*set, "hit\n", "plog")) == Strings{"plog-only@1", "two@1", "everywhere@1"});
  CHECK(rules_of(scan(*set, "hit\n", "training")) == Strings{"two@1", "everywhere@1"});
  CHECK(rules_of(scan(*set, "hit\n", "kernel")) == Strings{"everywhere@1"});
  CHECK(rules_of(scan(*set, "hit\n", "")) == Strings{"everywhere@1"});
  const auto restricted = build("rules:\n  - id: r\n    sources: plog\n    match: { any: hit }\n");
  CHECK(scan(*restricted, "hit\n", "kernel").findings.empty());
}

TEST_CASE("engine: line numbers and offsets count from the chunk's start", "[rules][engine]") {
  const auto set = build("rules:\n  - id: r\n    match: { any: HIT }\n");
  const std::string data = "a\nHIT one\n\nb\nc HIT\nHIT HIT\nlast HIT";  // no final '\n'
  const auto s = scan(*set, data, "plog", nullptr, 41, 1000);
  REQUIRE(s.findings.size() == 4);
  CHECK(s.findings[0].line == 42);
  CHECK(s.findings[0].offset == 1002);
  CHECK(s.findings[0].text == "HIT one");
  CHECK(s.findings[1].line == 45);
  CHECK(s.findings[1].offset == 1000 + data.find("c HIT"));
  CHECK(s.findings[2].line == 46);  // two triggers on one line: one finding
  CHECK(s.findings[2].text == "HIT HIT");
  CHECK(s.findings[3].line == 47);  // the partial last line is matched too
  CHECK(s.findings[3].text == "last HIT");
  CHECK(s.findings[3].offset == 1000 + data.size() - 8);
  CHECK(s.stats.candidate_lines == 4);
}

TEST_CASE("engine: line numbers from the chunk's line marks are those counted", "[rules][engine]") {
  // A hit every few hundred lines of a 200 KB chunk: numbered from the mark before it where
  // the chunk's reader left marks (whole, or covering only its start), by counting otherwise.
  const auto set = build("rules:\n  - id: r\n    match: { any: HIT }\n");
  std::string data;
  std::vector<uint64_t> want;
  for (uint64_t line = 1; data.size() < 200000; ++line) {
    if (line % 337 == 5 || line == 1) {
      data += "HIT " + std::to_string(line) + "\n";
      want.push_back(line + 99);
    } else {
      data += std::string(line % 61, 'x') + "\n";
    }
  }
  LineMarks marks{0};
  count_newlines_marking(data, 0, 0, marks);
  LineMarks start_only(marks.begin(), marks.begin() + 7);
  for (const LineMarks* m : std::vector<const LineMarks*>{nullptr, &marks, &start_only}) {
    Chunk chunk;
    chunk.source = "plog";
    chunk.path = "/logs/x.log";
    chunk.data = data;
    chunk.first_line = 100;
    chunk.line_marks = m;
    std::vector<Finding> out;
    set->scan(chunk, TimePoint{}, out, nullptr, nullptr);
    std::vector<uint64_t> got;
    for (const auto& f : out) got.push_back(f.line);
    CHECK(got == want);
  }
}

TEST_CASE("engine: rules without a regex on one line expand their own templates",
          "[rules][engine]") {
  // Their expansions are reused between neighbouring rules of the same templates
  // (rules/ruleset.cpp, expand_device_and_code). Each rule below differs from the one before
  // it in one thing only: its code template, its device template, its step fields; the first
  // of the next line is the last of this one's twin.
  const auto set = build(R"(rules:
  - id: plain
    match: { any: hit }
  - id: coded
    match: { any: hit }
    fault: { code: "E1{scale}" }
  - id: plain-again
    match: { any: hit }
  - id: prefixed
    match: { any: hit }
    device: "npu{device}"
  - id: scaled
    match: { any: hit }
    fault: { code: "{scale}" }
  - id: scaled-from-step
    match: { any: hit, fields: step }
    fault: { code: "{scale}" }
  - id: plain-last
    match: { any: hit }
)");
  const auto s = scan(*set, "hit device_id=3 step: 7, scale: 1024\nhit device_id=5\n");
  REQUIRE(rules_of(s) == Strings{"plain@1", "coded@1", "plain-again@1", "prefixed@1", "scaled@1",
                                 "scaled-from-step@1", "plain-last@1", "plain@2", "coded@2",
                                 "plain-again@2", "prefixed@2", "scaled@2", "plain-last@2"});
  CHECK(s.findings[0].device == "3");
  CHECK(s.findings[1].code == "E1");  // no step fields: no scale to expand
  CHECK(s.findings[2].code == "");
  CHECK(s.findings[3].device == "npu3");
  CHECK(s.findings[4].code == "");
  CHECK(s.findings[5].code == "1024");  // the step fields' scale
  CHECK(s.findings[6].device == "3");
  CHECK(s.findings[7].device == "5");  // the next line's own device
  CHECK(s.findings[10].device == "npu5");
}

TEST_CASE("engine: one finding per matching rule per line, in rule order", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: second-trigger
    match: { any: [beta, alpha] }
  - id: first-trigger
    match: { any: alpha }
  - id: all-of-them
    match: { all: [alpha, beta] }
  - id: never
    match: { any: alpha, regex: 'zzz' }
)");
  const auto s = scan(*set, "x alpha beta alpha beta\n");
  CHECK(rules_of(s) == Strings{"second-trigger@1", "first-trigger@1", "all-of-them@1"});
}

TEST_CASE("engine: a finding carries the chunk's origin and the scan time", "[rules][engine]") {
  const auto set = build("rules:\n  - id: r\n    match: { any: HIT }\n");
  Chunk chunk;
  chunk.source = "plog";
  chunk.path = "/root/ascend/log/debug/plog/plog-1_20250101000000000.log";
  chunk.identity = {7, 8, 9, 10};
  chunk.data = "HIT\n";
  chunk.start_offset = 5;
  chunk.first_line = 3;
  chunk.noticed = TimePoint{} + std::chrono::seconds(10);
  const TimePoint now = TimePoint{} + std::chrono::seconds(11);
  std::vector<Finding> out;
  set->scan(chunk, now, out);  // stats are optional
  REQUIRE(out.size() == 1);
  CHECK(out[0].source == "plog");
  CHECK(out[0].file == chunk.path);
  CHECK(out[0].identity == chunk.identity);
  CHECK(out[0].time == now);
  CHECK(out[0].noticed == chunk.noticed);
  CHECK(out[0].id == 0);
}

TEST_CASE("engine: CRLF endings are not part of the line", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: "SDC error", regex: 'SDC error$' }
)");
  const auto s = scan(*set, "SilentCheck detects SDC error\r\nSDC error\r\n");
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].text == "SilentCheck detects SDC error");
}

TEST_CASE("engine: the evidence of a 1 MB line is capped", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: NEEDLE, regex: 'NEEDLE (?P<device>\d+)' }
)");
  std::string line =
      "[ERROR] " + std::string(600000, 'x') + " NEEDLE 7 " + std::string(500000, 'y');
  const auto s = scan(*set, line + "\nnext\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].text.size() == kMaxEvidenceBytes);
  CHECK(s.findings[0].text == line.substr(0, kMaxEvidenceBytes));
  CHECK(s.findings[0].device == "7");  // the whole line was matched, not the capped text

  // A cap never splits a UTF-8 sequence.
  std::string utf8 = "NEEDLE 1 " + std::string(kMaxEvidenceBytes - 10, 'a') + "\xe2\x82\xac tail";
  const auto u = scan(*set, utf8 + "\n");
  REQUIRE(u.findings.size() == 1);
  CHECK(u.findings[0].text.size() == kMaxEvidenceBytes - 1);
  CHECK(u.findings[0].text.back() == 'a');
}

TEST_CASE("engine: regexes see past NUL bytes and invalid UTF-8", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: r
    match: { any: abnormal, regex: '^(?:.*?device_id=(?P<device>\d+))?' }
)");
  const std::string line = std::string("abnormal \x00\xff\xfe\xc3\x28 ", 15) + "device_id=4";
  const auto s = scan(*set, line + "\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].device == "4");
  CHECK(s.findings[0].text == line);
}

TEST_CASE("engine: a rule with only a regex is searched over the chunk and is warned about",
          "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: regex-only
    match: { regex: 'Xid \d+' }
  - id: literal
    match: { any: "fallen off" }
)");
  REQUIRE(set->warnings().size() == 1);
  CHECK(set->warnings()[0] ==
        "t.yaml:2:5: rule 'regex-only' has no 'any' or 'all' literal: its regex runs over every "
        "chunk of its sources");
  const auto s = scan(*set, "NVRM: Xid 79, GPU has fallen off the bus\nnothing\nXid 13\n");
  CHECK(rules_of(s) == Strings{"regex-only@1", "literal@1", "regex-only@3"});
  CHECK(s.stats.candidate_lines == 2);  // "nothing" is never looked at
}

TEST_CASE("engine: a regex-only rule whose pattern depends on the text's end runs on every line",
          "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: at-end
    match: { regex: 'Xid \d+$' }
)");
  REQUIRE(set->warnings().size() == 1);
  CHECK(set->warnings()[0] ==
        "t.yaml:2:5: rule 'at-end' has no 'any' or 'all' literal: its regex runs on every line "
        "of its sources");
  const auto s = scan(*set, "Xid 79\r\nnothing\nXid 13, more\n");
  CHECK(rules_of(s) == Strings{"at-end@1"});
  CHECK(s.stats.candidate_lines == 3);
}

TEST_CASE("engine: short triggers work and are warned about", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: short
    match: { any: [OOM, "Out of Memory"] }
)");
  REQUIRE(set->warnings().size() == 1);
  CHECK(set->warnings()[0].find("trigger 'OOM' is shorter than 4 bytes") != std::string::npos);
  const auto s = scan(*set, "x\nOOM killer\ny Out of Memory!!!\nOOM and Out of Memory\n");
  CHECK(rules_of(s) == Strings{"short@2", "short@3", "short@4"});
}

TEST_CASE("engine: empty chunks and rule sets find nothing", "[rules][engine]") {
  const auto set = build("rules:\n  - id: r\n    match: { any: HIT }\n");
  CHECK(scan(*set, "").findings.empty());
  CHECK(scan(*set, "\n\n\n").findings.empty());
  ErrorList errors;
  const auto empty = RuleSet::build({}, CodeLevels{}, errors);
  REQUIRE(empty);
  CHECK(empty->size() == 0);
  CHECK(scan(*empty, "HIT\n").findings.empty());
}

TEST_CASE("engine: size and rule ids follow the rule order", "[rules][engine]") {
  const auto set = build(R"(rules:
  - id: zeta
    match: { any: z }
  - id: alpha
    match: { any: a }
)");
  CHECK(set->size() == 2);
  CHECK(set->rule_ids() == Strings{"zeta", "alpha"});
}

TEST_CASE("levels: the event's own level, else the catalogue's, else the rule's default",
          "[rules][engine]") {
  CodeLevels catalogue;
  catalogue.levels["80818C00"] = FaultLevel::SeparateNPU;
  const auto set = faultd::testing::build(R"(
rules:
  - id: t.event
    description: a vendor fault event
    match: { any: ["event "], regex: 'code=(?P<code>[0-9A-F]+)(?: level=(?P<level>\w+))?' }
    fault: { code: "{code}", level_from: level, default_level: SubHealthFault }
)",
                                          catalogue);
  auto level_of = [&](std::string_view line) {
    const auto s = faultd::testing::scan(*set, line);
    REQUIRE(s.findings.size() == 1);
    return s.findings[0].level;
  };
  CHECK(level_of("event code=A1 level=RestartBusiness\n") == FaultLevel::RestartBusiness);
  CHECK(level_of("event code=80818C00 level=NotHandleFault\n") == FaultLevel::NotHandleFault);
  CHECK(level_of("event code=80818C00 level=Bogus\n") == FaultLevel::SeparateNPU);
  CHECK(level_of("event code=80818C00\n") == FaultLevel::SeparateNPU);
  CHECK(level_of("event code=A1\n") == FaultLevel::SubHealthFault);
}

TEST_CASE("engine: lines of one shape find the triggers their own digits spell",
          "[rules][engine]") {
  // Lines the same but for digits share what they hold of triggers without digits (kept per
  // shape); a trigger with a digit is looked for on each line.
  const auto set = build(R"(rules:
  - id: loss
    match: { any: [lossy] }
  - id: xid
    match: { any: ["Xid 79"] }
)");
  const auto s = scan(*set,
                      "lossy Xid 78 at 10\n"  // 1
                      "lossy Xid 79 at 11\n"  // 2
                      "lossy Xid 78 at 12\n"  // 3
                      "lossy Xid 79 at 13\n"  // 4
                      "lossy step 100\n"      // 5
                      "lossy step 101\n");    // 6
  CHECK(rules_of(s) ==
        Strings{"loss@1", "loss@2", "xid@2", "loss@3", "loss@4", "xid@4", "loss@5", "loss@6"});
}

TEST_CASE("scan: a trigger split by colour or written by docker's JSON escaping",
          "[rules][engine]") {
  const auto set = testing::build(R"(
rules:
  - id: nccl.warn
    match: { any: ["NCCL WARN Call to"] }
    fault: { level: RestartBusiness }
  - id: hccl.trace
    match: { any: ["call trace: hcclRet -> "] }
    fault: { level: RestartBusiness }
)");
  // A logger colouring its level word cuts the literal in two: the line is still a candidate
  // (its source shows colour) and matches on its text; the offset is the line's own.
  const std::string coloured =
      "ordinary line\nnode-1:12:13 [2] NCCL \x1b[33mWARN\x1b[0m Call to connect failed\n";
  const auto s = testing::scan(*set, coloured);
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].rule == "nccl.warn");
  CHECK(s.findings[0].device == "2");
  CHECK(s.findings[0].offset == 14);
  CHECK(s.findings[0].text == "node-1:12:13 [2] NCCL \x1b[33mWARN\x1b[0m Call to connect failed");
  // docker's json-file logger writes '>' as \u003e.
  const auto d = testing::scan(
      *set,
      R"({"log":"[ERROR] HCCL(1,python):x [1][Recv]call trace: hcclRet -\u003e 13\n","stream":"stdout","time":"2026-03-14T09:26:53Z"})"
      "\n");
  CHECK(testing::rules_of(d) == std::vector<std::string>{"hccl.trace@1"});
}
