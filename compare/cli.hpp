// `faultctl compare`: the command line of the compare component, kept here so that faultctl
// only dispatches to it and the tests can drive it without a process.
//
//   faultctl compare NPU_DUMP BENCH_DUMP [-o text|csv|json] [--output FILE|DIR] [--fuzzy]
//                    [--data-mapping YAML] [--pair-by-order] [--jobs N]
//   faultctl compare --replicas DUMP DUMP DUMP... | --replicas STEP_DIR  [-o text|json]
//                    [--devices-per-node N]
//
// Exit status: 0 every row passes, 1 a suspect was found, 2 the input cannot be compared
// (unreadable, malformed, different ranks or modes; also a usage error).
// Lifecycle: one call per command. Threading: compares ranks on up to --jobs threads.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace faultd::compare {

inline constexpr int kExitAllPass = 0;
inline constexpr int kExitSuspect = 1;
inline constexpr int kExitInputError = 2;

// `args` are the words after "compare". `global_json`: faultctl's own -o json came first.
int run_compare_command(const std::vector<std::string>& args, bool global_json, std::ostream& out,
                        std::ostream& err);

void compare_usage(std::ostream& out);

}  // namespace faultd::compare
