// Counting the lines of a buffer without looking at them one by one. Every byte faultd reads is
// counted (line numbers of findings, lines per source), so a byte-at-a-time loop here costs as
// much as the whole rule prefilter; this one compares 16 bytes at a time with plain GCC/Clang
// vectors (SSE2 on x86-64, NEON on aarch64; 32 with AVX2 where the CPU has it), no intrinsics.
//
// Pure functions, no state: safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace faultd {

// The number of '\n' bytes in `bytes`.
uint64_t count_newlines(std::string_view bytes);

// A chunk's line marks: mark k is the number of '\n' bytes before offset k * kLineMarkBytes of
// the chunk's data (mark 0 is 0). Whoever counts a chunk's newlines anyway (the file source's
// line buffer) leaves them behind, so that a reader numbering a line far into the chunk (the
// rule engine, for a candidate line) counts from the mark before it, not from its last line.
inline constexpr size_t kLineMarkBytes = 4096;
using LineMarks = std::vector<uint32_t>;

// count_newlines of `bytes`, which lie `at` bytes into a chunk whose first `before` newlines
// come before them and whose marks up to `at` are in `marks`: appends the mark of each multiple
// of kLineMarkBytes in (at, at + bytes.size()].
uint64_t count_newlines_marking(std::string_view bytes, size_t at, uint64_t before,
                                LineMarks& marks);

}  // namespace faultd
