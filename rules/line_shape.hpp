// Lines of the same shape: the same bytes but for digits, digit for digit ("step:[ 41/ 6500],
// loss: 1.234" and "step:[ 42/ 6500], loss: 1.208"). A training job prints its step lines alike
// step after step, so what is read from a line only by the class of its bytes (digit or not),
// never by which digits they are, holds for every line of its shape: it is kept per shape and
// read again only for a new one.
//
// Not thread-safe: one per scanning context.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultd {

// Whether `a` and `b` are of the same shape. Eight bytes at a time: most of a step line is the
// same text every step.
inline bool same_shape(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  for (;;) {
    for (; i + 8 <= a.size(); i += 8) {
      uint64_t x, y;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) break;
    }
    const size_t end = std::min(a.size(), i + 8);
    if (i == end) return true;
    for (; i < end; ++i) {
      if (a[i] != b[i] && !(digit(a[i]) && digit(b[i]))) return false;
    }
  }
}

// What was read from the last few shapes of lines (a job interleaves its trainer's and its
// optimizer's step lines), the least recently used forgotten first.
template <typename T, size_t kShapes = 4>
class ShapeCache {
 public:
  // What is kept for `line`'s shape, or null.
  T* find(std::string_view line) {
    ++uses_;
    for (Entry& e : entries_) {
      if (same_shape(line, e.line)) {
        e.used = uses_;
        return &e.value;
      }
    }
    return nullptr;
  }
  // Keeps `value` for `line`'s shape.
  void keep(std::string_view line, T value) {
    Entry entry{std::string(line), std::move(value), uses_};
    if (entries_.size() < kShapes) {
      entries_.push_back(std::move(entry));
      return;
    }
    *std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
      return a.used < b.used;
    }) = std::move(entry);
  }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    std::string line;
    T value;
    uint64_t used = 0;
  };
  std::vector<Entry> entries_;
  uint64_t uses_ = 0;
};

}  // namespace faultd
