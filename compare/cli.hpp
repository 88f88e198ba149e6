// `faultctl compare`: the command line of the compare component, kept here so that faultctl
// only dispatches to it and the tests can drive it without a process.
//
//   faultctl compare NPU_DUMP BENCH_DUMP [-o text|csv|json] [--output FILE|DIR] [--fuzzy]
//                    [--data-mapping YAML] [--layer-mapping YAML] [--pair-by-order] [--jobs N]
//   faultctl compare --replicas DUMP DUMP DUMP... | --replicas STEP_DIR  [-o text|json]
//                    [--devices-per-node N] [--device REPLICA=DEVICE]... [--report]
//
// Exit status: 0 every row passes, 1 a suspect was found, 2 the input cannot be compared
// (unreadable, malformed, different ranks or modes; also a usage error), or `--report` could
// not record the suspect (no device for it, faultd unreachable or refusing); the comparison is
// printed all the same.
// Lifecycle: one call per command. Threading: compares ranks on up to --jobs threads.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/ranks.hpp"

namespace faultd::compare {

inline constexpr int kExitAllPass = 0;
inline constexpr int kExitSuspect = 1;
inline constexpr int kExitInputError = 2;

// `--report` hands the replica outcome to a running faultd; the caller (faultctl) owns the
// connection. `socket` is compare's own --socket, empty for the caller's default.
struct ReportResult {
  enum class Status { Recorded, Unreachable, Refused } status = Status::Unreachable;
  std::string error;     // why not recorded
  nlohmann::json reply;  // faultd's reply, when it answered
};
using Reporter = std::function<ReportResult(const ReplicaReport& report, const std::string& device,
                                            const std::string& socket)>;

// `args` are the words after "compare". `global_json`: faultctl's own -o json came first.
int run_compare_command(const std::vector<std::string>& args, bool global_json, std::ostream& out,
                        std::ostream& err, const Reporter& reporter = {});

void compare_usage(std::ostream& out);

}  // namespace faultd::compare
