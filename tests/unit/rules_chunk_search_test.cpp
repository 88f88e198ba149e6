// A rule without a trigger literal has its regex searched once over the whole chunk instead of
// run on every line. These tests compare the engine's findings with a plain per-line RE2 match
// (the rule's semantics) on random text made to hit the edges: anchors, word boundaries,
// classes and dots that could cross a newline, CRLF endings, empty lines, a last line without
// its newline, empty matches.
#include <random>

#include <re2/re2.h>

#include "rules/envelope.hpp"
#include "rules/spec_check.hpp"
#include "tests/support/rules_support.hpp"

using namespace faultd;
using faultd::testing::scan;

namespace {

// Line numbers (1-based) of the lines `pattern` matches, each line stripped of '\n' and of a
// trailing '\r' and unwrapped (rules/envelope.hpp) as the engine hands lines to rules.
std::vector<uint64_t> per_line(const std::string& pattern, std::string_view text) {
  std::string error;
  const auto re = rules::compile_regex(pattern, error);
  REQUIRE(re);
  std::vector<uint64_t> out;
  uint64_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    Envelope env;
    unwrap(line, env);
    if (RE2::PartialMatch(env.message, *re)) out.push_back(number);
    start = end + 1;
  }
  return out;
}

std::shared_ptr<const RuleSet> regex_only(const std::string& pattern) {
  RuleSpec spec;
  spec.id = "r";
  spec.regex = pattern;
  spec.file = "t.yaml";
  ErrorList errors;
  auto set = RuleSet::build({spec}, CodeLevels{}, errors);
  INFO(errors.to_string());
  REQUIRE(set);
  return set;
}

std::vector<uint64_t> engine(const RuleSet& set, std::string_view text) {
  std::vector<uint64_t> out;
  for (const auto& f : scan(set, text).findings) out.push_back(f.line);
  return out;
}

std::string random_text(std::mt19937& rng, size_t lines) {
  static const std::vector<std::string> pieces = {
      "E",  "W", "I",  "Z",    "0",       "1",       "9",       ")",   ":", " ", "\t",   "\r",
      "ab", "x", "E1", "1234", "EZ9999:", "W30001)", "[ERROR]", "PID", "_", "-", "\xff", "é"};
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    const size_t n = rng() % 8;  // empty lines too
    for (size_t k = 0; k < n; ++k) text += pieces[rng() % pieces.size()];
    if (i + 1 < lines || rng() % 2 == 0) text += (rng() % 4 == 0) ? "\r\n" : "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("chunk search: findings equal per-line evaluation on random text",
          "[rules][engine][chunk-search]") {
  // Searched over the chunk, and the patterns that keep the per-line path ('$', \A, \z, a flag
  // group turning multi-line off): both must agree with the per-line reference.
  const std::vector<std::string> patterns = {
      "[EWI][A-Z0-9][0-9]{4}[):]",  // FaultDiag's AISW_CANN_ERRCODE_Custom
      "^E",
      "^$|^ab",
      "\\bE1\\b",
      "\\Bb",
      "x\\s+ab",
      "x[^y]ab",
      ":.E",
      "(?s)x.ab",
      "(?m)^ab",
      "(?i)pid",
      "9\\r?$",
      "\\Aab",
      "ab\\z",
      "(?-m:^x)",
      "x*",
      "[\\x{ff}]",
  };
  std::mt19937 rng(20261122);
  for (const auto& pattern : patterns) {
    const auto set = regex_only(pattern);
    for (int round = 0; round < 200; ++round) {
      const std::string text = random_text(rng, 1 + rng() % 40);
      INFO("pattern " << pattern << " text '" << text << "'");
      REQUIRE(engine(*set, text) == per_line(pattern, text));
    }
  }
}

