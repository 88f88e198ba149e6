// faultd's exit codes (sysexits.h values; docs/design.md §3.3). The unit lists kExitConfig and
// kExitStore in RestartPreventExitStatus: restarting cannot fix either.
#pragma once

namespace faultd {

inline constexpr int kExitUsage = 64;   // EX_USAGE: unknown argument, --replay without a file
inline constexpr int kExitStore = 73;   // EX_CANTCREAT: the state database cannot be opened
inline constexpr int kExitConfig = 78;  // EX_CONFIG: the configuration has errors

}  // namespace faultd
