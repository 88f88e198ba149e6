// The literal prefilter against a naive reference on random inputs: it must never miss a line
// (a missed line is a missed fault) and never report one without a literal.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>

#include "rules/prefilter.hpp"

using faultd::rules::LiteralSet;

namespace {

std::vector<size_t> naive_lines(const std::vector<std::string>& literals, std::string_view text) {
  std::vector<size_t> out;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    for (const auto& l : literals) {
      if (line.find(l) != std::string_view::npos) {
        out.push_back(start);
        break;
      }
    }
    start = end + 1;
  }
  return out;
}

// The literals matches() reports for `line`, each once.
std::set<uint32_t> matched(const LiteralSet& set, std::string_view line) {
  std::vector<uint32_t> found;
  set.matches(line, found);
  return {found.begin(), found.end()};
}

std::set<uint32_t> naive_matches(const std::vector<std::string>& literals, std::string_view line) {
  std::set<uint32_t> want;
  for (uint32_t i = 0; i < literals.size(); ++i) {
    if (line.find(literals[i]) != std::string_view::npos) want.insert(i);
  }
  return want;
}

std::string random_text(std::mt19937& rng, const std::string& alphabet, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
  return s;
}

}  // namespace

TEST_CASE("prefilter: candidate lines equal the naive search on random inputs",
          "[rules][prefilter]") {
  std::mt19937 rng(1234);
  const std::string alphabet = "abcd\n";  // small, so literals occur often and overlap
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> literals;
    const int count = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < count; ++i) {
      literals.push_back(random_text(rng, "abcd", 1 + rng() % 9));  // short and long ones
    }
    const std::string text = random_text(rng, alphabet, rng() % 400);
    const LiteralSet set(literals);
    INFO("round " << round);
    REQUIRE(set.candidate_lines(text) == naive_lines(literals, text));

    // matches() reports exactly the literals present in a line.
    // Past two vector steps too: the last window overlaps the one before it.
    const std::string line = random_text(rng, "abcd", rng() % 200);
    REQUIRE(matched(set, line) == naive_matches(literals, line));
  }
}

TEST_CASE("prefilter: literals at the edges of the buffer and of lines", "[rules][prefilter]") {
  const LiteralSet set({"ComputeL1Error", "abnormal", "x"});
  CHECK(set.candidate_lines("ComputeL1Error") == std::vector<size_t>{0});
  CHECK(set.candidate_lines("abnormal\nabnorma\nbnormal\n") == std::vector<size_t>{0});
  CHECK(set.candidate_lines("aaa\nlast line abnormal") == std::vector<size_t>{4});
  CHECK(set.candidate_lines("abnor\nmal\n").empty());  // never across a newline
  CHECK(set.candidate_lines("\n\nx\n") == std::vector<size_t>{2});
  CHECK(set.candidate_lines("").empty());
  CHECK(LiteralSet().candidate_lines("anything").empty());
}

TEST_CASE("prefilter: buffers long enough to be scanned in lanes equal the naive search",
          "[rules][prefilter]") {
  // Long lines, short lines, and literals placed at the lane edges (a quarter of the buffer).
  std::mt19937 rng(99);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> literals;
    const int count = 1 + static_cast<int>(rng() % 5);
    for (int i = 0; i < count; ++i) literals.push_back(random_text(rng, "abcd", 4 + rng() % 8));
    const std::string newline_rate = round % 2 == 0 ? "abcd\n" : "abcdabcdabcdabcdabcdabcd\n";
    std::string text = random_text(rng, newline_rate, 16384 + rng() % 40000);
    for (int q = 1; q < 4; ++q) {
      const size_t at = std::min(text.size() - 1, text.size() / 4 * q + rng() % 16);
      text.replace(at, 0, literals[rng() % literals.size()]);
    }
    const LiteralSet set(literals);
    INFO("round " << round);
    REQUIRE(set.candidate_lines(text) == naive_lines(literals, text));
  }
}

