// nvidia-smi -q: the GPUs' memory-error state; format in parsers.hpp.
#include <cctype>

#include "collectors/command/parsers/parsers.hpp"
#include "collectors/command/parsers/text_util.hpp"

namespace faultd::command_parsers {

namespace {

// "00000000:10:1C.0": domain:bus:device.function, hex.
bool is_bus_id(std::string_view s) {
  if (s.size() < 7 || s.size() > 32 || s.find(':') == std::string_view::npos ||
      s.find('.') == std::string_view::npos) {
    return false;
  }
  for (const char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  }
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

size_t indent_of(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == ' ') ++n;
  return n;
}

void add_code(DeviceHealth& gpu, std::string_view code, std::string info) {
  for (const auto& c : gpu.codes) {
    if (c == code) return;
  }
  gpu.codes.emplace_back(code);
  gpu.info.push_back(std::move(info));
}

// One GPU's report, read section by section: the sections a line is in are the headers above
// it at smaller indentation ("ECC Errors" > "Volatile" > "SRAM Uncorrectable : 1").
class GpuReader {
 public:
  explicit GpuReader(DeviceHealth& gpu) : gpu_(gpu) {}

  void line(size_t indent, std::string_view text) {
    while (!sections_.empty() && sections_.back().first >= indent) sections_.pop_back();
    const size_t colon = text.find(" : ");
    if (colon == std::string_view::npos) {
      sections_.emplace_back(indent, detail::trim(text));
      return;
    }
    value(detail::trim(text.substr(0, colon)), detail::trim(text.substr(colon + 3)));
  }

 private:
  bool in(std::string_view section) const {
    for (const auto& s : sections_) {
      if (iequals(s.second, section)) return true;
    }
    return false;
  }

  void value(std::string_view key, std::string_view v) {
    const bool yes = iequals(v, "Yes");
    if (in("ECC Errors")) {
      // Current drivers: "SRAM Uncorrectable", "DRAM Uncorrectable"; older ones count under
      // "Double Bit" with a "Total" line.
      const bool uncorrectable = key.find("Uncorrectable") != std::string_view::npos ||
                                 (in("Double Bit") && iequals(key, "Total"));
      if (uncorrectable && !v.empty() && detail::all_digits(v) &&
          v.find_first_not_of('0') != std::string_view::npos) {
        const bool vol = in("Volatile");
        add_code(gpu_, vol ? "VOLATILE_UNCORRECTABLE_ECC" : "AGGREGATE_UNCORRECTABLE_ECC",
                 std::string(vol ? "volatile " : "aggregate ") + std::string(key) + " " +
                     std::string(v));
      }
    } else if (in("Retired Pages")) {
      if (yes && key.starts_with("Pending")) {
        add_code(gpu_, "RETIRED_PAGES_PENDING", std::string(key) + " Yes");
      }
    } else if (in("Remapped Rows")) {
      if (yes && iequals(key, "Pending")) {
        add_code(gpu_, "REMAPPED_ROWS_PENDING", "remapped rows pending");
      } else if (yes && iequals(key, "Remapping Failure Occurred")) {
        add_code(gpu_, "ROW_REMAPPING_FAILURE", "row remapping failure occurred");
      }
    } else if (in("GPU Reset Status")) {
      if (yes && iequals(key, "Reset Required")) add_code(gpu_, "RESET_REQUIRED", "reset required");
    }
  }

  DeviceHealth& gpu_;
  std::vector<std::pair<size_t, std::string_view>> sections_;
};

}  // namespace

std::optional<std::vector<DeviceHealth>> parse_nvidia_smi_query(std::string_view output,
                                                                std::string& error) {
  std::vector<DeviceHealth> gpus;
  std::optional<GpuReader> reader;
  for (const std::string_view raw : detail::split_lines(output)) {
    const std::string_view text = detail::trim(raw);
    if (text.empty()) continue;
    const size_t indent = indent_of(raw);
    if (indent == 0 && text.starts_with("GPU ")) {
      const std::string_view bus = detail::trim(text.substr(4));
      if (!is_bus_id(bus)) {
        error = "not a GPU's bus id: " + std::string(text.substr(0, 80));
        return std::nullopt;
      }
      reader.reset();  // it refers to the GPU before, which may move when this one is added
      gpus.emplace_back().device = std::string(bus);
      reader.emplace(gpus.back());
      continue;
    }
    if (reader && indent > 0) reader->line(indent, text);
  }
  if (gpus.empty()) {
    error = "no GPU listed";
    return std::nullopt;
  }
  for (DeviceHealth& gpu : gpus) gpu.status = gpu.codes.empty() ? "OK" : "Error";
  return gpus;
}

}  // namespace faultd::command_parsers
