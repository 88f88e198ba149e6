#include "collectors/collector.hpp"

namespace faultd {

// These names are the `kind` label of faultd_source_errors_total: they are part of the metrics
// contract, so they never change once shipped.
std::string_view to_string(SourceErrorKind kind) {
  switch (kind) {
    case SourceErrorKind::Read:
      return "read";
    case SourceErrorKind::Permission:
      return "permission";
    case SourceErrorKind::LongLine:
      return "long_line";
    case SourceErrorKind::Glob:
      return "glob";
    case SourceErrorKind::Device:
      return "device";
    case SourceErrorKind::Parse:
      return "parse";
    case SourceErrorKind::Command:
      return "command";
    case SourceErrorKind::Commit:
      return "commit";
    case SourceErrorKind::Overrun:
      return "overrun";
  }
  return "unknown";
}

}  // namespace faultd
