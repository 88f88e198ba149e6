// The daemon: wires the stages together and owns the one io_context they all run on.
//
//   sources ──Chunk──▶ RuleSet::scan ──Finding──▶ StateMachine ──Transition──▶ ActionManager
//                                        │                         └──────────▶ Metrics
//                                        └─ Store::Txn (finding + transition + read position)
//
// Start-up is an ordered list of steps (config → state_dir lock → store → state → rules →
// sources → metrics → control socket → signals → ready); a failing step stops start-up with a
// clear message and exit code. Reload (SIGHUP or `faultctl reload`) builds and validates a new
// Config first and swaps it in only if it is complete; unchanged sources keep running, so read
// positions, partial lines and state carry over.
//
// Threading model: everything below runs on the single io thread: source polls, rule matching,
// store commits, hook supervision, control requests. The metrics HTTP server has its own threads
// and only reads atomics and mutex-guarded snapshots (see daemon/export/metrics.hpp).
#pragma once

#include <memory>
#include <string>

namespace faultd {

struct AppOptions {
  std::string config_path;
};

// Runs the daemon in the foreground until SIGTERM/SIGINT. Returns the process exit code
// (0 after a clean stop, 78 for a bad config, 73 when the store cannot be opened or another
// faultd holds the state directory, 1 for other start-up failures: a listener that cannot start).
int run_daemon(const AppOptions& options);

}  // namespace faultd
