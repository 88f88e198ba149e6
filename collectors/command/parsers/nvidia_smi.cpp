// nvidia-smi's GPU index ↔ PCI bus id query; format in the header.
#include "collectors/command/parsers/parsers.hpp"
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

std::optional<std::vector<GpuBus>> parse_nvidia_smi_bus(std::string_view output,
                                                        std::string& error) {
  std::vector<GpuBus> gpus;
  for (const std::string_view raw : detail::split_lines(output)) {
    const std::string_view line = detail::trim(raw);
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    if (comma == std::string_view::npos) {
      error = "expected 'index, bus_id': " + std::string(line.substr(0, 80));
      return std::nullopt;
    }
    const std::string_view index = detail::trim(line.substr(0, comma));
    const std::string_view bus = detail::trim(line.substr(comma + 1));
    if (!detail::all_digits(index) || index.size() > 4 || !is_bus_id(bus)) {
      error = "expected 'index, bus_id': " + std::string(line.substr(0, 80));
      return std::nullopt;
    }
    gpus.push_back({std::string(index), std::string(bus)});
  }
  if (gpus.empty()) {
    error = "no GPU listed";
    return std::nullopt;
  }
  return gpus;
}

}  // namespace faultd::command_parsers
