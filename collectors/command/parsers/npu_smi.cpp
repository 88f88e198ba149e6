// npu-smi output parsers; formats in docs/log-formats.md §5 and the header.
#include <algorithm>

#include "collectors/command/parsers/parsers.hpp"
#include "collectors/command/parsers/text_util.hpp"
#include "daemon/core/fault_code.hpp"

namespace faultd::command_parsers {

using detail::all_digits;
using detail::split_blanks;
using detail::split_lines;
using detail::trim;

namespace {

// "NA" is what npu-smi prints for "nothing".
bool is_na(std::string_view v) { return v == "NA" || v.empty(); }

}  // namespace

std::optional<DeviceHealth> parse_npu_smi_health(std::string_view output, std::string& error) {
  // npu-smi ends every line with a newline. Output cut inside its last line ("Error Code :
  // 8081" of 80818C00, when the tool was killed or its pipe closed) would otherwise be read
  // as a complete, wrong answer.
  if (!output.empty() && output.back() != '\n') {
    error = "last line has no newline (truncated output?)";
    return std::nullopt;
  }
  DeviceHealth health;
  bool have_status = false;
  bool have_codes = false;
  bool in_information = false;
  for (const std::string_view raw : split_lines(output)) {
    const std::string_view line = trim(raw);
    if (line.empty()) continue;  // blank separators between Error Information pieces
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      error = "unexpected line without ':'";
      return std::nullopt;
    }
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key.empty()) {  // continuation of Error Information: blank padding, then ": text"
      if (!in_information) {
        error = "continuation line outside Error Information";
        return std::nullopt;
      }
      if (!is_na(value)) health.info.emplace_back(value);
      continue;
    }
    in_information = false;
    if (key == "Health Status") {
      if (value.empty()) {
        error = "empty Health Status";
        return std::nullopt;
      }
      health.status = std::string(value);
      have_status = true;
    } else if (key == "Error Code") {
      have_codes = true;
      if (is_na(value)) continue;
      for (const std::string_view token : split_blanks(value)) {
        std::string code = hex_code(token);
        if (code.empty()) {
          error = "error code is not hex: " + std::string(token.substr(0, 32));
          return std::nullopt;
        }
        health.codes.push_back(std::move(code));
      }
    } else if (key == "Error Information") {
      in_information = true;
      if (!is_na(value)) health.info.emplace_back(value);
    }
    // Other keys (newer npu-smi versions) are not needed and not an error.
  }
  if (!have_status) {
    error = "no Health Status line";
    return std::nullopt;
  }
  if (!have_codes) {
    error = "no Error Code line (truncated output?)";
    return std::nullopt;
  }
  return health;
}

namespace {

// The cells between '|' of a table row, trimmed; empty if the line is not a row.
std::vector<std::string_view> row_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  line = trim(line);
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return cells;
  line = line.substr(1, line.size() - 2);
  while (true) {
    const size_t bar = line.find('|');
    cells.push_back(trim(line.substr(0, bar)));
    if (bar == std::string_view::npos) break;
    line.remove_prefix(bar + 1);
  }
  return cells;
}

bool looks_like_bus_id(std::string_view s) {
  return s.find(':') != std::string_view::npos && s.find('.') != std::string_view::npos;
}

}  // namespace

std::optional<std::vector<DeviceHealth>> parse_npu_smi_info(std::string_view output,
                                                            std::string& error, bool* truncated) {
  std::vector<DeviceHealth> table;
  bool have_header = false;
  bool phy_id_layout = false;           // "Chip  Phy-ID"
  bool device_id_layout = false;        // "Chip  Device"
  std::optional<DeviceHealth> pending;  // first row of a pair, waiting for its chip row
  for (const std::string_view line : split_lines(output)) {
    const std::vector<std::string_view> cells = row_cells(line);
    if (cells.empty()) continue;  // borders (+---+, +===+) and anything outside the table
    const std::vector<std::string_view> first = split_blanks(cells[0]);
    if (first.empty()) continue;
    if (first[0] == "NPU" && first.size() >= 2 && first[1] == "Name") {
      have_header = true;
      continue;
    }
    if (first[0] == "Chip") {
      phy_id_layout = first.size() >= 2 && first[1] == "Phy-ID";
      device_id_layout = first.size() >= 2 && first[1] == "Device";
      continue;
    }
    // The process section ("| NPU  Chip  | Process id | ...", "No running processes found")
    // ends the device table.
    if (first[0] == "No" || (cells.size() >= 2 && cells[1].starts_with("Process"))) break;
    if (!have_header || !all_digits(first[0]) || cells.size() < 3) continue;
    if (!pending) {
      if (first.size() < 2 || cells[1].empty() || looks_like_bus_id(cells[1])) {
        error = "device row without name or health: " + std::string(trim(line).substr(0, 80));
        return std::nullopt;
      }
      DeviceHealth row;
      row.device = std::string(first[0]);
      row.name = std::string(first[1]);
      row.status = std::string(cells[1]);
      pending = std::move(row);
    } else {
      const bool two_ids = phy_id_layout || device_id_layout;
      if (!looks_like_bus_id(cells[1]) || first.size() != (two_ids ? 2u : 1u) ||
          (two_ids && !all_digits(first[1]))) {
        error = "chip row expected after NPU " + pending->device + "'s row";
        return std::nullopt;
      }
      pending->chip = std::string(first[0]);
      pending->bus_id = std::string(cells[1]);
      if (phy_id_layout) pending->physical_id = std::string(first[1]);
      if (device_id_layout) pending->logical_id = std::string(first[1]);
      table.push_back(std::move(*pending));
      pending.reset();
    }
  }
  if (!have_header) {
    error = "no 'NPU Name Health' header";
    return std::nullopt;
  }
  if (pending) {
    error = "NPU " + pending->device + "'s row has no chip row (truncated output?)";
    if (truncated == nullptr || table.empty()) return std::nullopt;
    *truncated = true;
  }
  return table;
}

std::vector<std::string> npu_ids(const std::vector<DeviceHealth>& table) {
  std::vector<std::string> ids;
  for (const DeviceHealth& row : table) {
    if (std::find(ids.begin(), ids.end(), row.device) == ids.end()) ids.push_back(row.device);
  }
  return ids;
}

}  // namespace faultd::command_parsers
