// Golden tests of the shipped rule packs: every directory under tests/golden/ with a `source`
// file is a case (see tests/golden/README.md). The packs are loaded from etc/faultd/rules.d/
// exactly as shipped, and each case goes through the daemon's own matching path: the file
// source's line splitting (read_lines), its path fields and the Matcher. Each case is read whole
// and in chunks of one and of a few lines, which must give the same findings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <re2/re2.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "collectors/file/line_buffer.hpp"
#include "collectors/file/path_fields.hpp"
#include "rules/matcher.hpp"
#include "rules/rule.hpp"

namespace fs = std::filesystem;
using namespace faultd;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::vector<fs::path> shipped_packs() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FAULTD_SOURCE_DIR) / "etc/faultd/rules.d")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::shared_ptr<const RuleSet> load_shipped(std::vector<RuleSpec>* specs_out = nullptr) {
  std::vector<RuleSpec> specs;
  ErrorList errors;
  for (const auto& f : shipped_packs()) load_rule_file(f.string(), specs, errors);
  if (specs_out != nullptr) *specs_out = specs;
  auto set = RuleSet::build(std::move(specs), CodeLevels{}, errors);
  INFO(errors.to_string());
  REQUIRE(errors.empty());
  REQUIRE(set != nullptr);
  return set;
}

// The case's path fields: its source's path_fields regex over its path.
Fields path_fields_of(const std::string& regex, const std::string& path) {
  if (regex.empty()) return {};
  std::string error;
  auto re = compile_path_fields(regex, error);
  INFO(error);
  REQUIRE(re != nullptr);
  return capture_path_fields(*re, path);
}

// What the daemon journals for the file `input`, read in chunks of at most `chunk_bytes` (each
// chunk holds whole lines; a line longer than that is a chunk of its own). Line N is taken to
// arrive N seconds after the start; if the case has a `tick_after`, the detectors' tick runs
// that long after the last line.
std::vector<Finding> match_file(const std::shared_ptr<const RuleSet>& set, const fs::path& input,
                                const std::string& source, const std::string& source_type,
                                const std::string& path, const Fields& fields, size_t chunk_bytes,
                                const std::optional<Duration>& tick_after, uint64_t last_line) {
  const TimePoint start = TimePoint{} + std::chrono::hours(24 * 365 * 50);
  auto at = [&](uint64_t line) { return start + std::chrono::seconds(line); };
  Matcher matcher;
  matcher.configure(set);
  std::vector<Finding> out;
  const int fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const int error = read_lines(fd, 64 * 1024, chunk_bytes, [&](const LineBuffer::Pending& p) {
    Chunk chunk = p.chunk();
    chunk.source = source;
    chunk.source_type = source_type;
    chunk.path = path;
    chunk.identity = {1, 2, 3, 4};
    chunk.path_fields = &fields;
    std::vector<Finding> found;
    matcher.scan(chunk, TimePoint{}, found);
    for (auto& f : found) f.time = at(f.line);
    matcher.detect(found);
    for (auto& f : found) out.push_back(std::move(f));
  });
  ::close(fd);
  REQUIRE(error == 0);
  for (auto& f : matcher.flush()) {
    f.time = at(f.line);
    out.push_back(std::move(f));
  }
  if (tick_after) {
    for (auto& v : matcher.tick(at(last_line) + *tick_after)) out.push_back(std::move(v));
  }
  return out;
}

