#include "rules/prefilter.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace faultd::rules {
namespace {
constexpr size_t kMaxWindow = 255;  // shifts are stored in a byte
}

uint32_t LiteralSet::hash(const unsigned char* p, int bits) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; byte order only changes which hash, not speed
  return (v * 2654435761u) >> (32 - bits);
}

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
  window_ = kMaxWindow;
  bool any_long = false;
  for (uint32_t i = 0; i < literals_.size(); ++i) {
    if (literals_[i].size() < kShortBelow) {
      short_.push_back(i);
    } else {
      any_long = true;
      window_ = std::min(window_, literals_[i].size());
    }
  }
  for (uint32_t id : short_) {
    const std::string& lit = literals_[id];
    ShortProbe probe{};
    probe.second_at = lit.size() > 1 ? 1 : 0;
    probe.last_at = static_cast<uint8_t>(lit.size() - 1);
    std::memset(probe.first, static_cast<uint8_t>(lit.front()) | 0x20, sizeof probe.first);
    std::memset(probe.second, static_cast<uint8_t>(lit[probe.second_at]) | 0x20,
                sizeof probe.second);
    std::memset(probe.last, static_cast<uint8_t>(lit.back()) | 0x20, sizeof probe.last);
    if (std::none_of(probes_.begin(), probes_.end(),
                     [&](const ShortProbe& p) { return std::memcmp(&p, &probe, sizeof p) == 0; })) {
      probes_.push_back(probe);
    }
    longest_short_ = std::max(longest_short_, lit.size());
  }
  if (!any_long) {
    window_ = 0;
    return;
  }
  // The table is sized to the literals: about eight slots per (literal, block) pair keeps
  // collisions, and so lost shifts, rare, while a small set gets a small table. That matters
  // when tailing: between two wake-ups other processes evict it, and each cold 64-byte line of
  // the table is a cache miss on the next read (the shipped packs: 4 KiB, not 32 KiB).
  size_t pairs = 0;
  for (const auto& l : literals_) {
    if (l.size() >= kShortBelow) pairs += window_ - kBlock + 1;
  }
  hash_bits_ = kMinHashBits;
  while (hash_bits_ < kMaxHashBits && (size_t{1} << hash_bits_) < pairs * 8) ++hash_bits_;
  const size_t table = size_t{1} << hash_bits_;
  shift_.assign(table, static_cast<uint8_t>(window_ - kBlock + 1));
  std::vector<std::pair<uint32_t, uint32_t>> by_hash;  // (hash of last window block, literal)
  for (uint32_t i = 0; i < literals_.size(); ++i) {
    if (literals_[i].size() < kShortBelow) continue;
    const auto* s = reinterpret_cast<const unsigned char*>(literals_[i].data());
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
  for (const auto& [h, id] : by_hash) bucket_ids_.push_back(id);
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
    const size_t start = end + 1 - window_;
    for (uint32_t b = bucket_start_[h]; b < bucket_start_[h + 1]; ++b) {
      const std::string& lit = literals_[bucket_ids_[b]];
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
  std::vector<size_t> hits;

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
    const size_t start = end + 1 - set->window_;
    for (uint32_t b = set->bucket_start_[h]; b < set->bucket_start_[h + 1]; ++b) {
      const std::string& lit = set->literals_[set->bucket_ids_[b]];
      if (start + lit.size() <= stop && std::memcmp(bytes + start, lit.data(), lit.size()) == 0) {
        // The line is a candidate already: the rest of it is skipped.
        hits.push_back(line_start_before(text, floor, start));
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
  if (window_ != 0) {
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
                     {}};
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
      lines.insert(lines.end(), lane[i].hits.begin(), lane[i].hits.end());
    }
  }
  const size_t sorted_until = lines.size();
  if (!short_.empty()) scan_short(text, lines);
  if (lines.size() != sorted_until) {
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  }
  return lines;
}

namespace {
using Bytes16 = uint8_t __attribute__((vector_size(16)));
using Words16 = uint64_t __attribute__((vector_size(16)));
constexpr size_t kVector = 16;

Bytes16 load16(const unsigned char* p) {
  Bytes16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

void LiteralSet::scan_short(std::string_view text, std::vector<size_t>& lines) const {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t floor = 0;  // start of the line being scanned, or earlier
  // Whether a short literal starts at `at`.
  auto found_at = [&](size_t at) {
    for (uint32_t id : short_) {
      const std::string& lit = literals_[id];
      if (at + lit.size() <= n && std::memcmp(s + at, lit.data(), lit.size()) == 0) return true;
    }
    return false;
  };
  const Bytes16 fold = {0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
                        0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20};
  size_t i = 0;
  // 16 candidate starts at a time, while the last byte of the longest literal is in the text.
  while (i + kVector + std::max<size_t>(longest_short_, 2) - 1 <= n) {
    const Bytes16 at0 = load16(s + i) | fold;
    const Bytes16 at1 = load16(s + i + 1) | fold;
    Bytes16 any = {};
    for (const ShortProbe& p : probes_) {
      const Bytes16 second = p.second_at == 1 ? at1 : at0;
      const Bytes16 last = load16(s + i + p.last_at) | fold;
      any |= (at0 == load16(p.first)) & (second == load16(p.second)) & (last == load16(p.last));
    }
    const Words16 words = reinterpret_cast<Words16>(any);
    if ((words[0] | words[1]) == 0) [[likely]] {
      i += kVector;
      continue;
    }
    size_t next = i + kVector;
    for (size_t j = 0; j < kVector; ++j) {
      if (any[j] != 0 && found_at(i + j)) {
        lines.push_back(line_start_before(text, floor, i + j));
        next = floor = next_line(text, i + j);  // the rest of the line is a candidate already
        break;
      }
    }
    i = next;
  }
  while (i < n) {  // the last bytes, one start at a time
    if (found_at(i)) {
      lines.push_back(line_start_before(text, floor, i));
      i = floor = next_line(text, i);
    } else {
      ++i;
    }
  }
}

void LiteralSet::matches(std::string_view line, std::vector<uint32_t>& out) const {
  scan_long(line, 0, [&](uint32_t id, size_t) {
    out.push_back(id);
    return true;
  });
  for (uint32_t id : short_) {
    const std::string& lit = literals_[id];
    if (memmem(line.data(), line.size(), lit.data(), lit.size()) != nullptr) out.push_back(id);
  }
}

}  // namespace faultd::rules
