// `faultd --replay FILE...`: the rules run offline over files, exactly as the daemon would see
// them, for testing rules and for post-mortems. Each file goes to the file sources whose globs
// match its path (else to every file source), so `sources:` filters and path_fields apply as in
// production. Findings are printed as JSON lines; nothing is written to the store and no hook
// runs.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace faultd {

struct ReplaySummary {
  size_t files = 0;
  size_t unreadable = 0;
  uint64_t bytes = 0;
  uint64_t lines = 0;
  uint64_t findings = 0;
  double seconds = 0;
};

ReplaySummary replay_files(const Config& config, const std::vector<std::string>& files,
                           std::ostream& out, std::ostream& err);

}  // namespace faultd
