#include "rules/prefilter.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>

#include "daemon/core/cpu_features.hpp"

namespace faultd::rules {
namespace {
constexpr size_t kMaxWindow = 255;  // shifts are stored in a byte
}

uint32_t LiteralSet::block_at(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; byte order only changes which hash, not speed
  return v;
}

void BlockCounts::add(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i + 4 <= text.size(); ++i) {
    uint16_t& c = counts_[slot(LiteralSet::block_at(s + i))];
    if (c != UINT16_MAX) ++c;
  }
  bytes_ += text.size();
}

size_t LiteralSet::window_offset_of(size_t i) const {
  return i < offsets_.size() ? offsets_[i] : 0;
}

uint32_t BlockCounts::of(uint32_t block) const { return counts_[slot(block)]; }

size_t BlockCounts::slot(uint32_t block) { return (block * 2654435761u) >> 16; }

size_t LiteralSet::window_offset(const std::string& literal, const BlockCounts* common) const {
  if (common == nullptr) return 0;
  size_t best = 0;
  uint32_t best_count = UINT32_MAX;
  for (size_t at = 0; at + window_ <= literal.size(); ++at) {
    const uint32_t count = common->of(
        block_at(reinterpret_cast<const unsigned char*>(literal.data()) + at + window_ - kBlock));
    if (count < best_count) {
      best = at;
      best_count = count;
    }
  }
  return best;
}

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// What a digit is in a shape (shape_decides): a byte no literal and no log line holds, so only a
// literal's digit meets a line's. A line holding it anyway only makes the answer no.
constexpr char kDigitShape = '\x01';
}  // namespace

uint32_t LiteralSet::hash(const unsigned char* p, int bits) {
  return (block_at(p) * 2654435761u) >> (32 - bits);
}

LiteralSet::LiteralSet(std::vector<std::string> literals, const BlockCounts* common)
    : literals_(std::move(literals)) {
  // A literal under kShortBelow bytes has the short pass. When that pass runs anyway, an
  // 8-byte literal joins it too: one more probe costs the pass little, while a window of 8
  // instead of 9 would cost every Wu-Manber step a sixth of its skip.
  const bool short_pass = std::any_of(literals_.begin(), literals_.end(),
                                      [](const std::string& l) { return l.size() < kShortBelow; });
  const size_t short_below = short_pass ? kShortBelow + 1 : kShortBelow;
  window_ = kMaxWindow;
  std::vector<uint32_t> long_ids;  // the literals the Wu-Manber scan finds
  for (uint32_t i = 0; i < literals_.size(); ++i) {
    if (literals_[i].size() < short_below) {
      short_.push_back(i);
    } else {
      long_ids.push_back(i);
      window_ = std::min(window_, literals_[i].size());
    }
  }
  make_probes();
  std::vector<std::string> digit_shapes;
  for (const std::string& literal : literals_) {
    if (std::none_of(literal.begin(), literal.end(), is_digit)) continue;
    std::string shape = literal;
    std::replace_if(shape.begin(), shape.end(), is_digit, kDigitShape);
    digit_shapes.push_back(std::move(shape));
  }
  if (!digit_shapes.empty()) {
    digit_shapes_ = std::make_shared<const LiteralSet>(std::move(digit_shapes));
  }
  if (long_ids.empty()) {
    window_ = 0;
    return;
  }
  // The table is sized to the literals: about eight slots per (literal, block) pair keeps
  // collisions, and so lost shifts, rare, while a small set gets a small table. That matters
  // when tailing: between two wake-ups other processes evict it, and each cold 64-byte line of
  // the table is a cache miss on the next read (the shipped packs: 4 KiB, not 32 KiB).
  const size_t pairs = long_ids.size() * (window_ - kBlock + 1);
  hash_bits_ = kMinHashBits;
  while (hash_bits_ < kMaxHashBits && (size_t{1} << hash_bits_) < pairs * 8) ++hash_bits_;
  const size_t table = size_t{1} << hash_bits_;
  shift_.assign(table, static_cast<uint8_t>(window_ - kBlock + 1));
  std::vector<std::pair<uint32_t, uint32_t>> by_hash;  // (hash of last window block, literal)
  offsets_.assign(literals_.size(), 0);
  std::vector<uint32_t>& offsets = offsets_;
  for (uint32_t i : long_ids) {
    offsets[i] = static_cast<uint32_t>(window_offset(literals_[i], common));
    const auto* s = reinterpret_cast<const unsigned char*>(literals_[i].data()) + offsets[i];
    for (size_t end = kBlock - 1; end < window_; ++end) {
      uint8_t& shift = shift_[hash(s + end + 1 - kBlock, hash_bits_)];
      shift = static_cast<uint8_t>(std::min<size_t>(shift, window_ - 1 - end));
    }
    by_hash.emplace_back(hash(s + window_ - kBlock, hash_bits_), i);
  }
  std::sort(by_hash.begin(), by_hash.end());
  bucket_start_.assign(table + 1, 0);
  for (const auto& [h, id] : by_hash) ++bucket_start_[h + 1];
  for (size_t h = 0; h < table; ++h) bucket_start_[h + 1] += bucket_start_[h];
  bucket_ids_.reserve(by_hash.size());
  bucket_blocks_.reserve(by_hash.size());
  for (const auto& [h, id] : by_hash) {
    bucket_ids_.push_back(id);
    bucket_offsets_.push_back(offsets[id]);
    bucket_blocks_.push_back(block_at(reinterpret_cast<const unsigned char*>(literals_[id].data()) +
                                      offsets[id] + window_ - kBlock));
  }
}

