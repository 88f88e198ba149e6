#include "collectors/kmsg/kmsg_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>

#include "daemon/core/hash.hpp"

namespace faultd {
namespace {

// /dev/kmsg refuses (EINVAL) a read buffer smaller than one record; the kernel caps a record
// with its dictionary at 8 KiB (CONSOLE_EXT_LOG_MAX).
constexpr size_t kReadBytes = size_t{16} * 1024;
// A stand-in file's line longer than this is no record: dropped as a parse error.
constexpr size_t kMaxLineBytes = size_t{64} * 1024;

template <typename T>
bool parse_number(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::optional<KmsgRecord> parse_kmsg_record(std::string_view line) {
  const size_t semi = line.find(';');
  if (semi == std::string_view::npos || line.empty() || line[0] == ' ') return std::nullopt;
  std::string_view header = line.substr(0, semi);
  std::string_view fields[3];
  for (auto& field : fields) {
    const size_t comma = header.find(',');
    if (comma == std::string_view::npos) return std::nullopt;  // flags (4th) is required
    field = header.substr(0, comma);
    header.remove_prefix(comma + 1);
  }
  // What is left is the flags field and, on newer kernels, more comma-separated fields: ignored.
  KmsgRecord r;
  if (!parse_number(fields[0], r.prio) || !parse_number(fields[1], r.seq) ||
      !parse_number(fields[2], r.usec)) {
    return std::nullopt;
  }
  r.message = line.substr(semi + 1);
  return r;
}

std::string format_kmsg_line(const KmsgRecord& record) {
  char prefix[64];
  const int n = std::snprintf(prefix, sizeof prefix, "<%u>[%5llu.%06llu] ", record.prio,
                              static_cast<unsigned long long>(record.usec / 1000000),
                              static_cast<unsigned long long>(record.usec % 1000000));
  std::string out(prefix, static_cast<size_t>(n));
  out.append(record.message);
  return out;
}

uint64_t boot_identity(std::string_view boot_id) {
  std::string id(boot_id);
  std::erase_if(id, [](char c) { return c == '\n' || c == ' '; });
  const uint64_t h = fnv1a64(id);
  return h == 0 ? 1 : h;
}

struct KmsgSource::Impl {
  KmsgSourceConfig config;
  PositionLookup lookup;
  SourceStats stats;
  int fd = -1;
  int open_errno = 0;  // errno of the current failure episode, 0 while open works
  bool started = false;
  FileIdentity identity;
  uint64_t next_seq = 0;
  std::string carry;      // a stand-in file's partial last line
  bool dropping = false;  // skipping the rest of an over-long line
  // Records read but not yet committed (the sink refused the first): (seq, line).
  std::deque<std::pair<uint64_t, std::string>> pending;

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  void start() {
    started = true;
    std::ifstream in(config.boot_id_path);
    std::stringstream text;
    text << in.rdbuf();
    const std::string boot_id = trim(text.str());
    // Without a boot id (no procfs) every start looks like a new boot: records are read from
    // the start of the buffer, which the fault journal's unique key de-duplicates anyway.
    if (boot_id.empty()) stats.count_error(SourceErrorKind::Read);
    identity.ino = boot_identity(boot_id);
    if (lookup) {
      if (auto stored = lookup(config.name, identity.dev, identity.ino)) {
        next_seq = stored->offset;
      }
    }
  }

  bool open_device() {
    if (fd >= 0) return true;
    fd = ::open(config.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err != open_errno) {  // once per failure episode
        stats.count_error(err == EACCES || err == EPERM ? SourceErrorKind::Permission
                                                        : SourceErrorKind::Read);
      }
      open_errno = err;
      stats.files.store(0, std::memory_order_relaxed);
      return false;
    }
    open_errno = 0;
    stats.files.store(1, std::memory_order_relaxed);
    return true;
  }

  // Offers pending records in order; false if the sink refused one (it stays first).
  bool offer_pending(TimePoint now, ChunkSink& sink, size_t& handed) {
    while (!pending.empty()) {
      const auto& [seq, line] = pending.front();
      Chunk c;
      c.source = config.name;
      c.source_type = "kmsg";
      c.path = config.path;
      c.identity = identity;
      c.start_offset = seq;
      c.end_offset = seq + 1;
      c.first_line = seq + 1;
      c.end_line = seq + 1;
      c.data = line;
      c.noticed = now;
      if (!sink.on_chunk(c)) {
        stats.count_error(SourceErrorKind::Commit);
        return false;
      }
      next_seq = seq + 1;
      stats.lines.fetch_add(1, std::memory_order_relaxed);
      stats.bytes.fetch_add(line.size(), std::memory_order_relaxed);
      pending.pop_front();
      ++handed;
    }
    return true;
  }

  // One line of input: a record header becomes a pending record; continuation lines are the
  // device dictionary and are skipped.
  void on_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == ' ') return;
    auto record = parse_kmsg_record(line);
    if (!record) {
      stats.count_error(SourceErrorKind::Parse);
      return;
    }
    // Committed before a restart, or repeated by a stand-in file: skip.
    const uint64_t floor = pending.empty() ? next_seq : pending.back().first + 1;
    if (record->seq < floor) return;
    std::string text = format_kmsg_line(*record);
    text += '\n';
    pending.emplace_back(record->seq, std::move(text));
  }

