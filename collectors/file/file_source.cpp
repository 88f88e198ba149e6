#include "collectors/file/file_source.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "collectors/file/glob.hpp"
#include "collectors/file/inotify_watch.hpp"
#include "collectors/file/line_buffer.hpp"
#include "collectors/file/path_fields.hpp"
#include "collectors/file/rescan_pacer.hpp"
#include "collectors/file/watched_walk.hpp"
#include "collectors/safe_open.hpp"
#include "daemon/core/hash.hpp"
#include "daemon/core/log_limiter.hpp"
#include "daemon/core/terminal_text.hpp"

namespace faultd {
namespace {

// With start_at: end, lines before the start point are counted so that line numbers stay true;
// past this size the count is skipped and numbering starts at the start point.
constexpr uint64_t kCountLinesLimit = 64ULL * 1024 * 1024;
constexpr size_t kScratchBytes = size_t{64} * 1024;
// A file of at least this size that uses less than 1/kSparseRatio of it on disk is sparse.
constexpr uint64_t kSparseMinBytes = 64ULL * 1024 * 1024;
constexpr uint64_t kSparseRatio = 8;

ssize_t pread_retry(int fd, char* buf, size_t len, uint64_t offset) {
  for (;;) {
    const ssize_t n = ::pread(fd, buf, len, static_cast<off_t>(offset));
    if (n >= 0 || errno != EINTR) return n;
  }
}

// Hashes the first `long_len` bytes and also reports the hash of the first `short_len` (FNV is
// sequential, so one pass gives both). False if the file holds fewer than `long_len` bytes.
bool hash_prefixes(int fd, uint64_t short_len, uint64_t long_len, uint64_t& short_hash,
                   uint64_t& long_hash) {
  char buf[4096];
  uint64_t hash = kFnvOffsetBasis;
  uint64_t done = 0;
  short_hash = hash;
  while (done < long_len) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, long_len - done));
    // Stop exactly at short_len so its hash can be taken.
    if (done < short_len) want = static_cast<size_t>(std::min<uint64_t>(want, short_len - done));
    const ssize_t n = pread_retry(fd, buf, want, done);
    if (n <= 0) return false;
    hash = fnv1a64(std::string_view(buf, static_cast<size_t>(n)), hash);
    done += static_cast<uint64_t>(n);
    if (done == short_len) short_hash = hash;
  }
  long_hash = hash;
  return true;
}

bool is_permission_error(int err) { return err == EACCES || err == EPERM; }

bool operator!=(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec || a.tv_nsec != b.tv_nsec;
}

using FileKey = std::pair<uint64_t, uint64_t>;  // (dev, ino)

// One file being followed, by identity: it keeps its descriptor when renamed or deleted.
struct FollowedFile {
  enum class Gone { No, Renamed, Deleted };

  FollowedFile(size_t max_line_bytes, size_t read_chunk_bytes)
      : lines(max_line_bytes, read_chunk_bytes) {}
  ~FollowedFile() { close_fd(); }
  FollowedFile(const FollowedFile&) = delete;
  FollowedFile& operator=(const FollowedFile&) = delete;

  void close_fd() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  FileKey key() const { return {identity.dev, identity.ino}; }

  int fd = -1;
  std::string path;
  FileIdentity identity;
  Fields fields;
  LineBuffer lines;
  uint64_t size = 0;       // at the last fstat
  uint64_t seen_size = 0;  // at the last content check, with the timestamps then
  timespec seen_mtime{};
  timespec seen_ctime{};
  uint32_t scans_to_verify = 0;  // rescans left before the content is verified anyway
  bool sparse_noted = false;
  Gone gone = Gone::No;
  TimePoint last_activity{};      // last read that returned bytes, or when it left its path
  bool truncate_pending = false;  // seen shorter or rewritten; handled before the next read
  bool verify_due = false;        // kVerifyEveryScans rescans passed: re-check the content
  bool dirty = true;              // may have changed since it was last read: look at it
  // Every matching path that named it at the last walk (inotify names a write by one of them),
  // and whether one is a symlink (a write through the target is named in another directory,
  // maybe an unwatched one): such a file is looked at in every poll.
  std::vector<std::string> names;
  bool linked = false;
  int read_errno = 0;  // current read failure episode, 0 if none
  uint64_t long_lines_counted = 0;
};

}  // namespace

std::optional<uint64_t> file_fingerprint(int fd, uint32_t len) {
  uint64_t unused = 0;
  uint64_t hash = 0;
  if (!hash_prefixes(fd, 0, len, unused, hash)) return std::nullopt;
  return hash;
}

