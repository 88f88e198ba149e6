// The `file` source: one glob set looks like one perpetual stream of lines, even though files
// are rotated (rename + create, or copytruncate), deleted, created, or written in pieces.
//
// Specification (each item has a test in tests/unit/file_source_test.cpp or
// tests/integration/file_source_rotation_test.cpp):
// - Discovery: `paths` are globs (`*`, `?`, `[..]` within a component, `**` for any depth).
//   A rescan runs on the first poll, whenever inotify reports a create/move/delete/overflow in a
//   watched directory, and at least every `scan_interval`. The stat scan is the truth; inotify is
//   only a wake-up.
// - Start: a file with a stored position for its identity (dev, inode, fingerprint of the first
//   bytes) resumes there. Otherwise a file present at the first scan starts at `start_at`
//   (beginning or end); a file that appears later is read from the beginning (it is new data,
//   typically the fresh file after a rotation).
// - Rotation by rename: the path now names another inode. The old file is drained to EOF
//   (its partial last line flushed as a line), then the new file is read from the beginning.
//   Counted as rotations{kind=rename}.
// - Copytruncate: the file is shorter than the read offset (same inode). Reading restarts at 0.
//   Counted as rotations{kind=truncate}. Bytes written between the copy and the truncate cannot
//   be seen by anyone; the documented unavoidable loss.
// - Deletion: the open descriptor is drained to EOF, the partial line flushed, then closed.
// - Partial last line: held until its newline arrives; flushed on rotation and deletion.
// - Over-long line: cut at `max_line_bytes`, the rest skipped up to the newline, counted as
//   errors{kind=long_line}. Memory stays bounded by read_chunk_bytes + max_line_bytes per file.
// - Errors (permission denied, vanished between stat and open, EIO) are counted per kind and
//   retried at the next scan; they never stop the source.
// - Positions: the sink returning true commits a chunk; only then does the offset advance.
//   `positions()` reports (identity, offset, line) for every followed file.
//
// Threading: single-threaded (the app's io thread); stats are atomics read by the exporter.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector.hpp"

namespace faultd {

struct FileSourceConfig {
  std::string name;
  std::vector<std::string> paths;  // globs
  enum class StartAt { Beginning, End } start_at = StartAt::Beginning;
  std::string path_fields;         // RE2 with named groups over the path; empty = none
  size_t max_line_bytes = 64 * 1024;
  size_t read_chunk_bytes = 1024 * 1024;  // one read(2) and one Chunk at most this big
  size_t max_bytes_per_poll = 8 * 1024 * 1024;  // fairness between files and sources
  Duration scan_interval = std::chrono::seconds(1);
};

// Where stored read positions come from (the store in production, a map in tests).
// Called for each newly discovered file; the source verifies the fingerprint itself.
using PositionLookup =
    std::function<std::optional<ReadPosition>(const std::string& source, uint64_t dev, uint64_t ino)>;

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
  int wake_fd() const override;  // the inotify descriptor
  void drain_wake_fd() override;
  std::vector<ReadPosition> positions() const override;
  SourceStats& stats() override;

  // True if `path` matches one of this source's globs (used by --replay to route files).
  bool matches_path(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Glob matching with `**` (any number of path components, including none), `*` and `?` within a
// component, and `[...]` classes. Exposed for tests and for --replay.
bool glob_match(std::string_view pattern, std::string_view path);
// Expands a glob against the file system: regular files (and symlinks to them) that match.
// Errors opening directories are reported through `on_error` (errno), never thrown.
std::vector<std::string> glob_expand(const std::string& pattern,
                                     const std::function<void(int err)>& on_error);

// Hash of the first `len` bytes of the file at `fd` (pread, does not move the offset).
// Returns nullopt if fewer than `len` bytes could be read.
std::optional<uint64_t> file_fingerprint(int fd, uint32_t len);
inline constexpr uint32_t kFingerprintBytes = 1024;

}  // namespace faultd
