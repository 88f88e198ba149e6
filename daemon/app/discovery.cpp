#include "daemon/app/discovery.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "daemon/core/child_process.hpp"

namespace faultd {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 6 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

}  // namespace

std::optional<DiscovererCommand> discoverer_command(const std::vector<std::string>& argv,
                                                    std::string& error) {
  if (argv.empty()) {
    error = "no program";
    return std::nullopt;
  }
  auto program = resolve_executable(argv.front(), kChildPath);
  if (!program) {
    error = argv.front() + ": not found in " + std::string(kChildPath);
    return std::nullopt;
  }
  DiscovererCommand cmd{argv, {{"PATH", std::string(kChildPath)}}};
  cmd.argv.front() = std::move(*program);
  return cmd;
}

Discovery discovery_from_npu_smi(const std::vector<command_parsers::DeviceHealth>& table) {
  std::set<std::string> cards;
  for (const auto& row : table) cards.insert(row.device);
  const bool one_chip_per_card = cards.size() == table.size();
  Discovery d{std::string(kNpuSmiDiscoverer), {}};
  for (size_t i = 0; i < table.size(); ++i) {
    const auto& row = table[i];
    InventoryDevice dev;
    dev.id = !row.logical_id.empty()    ? row.logical_id
             : !row.physical_id.empty() ? row.physical_id
             : one_chip_per_card        ? row.device
                                        : std::to_string(i);
    dev.vendor = "ascend";
    dev.model = row.name;
    dev.bus_id = row.bus_id;
    dev.physical_id = row.physical_id;
    dev.card = row.device;
    dev.chip = row.chip;
    d.devices.push_back(std::move(dev));
  }
  return d;
}

Discovery discovery_from_nvidia_smi(const std::vector<command_parsers::GpuInfo>& gpus) {
  Discovery d{std::string(kNvidiaSmiDiscoverer), {}};
  for (const auto& gpu : gpus) {
    InventoryDevice dev;
    dev.id = gpu.index;
    dev.vendor = "nvidia";
    dev.model = gpu.name;
    dev.bus_id = gpu.bus_id;
    dev.uuid = gpu.uuid;
    dev.serial = gpu.serial;
    d.devices.push_back(std::move(dev));
  }
  return d;
}

Discovery discovery_from_dev(const std::string& dev_dir) {
  Discovery d{std::string(kDevDiscoverer), {}};
  for (const auto& entry : std::filesystem::directory_iterator(dev_dir)) {
    const std::string name = entry.path().filename().string();
    for (const auto& [prefix, vendor] :
         {std::pair<std::string_view, std::string_view>{"davinci", "ascend"},
          {"nvidia", "nvidia"}}) {
      if (name.size() > prefix.size() && name.starts_with(prefix) &&
          all_digits(std::string_view(name).substr(prefix.size()))) {
        InventoryDevice dev;
        dev.id = name.substr(prefix.size());
        dev.vendor = vendor;
        d.devices.push_back(std::move(dev));
      }
    }
  }
  std::sort(d.devices.begin(), d.devices.end(),
            [](const auto& a, const auto& b) { return std::stoi(a.id) < std::stoi(b.id); });
  return d;
}

Discovery discovery_from_config(const std::vector<std::string>& ids) {
  Discovery d{std::string(kConfigDiscoverer), {}};
  for (const auto& id : ids) {
    InventoryDevice dev;
    dev.id = id;
    d.devices.push_back(std::move(dev));
  }
  return d;
}

}  // namespace faultd