std::optional<uint64_t> file_range_hash(int fd, uint64_t offset, uint32_t len) {
  char buf[kTailBytes];
  if (len > sizeof buf) return std::nullopt;
  uint64_t done = 0;
  while (done < len) {
    const ssize_t n = pread_retry(fd, buf + done, len - done, offset + done);
    if (n <= 0) return std::nullopt;
    done += static_cast<uint64_t>(n);
  }
  return fnv1a64(std::string_view(buf, len));
}

bool same_content(int fd, uint64_t size, const FileIdentity& expected) {
  if (expected.fingerprint_len > size) return false;
  const auto fingerprint = file_fingerprint(fd, expected.fingerprint_len);
  if (!fingerprint || *fingerprint != expected.fingerprint) return false;
  if (expected.tail_len == 0) return true;  // nothing read yet, or saved by an older faultd
  if (expected.tail_end > size || expected.tail_len > expected.tail_end) return false;
  const auto tail = file_range_hash(fd, expected.tail_end - expected.tail_len, expected.tail_len);
  return tail && *tail == expected.tail_hash;
}

// Lends the source's read buffer to one file for one serve, from its first read on: an idle
// file then holds only its partial line, whatever it read last.
class StorageLoan {
 public:
  StorageLoan(LineBuffer& lines, std::string& storage) : lines_(lines), storage_(storage) {}
  ~StorageLoan() {
    if (lent_) lines_.release_storage(storage_);
  }
  StorageLoan(const StorageLoan&) = delete;
  StorageLoan& operator=(const StorageLoan&) = delete;
  void lend() {
    if (!lent_) lines_.use_storage(storage_);
    lent_ = true;
  }

 private:
  LineBuffer& lines_;
  std::string& storage_;
  bool lent_ = false;
};

struct FileSource::Impl {
  // Yield: this file has more to skip of an over-long line; the others go on, then a new poll.
  enum class Served { Done, Refused, Budget, Closed, Yield };

  Impl(FileSourceConfig cfg, PositionLookup lookup_fn)
      : config(std::move(cfg)), lookup(std::move(lookup_fn)) {
    if (config.max_line_bytes == 0 || config.read_chunk_bytes == 0 ||
        config.max_bytes_per_poll == 0) {
      throw std::invalid_argument("file source '" + config.name +
                                  "': max_line_bytes, read_chunk_bytes and max_bytes_per_poll "
                                  "must be positive");
    }
    if (!config.path_fields.empty()) {
      std::string error;
      fields_re = compile_path_fields(config.path_fields, error);
      if (!fields_re) {
        throw std::invalid_argument("file source '" + config.name + "': path_fields: " + error);
      }
    }
    // Without inotify the periodic scan still finds everything, only later.
    if (inotify.fd() < 0) stats.count_error(SourceErrorKind::Read);
  }

  // ---- one poll -------------------------------------------------------------------------

  bool poll(TimePoint now, ChunkSink& sink) {
    // Drained here too, so the order in which the app calls poll_once and drain_wake_fd does
    // not delay a rescan.
    take_events(inotify.drain());
    if (pacer.due(now)) {
      rescan(now);
    } else {
      if (const auto wait = pacer.held_back(now)) inotify.wake_after(*wait);
      retry_unopened(now);
    }
    // Without a watch on every directory, a write is seen only by looking.
    if (!inotify_complete) mark_all_dirty();
    uint64_t budget_used = 0;
    bool more = false;
    for (size_t idx : service_order()) {
      FollowedFile& f = *files[idx];
      // An idle file costs nothing: only what inotify named, what was left unfinished and
      // files that left their path are looked at (and every file after a rescan).
      if (!f.dirty && !f.linked && f.gone == FollowedFile::Gone::No) continue;
      f.dirty = false;
      const Served r = serve(f, now, sink, budget_used);
      if ((r != Served::Done && r != Served::Closed) || f.read_errno != 0) f.dirty = true;
      if (r == Served::Yield) more = true;
      if (r == Served::Budget) {
        more = true;
        if (f.gone == FollowedFile::Gone::No) next_start = idx + 1;
        break;
      }
    }
    files.erase(std::remove_if(files.begin(), files.end(), [](const auto& f) { return f->fd < 0; }),
                files.end());
    bound_partial_lines(now, sink);
    refresh_gauges();
    return more;
  }

