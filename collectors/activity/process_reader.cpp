#include "collectors/activity/process_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <vector>

namespace faultd {

std::optional<ProcessSample> parse_proc_stat(std::string_view stat) {
  const size_t paren = stat.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;  // from field 3 (state) on
  std::string_view rest = stat.substr(paren + 1);
  while (!rest.empty() && fields.size() < 16) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  // state(3) ppid(4) pgrp(5) session(6) ... utime(14) stime(15)
  if (fields.size() < 13 || fields[0].size() != 1) return std::nullopt;
  auto number = [](std::string_view s, auto& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
  };
  ProcessSample p;
  p.state = fields[0][0];
  uint64_t utime = 0, stime = 0;
  if (!number(fields[3], p.session) || !number(fields[11], utime) || !number(fields[12], stime)) {
    return std::nullopt;
  }
  p.cpu_ticks = utime + stime;
  return p;
}

ProcfsReader::ProcfsReader(std::string root) : root_(std::move(root)) {
  const long t = sysconf(_SC_CLK_TCK);
  ticks_ = t > 0 ? static_cast<double>(t) : 100.0;
}

std::optional<ProcessSample> ProcfsReader::read(int64_t pid) const {
  if (pid <= 0) return std::nullopt;
  const std::string dir = root_ + "/" + std::to_string(pid);
  std::ifstream stat_file(dir + "/stat");
  if (!stat_file) return std::nullopt;
  std::string stat;
  std::getline(stat_file, stat);
  auto sample = parse_proc_stat(stat);
  if (!sample) return std::nullopt;
  std::ifstream wchan_file(dir + "/wchan");
  if (wchan_file) {
    std::getline(wchan_file, sample->wchan);
    if (sample->wchan == "0") sample->wchan.clear();  // running, or hidden from this reader
    sample->wchan.resize(std::min<size_t>(sample->wchan.size(), 64));
  }
  return sample;
}

}  // namespace faultd
