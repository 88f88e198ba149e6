// count_newlines against the obvious byte loop, on every alignment and on the bytes a SWAR trick
// gets wrong when it is written carelessly (0x0a's neighbours, bytes with the high bit set).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "daemon/core/newlines.hpp"

using faultd::count_newlines;

TEST_CASE("count_newlines equals a byte-by-byte count", "[core][newlines]") {
  std::mt19937 rng(7);
  const std::string tricky = std::string("\n\x0b\x09\x8a\x0a\xff\x80\x7f\x00\x01", 10);
  for (int round = 0; round < 500; ++round) {
    std::string s(rng() % (round % 10 == 0 ? 5000 : 100), '\0');  // past 255 words too
    for (auto& c : s) c = tricky[rng() % tricky.size()];
    const size_t skip = s.empty() ? 0 : rng() % s.size();  // every start alignment
    const std::string_view v = std::string_view(s).substr(skip);
    INFO("round " << round);
    REQUIRE(count_newlines(v) == static_cast<uint64_t>(std::count(v.begin(), v.end(), '\n')));
  }
  CHECK(count_newlines("") == 0);
  CHECK(count_newlines(std::string(64, '\n')) == 64);
  CHECK(count_newlines(std::string(64, '\x8a')) == 0);
}

TEST_CASE("count_newlines_marking leaves the count before every mark", "[core][newlines]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::string s(rng() % 40000, 'x');
    for (auto& c : s) c = rng() % 9 == 0 ? '\n' : 'x';
    // Counted in pieces of any size, as the line buffer counts a chunk window by window.
    faultd::LineMarks marks{0};
    uint64_t total = 0;
    for (size_t at = 0; at < s.size();) {
      const size_t piece = std::min<size_t>(s.size() - at, 1 + rng() % 9000);
      total +=
          faultd::count_newlines_marking(std::string_view(s).substr(at, piece), at, total, marks);
      at += piece;
    }
    INFO("round " << round << ", " << s.size() << " bytes");
    REQUIRE(total == static_cast<uint64_t>(std::count(s.begin(), s.end(), '\n')));
    REQUIRE(marks.size() == s.size() / faultd::kLineMarkBytes + 1);
    for (size_t k = 0; k < marks.size(); ++k) {
      const auto before = s.begin() + static_cast<std::ptrdiff_t>(k * faultd::kLineMarkBytes);
      REQUIRE(marks[k] == static_cast<uint32_t>(std::count(s.begin(), before, '\n')));
    }
  }
}