TEST_CASE("chunk search: patterns that depend on the text's end keep the per-line path",
          "[rules][engine][chunk-search]") {
  for (const std::string pattern : {"9$", "\\Aab", "ab\\z", "(?-m:^x)", "(?i-m)^x"}) {
    const auto set = regex_only(pattern);
    REQUIRE(set->warnings().size() == 1);
    CHECK(set->warnings()[0].find("runs on every line") != std::string::npos);
  }
  for (const std::string pattern : {"^x", "(?i)x\\b", "(?P<device>\\d+)"}) {
    const auto set = regex_only(pattern);
    REQUIRE(set->warnings().size() == 1);
    CHECK(set->warnings()[0].find("runs over every chunk") != std::string::npos);
  }
}

TEST_CASE("chunk search: only hit lines are evaluated, and with the other rules of the line",
          "[rules][engine][chunk-search]") {
  const auto set = faultd::testing::build(R"(rules:
  - id: errcode
    match: { regex: '(?P<code>[EWI][A-Z0-9][0-9]{4})[):]' }
    fault: { code: "{code}" }
  - id: literal
    match: { any: "device lost" }
)");
  const std::string text =
      "step 1 loss 0.5\n"
      "EZ9999: device lost\n"
      "step 2 loss 0.4\n"
      "W30001) warn, device lost\r\n"
      "E1234: too short\n"
      "EI0002:";
  const auto s = scan(*set, text);
  REQUIRE(set->warnings().size() == 1);
  CHECK(set->warnings()[0].find("runs over every chunk") != std::string::npos);
  CHECK(faultd::testing::rules_of(s) ==
        std::vector<std::string>{"errcode@2", "literal@2", "errcode@4", "literal@4", "errcode@6"});
  CHECK(s.findings[0].code == "EZ9999");
  CHECK(s.findings[4].code == "EI0002");
  CHECK(s.findings[4].offset == text.rfind('\n') + 1);
  CHECK(s.stats.candidate_lines == 3);
}

TEST_CASE("engine: a source's triggers adapted to its text find what the view's find",
          "[rules][engine]") {
  // After the first MiB a source reads, its ScanContext rebuilds the view's triggers with
  // windows chosen for that text (rules/prefilter.hpp, BlockCounts). The findings of 4 MiB read
  // in chunks with one context equal those of the same chunks each with a fresh context (which
  // never reaches the sample). "NVRM: Xid" sets a window of nine bytes, so that of "NCCL WARN Cuda
  // failure" ends in "WARN" unless adapted: every other line of the text holds it.
  const auto set = faultd::testing::build(R"(rules:
  - id: warn
    match: { any: ["NCCL WARN Cuda failure"] }
    fault: { level: SubHealthFault }
  - id: xid
    match: { any: ["NVRM: Xid"] }
    fault: { level: SubHealthFault }
  - id: short
    match: { any: ["loss"] }
    fault: { level: SubHealthFault }
)");
  std::mt19937 rng(77);
  std::string text;
  const std::vector<std::string> lines = {
      "[WARNING] RUNTIME(1234,python):2025-01-24 NCCL WARN retrying\n",
      "h:1:2 [0] NCCL WARN Cuda failure 'invalid argument'\n",
      "[INFO] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
      "[INFO] step 3 loss 2.5\n", "[WARNING] NVRM: Xid (PCI plain text\n"};
  while (text.size() < (size_t{4} << 20)) text += lines[rng() % 50 < 47 ? 0 : 1 + rng() % 4];
  const size_t chunk = 256 * 1024;
  std::vector<std::string> adapted, fresh;
  faultd::ScanContext context;
  uint64_t line = 1;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.size(), at + chunk);
    end = text.rfind('\n', end - 1) + 1;
    const std::string_view part(text.data() + at, end - at);
    for (const auto& r :
         faultd::testing::rules_of(scan(*set, part, "plog", nullptr, line, at, &context))) {
      adapted.push_back(r);
    }
    faultd::ScanContext own;
    for (const auto& r :
         faultd::testing::rules_of(scan(*set, part, "plog", nullptr, line, at, &own))) {
      fresh.push_back(r);
    }
    line += static_cast<uint64_t>(std::count(part.begin(), part.end(), '\n'));
    at = end;
  }
  CHECK(adapted.size() > 100);
  CHECK(adapted == fresh);
}
