// The literal prefilter: which lines of a buffer contain any of a fixed set of trigger
// literals. This is the hot path of faultd (every byte read goes through it), so it is one pass
// over the buffer for the whole set instead of one memmem per literal: a Wu-Manber scan over
// 4-byte blocks, whose shift table lets it skip most of a line of ordinary log text without
// looking at it. A buffer of 16 KiB or more is cut at line starts into four lanes scanned in lock
// step, because one scan is a chain of dependent loads that mostly waits on memory. Measured by
// tests/bench/matcher_bench.cpp on the benchmark plog (x86-64, -O2, CPU time): the shipped packs'
// 65 literals at ~4.7 GB/s; 10 to 1,000 synthetic rules' literals within 20% of each other.
// Literals shorter than kShortBelow bytes (the numerics pack's "loss", "scale") would shrink the
// Wu-Manber window, and so every shift, for the whole set: they are found by a pass of their own
// that compares one trigram of each (shared between literals where it can be, case folded) at
// 32 positions at a time (plain GCC/Clang vectors: SSE2 or, where the CPU has it, AVX2 on
// x86-64; NEON on aarch64) and compares the whole literal only where a trigram is found. When
// that pass runs, 8-byte literals join it rather than shorten the window.
//
// Built once per rule-set view, immutable afterwards, safe to share across threads.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::rules {

// How common each 4-byte block is in a sample of the text a source reads, counted by a 16-bit
// hash of the block (two blocks sharing a slot both look as common as the pair: never rarer).
class BlockCounts {
 public:
  void add(std::string_view text);
  uint32_t of(uint32_t block) const;  // at most 65535
  size_t bytes() const { return bytes_; }

 private:
  static size_t slot(uint32_t block);
  std::vector<uint16_t> counts_ = std::vector<uint16_t>(size_t{1} << 16);
  size_t bytes_ = 0;
};

class LiteralSet {
 public:
  LiteralSet() = default;
  // `literals`: non-empty, without '\n'. `common`: a sample of the text to be scanned; each
  // literal's Wu-Manber window is then the one whose last block is rarest in it (a window that
  // ends in a block the text is full of, "WARN" of "NCCL WARN " in a log of "[WARNING]" lines,
  // costs a verification at every occurrence). Without one, each literal's first bytes.
  explicit LiteralSet(std::vector<std::string> literals, const BlockCounts* common = nullptr);
  const std::vector<std::string>& literals() const { return literals_; }
  // Where literal i's Wu-Manber window starts in it (0 for a literal of the short pass).
  size_t window_offset_of(size_t i) const;
  // The four bytes at p as a number: what the Wu-Manber scan hashes, and BlockCounts counts.
  static uint32_t block_at(const unsigned char* p);

  bool empty() const { return literals_.empty(); }
  size_t size() const { return literals_.size(); }
  const std::string& literal(size_t i) const { return literals_[i]; }

  // Start offsets (ascending, unique) of the lines of `text` that contain at least one
  // literal. A line ends at '\n'; the last one may lack it.
  std::vector<size_t> candidate_lines(std::string_view text) const;
  // The same into `lines` (cleared first), whose capacity a caller keeps across chunks: a chunk
  // of step lines is thousands of candidates.
  void candidate_lines(std::string_view text, std::vector<size_t>& lines) const;

  // Appends the index of every literal that occurs in `line` (a literal may be reported more
  // than once).
  void matches(std::string_view line, std::vector<uint32_t>& out) const;
  // Whether matches() gives the same for every line of `line`'s shape (rules/line_shape.hpp):
  // a literal without a digit occurs in them all at the same places or in none; one with a
  // digit might occur in some only, so the answer is no when such a literal could fit the
  // shape anywhere.
  bool shape_decides(std::string_view line) const;

 private:
  struct Lane;
  static constexpr size_t kBlock = 4;
  static constexpr size_t kShortBelow = 8;
  static constexpr int kMinHashBits = 10;
  static constexpr int kMaxHashBits = 15;
  size_t window_offset(const std::string& literal, const BlockCounts* common) const;
  static uint32_t hash(const unsigned char* p, int bits);

  template <class OnMatch>
  void scan_long(std::string_view text, size_t pos, OnMatch&& on_match) const;
  void make_probes();
  // Appends the start of every line of `text` that holds a short literal (ascending).
  void scan_short(std::string_view text, std::vector<size_t>& lines) const;
  template <size_t kWidth, bool kWild, typename Sink>
  size_t short_pass(std::string_view text, size_t first, size_t count, Sink& sink) const;
  template <size_t kWidth, typename Sink>
  void short_passes(std::string_view text, Sink& sink) const;
  template <typename Sink>
  void short_passes_avx2(std::string_view text, Sink& sink) const;
  template <typename Sink>
  void run_short(std::string_view text, Sink& sink) const;
  bool probe_at(std::string_view text, size_t at) const;

 public:
  // For the short pass's sinks (prefilter.cpp): whether a short literal holds its probe's
  // trigram at `at`; the ids of those that do.
  bool short_literal_at(const unsigned char* s, size_t n, size_t at) const;
  void short_literal_ids_at(const unsigned char* s, size_t n, size_t at,
                            std::vector<uint32_t>& ids) const;

 private:
  std::vector<std::string> literals_;
  // The literals with a digit, each digit read as 0x01, as a line's shape is (shape_decides).
  std::shared_ptr<const LiteralSet> digit_shapes_;
  std::vector<uint32_t> short_;  // indexes of the literals the short pass finds
  // What the short pass compares, deduplicated: a trigram of each short literal with 0x20 set
  // on every byte (so "loss", "Loss" and "LOSS" are one probe; the literal itself is compared
  // after). `wild` bit k: the probe takes any byte at k (a literal under three bytes).
  struct ShortProbe {
    std::array<uint8_t, 3> bytes;
    uint8_t wild;
  };
  struct ShortAt {
    uint32_t literal;
    uint32_t offset;  // where its probe's trigram starts in it
  };
  bool holds_short(const unsigned char* s, size_t n, size_t at, const ShortAt& entry) const;
  std::vector<ShortProbe> probes_;
  std::vector<ShortAt> short_at_;
  bool any_wild_ = false;
  std::bitset<65536> probe_pairs_;      // by two folded bytes: whether a probe may start with them
  int hash_bits_ = kMinHashBits;        // log2 of the shift table's size
  size_t window_ = 0;                   // shortest long literal (capped): the Wu-Manber window
  std::vector<uint8_t> shift_;          // by block hash: how far the window may move
  std::vector<uint32_t> bucket_start_;  // by hash of the window's last block ...
  std::vector<uint32_t> bucket_ids_;    // ... the long literals ending their window with it,
  std::vector<uint32_t> bucket_offsets_;  // ... where that window starts in the literal,
  std::vector<uint32_t> offsets_;         // by literal: where its window starts
  std::vector<uint32_t> bucket_blocks_;   // ... and that last block (block_at), by entry
};

}  // namespace faultd::rules