// Calls on_match(literal, start) for long literals in order of their window end; stops when
// on_match returns false. Windows are visited left to right, so the first call has the
// leftmost start (all long literals share one window length).
template <class OnMatch>
void LiteralSet::scan_long(std::string_view text, size_t pos, OnMatch&& on_match) const {
  if (window_ == 0 || text.size() < pos + window_) return;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t end = pos + window_ - 1;  // last byte of the window
  while (end < n) {
    const uint32_t h = hash(s + end + 1 - kBlock, hash_bits_);
    const uint8_t shift = shift_[h];
    if (shift != 0) {
      end += shift;
      continue;
    }
    const size_t window_start = end + 1 - window_;
    const uint32_t block = block_at(s + end + 1 - kBlock);
    for (uint32_t b = bucket_start_[h]; b < bucket_start_[h + 1]; ++b) {
      if (bucket_blocks_[b] != block) continue;  // another block with the same hash
      const std::string& lit = literals_[bucket_ids_[b]];
      if (window_start < pos + bucket_offsets_[b]) continue;  // it would start before the text
      const size_t start = window_start - bucket_offsets_[b];
      if (start + lit.size() <= n && std::memcmp(s + start, lit.data(), lit.size()) == 0) {
        if (!on_match(bucket_ids_[b], start)) return;
      }
    }
    ++end;
  }
}

namespace {
size_t line_start_before(std::string_view text, size_t floor, size_t at) {
  const void* nl = memrchr(text.data() + floor, '\n', at - floor);
  return nl == nullptr ? floor
                       : static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
}
size_t next_line(std::string_view text, size_t at) {
  const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
  return nl == nullptr ? text.size()
                       : static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
}
}  // namespace

namespace {
// Lanes scanned in lock step. One Wu-Manber step is a chain of dependent loads (bytes → hash →
// shift → next position), so one scan waits on memory latency most of the time; independent
// lanes over disjoint parts of the buffer fill that wait with useful work. Four lanes measured
// best on x86-64 and are plain C++, so aarch64 gets the same benefit.
constexpr size_t kLanes = 4;
// Below this a buffer is scanned as one lane: splitting costs more than it saves.
constexpr size_t kMinLaneBytes = 4096;
}  // namespace

// One lane of candidate_lines: a stretch of whole lines scanned on its own (a literal has no
// '\n', so no match crosses a lane's edge). step() moves the window once and returns false
// when the lane is done.
struct LiteralSet::Lane {
  const LiteralSet* set;
  std::string_view text;
  const unsigned char* bytes;  // text.data(), and the shift table: kept here so that the hot
  const uint8_t* shifts;       // step reads no member of `set`
  int bits;
  size_t end;    // last byte of the window
  size_t stop;   // one past the lane's last byte
  size_t floor;  // start of the line the window is in, or earlier
  std::vector<size_t>* hits;

  // Inlined into the lock-step loop: the common case is a load, a hash and a table lookup.
  bool step() {
    if (end >= stop) return false;
    const uint32_t h = hash(bytes + end + 1 - kBlock, bits);
    const uint8_t shift = shifts[h];
    if (shift != 0) [[likely]] {
      end += shift;
      return true;
    }
    verify(h);
    return true;
  }

