#include "collectors/overflow_dump/overflow_dump_source.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "collectors/file/glob.hpp"
#include "collectors/file/inotify_watch.hpp"
#include "collectors/file/rescan_pacer.hpp"
#include "collectors/file/watched_walk.hpp"
#include "collectors/safe_open.hpp"
#include "daemon/core/hash.hpp"
#include "daemon/core/log_limiter.hpp"

namespace faultd {
namespace {

using overflow::DumpDecode;
using overflow::DumpPath;

using FileKey = std::pair<uint64_t, uint64_t>;  // (dev, ino)

uint64_t name_fingerprint(std::string_view name) { return fnv1a64(name); }

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string dir_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The root as a glob prefix: its own metacharacters escaped.
std::string escape_glob(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

bool is_permission_error(int err) { return err == EACCES || err == EPERM; }

enum class ReadResult { Ok, TooBig, Failed };

// Only a regular file is ever opened (never a FIFO or a device a job's symlink names).
ReadResult read_small_file(const std::string& path, size_t cap, std::string& out) {
  const int fd = open_regular_file(path).fd;
  if (fd < 0) return ReadResult::Failed;
  out.clear();
  char buf[16 * 1024];
  ReadResult result = ReadResult::Ok;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result = ReadResult::Failed;
      break;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > cap) {
      result = ReadResult::TooBig;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return result;
}

}  // namespace

namespace {

// One record is one line: a control byte in a name the job chose (a newline in a directory
// name would start a second, forged record) is written as '?'.
std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return out;
}

}  // namespace

std::string format_dump_record(const DumpPath& dump, const std::string& path,
                               const DumpDecode* decoded, bool undecoded) {
  std::string line =
      "overflow dump: device=" + one_line(dump.device) + " model=" + one_line(dump.model_id);
  if (!dump.model_name.empty()) line += " model_name=" + one_line(dump.model_name);
  line += " iteration=" + std::to_string(dump.iteration) + " task=" + std::to_string(dump.task_id);
  if (dump.stream_id) line += " stream=" + std::to_string(*dump.stream_id);
  line += " timestamp=" + std::to_string(dump.timestamp);
  if (decoded != nullptr) {
    const auto errors = decoded->errors();
    if (errors.empty()) line += " overflow=none";
    for (const auto* r : errors) {
      line += " overflow=" + std::string(overflow::short_name(r->kind)) +
              " status=" + std::to_string(r->decoded.status) + " cause=" + r->decoded.cause_codes();
    }
  } else if (undecoded) {
    line += " overflow=undecoded";
  }
  line += " file=" + one_line(path);
  return line;
}

struct OverflowDumpSource::Impl {
  Impl(OverflowDumpSourceConfig cfg, PositionLookup lookup_fn)
      : config(std::move(cfg)), lookup(std::move(lookup_fn)), pacer(config.scan_interval) {}

  OverflowDumpSourceConfig config;
  PositionLookup lookup;
  SourceStats stats;
  // Only what changes the set of files wakes this source: a dump is one record, never tailed.
  InotifyWatch inotify{InotifyWatch::Report::CreateDelete};
  RescanPacer pacer;
  uint64_t file_checks = 0;  // stat of dump-named paths (ScanCounts)
  LogLimiter warnings{LogLimiter::kDefaultPerMinute};
  // Committed (or deliberately skipped) files: identity -> the position to report.
  std::map<FileKey, ReadPosition> known;
  // Paths counted as not fitting a layout, so each is counted once while it is there; rebuilt
  // at every scan from the paths still present (as `known` is), so deleted names are forgotten.
  std::set<std::string> refused_paths;
  std::set<std::string> error_episodes, error_episodes_next;

  // Counts an error once per episode (while it recurs scan after scan). True if counted now.
  bool note_episode(const std::string& key, SourceErrorKind kind) {
    const bool fresh = error_episodes.count(key) == 0 && error_episodes_next.count(key) == 0;
    error_episodes_next.insert(key);
    if (fresh) stats.count_error(kind);
    return fresh;
  }

