#include "daemon/app/replay.hpp"

#include <fcntl.h>
#include <re2/re2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "collectors/file/file_source.hpp"
#include "daemon/core/json.hpp"
#include "daemon/core/newlines.hpp"
#include "rules/detectors/bank.hpp"

namespace faultd {
namespace {

constexpr size_t kBlockBytes = 4 * 1024 * 1024;

struct Route {
  std::string source;
  Fields path_fields;
  size_t max_line_bytes;
};

std::vector<Route> routes_for(const Config& config, const std::string& path) {
  std::vector<Route> routes;
  auto add = [&](const FileSourceConfig& s) {
    Route r{s.name, {}, s.max_line_bytes};
    if (!s.path_fields.empty()) {
      RE2 re(s.path_fields);
      const int n = re.NumberOfCapturingGroups();
      std::vector<std::string> values(static_cast<size_t>(n));
      std::vector<RE2::Arg> args(static_cast<size_t>(n));
      std::vector<RE2::Arg*> argp(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) {
        args[static_cast<size_t>(i)] = &values[static_cast<size_t>(i)];
        argp[static_cast<size_t>(i)] = &args[static_cast<size_t>(i)];
      }
      if (RE2::PartialMatchN(path, re, argp.data(), n)) {
        for (const auto& [name, index] : re.NamedCapturingGroups()) {
          r.path_fields.emplace_back(name, values[static_cast<size_t>(index - 1)]);
        }
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
  if (routes.empty()) routes.push_back(Route{"replay", {}, 64 * 1024});
  return routes;
}

class Printer {
 public:
  Printer(std::ostream& out) : out_(out) {}
  void print(const std::vector<Finding>& findings) {
    for (const auto& f : findings) out_ << dump_json(to_json(f)) << '\n';
  }

 private:
  std::ostream& out_;
};

// Feeds one file to one route in blocks of whole lines; a line longer than the route's limit is
// cut there (as the file source does) so memory stays bounded.
bool replay_one(const Config& config, const std::string& path, const Route& route,
                ReplaySummary& sum, std::ostream& out, std::ostream& err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err << "faultd: " << path << ": " << std::strerror(errno) << '\n';
    return false;
  }
  std::vector<char> buf(kBlockBytes + route.max_line_bytes);
  size_t have = 0;
  uint64_t offset = 0;  // file offset of buf[0]
  uint64_t line = 1;
  bool skipping = false;  // inside the discarded tail of an over-long line
  std::vector<Finding> findings;
  DetectorBank detectors;  // a file's step lines are one job's series: their state stays here
  detectors.configure(*config.rules);
  ScanContext context;  // multi-line rules span the buffers of this file
  Printer printer(out);
  auto scan = [&](std::string_view data, uint64_t start, uint64_t end_offset) {
    Chunk c;
    c.source = route.source;
    c.path = path;
    c.start_offset = start;
    c.end_offset = end_offset;
    c.first_line = line;
    c.data = data;
    c.path_fields = &route.path_fields;
    const uint64_t newlines = count_newlines(data);
    c.end_line = line + newlines - 1 + (data.empty() || data.back() == '\n' ? 0 : 1);
    findings.clear();
    const TimePoint now = SystemClock::now();
    config.rules->scan(c, now, findings, nullptr, &context);
    detectors.apply(findings, now);
    printer.print(findings);
    sum.findings += findings.size();
    sum.lines += newlines + (data.empty() || data.back() == '\n' ? 0 : 1);
    line = c.end_line + 1;
  };
  bool ok = true;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data() + have, buf.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err << "faultd: " << path << ": " << std::strerror(errno) << '\n';
      ok = false;
      break;
    }
    sum.bytes += static_cast<uint64_t>(n);
    have += static_cast<size_t>(n);
    if (n == 0) break;
    size_t start = 0;
    if (skipping) {
      const char* nl = static_cast<const char*>(std::memchr(buf.data(), '\n', have));
      if (nl == nullptr) {
        offset += have;
        have = 0;
        continue;
      }
      start = static_cast<size_t>(nl - buf.data()) + 1;
      skipping = false;  // the line was counted when its head was scanned
    }
    const char* base = buf.data() + start;
    const size_t len = have - start;
    const char* last_nl = static_cast<const char*>(memrchr(base, '\n', len));
    size_t used = start;
    if (last_nl != nullptr) {
      const size_t whole = static_cast<size_t>(last_nl - base) + 1;
      scan(std::string_view(base, whole), offset + start, offset + start + whole);
      used = start + whole;
    } else if (len >= route.max_line_bytes) {
      // An over-long line: hand on its head (as one line), drop the rest up to its newline.
      scan(std::string_view(base, route.max_line_bytes), offset + start, offset + have);
      skipping = true;
      used = have;
    }
    std::memmove(buf.data(), buf.data() + used, have - used);
    offset += used;
    have -= used;
  }
  if (have > 0 && !skipping) scan(std::string_view(buf.data(), have), offset, offset + have);
  ::close(fd);
  return ok;
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
