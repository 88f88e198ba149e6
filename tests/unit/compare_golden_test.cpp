// The compare-* golden cases (tests/golden/make_compare_cases.py): each holds an NPU and a
// bench dump and the table faultctl compare must print for them, cell for cell, written from
// the reference tools' formulas.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include "compare/compare.hpp"
#include "compare/dump.hpp"
#include "compare/report.hpp"

namespace cmp = faultd::compare;

TEST_CASE("golden compare cases: the whole result table") {
  const auto root = std::filesystem::path(FAULTD_SOURCE_DIR) / "tests" / "golden";
  size_t cases = 0;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("compare-", 0) != 0) continue;
    ++cases;
    INFO(name);
    const auto rc = cmp::compare_dumps(cmp::read_dump(e.path() / "npu"),
                                       cmp::read_dump(e.path() / "bench"), {});
    std::ostringstream csv;
    cmp::write_csv(csv, rc);
    const std::string want = cmp::read_text_file(e.path() / "expected.csv");
    // Line by line, so a failure shows the row.
    std::istringstream got_lines(csv.str()), want_lines(want);
    std::string g, w;
    size_t line = 0;
    while (std::getline(want_lines, w)) {
      ++line;
      INFO("line " << line);
      REQUIRE(std::getline(got_lines, g));
      CHECK(g == w);
    }
    CHECK_FALSE(std::getline(got_lines, g));
  }
  CHECK(cases == 3);
}