  // A window whose last block ends some literal's window: compare those literals.
  [[gnu::noinline]] void verify(uint32_t h) {
    const size_t window_start = end + 1 - set->window_;
    const uint32_t block = block_at(bytes + end + 1 - kBlock);
    for (uint32_t b = set->bucket_start_[h]; b < set->bucket_start_[h + 1]; ++b) {
      // Most windows here end in another block with the same hash: one compare, and the
      // literal's own bytes (elsewhere in memory) stay untouched.
      if (set->bucket_blocks_[b] != block) continue;
      const std::string& lit = set->literals_[set->bucket_ids_[b]];
      // Where the literal would start: its window lies `offset` bytes into it. Before the
      // line the window is on it cannot (a literal holds no newline).
      const size_t offset = set->bucket_offsets_[b];
      if (window_start < floor + offset) continue;
      const size_t start = window_start - offset;
      if (start + lit.size() <= stop && std::memcmp(bytes + start, lit.data(), lit.size()) == 0) {
        // The line is a candidate already: the rest of it is skipped.
        hits->push_back(line_start_before(text, floor, start));
        floor = next_line(text, start);
        end = floor + set->window_ - 1;
        return;
      }
    }
    ++end;
  }
};

std::vector<size_t> LiteralSet::candidate_lines(std::string_view text) const {
  std::vector<size_t> lines;
  candidate_lines(text, lines);
  return lines;
}

void LiteralSet::candidate_lines(std::string_view text, std::vector<size_t>& lines) const {
  lines.clear();
  if (window_ != 0) {
    // The lanes' hits, kept per thread with their capacity.
    thread_local std::array<std::vector<size_t>, kLanes> lane_hits;
    // Lane edges at line starts near equal shares of the buffer.
    const size_t lanes = text.size() >= kLanes * kMinLaneBytes ? kLanes : 1;
    std::array<Lane, kLanes> lane;
    size_t from = 0;
    for (size_t i = 0; i < lanes; ++i) {
      size_t to = text.size();
      if (i + 1 < lanes) {
        to = std::max(from, text.size() / lanes * (i + 1));
        to = to >= text.size() ? text.size() : next_line(text, to);
      }
      lane[i] = Lane{this,
                     text,
                     reinterpret_cast<const unsigned char*>(text.data()),
                     shift_.data(),
                     hash_bits_,
                     from + window_ - 1,
                     to,
                     from,
                     &lane_hits[i]};
      lane_hits[i].clear();
      from = to;
    }
    if (lanes == kLanes) {
      // Lock step while every lane has work; then each lane finishes alone. Every lane steps on
      // each round (no short circuit), which is the point of running them side by side.
      auto all_stepped = [&lane] {
        unsigned stepped = 1;
        for (auto& l : lane) stepped &= static_cast<unsigned>(l.step());
        return stepped != 0;
      };
      while (all_stepped()) {
      }
    }
    for (size_t i = 0; i < lanes; ++i) {
      while (lane[i].step()) {
      }
      lines.insert(lines.end(), lane[i].hits->begin(), lane[i].hits->end());
    }
  }
  const size_t sorted_until = lines.size();
  if (!short_.empty()) scan_short(text, lines);
  if (lines.size() != sorted_until) {
    // Each pass appends in ascending order: one pass (the shipped packs) is a merge, not a sort.
    const auto mid = lines.begin() + static_cast<std::ptrdiff_t>(sorted_until);
    if (std::is_sorted(mid, lines.end())) {
      std::inplace_merge(lines.begin(), mid, lines.end());
    } else {
      std::sort(lines.begin(), lines.end());
    }
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  }
}

