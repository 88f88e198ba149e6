// The `overflow_dump` source: Ascend overflow detection writes one dump file per overflowing
// operator below a dump root; each new file becomes one record line, so an overflow storm is
// an ordinary `rate` rule over these lines and a single overflow an ordinary match.
//
// Specification (tests: tests/unit/collectors_overflow_status_test.cpp for the parsers,
// tests/integration/collectors_overflow_dump_source_test.cpp for the source):
// - Discovery: every file below `root` (any depth) whose name starts with
//   "OpDebug.Node_OpDebug." (case-insensitive) and whose path fits one of the layouts of
//   dump_path.hpp. A walk runs on the first poll, when inotify reports a create/move/delete
//   in a watched directory (every directory the walk looks into is watched), and at least
//   every `scan_interval`; the scan is the truth, inotify only a wake-up. Walks inotify asks
//   for are paced as the file source's (rescan_pacer.hpp: the first at once, then at most one
//   per gap of at least 250 ms and ten times the walk's duration). A walk looks into at most
//   `max_directories` directories (so holds at most that many watches); past it it stops
//   descending, counted as errors{kind=walk_limit} once per episode and logged (rate-limited).
//   Symlinks to directories are not followed (jobs write the tree). A name that has the prefix but
//   fits no layout is counted once as errors{kind=parse} while it is there (forgotten once deleted:
//   memory stays bounded by the names present).
// - Record: one line per new dump file, fields as `key=value`, the path last (it may hold
//   spaces):
//     overflow dump: device=3 model=11 iteration=0 task=59 timestamp=1597922031178434
//       [model_name=N] [stream=S] [overflow=aicore status=272 cause=0x00000010+0x00000100]...
//       file=/path
//   (one line; `stream` and `model_name` only where the layout has them). `iteration` is the
//   CANN data_index or the MindSpore iteration_id. When a converted JSON companion
//   ("<dump>.output.N.json" or "<dump>.json") sits beside the dump, its records are decoded
//   (overflow_status.hpp) and each record with an error adds `overflow=<aicore|dha|l2>
//   status=<decimal> cause=<codes>`; a companion that decodes to no error adds
//   `overflow=none`, one that does not parse `overflow=undecoded`. A JSON file without its
//   dump beside it is itself the record (a converted copy); a JSON beside its dump is not.
//   A JSON that does not parse yet is retried until it has not changed for `settle` (it may
//   still be being written), then handed out as `overflow=undecoded` (errors{kind=parse}).
//   A companion converted after its dump was handed out adds nothing: the record is out, and
//   `faultctl decode-overflow FILE.json` decodes it for the operator.
// - Identity and positions: the file's (dev, ino) with a hash of its name as fingerprint;
//   offset 0, end 1. Committed files are remembered, and positions() reports them with offset
//   1, so a restart does not hand out a known file again (a stored position with a different
//   name fingerprint is an inode reused by a new file: handed out). Files that disappear are
//   forgotten.
// - Commit: a refused record counts errors{kind=commit} and is offered again at the next poll.
// - Fairness: at most `max_files_per_poll` records per poll; poll_once then returns true.
//
// Threading: single-threaded (the app's io thread); stats are atomics read by the exporter.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "collectors/collector.hpp"
#include "collectors/file/watched_walk.hpp"
#include "collectors/overflow_dump/dump_path.hpp"
#include "collectors/overflow_dump/overflow_status.hpp"

namespace faultd {

struct OverflowDumpSourceConfig {
  std::string name;
  std::string root;
  Duration scan_interval = std::chrono::seconds(10);
  Duration settle = std::chrono::seconds(2);
  size_t max_files_per_poll = 1000;
  size_t max_json_bytes = 1024 * 1024;
  size_t max_directories = 4096;  // per walk
  friend bool operator==(const OverflowDumpSourceConfig&,
                         const OverflowDumpSourceConfig&) = default;
};

// The record line (without '\n') for a dump at `path`; `decoded` is its companion's content,
// `undecoded` true when a companion exists but does not parse.
std::string format_dump_record(const overflow::DumpPath& dump, const std::string& path,
                               const overflow::DumpDecode* decoded, bool undecoded);

class OverflowDumpSource final : public Source {
 public:
  OverflowDumpSource(OverflowDumpSourceConfig config, PositionLookup lookup);
  ~OverflowDumpSource() override;
  OverflowDumpSource(const OverflowDumpSource&) = delete;
  OverflowDumpSource& operator=(const OverflowDumpSource&) = delete;

  const std::string& name() const override;
  bool poll_once(TimePoint now, ChunkSink& sink) override;
  Duration poll_interval() const override;  // scan_interval
  int wake_fd() const override;             // the inotify descriptor
  void drain_wake_fd() override;
  std::vector<ReadPosition> positions() const override;
  SourceStats& stats() override;
  // Names remembered as not fitting a layout (for tests: bounded by the names present).
  size_t refused_path_count() const;
  ScanCounts scan_counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultd
