// The Ascend Device Plugin's DeviceInfoCfg ConfigMap; format in the header and in
// docs/log-formats.md §6.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "collectors/command/parsers/parsers.hpp"
#include "collectors/command/parsers/text_util.hpp"
#include "daemon/core/fault_code.hpp"

namespace faultd::command_parsers {

namespace {

using nlohmann::json;

// "Ascend910-3" → "3"; empty when the name does not end in -<digits>.
std::string device_of(std::string_view npu_name) {
  const size_t dash = npu_name.rfind('-');
  if (dash == std::string_view::npos) return {};
  const std::string_view id = npu_name.substr(dash + 1);
  // Device numbers are small; a longer digit run is garbage (and would overflow an int).
  return detail::all_digits(id) && id.size() <= 6 ? std::string(id) : std::string();
}

// The Device Plugin writes nested JSON as strings; kubectl output holds DeviceInfoCfg as one.
std::optional<json> as_object(const json& value) {
  if (value.is_object() || value.is_array()) return value;
  if (!value.is_string()) return std::nullopt;
  json parsed = json::parse(value.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

DeviceHealth& entry_for(std::map<int, DeviceHealth>& by_device, const std::string& device) {
  DeviceHealth& h = by_device[std::stoi(device)];
  if (h.device.empty()) {
    h.device = device;
    h.status = "OK";
  }
  return h;
}

}  // namespace

std::optional<std::vector<DeviceHealth>> parse_deviceinfo_cm(std::string_view output,
                                                             std::string& error) {
  json doc = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "not a JSON object";
    return std::nullopt;
  }
  if (doc.contains("data")) {  // kubectl get cm -o json
    const json& data = doc["data"];
    if (!data.is_object() || !data.contains("DeviceInfoCfg")) {
      error = "ConfigMap has no data.DeviceInfoCfg";
      return std::nullopt;
    }
    auto cfg = as_object(data["DeviceInfoCfg"]);
    if (!cfg || !cfg->is_object()) {
      error = "data.DeviceInfoCfg is not JSON";
      return std::nullopt;
    }
    doc = std::move(*cfg);
  }
  if (!doc.contains("DeviceInfo") || !doc["DeviceInfo"].is_object() ||
      !doc["DeviceInfo"].contains("DeviceList") || !doc["DeviceInfo"]["DeviceList"].is_object()) {
    error = "no DeviceInfo.DeviceList";
    return std::nullopt;
  }
  const json& list = doc["DeviceInfo"]["DeviceList"];
  std::map<int, DeviceHealth> by_device;  // numeric order, whatever the JSON's order
  for (const auto& [key, value] : list.items()) {
    const bool is_fault_list = key.ends_with("-Fault");
    const bool is_device_list =
        key.starts_with("huawei.com/") && key.find('-') == std::string::npos;
    if (is_device_list && value.is_string()) {  // "Ascend910-0,Ascend910-1,..."
      std::string names = value.get<std::string>();
      std::replace(names.begin(), names.end(), ',', ' ');
      for (const std::string_view name : detail::split_blanks(names)) {
        if (const std::string id = device_of(name); !id.empty()) entry_for(by_device, id);
      }
      continue;
    }
    if (!is_fault_list) continue;
    const auto faults = as_object(value);
    if (!faults || !faults->is_array()) {
      error = key + " is not a JSON list";
      return std::nullopt;
    }
    for (const json& fault : *faults) {
      if (!fault.is_object() || !fault.contains("npu_name") || !fault["npu_name"].is_string()) {
        error = key + ": fault without npu_name";
        return std::nullopt;
      }
      const std::string id = device_of(fault["npu_name"].get<std::string>());
      if (id.empty()) {
        error = key + ": npu_name without a device number";
        return std::nullopt;
      }
      DeviceHealth& h = entry_for(by_device, id);
      h.status = "Fault";
      if (fault.contains("fault_level") && fault["fault_level"].is_string()) {
        h.fault_level = fault["fault_level"].get<std::string>();
      }
      if (fault.contains("fault_code") && fault["fault_code"].is_string()) {
        std::string codes = fault["fault_code"].get<std::string>();
        std::replace(codes.begin(), codes.end(), ',', ' ');
        for (const std::string_view token : detail::split_blanks(codes)) {
          std::string code = hex_code(token);
          if (code.empty()) {
            error = key + ": fault_code is not hex: " + std::string(token.substr(0, 32));
            return std::nullopt;
          }
          if (std::find(h.codes.begin(), h.codes.end(), code) == h.codes.end()) {
            h.codes.push_back(std::move(code));
          }
        }
      }
    }
  }
  std::vector<DeviceHealth> out;
  out.reserve(by_device.size());
  for (auto& [_, h] : by_device) out.push_back(std::move(h));
  return out;
}

}  // namespace faultd::command_parsers