TEST_CASE("prefilter: short literals are found whatever bytes fold onto their probes",
          "[rules][prefilter]") {
  // The short pass compares trigrams with 0x20 set on every byte: ':' and '\x1a', '_' and
  // '\x7f', 'a' and 'A' fold together, so only the literal's own compare may tell them apart.
  // Many probes (over one pass's 16), literals of 1 and 2 bytes (wild probe bytes), 8-byte
  // literals (which join the short pass when one runs) and long lines for the vector path.
  std::mt19937 rng(7);
  const std::string bytes = std::string("aAbB:_\x1a\x7f") + "\n";
  for (int round = 0; round < 600; ++round) {
    std::vector<std::string> literals;
    const int count = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < count; ++i) {
      literals.push_back(random_text(rng, bytes.substr(0, 8), 1 + rng() % 12));
    }
    const std::string text =
        random_text(rng, round % 2 == 0 ? bytes : bytes.substr(0, 8) + bytes, rng() % 3000);
    const LiteralSet set(literals);
    INFO("round " << round);
    REQUIRE(set.candidate_lines(text) == naive_lines(literals, text));
    // Lines as long as a step line's: several vector steps, then the last bytes alone.
    const std::string line = random_text(rng, bytes.substr(0, 8), rng() % 400);
    REQUIRE(matched(set, line) == naive_matches(literals, line));
  }
}

TEST_CASE("prefilter: windows chosen from a sample of the text find the same lines",
          "[rules][prefilter]") {
  // A sample makes each literal's Wu-Manber window the one whose last block is rarest in it;
  // the literals, and so the lines, are the same: random literals, samples and texts.
  std::mt19937 rng(4321);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> literals;
    const int count = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < count; ++i) literals.push_back(random_text(rng, "abcd", 1 + rng() % 14));
    faultd::rules::BlockCounts sample;
    sample.add(random_text(rng, "abcd\n", rng() % 2000));
    const std::string text = random_text(rng, "abcd\n", rng() % (round % 10 == 0 ? 40000 : 600));
    const LiteralSet set(literals, &sample);
    INFO("round " << round);
    REQUIRE(set.candidate_lines(text) == naive_lines(literals, text));
    // Past two vector steps too: the last window overlaps the one before it.
    const std::string line = random_text(rng, "abcd", rng() % 200);
    REQUIRE(matched(set, line) == naive_matches(literals, line));
  }
}

TEST_CASE("prefilter: a window does not end in a block the sample is full of",
          "[rules][prefilter]") {
  // "NCCL WARN x" in a log of "[WARNING]" lines: its first nine bytes end in "WARN", which
  // every line holds; a window one byte on ends in "ARN ", which none does.
  faultd::rules::BlockCounts sample;
  for (int i = 0; i < 1000; ++i) sample.add("[WARNING] RUNTIME(1234,python):2025-01-24 step\n");
  const LiteralSet plain({"NCCL WARN x", "123456789"});
  const LiteralSet adapted({"NCCL WARN x", "123456789"}, &sample);
  CHECK(plain.window_offset_of(0) == 0);
  CHECK(adapted.window_offset_of(0) != 0);
  const std::string text = "[WARNING] a\nx NCCL WARN x y\n[WARNING] NCCL WARN\n";
  CHECK(adapted.candidate_lines(text) == std::vector<size_t>{12});
  CHECK(plain.candidate_lines(text) == adapted.candidate_lines(text));
}

TEST_CASE("prefilter: a line's shape decides its literals unless a literal with a digit fits it",
          "[rules][prefilter]") {
  const LiteralSet set({"loss", "Xid 79"});
  CHECK_FALSE(set.shape_decides("loss Xid 78"));  // "Xid 79" may be there in the next step's
  CHECK(set.shape_decides("loss: 1.25 Xid x"));
  CHECK(LiteralSet({"loss"}).shape_decides("loss: 1.25"));

  // Property: whenever the shape decides, every line of that shape (digits replaced by any
  // digits) holds the same literals.
  std::mt19937 rng(77);
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> literals;
    for (int i = 0, n = 1 + static_cast<int>(rng() % 5); i < n; ++i) {
      literals.push_back(random_text(rng, "ab01", 1 + rng() % 9));
    }
    const LiteralSet literal_set(literals);
    const std::string line = random_text(rng, "ab0123 ", rng() % 120);
    std::string other = line;
    for (char& c : other) {
      if (c >= '0' && c <= '9') c = static_cast<char>('0' + rng() % 10);
    }
    INFO("round " << round << ": '" << line << "' and '" << other << "'");
    if (literal_set.shape_decides(line)) {
      REQUIRE(matched(literal_set, line) == matched(literal_set, other));
    }
  }
}
