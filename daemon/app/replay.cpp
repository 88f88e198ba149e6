#include "daemon/app/replay.hpp"

#include <fcntl.h>
#include <re2/re2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <tuple>

#include "collectors/file/glob.hpp"
#include "collectors/file/line_buffer.hpp"
#include "collectors/file/path_fields.hpp"
#include "daemon/core/json.hpp"
#include "daemon/core/terminal_text.hpp"
#include "rules/matcher.hpp"

namespace faultd {
namespace {

// Read size of the offline reader: as the file source's default read_chunk_bytes.
constexpr size_t kReadBytes = size_t{1024} * 1024;

struct Route {
  std::string source;
  Fields path_fields;
  size_t max_line_bytes;
  std::string_view source_type = "file";
};

std::vector<Route> routes_for(const Config& config, const std::string& path) {
  std::vector<Route> routes;
  auto add = [&](const FileSourceConfig& s) {
    Route r{s.name, {}, s.max_line_bytes, s.source_type()};
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
    // No source claims the file: the operator handed it over, so it is read as every kind of
    // log the node has, the host's kernel log included (the kernel's driver rules read only a
    // kernel source), unless a source of the config already reads it that way.
    for (const auto& s : file_sources) add(s);
    const bool kernel_route = std::any_of(
        routes.begin(), routes.end(), [](const Route& r) { return r.source_type == "kernel_log"; });
    if (!routes.empty() && !kernel_route) {
      routes.push_back(Route{"kernel", {}, routes.front().max_line_bytes, "kernel_log"});
    }
  }
  if (routes.empty()) {
    // No file source at all (`--rules` alone, or only probes): the file is a log and the
    // host's kernel log, as above.
    routes.push_back(Route{"replay", {}, size_t{64} * 1024});
    routes.push_back(Route{"kernel", {}, size_t{64} * 1024, "kernel_log"});
  }
  return routes;
}

// Prints the findings of one file not printed yet: a line matched by one rule through several
// routes is one finding (the first route's: its source and path fields).
class FindingPrinter {
 public:
  FindingPrinter(std::ostream& out, ReplayOutput format) : out_(out), format_(format) {}
  void start_file() { seen_.clear(); }
  size_t print(const std::vector<Finding>& findings) {
    size_t printed = 0;
    for (const auto& f : findings) {
      if (!seen_.emplace(f.rule, f.line, f.offset, f.device).second) continue;
      ++printed;
      if (format_ == ReplayOutput::Json) {
        out_ << dump_json(to_json(f)) << '\n';
        continue;
      }
      out_ << terminal_safe(f.file) << ':' << f.line << ": " << f.rule << ' ' << to_string(f.level)
           << (f.code.empty() ? "" : " code " + f.code)
           << (f.device.empty() ? "" : " device " + terminal_safe(f.device))
           << (f.recovery ? " (recovery)" : "") << "\n    " << terminal_safe(f.text) << '\n';
    }
    return printed;
  }

 private:
  std::ostream& out_;
  const ReplayOutput format_;
  std::set<std::tuple<std::string, uint64_t, uint64_t, std::string>> seen_;
};

// Feeds one file to one route through the file source's own line splitting and the daemon's
// Matcher. A file's lines are one stream: its multi-line progress and detector series stay in
// this Matcher.
bool replay_one(const Config& config, const std::string& path, const Route& route,
                ReplaySummary& sum, FindingPrinter& printer, std::ostream& err) {
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
        Chunk c = p.chunk();
        c.source = route.source;
        c.source_type = route.source_type;
        c.path = path;
        c.path_fields = &route.path_fields;
        const TimePoint now = SystemClock::now();
        c.noticed = now;
        findings.clear();
        matcher.match(c, now, findings);
        sum.findings += printer.print(findings);
        sum.lines += p.lines();
        sum.bytes += p.end_offset - p.start_offset;
      });
  ::close(fd);
  // The end of the file: the findings still waiting for the lines after them are settled.
  sum.findings += printer.print(matcher.flush());
  if (error != 0) {
    err << "faultd: " << path << ": " << std::strerror(error) << '\n';
    return false;
  }
  return true;
}

// The command line a saved output starts with, if it does ("$ npu-smi info -t health -i 0 -c 0"),
// with the device and chip its flags name.
struct CommandLine {
  size_t length = 0;  // bytes of the line, newline included; 0 when there is none
  std::string device;
  std::string chip;
};