std::string describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += f.rule + " device=" + f.device + " level=" + std::string(to_string(f.level)) +
           " code=" + f.code + " line=" + std::to_string(f.line) + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("golden: each case gives exactly its expected findings, whole or in chunks", "[golden]") {
  const auto set = load_shipped();
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(fs::path(FAULTD_SOURCE_DIR) / "tests/golden")) {
    if (e.is_directory() && fs::exists(e.path() / "source")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 7);

  for (const auto& dir : cases) {
    DYNAMIC_SECTION(dir.filename().string()) {
      REQUIRE(fs::exists(dir / "input.log"));
      REQUIRE(fs::exists(dir / "expected.jsonl"));
      const auto source_lines = text_lines(read_all(dir / "source"));
      REQUIRE(!source_lines.empty());
      const std::string source = source_lines[0];
      const std::string path = source_lines.size() > 1 ? source_lines[1] : "input.log";
      const std::string source_type = source_lines.size() > 2 ? source_lines[2] : "file";
      const auto regex_lines = fs::exists(dir / "path_fields")
                                   ? text_lines(read_all(dir / "path_fields"))
                                   : std::vector<std::string>{};
      const Fields fields = path_fields_of(regex_lines.empty() ? "" : regex_lines[0], path);
      const std::string data = read_all(dir / "input.log");
      std::vector<nlohmann::json> expected;
      for (const auto& line : text_lines(read_all(dir / "expected.jsonl"))) {
        expected.push_back(nlohmann::json::parse(line));
      }

      std::optional<Duration> tick_after;
      if (fs::exists(dir / "tick_after")) {
        tick_after = parse_duration(text_lines(read_all(dir / "tick_after")).at(0));
        REQUIRE(tick_after);
      }
      const auto last_line = static_cast<uint64_t>(std::count(data.begin(), data.end(), '\n'));
      // Whole, line by line (a one-byte chunk holds one line), and a few lines at a time: the
      // same findings each time, devices included.
      std::optional<std::string> whole;
      for (size_t chunk_bytes : {size_t{1} << 30, size_t{1}, size_t{700}}) {
        const auto found = match_file(set, dir / "input.log", source, source_type, path, fields,
                                      chunk_bytes, tick_after, last_line);
        INFO("chunk bytes: " << chunk_bytes << "\nfound:\n" << describe(found));
        if (!whole) whole = describe(found);
        CHECK(describe(found) == *whole);
        REQUIRE(found.size() == expected.size());
        for (size_t i = 0; i < found.size(); ++i) {
          const Finding& f = found[i];
          const auto& e = expected[i];
          INFO("finding " << i);
          CHECK(f.rule == e.at("rule").get<std::string>());
          // A device from a neighbouring line depends on which lines the case's generator put
          // around the finding (its noise is shuffled in): the cases declare the devices their
          // lines name, and tests/unit/rules_neighbour_devices_test.cpp tests the neighbours.
          if (f.device_from == "context" && e.at("device").get<std::string>().empty()) {
            CHECK(is_valid_device_id(f.device));
          } else {
            CHECK(f.device == e.at("device").get<std::string>());
          }
          CHECK(to_string(f.level) == e.at("level").get<std::string>());
          CHECK(f.code == e.at("code").get<std::string>());
          CHECK(f.line == e.at("line").get<uint64_t>());
          CHECK(f.recovery == e.value("recovery", false));  // written only when true
          CHECK(f.source == source);
          CHECK(f.file == path);
          // The offset is the start of the reported line and the text is that line.
          REQUIRE(f.offset < data.size());
          CHECK((f.offset == 0 || data[f.offset - 1] == '\n'));
          const size_t nl = data.find('\n', f.offset);
          std::string line =
              data.substr(f.offset, (nl == std::string::npos ? data.size() : nl) - f.offset);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          CHECK(f.text == line.substr(0, kMaxEvidenceBytes));
          CHECK(std::count(data.begin(), data.begin() + static_cast<long>(f.offset), '\n') + 1 ==
                static_cast<long>(f.line));
        }
      }
    }
  }
}

TEST_CASE("golden: every shipped pack builds alone and together, without warnings", "[golden]") {
  const auto packs = shipped_packs();
  REQUIRE(!packs.empty());
  std::set<std::string> ids;
  for (const auto& pack : packs) {
    INFO(pack.string());
    std::vector<RuleSpec> specs;
    ErrorList errors;
    load_rule_file(pack.string(), specs, errors);
    REQUIRE(errors.to_string() == "");
    REQUIRE(!specs.empty());
    for (const auto& s : specs) {
      INFO(s.id);
      CHECK(ids.insert(s.id).second);  // unique across all packs
      CHECK(!s.description.empty());
    }
    const auto set = RuleSet::build(std::move(specs), CodeLevels{}, errors);
    REQUIRE(errors.to_string() == "");
    REQUIRE(set != nullptr);
    // Shipped rules all have literals to prefilter on.
    CHECK(set->warnings().empty());
  }
  const auto all = load_shipped();
  CHECK(all->size() == ids.size());
}

TEST_CASE("golden: every shipped rule has at least one positive golden line", "[golden]") {
  std::vector<RuleSpec> specs;
  load_shipped(&specs);
  std::set<std::string> covered;
  for (const auto& e : fs::directory_iterator(fs::path(FAULTD_SOURCE_DIR) / "tests/golden")) {
    if (!fs::exists(e.path() / "expected.jsonl")) continue;
    for (const auto& line : text_lines(read_all(e.path() / "expected.jsonl"))) {
      covered.insert(nlohmann::json::parse(line).at("rule").get<std::string>());
    }
  }
  for (const auto& s : specs) {
    INFO(s.id);
    CHECK(covered.count(s.id) == 1);
  }
}