  // Files that left their path are drained first (their lines are older than the new file's);
  // the others round-robin so that one busy file cannot starve the rest across polls.
  std::vector<size_t> service_order() const {
    std::vector<size_t> order;
    order.reserve(files.size());
    for (size_t i = 0; i < files.size(); ++i) {
      if (files[i]->gone != FollowedFile::Gone::No) order.push_back(i);
    }
    const size_t n = files.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (next_start + k) % n;
      if (files[i]->gone == FollowedFile::Gone::No) order.push_back(i);
    }
    return order;
  }

  void take_events(const InotifyWatch::Events& events) {
    if (events.rescan) pacer.request();
    if (events.overflow) {
      mark_all_dirty();
      return;
    }
    if (events.modified.empty()) return;
    for (auto& f : files) {
      for (const std::string& name : f->names) {
        if (events.modified.count(name) > 0) f->dirty = true;
      }
    }
  }

  void mark_all_dirty() {
    for (auto& f : files) f->dirty = true;
  }

  Served serve(FollowedFile& f, TimePoint now, ChunkSink& sink, uint64_t& budget_used) {
    struct stat st {};
    ++file_checks;
    if (::fstat(f.fd, &st) != 0) {
      note_read_error(f, errno);
      return Served::Done;
    }
    f.size = static_cast<uint64_t>(st.st_size);
    if (st.st_nlink == 0) f.gone = FollowedFile::Gone::Deleted;
    if (f.size < f.lines.read_offset()) f.truncate_pending = true;
    note_sparse(f, st, now);
    check_content(f, st);
    if (f.truncate_pending && !restart_after_truncation(f, now, sink)) return Served::Refused;

    StorageLoan loan(f.lines, read_storage);
    bool read_any = false;
    for (;;) {
      while (auto chunk = f.lines.next(false)) {
        if (!offer(f, *chunk, now, sink)) return Served::Refused;
      }
      count_long_lines(f);
      if (f.lines.skipping()) {
        const uint64_t before = f.lines.committed_offset();
        skip_hole(f);
        count_dropped(f, before);
        // One read per poll of a line that is being skipped: other files and other work first.
        if (read_any && f.lines.read_offset() < f.size) return Served::Yield;
      }
      const uint64_t at = f.lines.read_offset();
      if (at >= f.size) break;
      if (budget_used >= config.max_bytes_per_poll) return Served::Budget;
      const size_t want = static_cast<size_t>(std::min<uint64_t>(
          {config.read_chunk_bytes, f.size - at, config.max_bytes_per_poll - budget_used}));
      loan.lend();
      read_any = true;
      char* dst = f.lines.prepare(want);
      const ssize_t n = pread_retry(f.fd, dst, want, at);
      if (n < 0) {
        const int err = errno;
        f.lines.appended(0);
        if (err == EAGAIN || err == EWOULDBLOCK) break;
        note_read_error(f, err);
        return Served::Done;
      }
      if (n > 0) note_tail(f, dst, static_cast<size_t>(n), at);
      const uint64_t before = f.lines.committed_offset();
      f.lines.appended(static_cast<size_t>(n));
      count_dropped(f, before);
      if (n == 0) break;  // shrank since fstat: the next poll sees the truncation
      budget_used += static_cast<uint64_t>(n);
      f.last_activity = now;
      f.read_errno = 0;
    }

    if (ready_to_close(f, now)) {
      // The partial last line will never be completed in this file: it is a line of its own.
      while (auto chunk = f.lines.next(true)) {
        if (!offer(f, *chunk, now, sink)) return Served::Refused;
      }
      count_long_lines(f);
      f.close_fd();
      return Served::Closed;
    }
    return Served::Done;
  }

  // The skipped rest of an over-long line holds no newline where the file has a hole (holes
  // read as zeros): it is dropped without being read, so a sparse 4 GiB "line" costs an lseek.
  // (Bytes written into the hole after the lseek are dropped with it: they are inside that line.)
  static void skip_hole(FollowedFile& f) {
    const uint64_t at = f.lines.read_offset();
    if (at >= f.size) return;
    const off_t data = ::lseek(f.fd, static_cast<off_t>(at), SEEK_DATA);
    uint64_t end = at;
    if (data >= 0) {
      end = std::min<uint64_t>(static_cast<uint64_t>(data), f.size);
    } else if (errno == ENXIO) {
      end = f.size;  // a hole up to the end of the file
    }                // else no SEEK_DATA here: the bytes are read
    if (end > at) f.lines.drop(end - at);
  }

  void note_sparse(FollowedFile& f, const struct stat& st, TimePoint now) {
    if (f.sparse_noted || f.size < kSparseMinBytes) return;
    const uint64_t on_disk = static_cast<uint64_t>(st.st_blocks) * 512;
    if (on_disk * kSparseRatio >= f.size) return;
    f.sparse_noted = true;
    stats.count_error(SourceErrorKind::Sparse);
    warn(now, fmt::format("{} is sparse: {} bytes, {} of them on disk", terminal_safe(f.path),
                          f.size, on_disk));
  }

  // Partial lines held across the source's files stay under the bound: the biggest are handed
  // out now, as an over-long line's kept bytes are, and the rest of each line is skipped.
  void bound_partial_lines(TimePoint now, ChunkSink& sink) {
    const uint64_t bound = std::max(config.max_partial_bytes, config.max_line_bytes);
    uint64_t held = 0;
    for (const auto& f : files) held += f->lines.buffered();
    if (held <= bound) return;
    std::vector<FollowedFile*> biggest;
    biggest.reserve(files.size());
    for (const auto& f : files) biggest.push_back(f.get());
    std::sort(biggest.begin(), biggest.end(), [](const FollowedFile* a, const FollowedFile* b) {
      return a->lines.buffered() > b->lines.buffered();
    });
    for (FollowedFile* f : biggest) {
      if (held <= bound) break;
      const size_t bytes = f->lines.buffered();
      if (!f->lines.cut_partial()) continue;
      stats.count_error(SourceErrorKind::PartialLimit);
      warn(now, fmt::format("partial lines held over {} bytes: the {} bytes of {} go out as a line",
                            bound, bytes, terminal_safe(f->path)));
      const auto chunk = f->lines.next(false);
      if (!chunk || !offer(*f, *chunk, now, sink)) return;  // offered again at the next poll
      f->lines.release_storage(read_storage);               // and its memory with it
      held -= bytes;
    }
  }

  // Warnings a log writer can cause are rate-limited per source; what was left out is said
  // with the next one.
  void warn(TimePoint now, const std::string& what) {
    warnings.warn(now, fmt::format("source {}: {}", config.name, what));
  }

  // A file renamed away may still be written by a process that has not reopened its log yet,
  // so it is kept for one scan interval after its last growth; a deleted file is closed as soon
  // as it is drained.
  bool ready_to_close(const FollowedFile& f, TimePoint now) const {
    switch (f.gone) {
      case FollowedFile::Gone::No:
        return false;
      case FollowedFile::Gone::Deleted:
        return true;
      case FollowedFile::Gone::Renamed:
        return now - f.last_activity >= config.scan_interval;
    }
    return false;
  }

  // The last bytes read, as the tail of the identity: hashed from the bytes just read when
  // there are enough of them, else read back from the file.
  void note_tail(FollowedFile& f, const char* data, size_t n, uint64_t at) {
    FileIdentity& id = f.identity;
    const uint64_t end = at + n;
    if (n >= kTailBytes) {
      id.tail_hash = fnv1a64(std::string_view(data + n - kTailBytes, kTailBytes));
      id.tail_len = kTailBytes;
      id.tail_end = end;
      return;
    }
    const auto len = static_cast<uint32_t>(std::min<uint64_t>(end, kTailBytes));
    char bytes[kTailBytes];
    const uint64_t before = len - n;  // bytes read by earlier reads
    if (before > 0) {
      const ssize_t got = pread_retry(f.fd, bytes, before, end - len);
      if (got != static_cast<ssize_t>(before)) {
        id.tail_len = 0;  // shrank meanwhile: the next look sees the truncation
        return;
      }
    }
    std::memcpy(bytes + before, data, n);
    id.tail_hash = fnv1a64(std::string_view(bytes, len));
    id.tail_len = len;
    id.tail_end = end;
  }

  // Verifies (after a rescan, or when the size changed) the last bytes read and the
  // fingerprint, and extends the fingerprint as the file grows. A changed prefix or tail means
  // the file was truncated and rewritten between two looks, possibly past our offset.
  void check_content(FollowedFile& f, const struct stat& st) {
    const bool changed =
        f.size != f.seen_size || st.st_mtim != f.seen_mtime || st.st_ctim != f.seen_ctime;
    f.seen_size = f.size;
    f.seen_mtime = st.st_mtim;
    f.seen_ctime = st.st_ctim;
    const uint64_t old_len = f.identity.fingerprint_len;
    const uint64_t new_len = std::min<uint64_t>(f.size, kFingerprintBytes);
    const bool grows = old_len < kFingerprintBytes && new_len > old_len;
    const bool verify = f.verify_due || changed;
    if (!verify && !grows) return;
    f.verify_due = false;
    if (f.truncate_pending) return;
    if (verify && !tail_intact(f)) {
      f.truncate_pending = true;
      return;
    }
    if (new_len < old_len) {
      f.truncate_pending = true;
      return;
    }
    uint64_t old_hash = 0;
    uint64_t new_hash = 0;
    if (!hash_prefixes(f.fd, old_len, new_len, old_hash, new_hash)) return;  // raced a truncate
    if (old_hash != f.identity.fingerprint) {
      f.truncate_pending = true;
      return;
    }
    f.identity.fingerprint = new_hash;
    f.identity.fingerprint_len = static_cast<uint32_t>(new_len);
  }

  bool tail_intact(const FollowedFile& f) const {
    const FileIdentity& id = f.identity;
    if (id.tail_len == 0) return true;
    if (f.size < id.tail_end) return false;
    const auto hash = file_range_hash(f.fd, id.tail_end - id.tail_len, id.tail_len);
    return !hash || *hash == id.tail_hash;  // a failed read is retried at the next look
  }

  // Copytruncate: what was read before the truncation is handed out (the partial line as a
  // line), then reading restarts at 0 in a new generation with a fingerprint of the new
  // content.
  bool restart_after_truncation(FollowedFile& f, TimePoint now, ChunkSink& sink) {
    while (auto chunk = f.lines.next(true)) {
      if (!offer(f, *chunk, now, sink)) return false;
    }
    count_long_lines(f);
    f.lines.reset(0, 0);
    f.truncate_pending = false;
    start_generation(f, f.identity.generation + 1);
    set_fingerprint(f);
    stats.rotations_truncate.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  bool offer(FollowedFile& f, const LineBuffer::Pending& p, TimePoint now, ChunkSink& sink) {
    Chunk chunk = p.chunk();
    chunk.source = config.name;
    chunk.source_type = config.source_type();
    chunk.path = f.path;
    chunk.identity = f.identity;
    chunk.path_fields = &f.fields;
    chunk.noticed = now;
    bool committed = false;
    try {
      committed = sink.on_chunk(chunk);
    } catch (const std::exception&) {
      committed = false;  // a failing store must not take the source down; retried later
    }
    if (!committed) {
      stats.count_error(SourceErrorKind::Commit);
      return false;
    }
    f.lines.commit(p);
    stats.lines.fetch_add(p.lines(), std::memory_order_relaxed);
    stats.bytes.fetch_add(p.end_offset - p.start_offset, std::memory_order_relaxed);
    return true;
  }

  // The rest of an over-long line, committed as it is dropped, counts as bytes consumed.
  void count_dropped(const FollowedFile& f, uint64_t committed_before) {
    stats.bytes.fetch_add(f.lines.committed_offset() - committed_before, std::memory_order_relaxed);
  }

  void count_long_lines(FollowedFile& f) {
    const uint64_t seen = f.lines.truncated_lines();
    if (seen == f.long_lines_counted) return;
    stats.errors[static_cast<size_t>(SourceErrorKind::LongLine)].fetch_add(
        seen - f.long_lines_counted, std::memory_order_relaxed);
    f.long_lines_counted = seen;
  }

  void note_read_error(FollowedFile& f, int err) {
    if (f.read_errno == err) return;  // one count per failure episode
    f.read_errno = err;
    stats.count_error(is_permission_error(err) ? SourceErrorKind::Permission
                                               : SourceErrorKind::Read);
  }

  void refresh_gauges() {
    uint64_t lag = 0;
    for (const auto& f : files) {
      if (f->size > f->lines.committed_offset()) lag += f->size - f->lines.committed_offset();
    }
    stats.lag_bytes.store(lag, std::memory_order_relaxed);
    stats.files.store(files.size(), std::memory_order_relaxed);
  }

  // ---- discovery ------------------------------------------------------------------------

  void rescan(TimePoint now) {
    std::set<FileKey> linked;
    std::map<FileKey, std::vector<std::string>> found = expand_globs(now, linked);
    mark_all_dirty();  // a path may now name another file, or a file another path

    std::set<FileKey> known;
    for (auto& f : files) {
      known.insert(f->key());
      if (f->scans_to_verify == 0) {
        f->verify_due = true;
        f->scans_to_verify = kVerifyEveryScans;
      }
      --f->scans_to_verify;
      if (f->gone == FollowedFile::Gone::Deleted) continue;
      track_path(*f, found, now);
    }
    std::set<std::string> still_initial;
    unopened.clear();
    for (const auto& [key, paths] : found) {
      if (known.count(key) > 0) continue;
      const std::string& path = paths.front();
      const bool initial = first_scan || initial_paths.count(path) > 0;
      if (open_new(path, initial, known)) continue;
      unopened.insert(path);
      if (initial) still_initial.insert(path);
    }
    initial_paths = std::move(still_initial);
    last_retry = now;
    for (auto& f : files) {
      const auto it = found.find(f->key());
      if (it != found.end()) f->names = it->second;
      f->linked = linked.count(f->key()) > 0;
    }

    episodes.swap(episodes_next);
    episodes_next.clear();
    first_scan = false;
  }

  // Matched files that could not be opened (permission, descriptors) are tried again every
  // scan_interval on their own, without a walk: the cost is theirs, not the tree's.
  void retry_unopened(TimePoint now) {
    if (unopened.empty() || (now - last_retry < config.scan_interval && now >= last_retry)) {
      return;
    }
    last_retry = now;
    std::set<FileKey> known;
    for (const auto& f : files) known.insert(f->key());
    for (auto it = unopened.begin(); it != unopened.end();) {
      const bool initial = initial_paths.count(*it) > 0;
      if (open_new(*it, initial, known)) {
        initial_paths.erase(*it);
        it = unopened.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Every matching regular file by identity, with all the matching paths that name it.
  // `linked`: the files one of whose paths is a symlink.
  std::map<FileKey, std::vector<std::string>> expand_globs(TimePoint now,
                                                           std::set<FileKey>& linked) {
    WatchedWalkErrors errors;
    errors.on_watch_error = [&](const std::string& dir, int err) {
      note_episode("watch:" + dir, SourceErrorKind::Read, err);
    };
    errors.on_glob_error = [&](const std::string& dir, int err) {
      note_episode("glob:" + dir, SourceErrorKind::Glob, err);
    };
    errors.on_link_refused = [&](const std::string& link) {
      if (note_episode("link:" + link, SourceErrorKind::Symlink, 0)) {
        warn(now, fmt::format("not following the directory link {} ({})", terminal_safe(link),
                              config.follow_symlinks
                                  ? "its target is outside the glob's prefix or filesystem"
                                  : "follow_symlinks is off"));
      }
    };
    const auto dir_links =
        config.follow_symlinks ? glob::DirLinks::WithinPrefix : glob::DirLinks::Refuse;
    const WatchedWalk walk =
        walk_and_watch(inotify, config.paths, config.max_directories, dir_links, errors);
    if (walk.capped && note_episode("walk_limit", SourceErrorKind::WalkLimit, 0)) {
      warn(now, walk_limit_warning(config.max_directories));
    }
    // With every directory watched, inotify names what changes; the full scan is then only the
    // backstop, kFullScanEvery scan intervals apart.
    inotify_complete = !walk.unwatched;
    pacer.set_periodic(inotify_complete ? config.scan_interval * kFullScanEvery
                                        : config.scan_interval);
    pacer.walked(now, walk.cost);

    std::map<FileKey, std::vector<std::string>> found;
    for (const std::string& path : walk.paths) {
      struct stat st {};
      int rc = ::lstat(path.c_str(), &st);
      const bool link = rc == 0 && S_ISLNK(st.st_mode);
      if (link) rc = ::stat(path.c_str(), &st);
      if (rc != 0) {
        const int err = errno;
        if (err != ENOENT && err != ENOTDIR) {
          note_episode(
              "stat:" + path,
              is_permission_error(err) ? SourceErrorKind::Permission : SourceErrorKind::Read, err);
        }
        continue;
      }
      if (!S_ISREG(st.st_mode)) continue;  // FIFOs, devices: never opened, never blocked on
      const FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
      found[key].push_back(path);
      if (link) linked.insert(key);
    }
    return found;
  }

  // Decides whether a followed file still sits at its path, moved to another matching path, or
  // left (renamed away or deleted).
  void track_path(FollowedFile& f, const std::map<FileKey, std::vector<std::string>>& found,
                  TimePoint now) {
    const auto it = found.find(f.key());
    if (it != found.end()) {
      const auto& paths = it->second;
      if (std::find(paths.begin(), paths.end(), f.path) == paths.end()) {
        if (f.gone == FollowedFile::Gone::No) count_rename();
        set_path(f, paths.front());
      }
      f.gone = FollowedFile::Gone::No;
      return;
    }
    // Not among the matches: look at its own path before concluding (a directory may merely
    // have been unreadable during this scan).
    struct stat st {};
    if (::stat(f.path.c_str(), &st) == 0) {
      if (static_cast<uint64_t>(st.st_dev) == f.identity.dev &&
          static_cast<uint64_t>(st.st_ino) == f.identity.ino) {
        return;
      }
    } else if (errno != ENOENT && errno != ENOTDIR) {
      return;  // cannot tell; keep following
    }
    struct stat own {};
    if (::fstat(f.fd, &own) == 0 && own.st_nlink == 0) {
      f.gone = FollowedFile::Gone::Deleted;
    } else if (f.gone == FollowedFile::Gone::No) {
      f.gone = FollowedFile::Gone::Renamed;
      f.last_activity = now;
      count_rename();
    }
  }

  void count_rename() { stats.rotations_rename.fetch_add(1, std::memory_order_relaxed); }

  // Opens a newly matched file and decides where to start. False if it could not be opened.
  bool open_new(const std::string& path, bool initial, std::set<FileKey>& known) {
    const OpenedFile opened = open_regular_file(path);
    if (opened.refused == OpenedFile::Refused::NotRegular) return true;  // flipped meanwhile
    if (opened.refused == OpenedFile::Refused::LinkOwner) {
      note_episode("open:" + path, SourceErrorKind::Permission, EPERM);
      return false;
    }
    const int fd = opened.fd;
    if (fd < 0) {
      const int err = opened.error;
      if (err != ENOENT) {
        note_episode("open:" + path,
                     is_permission_error(err) ? SourceErrorKind::Permission : SourceErrorKind::Read,
                     err);
      }
      return false;
    }
    if (in_descriptor_reserve(fd)) {
      ::close(fd);
      note_episode("open:" + path, SourceErrorKind::Read, EMFILE);
      return false;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return false;
    }
    const FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    if (!known.insert(key).second) {  // replaced between stat and open by a followed file
      ::close(fd);
      return true;
    }
    auto f = std::make_unique<FollowedFile>(config.max_line_bytes, config.read_chunk_bytes);
    f->fd = fd;
    f->identity.dev = key.first;
    f->identity.ino = key.second;
    f->size = static_cast<uint64_t>(st.st_size);
    f->scans_to_verify = static_cast<uint32_t>(key.second % kVerifyEveryScans);  // spread out
    set_path(*f, path);
    f->names = {path};
    set_fingerprint(*f);
    choose_start(*f, initial);
    files.push_back(std::move(f));
    return true;
  }

  bool in_descriptor_reserve(int fd) const {
    if (config.fd_reserve == 0) return false;
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return false;
    return static_cast<rlim_t>(fd) + config.fd_reserve >= lim.rlim_cur;
  }

  void set_path(FollowedFile& f, const std::string& path) {
    f.path = path;
    f.fields = capture_fields(path);
  }

  void set_fingerprint(FollowedFile& f) {
    const uint64_t len = std::min<uint64_t>(f.size, kFingerprintBytes);
    uint64_t unused = 0;
    uint64_t hash = kFnvOffsetBasis;
    if (!hash_prefixes(f.fd, 0, len, unused, hash)) {
      f.identity.fingerprint = kFnvOffsetBasis;  // shrank meanwhile; check_content catches up
      f.identity.fingerprint_len = 0;
      return;
    }
    f.identity.fingerprint = hash;
    f.identity.fingerprint_len = static_cast<uint32_t>(len);
  }

  static void start_generation(FollowedFile& f, uint64_t generation) {
    f.identity.generation = generation;
    f.identity.tail_end = 0;
    f.identity.tail_hash = 0;
    f.identity.tail_len = 0;
  }

  void choose_start(FollowedFile& f, bool initial) {
    if (auto stored = stored_position(f)) {
      if (stored->offset <= f.size && same_content(f.fd, f.size, stored->identity)) {
        f.lines.reset(stored->offset, stored->line);
        f.identity.generation = stored->identity.generation;
        f.identity.tail_end = stored->identity.tail_end;
        f.identity.tail_hash = stored->identity.tail_hash;
        f.identity.tail_len = stored->identity.tail_len;
        if (inside_line(f.fd, stored->offset)) f.lines.skip_rest_of_line();
        return;
      }
      // Other content under this inode (rewritten while we were away, or the inode reused by
      // a new file): a new generation, so its lines are not taken for replays of the old ones.
      start_generation(f, stored->identity.generation + 1);
    }
    if (initial && config.start_at == FileSourceConfig::StartAt::End) {
      start_at_end(f);
      return;
    }
    f.lines.reset(0, 0);
  }

  // Only a position saved while the rest of an over-long line was being skipped sits inside a
  // line (its kept bytes were handed out): the skip goes on rather than reading the rest as a
  // line of its own.
  static bool inside_line(int fd, uint64_t offset) {
    if (offset == 0) return false;
    char before = '\n';
    return pread_retry(fd, &before, 1, offset - 1) == 1 && before != '\n';
  }

  // The position saved for this (dev, ino), whatever content it was saved for.
  std::optional<ReadPosition> stored_position(const FollowedFile& f) {
    if (!lookup) return std::nullopt;
    std::optional<ReadPosition> stored;
    try {
      stored = lookup(config.name, f.identity.dev, f.identity.ino);
    } catch (const std::exception&) {
      stats.count_error(SourceErrorKind::Read);
      return std::nullopt;
    }
    if (!stored) return std::nullopt;
    const FileIdentity& id = stored->identity;
    if (id.dev != f.identity.dev || id.ino != f.identity.ino) return std::nullopt;
    return stored;
  }

  // Starts after the last complete line, so a line being written right now is read whole.
  // Lines before it are counted (up to kCountLinesLimit) to keep line numbers true.
  void start_at_end(FollowedFile& f) {
    if (f.size == 0) {
      f.lines.reset(0, 0);
      return;
    }
    std::string buf(kScratchBytes, '\0');
    if (f.size <= kCountLinesLimit) {
      uint64_t lines = 0;
      uint64_t start = 0;
      for (uint64_t at = 0; at < f.size;) {
        const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), f.size - at));
        const ssize_t n = pread_retry(f.fd, buf.data(), want, at);
        if (n <= 0) break;
        for (const char* p = buf.data();
             (p = static_cast<const char*>(std::memchr(p, '\n', buf.data() + n - p))) != nullptr;
             ++p) {
          ++lines;
          start = at + static_cast<uint64_t>(p - buf.data()) + 1;
        }
        at += static_cast<uint64_t>(n);
      }
      f.lines.reset(start, lines);
      return;
    }
    const uint64_t tail = std::min<uint64_t>({f.size, buf.size(), config.max_line_bytes + 1});
    const uint64_t from = f.size - tail;
    const ssize_t n = pread_retry(f.fd, buf.data(), static_cast<size_t>(tail), from);
    uint64_t start = f.size;
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (buf[static_cast<size_t>(i)] == '\n') {
        start = from + static_cast<uint64_t>(i) + 1;
        break;
      }
    }
    f.lines.reset(start, 0);
  }

  Fields capture_fields(const std::string& path) const {
    return fields_re ? capture_path_fields(*fields_re, path) : Fields{};
  }

  // Counts an error once per failure episode: a file that stays unreadable is not counted again
  // at every scan, but one that recovers and fails again is. True if it was counted now.
  bool note_episode(const std::string& key, SourceErrorKind kind, int err) {
    const auto next = episodes_next.find(key);
    if (next != episodes_next.end() && next->second == err) return false;
    episodes_next[key] = err;
    const auto prev = episodes.find(key);
    if (prev != episodes.end() && prev->second == err) return false;
    stats.count_error(kind);
    return true;
  }

  FileSourceConfig config;
  PositionLookup lookup;
  std::unique_ptr<RE2> fields_re;
  SourceStats stats;
  InotifyWatch inotify;
  std::vector<std::unique_ptr<FollowedFile>> files;
  bool first_scan = true;
  RescanPacer pacer{config.scan_interval};
  bool inotify_complete = false;  // every directory of the last walk is watched
  uint64_t file_checks = 0;       // fstat of followed files (ScanCounts)
  size_t next_start = 0;
  // Paths matched at the first scan that could not be opened yet: start_at still applies.
  std::set<std::string> initial_paths;
  std::set<std::string> unopened;  // matched at the last walk, not opened yet
  TimePoint last_retry{};
  std::map<std::string, int> episodes;       // failures seen by the previous scan
  std::map<std::string, int> episodes_next;  // failures seen by the current scan
  std::string read_storage;                  // lent to the file being read (StorageLoan)
  LogLimiter warnings{kWarningsPerMinute};
};

FileSource::FileSource(FileSourceConfig config, PositionLookup lookup)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(lookup))) {}

FileSource::~FileSource() = default;

const std::string& FileSource::name() const { return impl_->config.name; }

bool FileSource::poll_once(TimePoint now, ChunkSink& sink) { return impl_->poll(now, sink); }

Duration FileSource::poll_interval() const { return impl_->config.scan_interval; }

int FileSource::wake_fd() const { return impl_->inotify.fd(); }

void FileSource::drain_wake_fd() { impl_->take_events(impl_->inotify.drain()); }

ScanCounts FileSource::scan_counts() const {
  return {impl_->pacer.walks(), impl_->pacer.requested_walks(), impl_->file_checks};
}

std::vector<ReadPosition> FileSource::positions() const {
  std::vector<ReadPosition> out;
  out.reserve(impl_->files.size());
  for (const auto& f : impl_->files) {
    ReadPosition p;
    p.source = impl_->config.name;
    p.path = f->path;
    p.identity = f->identity;
    p.offset = f->lines.committed_offset();
    p.line = f->lines.committed_line();
    out.push_back(std::move(p));
  }
  return out;
}

SourceStats& FileSource::stats() { return impl_->stats; }

}  // namespace faultd
