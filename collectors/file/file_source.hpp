// The `file` source: one glob set looks like one perpetual stream of lines, even though files
// are rotated (rename + create, or copytruncate), deleted, created, or written in pieces.
//
// Specification (each item has a test in tests/unit/collectors_file_source_test.cpp,
// collectors_line_buffer_test.cpp, collectors_glob_test.cpp,
// tests/integration/collectors_file_rotation_test.cpp or collectors_scan_costs_test.cpp):
// - Discovery: `paths` are globs (`*`, `?`, `[..]` within a component, `**` for any depth).
//   The walk (stat scan) is the truth; inotify is a wake-up and names what it saw change.
//   Watched: the fixed prefix directory of each glob and every directory the walk looked into.
//   A walk runs on the first poll, when inotify reports a create/move/delete/attribute change
//   or an overflow in a watched directory, and at least every kFullScanEvery scan intervals
//   (every `scan_interval` while some directory of the last walk could not be watched, or
//   inotify is unavailable). Walks that inotify asks for are paced (rescan_pacer.hpp): the
//   first one after a quiet spell runs at once, later ones are coalesced into one per gap of
//   at least 250 ms and ten times the walk's own duration, so a job creating files in a loop
//   keeps the walk to about a tenth of the io thread.
// - Directory links below the fixed prefix are not followed (counted as errors{kind=symlink},
//   once per link and episode): a job's `ln -s / x` does not make root walk, watch and tail the
//   system. With `follow_symlinks`, a link is followed when its target (realpath) is below the
//   glob's fixed prefix and on the prefix's filesystem. A walk looks into at most
//   `max_directories` directories (and so holds at most that many watches) per scan; past that
//   it stops descending, counted as errors{kind=walk_limit} once per episode. Both are logged,
//   at most kWarningsPerMinute lines a minute per source.
// - Files are followed by identity (dev, inode), not by path: a file renamed to another matching
//   name (plog.log -> plog.log.1 with glob plog.log*) is followed on, never read twice. A poll
//   reads (fstat, then read what is new) the files inotify named as written, those not read to
//   their end yet, those that left their path, and after a walk or an inotify overflow every
//   file: an idle file costs nothing between full scans (every poll reads every file while
//   inotify is incomplete).
// - Start: a file with a stored position for its identity (dev, inode, fingerprint of the first
//   bytes, hash of the last bytes read) resumes there, in the stored generation. A stored
//   position whose content check fails (rewritten while faultd was down, or a reused inode)
//   starts the next generation. Otherwise a file present at the first scan starts at `start_at`
//   (beginning, or end = after its last complete line, with the lines before it counted so line
//   numbers stay true up to 64 MiB; beyond that numbering starts at the start point); a file that
//   appears later is read from the beginning (it is new data, typically the fresh file after a
//   rotation).
// - Rotation by rename: the path now names another inode, or nothing. Counted as
//   rotations{kind=rename}. The old file is drained first in every poll, and closed (its partial
//   last line flushed as a line) once it is drained and has not grown for `scan_interval`, so a
//   writer that has not reopened its log yet loses nothing (its chunks keep the path it had when
//   it matched). The new file is read from the start.
// - Copytruncate: the file is shorter than the read offset, or its first bytes or the last
//   bytes read changed (same inode; checked whenever its size, mtime or ctime changed, so a
//   rewrite that grew past the old offset between two looks is caught, and every
//   kVerifyEveryScans rescans in case a rewrite fell within the timestamps' granularity; a
//   truncation or rewrite is a modification inotify names). What was read before
//   is handed out (a partial line as a line), then reading restarts at 0 in the next content
//   generation (FileIdentity::generation, part of the journal key: a new fault at an offset
//   journaled before is a new line). Counted as rotations{kind=truncate}. Bytes written between the
//   copy and the truncate cannot be seen by anyone; the documented unavoidable loss. The copy is a
//   new file: if the glob matches it too (app.log* rather than app.log), it is read from its
//   beginning again.
// - Deletion: the open descriptor is drained to EOF, the partial line flushed, then closed.
// - Partial last line: held until its newline arrives; flushed on rotation and deletion.
// - Over-long line: cut at `max_line_bytes`, the rest skipped up to the newline, counted as
//   errors{kind=long_line} (line_buffer.hpp). If its newline is in the bytes read it is handed
//   out alone as the kept bytes plus '\n', with end_offset past the real newline; if not, the
//   kept bytes go out at once and the rest is committed as it is dropped (the position sits
//   inside the line, and a restart there goes on skipping it). The rest of such a line is read
//   at most one read per poll (the poll then reports more work, so other files and the io
//   thread's other work go first), and where the file has holes (a sparse file) it is skipped
//   with SEEK_DATA without being read. A file whose size is far above the disk space it uses is
//   counted once as errors{kind=sparse} and logged.
// - Memory: reads go into one buffer per source; a file keeps only its partial last line. The
//   partial lines held by one source are bounded by max(max_partial_bytes, max_line_bytes):
//   past it, the biggest are handed out now as cut lines (the rest of each skipped up to its
//   newline, as for an over-long line), counted as errors{kind=partial_limit}.
// - Errors (permission denied, vanished between stat and open, EIO) are counted per kind, once
//   per failure episode, and retried at the next scan (a file that could not be opened: every
//   scan_interval, on its own); they never stop the source. FIFOs and
//   other non-regular files are skipped without being opened.
// - Descriptors: a followed file keeps one open. A file whose descriptor would be among the
//   last `fd_reserve` below RLIMIT_NOFILE is closed again (the kernel hands out the lowest free
//   number, so such a number means at most fd_reserve are left), counted as errors{kind=read}
//   once per episode and tried again at the next scan. A glob matching more files than the
//   process may open thus cannot take the descriptors the control socket, the metrics
//   endpoint, the store and hooks need. File sources share what is left first come, first
//   served: a source starved by another one counts its refused files the same way.
// - Positions: the sink returning true commits a chunk; only then does the offset advance (and
//   lines/bytes count). Returning false counts errors{kind=commit} and the same bytes are offered
//   again at the next poll. `positions()` reports (identity, offset, line) for every followed file.
// - Fairness: at most `max_bytes_per_poll` bytes per poll; poll_once then returns true and the
//   next poll starts with the next file.
//
// Driving it: poll_once(now, sink) on every wake_fd() readability and on a timer of
// scan_interval (poll_once drains the wake fd itself, so drain_wake_fd() is optional); poll
// again at once while it returns true. The wake fd also becomes readable when a walk held back
// by the pacing is due.
//
// Threading: single-threaded (the app's io thread); stats are atomics read by the exporter.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/collector.hpp"
#include "collectors/file/watched_walk.hpp"

