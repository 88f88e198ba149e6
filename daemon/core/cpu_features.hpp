// What the CPU offers beyond the build's baseline, checked once at run time. The hot byte loops
// (the short-literal pass, newline counting) are plain GCC/Clang vector code compiled a second
// time for AVX2 on x86-64 and called only where this says the CPU has it; aarch64's baseline
// already has NEON.
//
// Pure, thread-safe (a function-local static).
#pragma once

namespace faultd {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FAULTD_X86_AVX2_DISPATCH 1
// Whether this x86-64 CPU runs AVX2 code.
inline bool cpu_has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}
#endif

}  // namespace faultd
