// FNV-1a: the published test vectors, and the stored keys made with the legacy seed, pinned to
// the values the earlier per-caller loops computed (a changed value would give a repeated alert
// or a re-read command output a new journal key after an upgrade).
#include <catch2/catch.hpp>

#include <string>

#include "daemon/core/hash.hpp"

using namespace faultd;

TEST_CASE("fnv1a64: the published FNV-1a 64-bit vectors", "[core][hash]") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ULL);
  // Hashing in pieces is hashing the whole.
  CHECK(fnv1a64("bar", fnv1a64("foo")) == fnv1a64("foobar"));
  static_assert(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
}

TEST_CASE("fnv1a64: keys stored with the legacy seed do not change", "[core][hash]") {
  // The command source's stream key for (source "npu-health", device "3").
  CHECK(fnv1a64(std::string("npu-health\0"
                            "3",
                            12),
                kFnvLegacySeed) == 0x55dd579c4666fef0ULL);
  // The Alertmanager intake's key for an alert's fingerprint and start time.
  CHECK(fnv1a64("0123abcd@2026-11-24T01:02:03.456Z", kFnvLegacySeed) == 0x9d805a420cca3680ULL);
  CHECK(kFnvLegacySeed != kFnvOffsetBasis);
}
