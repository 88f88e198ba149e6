#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "collectors/file/line_buffer.hpp"

using namespace faultd;

namespace {

void feed(LineBuffer& b, const std::string& bytes) {
  char* dst = b.prepare(bytes.size());
  bytes.copy(dst, bytes.size());
  b.appended(bytes.size());
}

// Takes and commits the next chunk; returns its data ("" if none).
std::string take(LineBuffer& b, bool flush = false) {
  auto p = b.next(flush);
  if (!p) return "";
  std::string data(p->data);
  b.commit(*p);
  return data;
}

}  // namespace

TEST_CASE("line buffer hands out complete lines and holds the partial tail", "[collectors]") {
  LineBuffer b(100, 1000);
  b.reset(0, 0);
  feed(b, "ab\ncd\nef");
  auto p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "ab\ncd\n");
  CHECK(p->start_offset == 0);
  CHECK(p->end_offset == 6);
  CHECK(p->first_line == 1);
  CHECK(p->end_line == 2);
  CHECK(p->lines() == 2);
  b.commit(*p);
  CHECK(b.committed_offset() == 6);
  CHECK(b.committed_line() == 2);
  CHECK(b.read_offset() == 8);
  CHECK_FALSE(b.next(false));
  CHECK(b.has_partial());

  feed(b, "gh\n");
  p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "efgh\n");
  CHECK(p->start_offset == 6);
  CHECK(p->first_line == 3);
  b.commit(*p);
  CHECK_FALSE(b.has_partial());
}

TEST_CASE("line buffer flushes a partial last line as a line", "[collectors]") {
  LineBuffer b(100, 1000);
  b.reset(10, 4);  // resumed: 4 lines before offset 10
  feed(b, "x\ntail");
  CHECK(take(b, true) == "x\n");  // complete lines come first even when flushing
  auto p = b.next(true);
  REQUIRE(p);
  CHECK(p->data == "tail");
  CHECK(p->start_offset == 12);
  CHECK(p->end_offset == 16);
  CHECK(p->first_line == 6);
  CHECK(p->end_line == 6);
  b.commit(*p);
  CHECK_FALSE(b.next(true));
}

TEST_CASE("line buffer offers the same chunk again until it is committed", "[collectors]") {
  LineBuffer b(100, 1000);
  b.reset(0, 0);
  feed(b, "one\ntwo\n");
  auto first = b.next(false);
  REQUIRE(first);
  const std::string data(first->data);
  auto again = b.next(false);
  REQUIRE(again);
  CHECK(again->data == data);
  CHECK(again->start_offset == first->start_offset);
  CHECK(b.committed_offset() == 0);
}

TEST_CASE("line buffer keeps chunks within the chunk size", "[collectors]") {
  LineBuffer b(100, 10);
  b.reset(0, 0);
  feed(b, "aaaa\nbbbb\ncccc\n");
  CHECK(take(b) == "aaaa\nbbbb\n");
  CHECK(take(b) == "cccc\n");
  // A single line longer than the chunk size (but within max_line) still goes out whole.
  feed(b, "0123456789abcdef\n");
  CHECK(take(b) == "0123456789abcdef\n");
}

TEST_CASE("line buffer truncates an over-long line found whole in one read", "[collectors]") {
  LineBuffer b(4, 1000);
  b.reset(0, 0);
  feed(b, "ok\n0123456789\nnext\n");
  CHECK(take(b) == "ok\n");  // the lines before a long line go out first
  auto p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "0123\n");
  CHECK(p->start_offset == 3);
  CHECK(p->end_offset == 14);  // past the real newline
  CHECK(p->first_line == 2);
  CHECK(p->end_line == 2);
  CHECK(b.truncated_lines() == 1);
  // Refused and asked again: the same chunk, not counted twice.
  p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "0123\n");
  CHECK(p->end_offset == 14);
  CHECK(b.truncated_lines() == 1);
  b.commit(*p);
  p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "next\n");
  CHECK(p->start_offset == 14);
  CHECK(p->first_line == 3);
}

TEST_CASE("line buffer skips an over-long line across many reads in bounded memory",
          "[collectors]") {
  LineBuffer b(8, 16);
  b.reset(0, 0);
  feed(b, "head\n");
  CHECK(take(b) == "head\n");
  // The kept prefix goes out as soon as the line is known to be over-long.
  feed(b, std::string(16, 'x'));
  auto p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "xxxxxxxx");
  CHECK(p->start_offset == 5);
  CHECK(p->end_offset == 21);
  CHECK(p->lines() == 1);
  b.commit(*p);
  uint64_t expected_read = 21;
  for (int i = 0; i < 1000; ++i) {  // 16 000 more bytes without a newline
    feed(b, std::string(16, 'x'));
    expected_read += 16;
    CHECK_FALSE(b.next(false));
    CHECK(b.buffered() == 0);  // nothing of it is stored
  }
  CHECK(b.skipping());
  CHECK(b.read_offset() == expected_read);
  // Security audit F22: the dropped bytes are committed as they are dropped, so the position
  // (and the lag) do not stay at the start of the line, and a restart does not read them again.
  CHECK(b.committed_offset() == expected_read);
  CHECK(b.committed_line() == 2);
  CHECK(b.truncated_lines() == 1);
  feed(b, "yyy\nafter\n");
  CHECK_FALSE(b.skipping());
  CHECK(b.committed_offset() == expected_read + 4);  // through the newline that ends it
  CHECK(take(b) == "after\n");
  CHECK(b.committed_offset() == expected_read + 10);
  CHECK(b.committed_line() == 3);
  CHECK(b.truncated_lines() == 1);
}

