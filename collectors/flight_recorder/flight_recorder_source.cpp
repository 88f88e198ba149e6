#include "collectors/flight_recorder/flight_recorder_source.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "collectors/safe_open.hpp"
#include "daemon/core/hash.hpp"
#include "daemon/core/log_limiter.hpp"

namespace faultd {

namespace {

struct FileVersion {
  uint64_t ino = 0;
  int64_t size = -1;
  int64_t mtime_ns = 0;
  friend bool operator==(const FileVersion&, const FileVersion&) = default;
};

// "0-3,5" for a sorted list of ranks.
std::string rank_ranges(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += '-' + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

// Names and ops come from the dump: no blanks or control bytes in a record's fields.
std::string field(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 128)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u <= ' ' || u == 0x7f) ? '_' : c;
  }
  return out.empty() ? "-" : out;
}

bool read_all(int fd, size_t max, std::string& out) {
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) return false;
    if (r == 0) return true;
    if (out.size() + static_cast<size_t>(r) > max) return false;
    out.append(buf, static_cast<size_t>(r));
  }
}

}  // namespace

struct FlightRecorderSource::Impl {
  FlightRecorderSourceConfig config;
  SourceStats stats;
  LogLimiter warnings;
  std::string dir;
  std::string stem;
  std::map<int64_t, FileVersion> seen;  // the version last looked at (read or refused)
  std::map<int64_t, flight_recorder::Dump> dumps;
  std::map<int64_t, int64_t> dump_mtime;
  std::set<std::string> sent;  // wavefront lines already handed out
  TimePoint next_scan{};
  uint64_t stream_end = 0;  // offsets only grow

  explicit Impl(FlightRecorderSourceConfig c) : config(std::move(c)) {
    const size_t slash = config.prefix.rfind('/');
    dir = slash == std::string::npos ? "." : config.prefix.substr(0, std::max<size_t>(slash, 1));
    stem = slash == std::string::npos ? config.prefix : config.prefix.substr(slash + 1);
  }

  std::string device_of(int64_t rank) const {
    return std::to_string(rank % static_cast<int64_t>(config.ranks_per_node));
  }

