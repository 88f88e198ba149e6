// The hang verdict's rule ids: device.hang.<cause> (collectors/activity/hang_judge.hpp). The
// cause is a field of the finding's JSON (faultctl, hooks' input); this is where the id is read.
#pragma once

#include <string_view>

namespace faultd {

inline constexpr std::string_view kHangRulePrefix = "device.hang.";

// "device.hang.device-wedge" → "device-wedge"; "" for any other rule.
constexpr std::string_view hang_cause(std::string_view rule) {
  return rule.starts_with(kHangRulePrefix) ? rule.substr(kHangRulePrefix.size())
                                           : std::string_view();
}

}  // namespace faultd
