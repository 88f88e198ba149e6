// Test helpers for the file source: a sink that records every chunk and checks the chunk
// contract on the way in, and a guard that makes permission checks bite even when the tests run
// as root.
#pragma once

#include <fcntl.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collectors/file/file_source.hpp"

namespace faultd::testing {

struct RecordedLine {
  std::string path;
  uint64_t line = 0;
  uint64_t offset = 0;
  std::string text;  // without the '\n'
  bool operator==(const RecordedLine&) const = default;
};

class RecordingSink final : public ChunkSink {
 public:
  struct Recorded {
    std::string source;
    std::string path;
    FileIdentity identity;
    uint64_t start_offset = 0;
    uint64_t end_offset = 0;
    uint64_t first_line = 0;
    uint64_t end_line = 0;
    std::string data;
    Fields fields;
    TimePoint noticed{};
  };

  bool on_chunk(const Chunk& c) override {
    ++offered;
    Recorded r{std::string(c.source),
               std::string(c.path),
               c.identity,
               c.start_offset,
               c.end_offset,
               c.first_line,
               c.end_line,
               std::string(c.data),
               c.path_fields ? *c.path_fields : Fields{},
               c.noticed};
    if (refuse_next > 0) {
      --refuse_next;
      refused.push_back(std::move(r));
      return false;
    }
    check(r);
    chunks.push_back(std::move(r));
    return true;
  }

  // Every committed line, in order, with its line number and file offset.
  std::vector<RecordedLine> lines() const {
    std::vector<RecordedLine> out;
    for (const Recorded& c : chunks) {
      uint64_t line = c.first_line;
      size_t pos = 0;
      while (pos < c.data.size()) {
        size_t nl = c.data.find('\n', pos);
        const size_t end = nl == std::string::npos ? c.data.size() : nl;
        out.push_back({c.path, line++, c.start_offset + pos, c.data.substr(pos, end - pos)});
        pos = end + 1;
      }
    }
    return out;
  }

  std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (const RecordedLine& l : lines()) out.push_back(l.text);
    return out;
  }

  void clear() { chunks.clear(); }

  std::vector<Recorded> chunks;
  std::vector<Recorded> refused;
  std::vector<std::string> violations;  // chunk contract breaches, should stay empty
  int refuse_next = 0;
  int offered = 0;

 private:
  // The contract every chunk must keep: its line count matches its data, and per file the
  // chunks continue each other exactly (or restart at 0 after a truncation). After the kept
  // bytes of an over-long line handed out before its newline (a chunk without one), the next
  // chunk starts past the rest of that line, which was dropped.
  void check(const Recorded& r) {
    size_t newlines = 0;
    for (char ch : r.data) newlines += ch == '\n' ? 1 : 0;
    const bool partial = !r.data.empty() && r.data.back() != '\n';
    const uint64_t lines = newlines + (partial ? 1 : 0);
    auto fail = [&](const std::string& what) {
      violations.push_back(r.path + " @" + std::to_string(r.start_offset) + ": " + what);
    };
    if (r.data.empty()) fail("empty chunk");
    if (r.end_line + 1 - r.first_line != lines) fail("line count does not match data");
    if (r.end_offset < r.start_offset + r.data.size()) fail("end_offset before end of data");
    if (lines > 1 && r.end_offset != r.start_offset + r.data.size()) {
      fail("multi-line chunk with skipped bytes");
    }
    const auto key = std::make_pair(r.identity.dev, r.identity.ino);
    const auto it = last_.find(key);
    if (it != last_.end()) {
      const End& end = it->second;
      const bool at_end = r.start_offset == end.offset || (end.cut && r.start_offset > end.offset);
      const bool continues = at_end && r.first_line == end.line + 1;
      const bool restarts = r.start_offset == 0 && r.first_line == 1;
      if (!continues && !restarts) fail("does not continue the previous chunk");
    }
    last_[key] = {r.end_offset, r.end_line, partial};
  }

  struct End {
    uint64_t offset = 0;
    uint64_t line = 0;
    bool cut = false;  // the chunk ended without a newline
  };
  std::map<std::pair<uint64_t, uint64_t>, End> last_;
};

// While alive, file-system permission checks of this thread are made as `nobody`, even when the
// tests run as root (root bypasses mode bits; dropping the fsuid drops that bypass too).
class Unprivileged {
 public:
  Unprivileged() {
    if (::geteuid() == 0) {
      previous_ = ::setfsuid(kNobody);
      changed_ = true;
    }
  }
  ~Unprivileged() {
    if (changed_) ::setfsuid(static_cast<uid_t>(previous_));
  }
  Unprivileged(const Unprivileged&) = delete;
  Unprivileged& operator=(const Unprivileged&) = delete;

 private:
  static constexpr uid_t kNobody = 65534;
  int previous_ = 0;
  bool changed_ = false;
};

// Opens with this thread's file-system ids (access(2) would use the real uid instead).
inline bool can_open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// A file source over one glob, everything else at its defaults.
inline FileSourceConfig config_for(const std::string& glob) {
  FileSourceConfig c;
  c.name = "test";
  c.paths = {glob};
  return c;
}

inline uint64_t errors(FileSource& source, SourceErrorKind kind) {
  return source.stats().error_count(kind);
}

// Watches held by this process's inotify descriptors, as the kernel lists them (a source's
// wake fd is an epoll set that holds its inotify descriptor).
inline size_t inotify_watches() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fdinfo")) {
    std::ifstream info(entry.path());
    for (std::string line; std::getline(info, line);) n += line.rfind("inotify wd:", 0) == 0;
  }
  return n;
}

}  // namespace faultd::testing
