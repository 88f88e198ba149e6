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
