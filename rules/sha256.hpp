// A small portable SHA-256 (FIPS 180-4), so the ruleset hash of faultd_build_info needs no
// crypto library. Not for secrets: it fingerprints configuration. Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace faultd::rules {

// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace faultd::rules
