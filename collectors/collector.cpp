#include "collectors/collector.hpp"

#include "daemon/core/enum_names.hpp"

namespace faultd {

// These names are the `kind` label of faultd_source_errors_total: they are part of the metrics
// contract, so they never change once shipped.
std::string_view to_string(SourceErrorKind kind) {
  static constexpr std::array<std::string_view, kSourceErrorKindCount> kNames = {
      "read",   "permission", "long_line", "glob",       "device",        "parse", "command",
      "commit", "overrun",    "symlink",   "walk_limit", "partial_limit", "sparse"};
  return name_of(kNames, kind);
}

}  // namespace faultd