namespace faultd {

struct FileSourceConfig {
  std::string name;
  std::vector<std::string> paths;  // globs
  enum class StartAt { Beginning, End } start_at = StartAt::Beginning;
  std::string path_fields;  // RE2 with named groups over the path; empty = none
  size_t max_line_bytes = 64 * 1024;
  size_t read_chunk_bytes = 1024 * 1024;        // one read(2) and one Chunk at most this big
  size_t max_bytes_per_poll = 8 * 1024 * 1024;  // fairness between files and sources
  Duration scan_interval = std::chrono::seconds(1);
  size_t fd_reserve = 0;          // descriptors left to the rest of the process; 0: none
  bool follow_symlinks = false;   // directory links below the fixed prefix, to targets below it
  size_t max_directories = 4096;  // per scan, all globs together
  size_t max_partial_bytes = 8 * 1024 * 1024;  // partial lines held, all files together
  // The host's kernel log (only the kernel and syslog write it): its lines have the source type
  // `kernel_log`, which the kernel's driver rules accept, instead of `file`.
  bool kernel_log = false;
  std::string_view source_type() const { return kernel_log ? "kernel_log" : "file"; }
  friend bool operator==(const FileSourceConfig&, const FileSourceConfig&) = default;
};

class FileSource final : public Source {
 public:
  // Throws std::invalid_argument if path_fields does not compile (config validation has
  // already reported it with a position; this is the backstop).
  FileSource(FileSourceConfig config, PositionLookup lookup);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  const std::string& name() const override;
  bool poll_once(TimePoint now, ChunkSink& sink) override;
  Duration poll_interval() const override;  // scan_interval
  int wake_fd() const override;             // the inotify descriptor
  void drain_wake_fd() override;
  std::vector<ReadPosition> positions() const override;
  SourceStats& stats() override;
  ScanCounts scan_counts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Hash of the first `len` bytes of the file at `fd` (pread, does not move the offset).
// Returns nullopt if fewer than `len` bytes could be read.
std::optional<uint64_t> file_fingerprint(int fd, uint32_t len);
inline constexpr uint32_t kFingerprintBytes = 1024;

// Hash of `len` bytes at `offset` (len <= kTailBytes); nullopt if they could not be read.
inline constexpr uint32_t kTailBytes = 256;
std::optional<uint64_t> file_range_hash(int fd, uint64_t offset, uint32_t len);

// With every directory watched, the full scan runs only every this many scan intervals.
inline constexpr int kFullScanEvery = 30;
// A file that did not change size, mtime or ctime is verified again only every this many rescans.
inline constexpr uint32_t kVerifyEveryScans = 30;
// Warnings a log writer can cause (a link it plants, a sparse file) per source and minute.
inline constexpr uint32_t kWarningsPerMinute = 10;

// Whether the file at `fd` (of `size` bytes) still holds the content `expected` was taken
// from: the same first bytes and the same last bytes read.
bool same_content(int fd, uint64_t size, const FileIdentity& expected);

}  // namespace faultd
