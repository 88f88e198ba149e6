#include "rules/prefilter.hpp"

#include <algorithm>
#include <cstring>

namespace faultd::rules {
namespace {
constexpr size_t kMaxWindow = 255;  // shifts are stored in a byte
}

uint32_t LiteralSet::hash(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);  // unaligned-safe; byte order only changes which hash, not speed
  return (v * 2654435761u) >> (32 - kHashBits);
}

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
  window_ = kMaxWindow;
  bool any_long = false;
  for (uint32_t i = 0; i < literals_.size(); ++i) {
    if (literals_[i].size() < kBlock) {
      short_.push_back(i);
    } else {
      any_long = true;
      window_ = std::min(window_, literals_[i].size());
    }
  }
  if (!any_long) {
    window_ = 0;
    return;
  }
  const size_t table = size_t{1} << kHashBits;
  shift_.assign(table, static_cast<uint8_t>(window_ - kBlock + 1));
  std::vector<std::pair<uint32_t, uint32_t>> by_hash;  // (hash of last window block, literal)
  for (uint32_t i = 0; i < literals_.size(); ++i) {
    if (literals_[i].size() < kBlock) continue;
    const auto* s = reinterpret_cast<const unsigned char*>(literals_[i].data());
    for (size_t end = kBlock - 1; end < window_; ++end) {
      uint8_t& shift = shift_[hash(s + end + 1 - kBlock)];
      shift = static_cast<uint8_t>(std::min<size_t>(shift, window_ - 1 - end));
    }
    by_hash.emplace_back(hash(s + window_ - kBlock), i);
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
    const uint32_t h = hash(s + end + 1 - kBlock);
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

size_t LiteralSet::find_long(std::string_view text, size_t pos) const {
  size_t found = std::string_view::npos;
  scan_long(text, pos, [&](uint32_t, size_t start) {
    found = start;
    return false;
  });
  return found;
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

std::vector<size_t> LiteralSet::candidate_lines(std::string_view text) const {
  std::vector<size_t> lines;
  // After a hit the rest of its line is skipped: the line is a candidate already.
  for (size_t pos = 0; pos < text.size();) {
    const size_t hit = find_long(text, pos);
    if (hit == std::string_view::npos) break;
    lines.push_back(line_start_before(text, pos, hit));
    pos = next_line(text, hit);
  }
  const size_t sorted_until = lines.size();
  for (uint32_t id : short_) {
    const std::string& lit = literals_[id];
    for (size_t pos = 0; pos < text.size();) {
      const void* hit = memmem(text.data() + pos, text.size() - pos, lit.data(), lit.size());
      if (hit == nullptr) break;
      const size_t at = static_cast<size_t>(static_cast<const char*>(hit) - text.data());
      lines.push_back(line_start_before(text, pos, at));
      pos = next_line(text, at);
    }
  }
  if (lines.size() != sorted_until) {
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  }
  return lines;
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