TEST_CASE("line buffer offers an unterminated over-long line's prefix again until committed",
          "[collectors]") {
  LineBuffer b(4, 1000);
  b.reset(0, 0);
  feed(b, "abcdefghij");
  auto p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "abcd");
  CHECK(p->end_offset == 10);
  // Refused: more bytes of the line (the read before the refusal) travel with the prefix.
  feed(b, "klm");
  p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "abcd");
  CHECK(p->end_offset == 13);
  CHECK(b.committed_offset() == 0);
  b.commit(*p);
  CHECK_FALSE(b.has_partial());
  CHECK(b.read_offset() == 13);
  CHECK(b.committed_offset() == 13);
  CHECK(b.truncated_lines() == 1);
}

TEST_CASE("line buffer skips a hole and resumes a skip after a restart", "[collectors]") {
  LineBuffer b(4, 1000);
  b.reset(0, 0);
  feed(b, "abcdefgh");
  CHECK(take(b) == "abcd");
  b.drop(1000);  // a hole: zeros, not read
  CHECK(b.committed_offset() == 1008);
  feed(b, "zz\nnext\n");
  CHECK(take(b) == "next\n");
  CHECK(b.committed_offset() == 1016);

  // Restarted at a position inside such a line: its rest is not a line of its own.
  LineBuffer again(4, 1000);
  again.reset(1000, 1);
  again.skip_rest_of_line();
  feed(again, "zzzz\nnext\n");
  CHECK(take(again) == "next\n");
  CHECK(again.committed_line() == 2);
}

TEST_CASE("line buffer cuts a held partial line on request", "[collectors]") {
  LineBuffer b(100, 1000);
  b.reset(0, 0);
  feed(b, "one\npart");
  CHECK_FALSE(b.cut_partial());  // a complete line is still to go out
  CHECK(take(b) == "one\n");
  REQUIRE(b.cut_partial());
  auto p = b.next(false);
  REQUIRE(p);
  CHECK(p->data == "part");
  b.commit(*p);
  CHECK(b.committed_offset() == 8);
  feed(b, "rest of it\nnew\n");
  CHECK(take(b) == "new\n");
  CHECK(b.committed_line() == 3);
  CHECK(b.truncated_lines() == 0);  // not an over-long line: the caller counts the cut
}

TEST_CASE("a line of exactly max_line_bytes is not truncated", "[collectors]") {
  LineBuffer b(4, 1000);
  b.reset(0, 0);
  feed(b, "abcd");
  CHECK_FALSE(b.next(false));
  feed(b, "\n");
  CHECK(take(b) == "abcd\n");
  CHECK(b.truncated_lines() == 0);
}

TEST_CASE("line buffer reads into lent storage and keeps only its partial line", "[collectors]") {
  // Security audit F8: an idle file kept the capacity of its last read (64 KiB per file).
  std::string storage;
  LineBuffer b(1 << 20, 1 << 20);
  b.reset(0, 0);
  b.use_storage(storage);
  feed(b, std::string(500'000, 'a') + "\nxy");
  CHECK(take(b).size() == 500'001);
  b.release_storage(storage);
  CHECK(storage.capacity() >= 500'000);  // kept for the next file's read
  CHECK(b.buffered() == 2);
  CHECK(b.capacity() < 64);
  b.use_storage(storage);
  CHECK(b.capacity() >= 500'000);
  feed(b, "z\n");
  CHECK(take(b) == "xyz\n");
  b.release_storage(storage);
  CHECK(b.capacity() < 64);
  CHECK(b.buffered() == 0);
}

TEST_CASE("line buffer leaves the line marks of each chunk it hands out", "[collectors]") {
  // Lines of random lengths read in random pieces; every chunk's marks cover what the line
  // buffer counted, each the newlines before its offset in the chunk.
  std::mt19937 rng(5);
  std::string bytes;
  while (bytes.size() < 300000) bytes += std::string(rng() % 300, 'x') + '\n';
  LineBuffer b(1000, 64 * 1024);
  b.reset(0, 0);
  size_t fed = 0, chunks = 0;
  while (fed < bytes.size()) {
    const size_t piece = std::min<size_t>(bytes.size() - fed, 1 + rng() % 50000);
    feed(b, bytes.substr(fed, piece));
    fed += piece;
    while (auto p = b.next(false)) {
      ++chunks;
      REQUIRE(p->line_marks != nullptr);
      const LineMarks& marks = *p->line_marks;
      REQUIRE(!marks.empty());
      CHECK(marks.size() <= p->data.size() / kLineMarkBytes + 1);
      for (size_t k = 0; k < marks.size(); ++k) {
        const std::string_view before = p->data.substr(0, k * kLineMarkBytes);
        REQUIRE(marks[k] == std::count(before.begin(), before.end(), '\n'));
      }
      // Whole windows of lines are counted at once: a chunk of many lines has its marks.
      if (p->data.size() > 2 * 1024 + kLineMarkBytes) CHECK(marks.size() > 1);
      b.commit(*p);
    }
  }
  CHECK(chunks > 4);
}