  // The ranks whose dump files are present now, with their versions.
  std::map<int64_t, FileVersion> list() {
    std::map<int64_t, FileVersion> found;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return found;
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name(e->d_name);
      if (name.size() <= stem.size() || name.substr(0, stem.size()) != stem) continue;
      const std::string_view digits = name.substr(stem.size());
      if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
        continue;
      }
      struct stat st {};
      const std::string path = dir + "/" + std::string(name);
      if (::lstat(path.c_str(), &st) != 0) continue;
      found[std::stoll(std::string(digits))] = FileVersion{
          st.st_ino, st.st_size, int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
      if (found.size() > config.max_ranks) found.erase(std::prev(found.end()));
    }
    ::closedir(d);
    return found;
  }

  std::string path_of(int64_t rank) const { return config.prefix + std::to_string(rank); }

  // Reads one rank's dump; false when it is refused (counted and logged).
  bool read(int64_t rank, const FileVersion& v, TimePoint now) {
    const std::string path = path_of(rank);
    auto refuse = [&](const std::string& why) {
      stats.count_error(SourceErrorKind::Parse);
      warnings.warn(now, "source " + config.name + ": " + path + ": " + why);
      dumps.erase(rank);
      return false;
    };
    if (static_cast<size_t>(v.size) > config.max_dump_bytes) {
      return refuse("over max_dump_bytes (" + std::to_string(config.max_dump_bytes) + ")");
    }
    const OpenedFile f = open_regular_file(path);
    if (f.fd < 0) {
      stats.count_error(f.error == EACCES || f.error == EPERM ? SourceErrorKind::Permission
                                                              : SourceErrorKind::Read);
      return false;
    }
    std::string bytes;
    const bool whole = read_all(f.fd, config.max_dump_bytes, bytes);
    ::close(f.fd);
    if (!whole) return refuse("unreadable or over max_dump_bytes");
    stats.bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
    try {
      pickle::PickleLimits limits;
      limits.max_bytes = config.max_dump_bytes;
      dumps[rank] = flight_recorder::parse_dump(bytes, limits);
      dump_mtime[rank] = v.mtime_ns;
      return true;
    } catch (const std::exception& e) {
      return refuse(e.what());
    }
  }

  // The wavefront lines not handed out yet; `fresh` gets them, for `sent` once committed.
  std::string wavefront_lines(std::vector<std::string>& fresh) {
    std::vector<flight_recorder::RankDump> ranks;
    for (const auto& [rank, dump] : dumps) ranks.push_back({rank, dump});
    std::string out;
    for (const auto& w : flight_recorder::find_wavefronts(ranks)) {
      const std::string common =
          " pg=" + field(w.pg_name) + " waited_seq=" + std::to_string(w.waited_seq);
      std::vector<std::string> lines;
      if (w.complete && !w.behind.empty()) {
        for (size_t k = 0; k < w.behind.size(); ++k) {
          lines.push_back("flight recorder: culprit device=" + device_of(w.behind[k]) +
                          " rank=" + std::to_string(w.behind[k]) + common + " last_seq=" +
                          std::to_string(w.behind_last[k]) + " victims=" + rank_ranges(w.waiting));
        }
        for (const int64_t r : w.waiting) {
          lines.push_back("flight recorder: victim device=" + device_of(r) + " rank=" +
                          std::to_string(r) + common + " culprits=" + rank_ranges(w.behind));
        }
      } else if (!w.complete) {
        for (const int64_t r : w.waiting) {
          lines.push_back("flight recorder: waiting device=" + device_of(r) + " rank=" +
                          std::to_string(r) + common + " absent=" + rank_ranges(w.absent));
        }
      }
      for (auto& l : lines) {
        if (sent.count(l) != 0 || std::find(fresh.begin(), fresh.end(), l) != fresh.end()) {
          continue;
        }
        out += l + "\n";
        fresh.push_back(std::move(l));
      }
    }
    return out;
  }

  bool poll(TimePoint now, ChunkSink& sink) {
    if (now < next_scan) return false;
    next_scan = now + config.scan_interval;
    const auto found = list();
    const int64_t now_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    std::string text;
    std::map<int64_t, FileVersion> looked;
    for (const auto& [rank, v] : found) {
      auto it = seen.find(rank);
      if (it != seen.end() && it->second == v) {
        looked[rank] = v;
        continue;
      }
      if (now_ns - v.mtime_ns < config.settle.count()) continue;  // may still be written
      looked[rank] = v;
      if (!read(rank, v, now)) continue;
      for (const auto& g : dumps[rank].groups) {
        text += "flight recorder: rank=" + std::to_string(rank) + " device=" + device_of(rank) +
                " pg=" + field(g.pg_name) + " last_enqueued=" + std::to_string(g.last_enqueued) +
                " last_started=" + std::to_string(g.last_started) +
                " last_completed=" + std::to_string(g.last_completed) + " state=" + g.state() +
                " op=" + field(g.last_op) + " file=" + path_of(rank) + "\n";
      }
    }
    // Dumps gone are forgotten, and with them the wavefronts they made.
    for (auto it = dumps.begin(); it != dumps.end();) {
      if (found.count(it->first) == 0) {
        dump_mtime.erase(it->first);
        it = dumps.erase(it);
      } else {
        ++it;
      }
    }
    if (dumps.empty() || sent.size() > 65536) sent.clear();  // bounded memory
    stats.files.store(dumps.size(), std::memory_order_relaxed);
    std::vector<std::string> fresh;
    if (!text.empty()) text += wavefront_lines(fresh);
    if (text.empty()) {
      seen.swap(looked);
      return false;
    }
    int64_t newest = 0;
    for (const auto& [rank, m] : dump_mtime) newest = std::max(newest, m);
    Chunk c;
    c.source = config.name;
    c.source_type = "command";  // faultd's own records
    c.path = config.prefix;
    c.identity = FileIdentity{0, fnv1a64(config.prefix, fnv1a64(config.name)), 0};
    c.start_offset = std::max(static_cast<uint64_t>(newest), stream_end);
    c.end_offset = c.start_offset + text.size();
    c.first_line = 1;
    c.end_line = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
    c.data = text;
    c.noticed = now;
    if (!sink.on_chunk(c)) {
      stats.count_error(SourceErrorKind::Commit);
      next_scan = {};  // the same news at the next poll
      return false;
    }
    seen.swap(looked);
    sent.insert(fresh.begin(), fresh.end());
    stream_end = c.end_offset;
    stats.lines.fetch_add(c.end_line, std::memory_order_relaxed);
    return false;
  }
};

FlightRecorderSource::FlightRecorderSource(FlightRecorderSourceConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}
FlightRecorderSource::~FlightRecorderSource() = default;
const std::string& FlightRecorderSource::name() const { return impl_->config.name; }
bool FlightRecorderSource::poll_once(TimePoint now, ChunkSink& sink) {
  return impl_->poll(now, sink);
}
Duration FlightRecorderSource::poll_interval() const { return impl_->config.scan_interval; }
SourceStats& FlightRecorderSource::stats() { return impl_->stats; }

}  // namespace faultd
