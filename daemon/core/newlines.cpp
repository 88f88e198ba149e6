#include "daemon/core/newlines.hpp"

#include <algorithm>
#include <cstring>

#include "daemon/core/cpu_features.hpp"

namespace faultd {
namespace {

// SWAR, eight bytes per step: after the XOR a newline byte is zero; ((x & 0x7f) + 0x7f) | x sets
// a byte's high bit exactly when the byte is non-zero, and no carry crosses into the next byte.
// Used for the tail, and for everything on compilers without generic vectors.
uint64_t count_swar(const char* p, size_t n) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  constexpr uint64_t kNewlines = 0x0a0a0a0a0a0a0a0aULL;
  uint64_t count = 0;
  size_t i = 0;
  while (i + 8 <= n) {
    // Up to 255 words summed per byte lane (each adds 0 or 1), then the lanes are added up
    // with one multiply: no popcount, which is a library call on baseline x86-64.
    uint64_t lanes = 0;
    const size_t words = std::min<size_t>((n - i) / 8, 255);
    for (size_t w = 0; w < words; ++w, i += 8) {
      uint64_t v;
      std::memcpy(&v, p + i, sizeof v);
      const uint64_t x = v ^ kNewlines;
      lanes += (~(((x & kLow7) + kLow7) | x) & ~kLow7) >> 7;
    }
    // Pairwise first: four 16-bit sums of at most 510, so the multiply cannot overflow.
    lanes = (lanes & 0x00ff00ff00ff00ffULL) + ((lanes >> 8) & 0x00ff00ff00ff00ffULL);
    count += (lanes * 0x0001000100010001ULL) >> 48;
  }
  for (; i < n; ++i) count += p[i] == '\n' ? 1 : 0;
  return count;
}

}  // namespace

#if defined(__GNUC__)  // GCC and Clang: generic vectors, SSE2 on x86-64, NEON on aarch64
namespace {

template <size_t kWidth>
struct Vector;
template <>
struct Vector<16> {
  using Bytes = unsigned char __attribute__((vector_size(16)));
};
template <>
struct Vector<32> {
  using Bytes = unsigned char __attribute__((vector_size(32)));
};

// kWidth bytes per compare; AVX2's 32 where count_newlines finds it at run time. One body for
// both widths: a vector never crosses a call (its ABI depends on the target).
template <size_t kWidth>
[[gnu::always_inline]] inline uint64_t count_vectors(const char* p, size_t n) {
  using Bytes = typename Vector<kWidth>::Bytes;
  constexpr size_t kUnroll = 4;  // independent accumulators: no chain between steps
  Bytes newline;
  std::memset(&newline, '\n', sizeof newline);
  uint64_t count = 0;
  size_t i = 0;
  while (i + kWidth * kUnroll <= n) {
    // A comparison gives 0xff per equal byte; subtracting it adds one. A lane overflows after
    // 255 steps, so the lanes are summed into `count` at least that often.
    Bytes acc[kUnroll] = {};
    const size_t steps = std::min<size_t>((n - i) / (kWidth * kUnroll), 255);
    for (size_t s = 0; s < steps; ++s, i += kWidth * kUnroll) {
      for (size_t u = 0; u < kUnroll; ++u) {
        Bytes v;
        std::memcpy(&v, p + i + u * kWidth, kWidth);
        acc[u] -= reinterpret_cast<Bytes>(v == newline);
      }
    }
    for (size_t u = 0; u < kUnroll; ++u) {
      for (size_t b = 0; b < kWidth; ++b) count += acc[u][b];
    }
  }
  return count + count_swar(p + i, n - i);
}

#ifdef FAULTD_X86_AVX2_DISPATCH
[[gnu::target("avx2")]] uint64_t count_avx2(const char* p, size_t n) {
  return count_vectors<32>(p, n);
}
#endif

}  // namespace

uint64_t count_newlines(std::string_view bytes) {
#ifdef FAULTD_X86_AVX2_DISPATCH
  if (cpu_has_avx2()) return count_avx2(bytes.data(), bytes.size());
#endif
  return count_vectors<16>(bytes.data(), bytes.size());
}
#else
uint64_t count_newlines(std::string_view bytes) { return count_swar(bytes.data(), bytes.size()); }
#endif

uint64_t count_newlines_marking(std::string_view bytes, size_t at, uint64_t before,
                                LineMarks& marks) {
  uint64_t count = 0;
  for (size_t i = 0; i < bytes.size();) {
    const size_t next_mark = ((at + i) / kLineMarkBytes + 1) * kLineMarkBytes;
    const size_t piece = std::min(bytes.size() - i, next_mark - (at + i));
    count += count_newlines(bytes.substr(i, piece));
    i += piece;
    if (at + i == next_mark) marks.push_back(static_cast<uint32_t>(before + count));
  }
  return count;
}

}  // namespace faultd