  std::vector<std::string> walk(TimePoint now) {
    WatchedWalkErrors errors;
    errors.on_watch_error = [&](const std::string& dir, int) {
      note_episode("watch:" + dir, SourceErrorKind::Read);
    };
    errors.on_glob_error = [&](const std::string& dir, int err) {
      note_episode("glob:" + dir,
                   is_permission_error(err) ? SourceErrorKind::Permission : SourceErrorKind::Glob);
    };
    WatchedWalk walk = walk_and_watch(inotify, {escape_glob(config.root) + "/**/*"},
                                      config.max_directories, glob::DirLinks::Refuse, errors);
    if (walk.capped && note_episode("walk_limit", SourceErrorKind::WalkLimit)) {
      warnings.warn(now, fmt::format("source {}: {}", config.name,
                                     walk_limit_warning(config.max_directories)));
    }
    pacer.walked(now, walk.cost);
    return std::move(walk.paths);
  }

  // The companion JSON of a dump, if one is beside it: "<dump>.output.N.json" or "<dump>.json".
  std::vector<std::string> companions(const std::string& path) {
    std::vector<std::string> out;
    const std::string dir = dir_name(path);
    const std::string base = base_name(path);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0) continue;
      auto parsed = overflow::parse_dump_path(dir + "/" + name);
      if (parsed && parsed->is_json && parsed->dump_name == base) out.push_back(dir + "/" + name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

  struct Decoded {
    std::optional<DumpDecode> decode;
    bool undecoded = false;
    bool wait = false;  // not parseable yet, but may still be being written
  };

  Decoded decode_json(const std::string& path, TimePoint now) {
    Decoded d;
    std::string text;
    const auto rr = read_small_file(path, config.max_json_bytes, text);
    std::string error;
    if (rr == ReadResult::Ok) d.decode = overflow::parse_dump_json(text, error);
    if (d.decode) return d;
    struct stat st {};
    const bool settled = rr == ReadResult::TooBig || ::stat(path.c_str(), &st) != 0 ||
                         SystemClock::from_time_t(st.st_mtime) + config.settle <= now;
    if (!settled) {
      d.wait = true;
      return d;
    }
    stats.count_error(SourceErrorKind::Parse);
    d.undecoded = true;
    return d;
  }

  void take_events(const InotifyWatch::Events& events) {
    if (events.rescan) pacer.request();
  }

  bool poll(TimePoint now, ChunkSink& sink) {
    take_events(inotify.drain());
    if (!pacer.due(now)) {
      if (const auto wait = pacer.held_back(now)) inotify.wake_after(*wait);
      return false;
    }

    std::map<FileKey, ReadPosition> still_there;
    std::set<std::string> still_refused;
    size_t handed = 0;
    bool more = false;
    for (const std::string& path : walk(now)) {
      const std::string base = base_name(path);
      if (!overflow::has_dump_prefix(base)) continue;
      struct stat st {};
      ++file_checks;
      if (::stat(path.c_str(), &st) != 0) {
        const int err = errno;
        if (err != ENOENT) {
          note_episode("stat:" + path, is_permission_error(err) ? SourceErrorKind::Permission
                                                                : SourceErrorKind::Read);
        }
        continue;
      }
      const FileKey key{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
      const uint64_t fingerprint = name_fingerprint(base);
      // An inode reused by another dump starts a new generation, so its record is not taken
      // for a replay of the old one.
      uint64_t generation = 0;
      if (auto it = known.find(key); it != known.end()) {
        if (it->second.identity.fingerprint == fingerprint) {
          still_there.insert(*it);
          continue;
        }
        generation = it->second.identity.generation + 1;
      }
      ReadPosition pos;
      pos.source = config.name;
      pos.path = path;
      pos.identity = {key.first, key.second, fingerprint, 0};
      pos.identity.generation = generation;
      pos.offset = 1;
      pos.line = 1;
      if (lookup) {
        auto stored = lookup(config.name, key.first, key.second);
        if (stored && stored->offset >= 1 && stored->identity.fingerprint == fingerprint) {
          pos.identity.generation = stored->identity.generation;
          still_there[key] = pos;  // handed out before a restart
          continue;
        }
        if (stored) {
          pos.identity.generation = std::max(generation, stored->identity.generation + 1);
        }
      }
      auto dump = overflow::parse_dump_path(path);
      if (!dump) {
        if (refused_paths.count(path) == 0) stats.count_error(SourceErrorKind::Parse);
        still_refused.insert(path);
        continue;
      }
      if (handed >= config.max_files_per_poll) {
        more = true;
        pacer.request_now();  // the rest at the next poll, which the app runs at once
        continue;
      }
      Decoded decoded;
      if (dump->is_json) {
        struct stat dump_st {};
        if (::stat((dir_name(path) + "/" + dump->dump_name).c_str(), &dump_st) == 0) {
          still_there[key] = pos;  // the dump beside it is the record
          continue;
        }
        decoded = decode_json(path, now);
      } else {
        for (const auto& companion : companions(path)) {
          decoded = decode_json(companion, now);
          if (decoded.decode || decoded.wait) break;
        }
      }
      if (decoded.wait) continue;  // looked at again at the next scan
      const std::string line =
          format_dump_record(*dump, path, decoded.decode ? &*decoded.decode : nullptr,
                             decoded.undecoded) +
          "\n";
      Chunk c;
      c.source = config.name;
      c.source_type = "overflow_dump";
      c.path = path;
      c.identity = pos.identity;
      c.start_offset = 0;
      c.end_offset = 1;
      c.first_line = 1;
      c.end_line = 1;
      c.data = line;
      c.noticed = now;
      if (!sink.on_chunk(c)) {
        stats.count_error(SourceErrorKind::Commit);
        pacer.request();  // offered again at the next poll that walks
        // Keep what is known, including files not reached in this walk.
        for (auto& [k, p] : known) still_there.insert({k, p});
        still_refused.insert(refused_paths.begin(), refused_paths.end());
        break;
      }
      ++handed;
      stats.lines.fetch_add(1, std::memory_order_relaxed);
      stats.bytes.fetch_add(line.size(), std::memory_order_relaxed);
      still_there[key] = pos;
    }
    known.swap(still_there);
    refused_paths.swap(still_refused);
    error_episodes.swap(error_episodes_next);
    error_episodes_next.clear();
    stats.files.store(known.size(), std::memory_order_relaxed);
    return more;
  }
};

OverflowDumpSource::OverflowDumpSource(OverflowDumpSourceConfig config, PositionLookup lookup)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(lookup))) {}

OverflowDumpSource::~OverflowDumpSource() = default;

const std::string& OverflowDumpSource::name() const { return impl_->config.name; }

bool OverflowDumpSource::poll_once(TimePoint now, ChunkSink& sink) {
  return impl_->poll(now, sink);
}

Duration OverflowDumpSource::poll_interval() const { return impl_->config.scan_interval; }

int OverflowDumpSource::wake_fd() const { return impl_->inotify.fd(); }

void OverflowDumpSource::drain_wake_fd() { impl_->take_events(impl_->inotify.drain()); }

ScanCounts OverflowDumpSource::scan_counts() const {
  return {impl_->pacer.walks(), impl_->pacer.requested_walks(), impl_->file_checks};
}

std::vector<ReadPosition> OverflowDumpSource::positions() const {
  std::vector<ReadPosition> out;
  out.reserve(impl_->known.size());
  for (const auto& [key, pos] : impl_->known) out.push_back(pos);
  return out;
}

SourceStats& OverflowDumpSource::stats() { return impl_->stats; }

size_t OverflowDumpSource::refused_path_count() const { return impl_->refused_paths.size(); }

}  // namespace faultd
