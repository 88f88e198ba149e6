#include "daemon/app/replay.hpp"

#include <fcntl.h>
#include <re2/re2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "collectors/file/file_source.hpp"  // glob_match
#include "collectors/file/line_buffer.hpp"
#include "collectors/file/path_fields.hpp"
#include "daemon/core/json.hpp"
#include "rules/matcher.hpp"

namespace faultd {
namespace {

// Read size of the offline reader: as the file source's default read_chunk_bytes.
constexpr size_t kReadBytes = size_t{1024} * 1024;

struct Route {
  std::string source;
  Fields path_fields;
  size_t max_line_bytes;
};

std::vector<Route> routes_for(const Config& config, const std::string& path) {
  std::vector<Route> routes;
  auto add = [&](const FileSourceConfig& s) {
    Route r{s.name, {}, s.max_line_bytes};
    std::string error;
    if (!s.path_fields.empty()) {
      if (auto re = compile_path_fields(s.path_fields, error)) {
        r.path_fields = capture_path_fields(*re, path);
      }
    }
    routes.push_back(std::move(r));
  };
  const auto file_sources = config.file_sources();
  // Source globs are absolute (resolved against the config's directory); so is the file here,
  // or `faultd --replay logs/x.log` would reach every source instead of the one that reads it.
  std::error_code ec;
  auto absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) absolute = path;
  for (const auto& s : file_sources) {
    for (const auto& g : s.paths) {
      if (glob_match(g, absolute)) {
        add(s);
        break;
      }
    }
  }
  if (routes.empty()) {
    for (const auto& s : file_sources) add(s);
  }
  if (routes.empty()) routes.push_back(Route{"replay", {}, size_t{64} * 1024});
  return routes;
}

// Feeds one file to one route through the file source's own line splitting and the daemon's
// Matcher. A file's lines are one stream: its multi-line progress and detector series stay in
// this Matcher.
bool replay_one(const Config& config, const std::string& path, const Route& route,
                ReplaySummary& sum, std::ostream& out, std::ostream& err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err << "faultd: " << path << ": " << std::strerror(errno) << '\n';
    return false;
  }
  Matcher matcher;
  matcher.configure(config.rules);
  std::vector<Finding> findings;
  const int error =
      read_lines(fd, route.max_line_bytes, kReadBytes, [&](const LineBuffer::Pending& p) {
        Chunk c;
        c.source = route.source;
        c.path = path;
        c.start_offset = p.start_offset;
        c.end_offset = p.end_offset;
        c.first_line = p.first_line;
        c.end_line = p.end_line;
        c.data = p.data;
        c.path_fields = &route.path_fields;
        const TimePoint now = SystemClock::now();
        c.noticed = now;
        findings.clear();
        matcher.match(c, now, findings);
        for (const auto& f : findings) out << dump_json(to_json(f)) << '\n';
        sum.findings += findings.size();
        sum.lines += p.lines();
        sum.bytes += p.end_offset - p.start_offset;
      });
  ::close(fd);
  if (error != 0) {
    err << "faultd: " << path << ": " << std::strerror(error) << '\n';
    return false;
  }
  return true;
}

}  // namespace

ReplaySummary replay_files(const Config& config, const std::vector<std::string>& files,
                           std::ostream& out, std::ostream& err) {
  ReplaySummary sum;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& path : files) {
    ++sum.files;
    bool ok = true;
    for (const auto& route : routes_for(config, path)) {
      ok = replay_one(config, path, route, sum, out, err) && ok;
    }
    if (!ok) ++sum.unreadable;
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sum;
}

}  // namespace faultd
