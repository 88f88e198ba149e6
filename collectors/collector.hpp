// What every source has in common: it turns the world into Chunks of complete lines and hands
// them to a ChunkSink, and it keeps its own health figures (SourceStats) that the exporter reads
// at scrape time.
//
// Lifecycle: constructed from config, then `poll_once(now, sink)` is called by the app whenever a
// wake-up (inotify, timer) arrives, and by tests directly. A source never calls anything
// downstream except the sink it is handed, and never blocks for long.
//
// Threading: a source is used from the app's single io thread. SourceStats fields are atomics
// because the metrics endpoint reads them from its own thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/types.hpp"

namespace faultd {

enum class SourceErrorKind {
  Read,          // read(2)/open(2)/stat(2) failed for another reason
  Permission,    // EACCES / EPERM
  LongLine,      // a line over max_line_bytes was truncated
  Glob,          // a glob could not be expanded (e.g. unreadable directory)
  Device,        // a device value was refused by validation
  Parse,         // command output or record could not be parsed
  Command,       // a command failed, timed out or could not start
  Commit,        // the downstream commit failed; the chunk will be read again
  Overrun,       // records were overwritten before they were read (kmsg ring buffer, EPIPE)
  Symlink,       // a symlink to a directory was not followed (follow_symlinks, prefix, filesystem)
  WalkLimit,     // the directory walk stopped at max_directories
  PartialLimit,  // partial lines held over max_partial_bytes: one was handed out early
  Sparse,        // a file far bigger than the disk space it uses (holes)
};
inline constexpr int kSourceErrorKindCount = 13;
std::string_view to_string(SourceErrorKind kind);

enum class RotationKind { Rename, Truncate };

struct SourceStats {
  std::atomic<uint64_t> lines{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> rotations_rename{0};
  std::atomic<uint64_t> rotations_truncate{0};
  std::atomic<uint64_t> lag_bytes{0};  // gauge: bytes in watched files not yet read
  std::atomic<uint64_t> files{0};      // gauge: files currently followed
  std::array<std::atomic<uint64_t>, kSourceErrorKindCount> errors{};

  void count_error(SourceErrorKind kind) {
    errors[static_cast<size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t error_count(SourceErrorKind kind) const {
    return errors[static_cast<size_t>(kind)].load(std::memory_order_relaxed);
  }
};

// Whether a command source's last run for a device succeeded (faultd_probe_up).
struct ProbeUp {
  std::string device;  // "" for a command not run per device
  bool up = false;
};

// Where stored read positions come from (the store in production, a map in tests). Called for
// each newly discovered file (or record stream); the source verifies the fingerprint itself.
using PositionLookup = std::function<std::optional<ReadPosition>(const std::string& source,
                                                                 uint64_t dev, uint64_t ino)>;

// The consumer of chunks. Returns false when the chunk could not be committed (e.g. the store
// is failing): the source then keeps its position and offers the same bytes again later.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual bool on_chunk(const Chunk& chunk) = 0;
};

class Source {
 public:
  virtual ~Source() = default;
  virtual const std::string& name() const = 0;
  // Do one round of work: discover, read what is new, hand it to the sink.
  // Returns true if there may be more to read right away (the app calls again soon).
  virtual bool poll_once(TimePoint now, ChunkSink& sink) = 0;
  // The app also calls poll_once at least this often, whatever the wake fd says (rescans,
  // command intervals, timeouts).
  virtual Duration poll_interval() const { return std::chrono::seconds(1); }
  // A file descriptor that becomes readable when the source has something to do (-1 if none).
  virtual int wake_fd() const { return -1; }
  // Consume the wake fd's pending events (after it became readable).
  virtual void drain_wake_fd() {}
  // The current read positions (for the periodic save and for shutdown).
  virtual std::vector<ReadPosition> positions() const { return {}; }
  virtual SourceStats& stats() = 0;
  // The probe state of each device a command source runs for, once it has a result (sources
  // that run nothing have none). Called from the exporter's thread: implementations lock.
  virtual std::vector<ProbeUp> probes() const { return {}; }
};

}  // namespace faultd
