// The ruleset fingerprint: SHA-256 itself against known vectors, and the ruleset hash's
// stability (layout, order, file) and sensitivity (anything a rule does).
#include <catch2/catch.hpp>

#include <set>

#include "daemon/core/yaml_check.hpp"
#include "rules/rule.hpp"
#include "rules/sha256.hpp"

using namespace faultd;
using faultd::rules::sha256_hex;

TEST_CASE("sha256: FIPS 180-2 vectors", "[rules][sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: lengths around the padding boundaries", "[rules][sha256]") {
  // Reference values from Python's hashlib.
  const std::vector<std::pair<size_t, std::string>> cases = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
  };
  for (const auto& [n, digest] : cases) {
    INFO(n);
    CHECK(sha256_hex(std::string(n, 'x')) == digest);
  }
}

namespace {

std::string hash_of(const std::string& yaml_text, const std::string& file = "t.yaml") {
  ErrorList errors;
  const yaml::Ctx ctx{file, &errors};
  auto doc = yaml::load_text(yaml_text, ctx);
  REQUIRE(doc);
  std::vector<RuleSpec> specs;
  parse_rules((*doc)["rules"], file, specs, errors);
  auto set = RuleSet::build(std::move(specs), CodeLevels{}, errors);
  INFO(errors.to_string());
  REQUIRE(set);
  return set->sha256();
}

const char* const kBase = R"(rules:
  - id: a
    description: first
    sources: [plog]
    match: { any: [x, y], all: [z], regex: 'n=(?P<device>\d+)', level: ERROR }
    device: "{device}"
    fault: { code: 80818C00, level: SeparateNPU }
  - id: b
    match: { any: w }
)";

}  // namespace

TEST_CASE("sha256: the ruleset hash ignores layout, rule order and file name", "[rules][sha256]") {
  const std::string base = hash_of(kBase);
  CHECK(base.size() == 64);
  CHECK(hash_of(kBase) == base);
  CHECK(hash_of(kBase, "other.yaml") == base);
  CHECK(hash_of(R"(rules:
  - id: b
    match:
      any: [w]
  - id: a
    description: first
    sources: plog
    match:
      any: [x, y]
      all: z
      regex: 'n=(?P<device>\d+)'
      level: [ERROR]
    device: "{device}"
    fault:
      code: 0x80818c00
      level: SeparateNPU
)") == base);
}

TEST_CASE("sha256: any change to a rule changes the ruleset hash", "[rules][sha256]") {
  const std::string base = hash_of(kBase);
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"id: b", "id: c"},
      {"description: first", "description: First"},
      {"sources: [plog]", "sources: [plog, training]"},
      {"any: [x, y]", "any: [y, x]"},
      {"all: [z]", "all: [z, zz]"},
      {"n=(?P<device>", "m=(?P<device>"},
      {"level: ERROR", "level: WARNING"},
      {"device: \"{device}\"", "device: \"npu{device}\""},
      {"code: 80818C00", "code: 80818C05"},
      {"level: SeparateNPU", "level: SubHealthFault"},
  };
  std::set<std::string> seen = {base};
  for (const auto& [from, to] : edits) {
    std::string text = kBase;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    INFO(from << " -> " << to);
    CHECK(seen.insert(hash_of(text)).second);
  }
  // A field's content cannot leak into the next one (length-prefixed fields).
  CHECK(hash_of("rules:\n  - id: a\n    match: { any: [xy] }\n") !=
        hash_of("rules:\n  - id: a\n    match: { any: [x, y] }\n"));
}
