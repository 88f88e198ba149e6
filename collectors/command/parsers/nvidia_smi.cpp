// nvidia-smi's GPU index ↔ PCI bus id query; format in the header.
#include "collectors/command/parsers/parsers.hpp"

#include <algorithm>
#include "collectors/command/parsers/text_util.hpp"

namespace faultd::command_parsers {

namespace {

// "00000000:3B:00.0": domain:bus:device.function, hex.
bool is_bus_id(std::string_view s) {
  if (s.size() < 7 || s.size() > 32) return false;
  const size_t dot = s.rfind('.');
  if (dot == std::string_view::npos || s.find(':') == std::string_view::npos) return false;
  for (const char c : s) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != ':' && c != '.') return false;
  }
  return true;
}

}  // namespace

namespace {

// The columns of a query, by the field names nvidia-smi prints in its header ("pci.bus_id" or
// "gpu_bus_id" ...). Unknown fields are skipped.
enum class Column { Index, BusId, Uuid, Serial, Name, Other };

Column column_of(std::string_view field) {
  // The header may add units or a description in brackets ("memory.used [MiB]").
  field = detail::trim(field.substr(0, field.find(" [")));
  if (field == "index") return Column::Index;
  if (field == "pci.bus_id" || field == "gpu_bus_id") return Column::BusId;
  if (field == "uuid" || field == "gpu_uuid") return Column::Uuid;
  if (field == "serial" || field == "gpu_serial") return Column::Serial;
  if (field == "name" || field == "gpu_name") return Column::Name;
  return Column::Other;
}

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> cells;
  while (true) {
    const size_t comma = line.find(',');
    cells.push_back(detail::trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return cells;
}

std::string value_of(std::string_view cell) {
  if (cell.starts_with('[') && cell.ends_with(']')) return "";  // [N/A], [Not Supported]
  return std::string(cell);
}

}  // namespace

std::optional<std::vector<GpuInfo>> parse_nvidia_smi_gpus(std::string_view output,
                                                          std::string& error,
                                                          std::string_view fields) {
  std::vector<Column> columns;
  for (auto field = fields; !field.empty();) {
    const size_t comma = field.find(',');
    columns.push_back(column_of(detail::trim(field.substr(0, comma))));
    field = comma == std::string_view::npos ? "" : field.substr(comma + 1);
  }
  std::vector<GpuInfo> gpus;
  bool first_line = true;
  for (const std::string_view raw : detail::split_lines(output)) {
    const std::string_view line = detail::trim(raw);
    if (line.empty()) continue;
    const std::vector<std::string_view> cells = split_commas(line);
    if (first_line && std::any_of(cells.begin(), cells.end(), [](std::string_view c) {
          return column_of(c) != Column::Other;
        })) {
      columns.clear();
      for (const auto cell : cells) columns.push_back(column_of(cell));
      first_line = false;
      continue;
    }
    first_line = false;
    GpuInfo gpu;
    for (size_t i = 0; i < cells.size() && i < columns.size(); ++i) {
      switch (columns[i]) {
        case Column::Index:
          gpu.index = value_of(cells[i]);
          break;
        case Column::BusId:
          gpu.bus_id = value_of(cells[i]);
          break;
        case Column::Uuid:
          gpu.uuid = value_of(cells[i]);
          break;
        case Column::Serial:
          gpu.serial = value_of(cells[i]);
          break;
        case Column::Name:
          gpu.name = value_of(cells[i]);
          break;
        case Column::Other:
          break;
      }
    }
    const bool has_index =
        std::find(columns.begin(), columns.end(), Column::Index) != columns.end();
    const bool has_bus = std::find(columns.begin(), columns.end(), Column::BusId) != columns.end();
    if (cells.size() != columns.size() ||
        (has_index &&
         (gpu.index.empty() || gpu.index.size() > 4 || !detail::all_digits(gpu.index))) ||
        (has_bus && !is_bus_id(gpu.bus_id))) {
      error = "expected " + std::to_string(columns.size()) + " cells (" + std::string(fields) +
              "): " + std::string(line.substr(0, 80));
      return std::nullopt;
    }
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) {
    error = "no GPU listed";
    return std::nullopt;
  }
  return gpus;
}

std::optional<std::vector<GpuBus>> parse_nvidia_smi_bus(std::string_view output,
                                                        std::string& error) {
  auto gpus = parse_nvidia_smi_gpus(output, error, "index,pci.bus_id");
  if (!gpus) return std::nullopt;
  std::vector<GpuBus> out;
  for (auto& g : *gpus) out.push_back({std::move(g.index), std::move(g.bus_id)});
  return out;
}

}  // namespace faultd::command_parsers
