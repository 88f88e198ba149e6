#include "daemon/state/records.hpp"

#include "daemon/core/enum_names.hpp"

namespace faultd {

namespace {
constexpr std::array<std::string_view, 6> kActionStatusNames = {"pending", "running", "success",
                                                                "failure", "timeout", "skipped"};
}  // namespace

std::string_view to_string(ActionStatus s) { return name_of(kActionStatusNames, s); }

std::optional<ActionStatus> parse_action_status(std::string_view s) {
  return enum_named<ActionStatus>(kActionStatusNames, s);
}

}  // namespace faultd
