// One 64-bit FNV-1a, for every key faultd derives from bytes: file fingerprints, the journal
// keys of sources that do not read files (a command's output stream, an alert's firing), boot
// and name identities. These values are stored, so the function and its seeds never change.
//
// Two seeds are in use. kFnvOffsetBasis is the standard offset basis. kFnvLegacySeed is the
// basis with its last digit missing, which the command source's and the Alertmanager intake's
// journal keys were made with: changing it would give a repeated alert or a re-read command
// output a new key after an upgrade, so it stays, named for what it is.
#pragma once

#include <cstdint>
#include <string_view>

namespace faultd {

inline constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ULL;
inline constexpr uint64_t kFnvLegacySeed = 1469598103934665603ULL;
inline constexpr uint64_t kFnvPrime = 1099511628211ULL;

// Continues the hash `seed` over `bytes` (so a long input can be hashed in pieces).
constexpr uint64_t fnv1a64(std::string_view bytes, uint64_t seed = kFnvOffsetBasis) {
  uint64_t hash = seed;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= kFnvPrime;
  }
  return hash;
}

}  // namespace faultd