// Each short literal is found by a trigram it holds (folded); literals sharing a trigram share
// its probe ("loss", "Loss" and "LOSS" are all found by "los"), so the pass compares few probes.
void LiteralSet::make_probes() {
  using Trigram = std::array<uint8_t, 3>;
  auto trigram = [this](uint32_t id, size_t at) {
    const std::string& lit = literals_[id];
    Trigram t{};
    for (size_t k = 0; k < 3; ++k) {
      t[k] = at + k < lit.size() ? static_cast<uint8_t>(static_cast<uint8_t>(lit[at + k]) | 0x20)
                                 : uint8_t{0};
    }
    return t;
  };
  auto offsets = [this](uint32_t id) {
    const size_t size = literals_[id].size();
    return size < 3 ? size_t{1} : size - 2;
  };
  std::map<Trigram, size_t> shared;  // folded trigram -> how many short literals hold it
  for (uint32_t id : short_) {
    std::set<Trigram> own;
    for (size_t at = 0; at < offsets(id); ++at) own.insert(trigram(id, at));
    for (const auto& t : own) ++shared[t];
  }
  for (uint32_t id : short_) {
    const std::string& lit = literals_[id];
    size_t best = 0;  // the offset whose trigram most literals share; the first on a tie
    for (size_t at = 1; at < offsets(id); ++at) {
      if (shared[trigram(id, at)] > shared[trigram(id, best)]) best = at;
    }
    const Trigram t = trigram(id, best);
    const uint8_t wild = lit.size() >= 3 ? 0 : lit.size() == 2 ? 0b100 : 0b110;
    if (std::none_of(probes_.begin(), probes_.end(),
                     [&](const ShortProbe& p) { return p.bytes == t && p.wild == wild; })) {
      probes_.push_back({t, wild});
      for (unsigned next = 0; next < 256; ++next) {
        if ((wild & 0b10) != 0 || next == t[1]) probe_pairs_.set(t[0] << 8 | next);
      }
    }
    short_at_.push_back({id, static_cast<uint32_t>(best)});
    any_wild_ = any_wild_ || wild != 0;
  }
}

// Whether some probe's trigram is at `at` (what the vectors compare, one position).
bool LiteralSet::probe_at(std::string_view text, size_t at) const {
  const unsigned next = at + 1 < text.size() ? static_cast<uint8_t>(text[at + 1]) | 0x20 : 0;
  if (!probe_pairs_.test((static_cast<uint8_t>(text[at]) | 0x20) << 8 | next)) return false;
  std::array<uint8_t, 3> t{};
  for (size_t k = 0; k < 3; ++k) {
    t[k] = at + k < text.size() ? static_cast<uint8_t>(static_cast<uint8_t>(text[at + k]) | 0x20)
                                : uint8_t{0};
  }
  return std::any_of(probes_.begin(), probes_.end(), [&](const ShortProbe& p) {
    for (size_t k = 0; k < 3; ++k) {
      if (((p.wild >> k) & 1) == 0 && p.bytes[k] != t[k]) return false;
    }
    return true;
  });
}

// Whether the short literal of `entry` lies in s[0, n) with its probe's trigram at `at`.
bool LiteralSet::holds_short(const unsigned char* s, size_t n, size_t at,
                             const ShortAt& entry) const {
  const std::string& lit = literals_[entry.literal];
  const size_t start = at - entry.offset;
  return at >= entry.offset && start + lit.size() <= n &&
         s[start] == static_cast<uint8_t>(lit[0]) &&
         std::memcmp(s + start, lit.data(), lit.size()) == 0;
}

// Whether a short literal holds its probe's trigram at `at`.
bool LiteralSet::short_literal_at(const unsigned char* s, size_t n, size_t at) const {
  return std::any_of(short_at_.begin(), short_at_.end(),
                     [&](const ShortAt& entry) { return holds_short(s, n, at, entry); });
}

namespace {
// At most this many probes are compared in one pass over the text; more take more passes.
constexpr size_t kProbesPerPass = 16;

// The vector types of the short pass by width in bytes (a dependent vector_size is not
// portable between compilers).
template <size_t kWidth>
struct Vectors;
template <>
struct Vectors<16> {
  using Bytes = uint8_t __attribute__((vector_size(16)));
  using Words = uint64_t __attribute__((vector_size(16)));
  // For loads from any address: one unaligned vector load, never split into smaller moves. A
  // packed member has alignment 1 in GCC and Clang alike (Clang keeps a vector typedef's own
  // alignment whatever aligned(1) says).
  struct [[gnu::packed, gnu::may_alias]] Unaligned {
    Bytes v;
  };
};
template <>
struct Vectors<32> {
  using Bytes = uint8_t __attribute__((vector_size(32)));
  using Words = uint64_t __attribute__((vector_size(32)));
  // For loads from any address: one unaligned vector load, never split into smaller moves. A
  // packed member has alignment 1 in GCC and Clang alike (Clang keeps a vector typedef's own
  // alignment whatever aligned(1) says).
  struct [[gnu::packed, gnu::may_alias]] Unaligned {
    Bytes v;
  };
};
}  // namespace

