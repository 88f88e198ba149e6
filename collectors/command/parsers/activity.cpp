// Activity parsers; formats in activity.hpp.
#include "collectors/command/parsers/activity.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>

#include "collectors/command/parsers/text_util.hpp"

namespace faultd::command_parsers {

namespace {

using detail::split_lines;
using detail::trim;

// A non-negative decimal ("37", "161.2"), optionally followed by a unit ("37 %", "2048 MiB").
std::optional<double> number(std::string_view s) {
  s = trim(s);
  if (const size_t blank = s.find(' '); blank != std::string_view::npos) s = s.substr(0, blank);
  if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> counter(std::string_view s) {
  s = trim(s);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Memory figures are capped far beyond any device, so that no arithmetic overflows.
constexpr double kMaxMemoryMb = 1e9;

std::vector<std::string_view> split_on(std::string_view line, char sep) {
  std::vector<std::string_view> cells;
  while (true) {
    const size_t at = line.find(sep);
    cells.push_back(trim(line.substr(0, at)));
    if (at == std::string_view::npos) break;
    line.remove_prefix(at + 1);
  }
  return cells;
}

}  // namespace

std::optional<DeviceUsage> parse_npu_smi_usages(std::string_view output, std::string& error) {
  std::optional<double> utilization;
  // Per chip block, in order: capacity and rate pairs (HBM preferred, DDR otherwise).
  std::vector<double> hbm_capacity, hbm_rate, ddr_capacity, ddr_rate;
  for (const std::string_view raw : split_lines(output)) {
    const size_t colon = raw.find(':');
    if (colon == std::string_view::npos) {
      if (!trim(raw).empty()) {
        error = "not a 'Key : value' line: " + std::string(trim(raw).substr(0, 80));
        return std::nullopt;
      }
      continue;
    }
    const std::string_view key = trim(raw.substr(0, colon));
    const std::string_view value = trim(raw.substr(colon + 1));
    auto want = [&](std::vector<double>& into) -> bool {
      const auto v = number(value);
      if (!v) {
        if (value == "NA") return true;  // a figure this card does not have
        error = "'" + std::string(key) + "' is not a number: " + std::string(value.substr(0, 40));
        return false;
      }
      into.push_back(*v);
      return true;
    };
    bool ok = true;
    if (key == "Aicore Usage Rate(%)") {
      std::vector<double> v;
      ok = want(v);
      if (!v.empty()) utilization = std::max(utilization.value_or(0), std::min(v[0], 100.0));
    } else if (key == "HBM Capacity(MB)") {
      ok = want(hbm_capacity);
    } else if (key == "HBM Usage Rate(%)") {
      ok = want(hbm_rate);
    } else if (key == "DDR Capacity(MB)") {
      ok = want(ddr_capacity);
    } else if (key == "DDR Usage Rate(%)") {
      ok = want(ddr_rate);
    }
    if (!ok) return std::nullopt;
  }
  if (!utilization) {
    error = "no 'Aicore Usage Rate(%)' line";
    return std::nullopt;
  }
  auto used = [](const std::vector<double>& capacity, const std::vector<double>& rate) {
    double mb = 0;
    for (size_t i = 0; i < std::min(capacity.size(), rate.size()); ++i) {
      mb += std::min(capacity[i], kMaxMemoryMb) * std::min(rate[i], 100.0) / 100.0;
    }
    return mb;
  };
  double mb = used(hbm_capacity, hbm_rate);
  if (mb == 0) mb = used(ddr_capacity, ddr_rate);
  DeviceUsage usage;
  usage.utilization = *utilization;
  usage.memory_mb = static_cast<uint64_t>(std::llround(mb));
  return usage;
}

std::optional<std::vector<DeviceProcess>> parse_npu_smi_processes(std::string_view output,
                                                                  std::string& error) {
  std::vector<DeviceProcess> out;
  bool in_table = false;
  for (const std::string_view raw : split_lines(output)) {
    const std::string_view line = trim(raw);
    if (!in_table) {
      in_table = line.starts_with('|') && line.find("Process id") != std::string_view::npos &&
                 line.find("Process name") != std::string_view::npos;
      continue;
    }
    if (line.empty() || line.starts_with('+')) continue;  // rules between rows
    if (!line.starts_with('|') || !line.ends_with('|')) {
      error = "a line of the process table that is not a row: " + std::string(line.substr(0, 80));
      return std::nullopt;
    }
    if (line.find("No running processes found") != std::string_view::npos) continue;
    std::vector<std::string_view> cells = split_on(line.substr(1, line.size() - 2), '|');
    if (cells.size() < 4) {
      error = "a process row with " + std::to_string(cells.size()) + " cells";
      return std::nullopt;
    }
    const auto ids = detail::split_blanks(cells[0]);
    const auto pid = counter(cells[1]);
    const auto memory = number(cells[3]);
    if (ids.empty() || !detail::all_digits(ids[0]) || !pid || *pid == 0 ||
        *pid > static_cast<uint64_t>(INT32_MAX) || !memory) {
      error = "a garbled process row: " + std::string(line.substr(0, 80));
      return std::nullopt;
    }
    DeviceProcess p;
    p.device = std::string(ids[0]);
    p.pid = static_cast<int64_t>(*pid);
    p.name = std::string(cells[2].substr(0, 64));
    p.memory_mb = static_cast<uint64_t>(std::min(*memory, kMaxMemoryMb));
    out.push_back(std::move(p));
  }
  if (!in_table) {
    error = "no process table header ('Process id', 'Process name')";
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<DeviceUsage>> parse_nvidia_smi_activity(std::string_view output,
                                                                  std::string& error,
                                                                  std::string_view fields) {
  enum Column { Index, BusId, Utilization, Memory, Other };
  auto column_of = [](std::string_view name) {
    name = trim(name.substr(0, name.find(" [")));  // "memory.used [MiB]"
    if (name == "index") return Index;
    if (name == "pci.bus_id" || name == "gpu_bus_id") return BusId;
    if (name == "utilization.gpu") return Utilization;
    if (name == "memory.used") return Memory;
    return Other;
  };
  std::vector<Column> columns;
  for (const auto f : split_on(fields, ',')) columns.push_back(column_of(f));
  std::vector<DeviceUsage> out;
  bool first = true;
  for (const std::string_view raw : split_lines(output)) {
    if (trim(raw).empty()) continue;
    const auto cells = split_on(raw, ',');
    if (first && column_of(cells[0]) != Other) {  // a header line names the columns
      columns.clear();
      for (const auto c : cells) columns.push_back(column_of(c));
      first = false;
      continue;
    }
    first = false;
    if (cells.size() != columns.size()) {
      error = "a line with " + std::to_string(cells.size()) + " cells for " +
              std::to_string(columns.size()) + " fields";
      return std::nullopt;
    }
    DeviceUsage u;
    bool has_index = false, has_util = false, has_memory = false;
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string_view cell = cells[i];
      switch (columns[i]) {
        case Index:
          if (!detail::all_digits(cell) || cell.empty() || cell.size() > 4) {
            error = "a GPU index that is not a number: " + std::string(cell.substr(0, 40));
            return std::nullopt;
          }
          u.device = std::string(cell);
          has_index = true;
          break;
        case BusId:
          u.bus_id = std::string(cell.substr(0, 32));
          break;
        case Utilization:
          if (const auto v = number(cell)) {
            u.utilization = std::min(*v, 100.0);
            has_util = true;
          }
          break;
        case Memory:
          if (const auto v = number(cell)) {
            u.memory_mb = static_cast<uint64_t>(std::min(*v, kMaxMemoryMb));
            has_memory = true;
          }
          break;
        case Other:
          break;
      }
    }
    if (!has_index) {
      error = "no index column";
      return std::nullopt;
    }
    // "[N/A]" or "[Not Supported]": the GPU says nothing of its activity; it is not idle.
    if (has_util && has_memory) out.push_back(std::move(u));
  }
  return out;
}

std::optional<std::vector<DeviceProcess>> parse_nvidia_smi_apps(std::string_view output,
                                                                std::string& error) {
  std::vector<DeviceProcess> out;
  bool first = true;
  for (const std::string_view raw : split_lines(output)) {
    if (trim(raw).empty()) continue;
    const auto cells = split_on(raw, ',');
    if (first && !cells.empty() && (cells[0] == "gpu_bus_id" || cells[0] == "pci.bus_id")) {
      first = false;
      continue;
    }
    first = false;
    if (cells.size() != 3) {
      error = "a line with " + std::to_string(cells.size()) + " cells, not 3";
      return std::nullopt;
    }
    const auto pid = counter(cells[1]);
    if (cells[0].find(':') == std::string_view::npos || !pid || *pid == 0 ||
        *pid > static_cast<uint64_t>(INT32_MAX)) {
      error = "a garbled process line: " + std::string(trim(raw).substr(0, 80));
      return std::nullopt;
    }
    DeviceProcess p;
    p.bus_id = std::string(cells[0].substr(0, 32));
    p.pid = static_cast<int64_t>(*pid);
    if (const auto m = number(cells[2]))
      p.memory_mb = static_cast<uint64_t>(std::min(*m, kMaxMemoryMb));
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<uint64_t> parse_hccn_stat_packets(std::string_view output, std::string& error) {
  std::map<std::string, uint64_t, std::less<>> counters;
  for (const std::string_view raw : split_lines(output)) {
    const size_t colon = raw.find(':');
    if (colon == std::string_view::npos) continue;  // headings, blank lines
    const auto v = counter(raw.substr(colon + 1));
    if (v) counters[std::string(trim(raw.substr(0, colon)))] = *v;
  }
  auto pair = [&](std::string_view tx, std::string_view rx) -> std::optional<uint64_t> {
    const auto t = counters.find(tx);
    const auto r = counters.find(rx);
    if (t == counters.end() || r == counters.end()) return std::nullopt;
    // Saturating: two counters near the top of u64 do not wrap into a small figure.
    return t->second > UINT64_MAX - r->second ? UINT64_MAX : t->second + r->second;
  };
  if (auto p = pair("roce_tx_all_pkt_num", "roce_rx_all_pkt_num")) return *p;
  if (auto p = pair("mac_tx_total_pkt_num", "mac_rx_total_pkt_num")) return *p;
  error = "no packet counters (roce_tx_all_pkt_num/roce_rx_all_pkt_num)";
  return std::nullopt;
}

}  // namespace faultd::command_parsers