CommandLine leading_command(std::string_view output) {
  CommandLine c;
  const size_t nl = output.find('\n');
  const std::string_view line = output.substr(0, nl);
  const bool command = line.find("npu-smi ") != std::string_view::npos ||
                       line.find("nvidia-smi") != std::string_view::npos ||
                       line.find("kubectl ") != std::string_view::npos;
  if (!command || line.find(':') != std::string_view::npos) return c;  // output, not a command
  c.length = nl == std::string_view::npos ? output.size() : nl + 1;
  std::vector<std::string_view> words;
  for (size_t at = 0; at < line.size();) {
    const size_t end = std::min(line.find_first_of(" \t", at), line.size());
    if (end > at) words.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-i") c.device = std::string(words[i + 1]);
    if (words[i] == "-c") c.chip = std::string(words[i + 1]);
  }
  return c;
}

}  // namespace

ReplaySummary replay_files(const Config& config, const std::vector<std::string>& files,
                           std::ostream& out, std::ostream& err, ReplayOutput format) {
  ReplaySummary sum;
  FindingPrinter printer(out, format);
  const auto start = std::chrono::steady_clock::now();
  for (const auto& path : files) {
    ++sum.files;
    bool ok = true;
    printer.start_file();
    for (const auto& route : routes_for(config, path)) {
      ok = replay_one(config, path, route, sum, printer, err) && ok;
    }
    if (!ok) ++sum.unreadable;
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sum;
}

std::optional<Config> rules_only_config(const std::vector<std::string>& rule_files,
                                        ErrorList& errors) {
  Config config;
  config.include.clear();
  std::vector<RuleSpec> specs;
  for (const auto& file : rule_files) {
    load_rule_file(file, specs, errors);
    config.rule_files.push_back(file);
  }
  CodeLevels levels;
  levels.default_level = config.policy.default_level;
  config.rules = RuleSet::build(std::move(specs), std::move(levels), errors);
  if (!errors.empty() || !config.rules) return std::nullopt;
  return config;
}

ReplaySummary replay_outputs(const Config& config, CommandParser parser,
                             const std::vector<std::string>& files, std::ostream& out,
                             std::ostream& err) {
  constexpr size_t kMaxOutputBytes = size_t{16} << 20;  // far above any real command's output
  ReplaySummary sum;
  const auto start = std::chrono::steady_clock::now();
  Matcher matcher;
  matcher.configure(config.rules);
  const std::string source = "replay-" + std::string(to_string(parser));
  for (const auto& path : files) {
    ++sum.files;
    std::ifstream in(path, std::ios::binary);
    std::string output(kMaxOutputBytes + 1, '\0');
    in.read(output.data(), static_cast<std::streamsize>(output.size()));
    output.resize(static_cast<size_t>(in.gcount()));
    if (in.bad() || (!in.eof() && !in)) {
      err << "faultd: " << path << ": cannot read\n";
      ++sum.unreadable;
      continue;
    }
    if (output.size() > kMaxOutputBytes) {
      err << "faultd: " << path << ": more than " << kMaxOutputBytes
          << " bytes: not a command's output\n";
      ++sum.unreadable;
      continue;
    }
    sum.bytes += output.size();
    // A capture often starts with the command that printed it: its -i/-c name the device.
    const CommandLine command = leading_command(output);
    std::string error;
    const auto observation = observe(parser, std::string_view(output).substr(command.length),
                                     command.device, command.chip, error);
    std::vector<std::string> lines;
    std::string_view source_type = "command";  // the records a command source would write
    if (!observation) {
      // Not the parser's output (or cut off): said, and its own lines go to the rules, as a
      // failed poll's output does (collectors/command/records.hpp: the tool's error message,
      // "GPU is lost", is a fault report).
      err << "faultd: " << path << ": not " << to_string(parser) << " output: " << error << '\n';
      ++sum.garbled;
      lines = failed_output_lines(std::string_view(output).substr(command.length));
      source_type = "command_output";
    } else {
      if (observation->truncated) {
        err << "faultd: " << path << ": " << error
            << ": the complete rows before the cut are read\n";
      }
      for (const auto& gpu : observation->gpus) lines.push_back(format_gpu_record(gpu));
      for (const auto& line :
           HealthTracker(std::string(record_prefix(parser))).diff(observation->health)) {
        lines.push_back(line);
      }
    }
    std::string data;
    for (const auto& line : lines) data += line + '\n';
    Chunk c;
    c.source = source;
    c.source_type = source_type;
    c.path = path;
    c.end_offset = data.size();
    c.first_line = 1;
    c.end_line = lines.size();
    c.data = data;
    const TimePoint now = SystemClock::now();
    c.noticed = now;
    std::vector<Finding> findings;
    matcher.match(c, now, findings);
    for (auto& f : matcher.flush()) findings.push_back(std::move(f));  // one output, complete
    for (const auto& f : findings) out << dump_json(to_json(f)) << '\n';
    sum.findings += findings.size();
    sum.lines += lines.size();
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sum;
}

}  // namespace faultd
