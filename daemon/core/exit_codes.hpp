// faultd's exit codes (sysexits.h values; docs/design.md §3.3). The unit lists kExitConfig and
// kExitStore in RestartPreventExitStatus: restarting cannot fix either.
#pragma once

namespace faultd {

inline constexpr int kExitUsage = 64;  // EX_USAGE: unknown argument, --replay without a file
// EX_CANTCREAT: the state database cannot be opened, or another faultd holds its directory.
inline constexpr int kExitStore = 73;
inline constexpr int kExitConfig = 78;  // EX_CONFIG: the configuration has errors

}  // namespace faultd