  void on_bytes(std::string_view bytes) {
    while (!bytes.empty()) {
      const size_t nl = bytes.find('\n');
      if (nl == std::string_view::npos) {
        if (!dropping) carry.append(bytes);
        if (carry.size() > kMaxLineBytes) {
          stats.count_error(SourceErrorKind::Parse);
          carry.clear();
          dropping = true;
        }
        return;
      }
      if (dropping) {
        dropping = false;
      } else if (carry.empty()) {
        on_line(bytes.substr(0, nl));
      } else {
        carry.append(bytes.substr(0, nl));
        on_line(carry);
        carry.clear();
      }
      bytes.remove_prefix(nl + 1);
    }
  }

  bool poll(TimePoint now, ChunkSink& sink) {
    if (!started) start();
    size_t handed = 0;
    if (!offer_pending(now, sink, handed)) return false;
    if (!open_device()) return false;
    char buf[kReadBytes];
    while (handed < config.max_records_per_poll) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) {  // overwritten before we read them; the next read goes on
          stats.count_error(SourceErrorKind::Overrun);
          continue;
        }
        if (errno != EAGAIN) {
          stats.count_error(SourceErrorKind::Read);
          ::close(fd);  // reopened at the next poll, from the start of the buffer
          fd = -1;
          stats.files.store(0, std::memory_order_relaxed);
        }
        return false;
      }
      if (n == 0) return false;  // a stand-in file at its end, or a FIFO without writer
      on_bytes(std::string_view(buf, static_cast<size_t>(n)));
      if (!offer_pending(now, sink, handed)) return false;
    }
    return true;
  }
};

KmsgSource::KmsgSource(KmsgSourceConfig config, PositionLookup lookup)
    : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->lookup = std::move(lookup);
  // Opened now so that wake_fd() is there when the app registers it; a failure is counted and
  // retried at every poll.
  impl_->open_device();
}

KmsgSource::~KmsgSource() = default;

const std::string& KmsgSource::name() const { return impl_->config.name; }

bool KmsgSource::poll_once(TimePoint now, ChunkSink& sink) { return impl_->poll(now, sink); }

Duration KmsgSource::poll_interval() const { return impl_->config.poll_interval; }

int KmsgSource::wake_fd() const { return impl_->fd; }

std::vector<ReadPosition> KmsgSource::positions() const {
  if (!impl_->started) return {};
  ReadPosition p;
  p.source = impl_->config.name;
  p.path = impl_->config.path;
  p.identity = impl_->identity;
  p.offset = impl_->next_seq;
  p.line = impl_->next_seq;
  return {p};
}

SourceStats& KmsgSource::stats() { return impl_->stats; }

uint64_t KmsgSource::next_seq() const { return impl_->next_seq; }

}  // namespace faultd