// One pass of the short literals' probes `first` .. `first + count` over `text`: 2 × kWidth
// positions at a time, with plain GCC/Clang vectors (SSE2 on x86-64, NEON on aarch64; AVX2 where
// scan_short finds it at run time), three loads shared by every probe and three compares per
// probe. `kWild`: some probe (a literal under three bytes) accepts any byte where it has none.
// Appends the lines found (ascending) and returns where the vectors stopped: the last two
// positions (all of a text shorter than one step) are the caller's. The vectors never cross a
// function boundary (their ABI depends on the target), hence one body.
template <size_t kWidth, bool kWild, typename Sink>
[[gnu::always_inline]] inline size_t LiteralSet::short_pass(std::string_view text, size_t first,
                                                            size_t count, Sink& sink) const {
  using Bytes = typename Vectors<kWidth>::Bytes;
  using Words = typename Vectors<kWidth>::Words;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  Bytes want[kProbesPerPass][3];
  Bytes wild[kProbesPerPass][2];
  for (size_t k = 0; k < count; ++k) {
    const ShortProbe& p = probes_[first + k];
    for (size_t b = 0; b < 3; ++b) std::memset(&want[k][b], p.bytes[b], sizeof(Bytes));
    for (size_t b = 1; b < 3; ++b) {
      std::memset(&wild[k][b - 1], ((p.wild >> b) & 1) != 0 ? 0xFF : 0, sizeof(Bytes));
    }
  }
  Bytes fold;
  std::memset(&fold, 0x20, sizeof fold);
  size_t i = 0;
  // Hits before this position were reported already (the last window overlaps the one before).
  size_t reported = 0;
  bool last = false;
  using Unaligned = typename Vectors<kWidth>::Unaligned;
  constexpr size_t kSpan = 2 * kWidth + 2;  // the bytes one step reads
  for (;;) {
    if (i + kSpan > n) {
      // The last bytes: one more step over the window that ends the text, reporting only the
      // positions from `i` on (a candidate line is often shorter than a few steps, and a byte at
      // a time would cost as much as the steps before). What is left is the last two
      // positions, where only a literal of under three bytes can start: the caller's.
      if (last || n < kSpan || i + 2 >= n) break;
      last = true;
      reported = i;
      i = n - kSpan;
    }
    // Two vectors of positions side by side: each probe's bytes are loaded once for both.
    // (No helper function: a vector crossing a call changes its ABI with the target.)
    const Bytes low0 = reinterpret_cast<const Unaligned*>(s + i)->v | fold;
    const Bytes low1 = reinterpret_cast<const Unaligned*>(s + i + 1)->v | fold;
    const Bytes low2 = reinterpret_cast<const Unaligned*>(s + i + 2)->v | fold;
    const Bytes high0 = reinterpret_cast<const Unaligned*>(s + i + kWidth)->v | fold;
    const Bytes high1 = reinterpret_cast<const Unaligned*>(s + i + kWidth + 1)->v | fold;
    const Bytes high2 = reinterpret_cast<const Unaligned*>(s + i + kWidth + 2)->v | fold;
    Bytes low = {}, high = {};
    for (size_t k = 0; k < count; ++k) {
      Bytes second_low = low1 == want[k][1], second_high = high1 == want[k][1];
      Bytes third_low = low2 == want[k][2], third_high = high2 == want[k][2];
      if constexpr (kWild) {
        second_low |= wild[k][0];
        second_high |= wild[k][0];
        third_low |= wild[k][1];
        third_high |= wild[k][1];
      }
      low |= (low0 == want[k][0]) & second_low & third_low;
      high |= (high0 == want[k][0]) & second_high & third_high;
    }
    const Words words = reinterpret_cast<Words>(low | high);
    uint64_t any = 0;
    for (size_t w = 0; w < kWidth / 8; ++w) any |= words[w];
    if (any == 0) [[likely]] {
      i += 2 * kWidth;
      continue;
    }
    uint8_t hit[2 * kWidth];
    std::memcpy(hit, &low, kWidth);
    std::memcpy(hit + kWidth, &high, kWidth);
    size_t next = i + 2 * kWidth;
    for (size_t j = reported > i ? reported - i : 0; j < 2 * kWidth; ++j) {
      if (hit[j] == 0) continue;
      if (const size_t resume = sink.found(text, i + j); resume != 0) {
        next = resume;
        break;
      }
    }
    i = next;
  }
  return i;
}

