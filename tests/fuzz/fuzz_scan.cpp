// Fuzzes the line matcher and field extraction with the shipped rule packs: whoever can write a
// log on the node controls these bytes (NUL, invalid UTF-8, CR, 10 MB lines, lines crafted to
// look like a fault with a hostile device id). The input's first line is the value a source's
// path_fields would give as `device` (so the path-derived field is hostile too); the rest is the
// chunk's data.
//
// Invariants checked on every input, beyond "no crash, no sanitizer report":
//   - a finding's device is empty or passes is_valid_device_id (nothing else may reach a label,
//     a hook's environment or the store), its code is [A-Z0-9._-]{0,32}, its text is capped;
//   - each finding's offset is the start of its line and its line number matches the offset;
//   - scanning the data as one chunk and line by line gives the same findings (a source may
//     cut a file anywhere between lines).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rules/rule.hpp"
#include "tests/support/fuzz_support.hpp"

namespace {

std::shared_ptr<const faultd::RuleSet> shipped_rules() {
  namespace fs = std::filesystem;
  std::vector<faultd::RuleSpec> specs;
  faultd::ErrorList errors;
  for (const auto& entry :
       fs::directory_iterator(fs::path(FAULTD_SOURCE_DIR) / "etc/faultd/rules.d")) {
    if (entry.path().extension() == ".yaml") {
      faultd::load_rule_file(entry.path().string(), specs, errors);
    }
  }
  auto rules = faultd::RuleSet::build(std::move(specs), {}, errors);
  FAULTD_FUZZ_CHECK(errors.empty() && rules != nullptr && rules->size() > 0);
  return rules;
}

bool valid_code(const std::string& code) {
  if (code.size() > 32) return false;
  for (char c : code) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void scan_part(const faultd::RuleSet& rules, std::string_view data, size_t start, size_t end,
               uint64_t first_line, const faultd::Fields& fields, std::vector<faultd::Finding>& out,
               faultd::ScanContext& context) {
  faultd::Chunk chunk;
  chunk.source = "device-log";
  chunk.path = "/root/ascend/log/debug/device-0/device-0.log";
  chunk.identity = {1, 2, 3, 4};
  chunk.start_offset = start;
  chunk.end_offset = end;
  chunk.first_line = first_line;
  chunk.data = data.substr(start, end - start);
  chunk.path_fields = &fields;
  rules.scan(chunk, faultd::TimePoint{}, out, nullptr, &context);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  static const auto rules = shipped_rules();
  const std::string_view input(reinterpret_cast<const char*>(bytes), size);
  const size_t first_nl = input.find('\n');
  if (first_nl == std::string_view::npos) return 0;
  faultd::Fields fields;
  if (first_nl > 0) fields.emplace_back("device", std::string(input.substr(0, first_nl)));
  const std::string data(input.substr(first_nl + 1));

  // Each run keeps its per-file state (multi-line progress, process → device) in a context of
  // its own, as the daemon does per source, so where the chunks break must not matter.
  std::vector<faultd::Finding> whole;
  faultd::ScanStats stats;
  {
    faultd::ScanContext context;
    faultd::Chunk chunk;
    chunk.source = "device-log";
    chunk.path = "/root/ascend/log/debug/device-0/device-0.log";
    chunk.identity = {1, 2, 3, 4};
    chunk.end_offset = data.size();
    chunk.data = data;
    chunk.path_fields = &fields;
    rules->scan(chunk, faultd::TimePoint{}, whole, &stats, &context);
  }
  FAULTD_FUZZ_CHECK(stats.findings == whole.size());
  std::vector<size_t> line_starts{0};  // line_starts[n - 1]: offset of line n
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '\n') line_starts.push_back(i + 1);
  }
  for (const auto& f : whole) {
    FAULTD_FUZZ_CHECK(f.device.empty() || faultd::is_valid_device_id(f.device));
    FAULTD_FUZZ_CHECK(valid_code(f.code));
    FAULTD_FUZZ_CHECK(f.text.size() <= faultd::kMaxEvidenceBytes);
    FAULTD_FUZZ_CHECK(f.offset < data.size() || (data.empty() && f.offset == 0));
    FAULTD_FUZZ_CHECK(f.offset == 0 || data[f.offset - 1] == '\n');
    FAULTD_FUZZ_CHECK(f.line >= 1 && f.line <= line_starts.size());
    FAULTD_FUZZ_CHECK(line_starts[f.line - 1] == f.offset);
  }

  std::vector<faultd::Finding> by_line;
  faultd::ScanContext context;
  size_t start = 0;
  uint64_t line = 1;
  while (start < data.size()) {
    const size_t nl = data.find('\n', start);
    const size_t end = nl == std::string::npos ? data.size() : nl + 1;
    scan_part(*rules, data, start, end, line, fields, by_line, context);
    start = end;
    ++line;
  }
  FAULTD_FUZZ_CHECK(by_line.size() == whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    FAULTD_FUZZ_CHECK(by_line[i].rule == whole[i].rule);
    FAULTD_FUZZ_CHECK(by_line[i].device == whole[i].device);
    FAULTD_FUZZ_CHECK(by_line[i].code == whole[i].code);
    FAULTD_FUZZ_CHECK(by_line[i].offset == whole[i].offset);
    FAULTD_FUZZ_CHECK(by_line[i].line == whole[i].line);
  }
  return 0;
}
