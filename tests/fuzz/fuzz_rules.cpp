// Fuzzes the rule loader: the text of a rule file → load_rule_file → RuleSet::build. A rule file
// is written by an operator, but a drop-in directory may hold files from several teams and a
// bad one must be reported (file:line:column), never throw past the loader or crash the daemon
// at start or on reload. Whatever builds is then run over its own text, so compiled rules meet
// input too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rules/rule.hpp"
#include "tests/support/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = faultd::fuzz::write_scratch("rules.yaml", text);
  faultd::ErrorList errors;
  std::vector<faultd::RuleSpec> specs;
  faultd::load_rule_file(path, specs, errors);
  auto rules = faultd::RuleSet::build(std::move(specs), {}, errors);
  FAULTD_FUZZ_CHECK(rules != nullptr || !errors.empty());
  if (!rules || !errors.empty()) return 0;
  faultd::Chunk chunk;
  chunk.source = "plog";
  chunk.path = path;
  chunk.data = text;
  chunk.end_offset = text.size();
  std::vector<faultd::Finding> findings;
  rules->scan(chunk, faultd::TimePoint{}, findings);
  for (const auto& f : findings) {
    FAULTD_FUZZ_CHECK(f.device.empty() || faultd::is_valid_device_id(f.device));
    FAULTD_FUZZ_CHECK(f.text.size() <= faultd::kMaxEvidenceBytes);
  }
  return 0;
}