namespace {
// What the short pass does with a probe's hit at `at`: found() returns where the pass resumes,
// or 0 to go on with the next position.
//
// The lines holding a short literal: after the first, the rest of its line is skipped.
struct LineSink {
  const LiteralSet& set;
  std::vector<size_t>& lines;
  size_t floor = 0;  // start of the line being scanned, or earlier
  size_t found(std::string_view text, size_t at) {
    if (!set.short_literal_at(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
                              at)) {
      return 0;
    }
    lines.push_back(line_start_before(text, floor, at));
    floor = next_line(text, at);
    return floor;
  }
};
// The short literals of one line, each occurrence.
struct IdSink {
  const LiteralSet& set;
  std::vector<uint32_t>& ids;
  size_t found(std::string_view text, size_t at) {
    set.short_literal_ids_at(reinterpret_cast<const unsigned char*>(text.data()), text.size(), at,
                             ids);
    return 0;
  }
};
}  // namespace

// Every pass over `text` (one per kProbesPerPass probes); then the last bytes, which the vectors
// of some pass left, one position at a time for every probe.
template <size_t kWidth, typename Sink>
[[gnu::always_inline]] inline void LiteralSet::short_passes(std::string_view text,
                                                            Sink& sink) const {
  size_t tail = text.size();  // where the first pass to stop its vectors stopped
  for (size_t first = 0; first < probes_.size(); first += kProbesPerPass) {
    const size_t count = std::min(kProbesPerPass, probes_.size() - first);
    Sink pass = sink;  // a pass of its own: a line sink's floor starts over
    tail = std::min(tail, any_wild_ ? short_pass<kWidth, true>(text, first, count, pass)
                                    : short_pass<kWidth, false>(text, first, count, pass));
  }
  Sink last = sink;
  for (size_t i = tail; i < text.size(); ++i) {
    if (!probe_at(text, i)) continue;
    if (const size_t resume = last.found(text, i); resume != 0) {
      if (resume >= text.size()) break;
      i = resume - 1;
    }
  }
}

#ifdef FAULTD_X86_AVX2_DISPATCH
template <typename Sink>
[[gnu::target("avx2")]] void LiteralSet::short_passes_avx2(std::string_view text,
                                                           Sink& sink) const {
  short_passes<32>(text, sink);
}
#endif

// The passes with the widest vectors this CPU has (checked at run time on x86-64).
template <typename Sink>
void LiteralSet::run_short(std::string_view text, Sink& sink) const {
#ifdef FAULTD_X86_AVX2_DISPATCH
  if (cpu_has_avx2()) {
    short_passes_avx2(text, sink);
    return;
  }
#endif
  short_passes<16>(text, sink);
}

void LiteralSet::scan_short(std::string_view text, std::vector<size_t>& lines) const {
  LineSink sink{*this, lines};
  run_short(text, sink);
}

void LiteralSet::matches(std::string_view line, std::vector<uint32_t>& out) const {
  scan_long(line, 0, [&](uint32_t id, size_t) {
    out.push_back(id);
    return true;
  });
  if (short_.empty()) return;
  // The short pass of candidate_lines, every occurrence this time: a candidate line is most
  // often one of a step's, where "loss" and "scale" are many.
  IdSink sink{*this, out};
  run_short(line, sink);
}

bool LiteralSet::shape_decides(std::string_view line) const {
  if (!digit_shapes_) return true;
  thread_local std::string shape;
  shape.assign(line);
  std::replace_if(shape.begin(), shape.end(), is_digit, kDigitShape);
  thread_local std::vector<uint32_t> found;
  found.clear();
  digit_shapes_->matches(shape, found);
  return found.empty();
}

void LiteralSet::short_literal_ids_at(const unsigned char* s, size_t n, size_t at,
                                      std::vector<uint32_t>& ids) const {
  for (const ShortAt& entry : short_at_) {
    if (holds_short(s, n, at, entry)) ids.push_back(entry.literal);
  }
}

}  // namespace faultd::rules
