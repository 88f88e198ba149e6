#include "daemon/core/newlines.hpp"

#include <algorithm>
#include <cstring>

namespace faultd {

uint64_t count_newlines(std::string_view bytes) {
  // SWAR: after the XOR a newline byte is zero; ((x & 0x7f) + 0x7f) | x sets a byte's high bit
  // exactly when the byte is non-zero, and no carry crosses into the next byte.
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  constexpr uint64_t kNewlines = 0x0a0a0a0a0a0a0a0aULL;
  const char* p = bytes.data();
  const size_t n = bytes.size();
  uint64_t count = 0;
  size_t i = 0;
  while (i + 8 <= n) {
    // Up to 255 words summed per byte lane (each adds 0 or 1 per lane), then the lanes are
    // added up with one multiply: no popcount, which is a library call on baseline x86-64.
    uint64_t lanes = 0;
    const size_t words = std::min<size_t>((n - i) / 8, 255);
    for (size_t w = 0; w < words; ++w, i += 8) {
      uint64_t v;
      std::memcpy(&v, p + i, sizeof v);
      const uint64_t x = v ^ kNewlines;
      lanes += (~(((x & kLow7) + kLow7) | x) & ~kLow7) >> 7;
    }
    // Each lane holds at most 255; summing pairwise first keeps the multiply from overflowing.
    lanes = (lanes & 0x00ff00ff00ff00ffULL) + ((lanes >> 8) & 0x00ff00ff00ff00ffULL);
    count += (lanes * 0x0001000100010001ULL) >> 48;
  }
  for (; i < n; ++i) count += p[i] == '\n' ? 1 : 0;
  return count;
}

}  // namespace faultd
