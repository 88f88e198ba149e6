#include "daemon/state/inventory.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace faultd {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The Device Plugin's resource family for an npu-smi model name ("910B3", "Ascend910",
// "310P3"): the prefix of its device names, "Ascend910-3".
std::string ascend_family(std::string_view model) {
  if (model.find("310P") != std::string_view::npos) return "Ascend310P";
  if (model.find("310") != std::string_view::npos) return "Ascend310";
  return "Ascend910";
}

void add_unique(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(value);
    std::sort(list.begin(), list.end());
  }
}

bool remove_value(std::vector<std::string>& list, std::string_view value) {
  const auto it = std::find(list.begin(), list.end(), value);
  if (it == list.end()) return false;
  list.erase(it);
  return true;
}

// A discovery's facts about a device win over what was stored; what it does not say is kept.
void take_facts(InventoryDevice& d, const InventoryDevice& seen) {
  for (auto field :
       {&InventoryDevice::vendor, &InventoryDevice::model, &InventoryDevice::serial,
        &InventoryDevice::bus_id, &InventoryDevice::uuid, &InventoryDevice::physical_id,
        &InventoryDevice::card, &InventoryDevice::chip}) {
    if (!(seen.*field).empty()) d.*field = seen.*field;
  }
}

}  // namespace

std::string normalize_bdf(std::string_view text) {
  if (text.size() > 4 && lower(text.substr(0, 4)) == "pci:") text.remove_prefix(4);
  // [domain:]bus:device[.function]
  std::string_view function = "0";
  if (const size_t dot = text.rfind('.'); dot != std::string_view::npos) {
    function = text.substr(dot + 1);
    text = text.substr(0, dot);
  }
  std::vector<std::string_view> parts;
  while (true) {
    const size_t colon = text.find(':');
    parts.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  if (parts.size() != 3 || function.size() != 1 || !is_hex(function) || function[0] > '7') {
    return "";
  }
  const auto fixed = [](std::string_view part, size_t width) -> std::string {
    if (!is_hex(part)) return "";
    const size_t first = std::min(part.find_first_not_of('0'), part.size() - 1);
    const std::string_view digits = part.substr(first);
    if (digits.size() > width) return "";
    return std::string(width - digits.size(), '0') + lower(digits);
  };
  const std::string domain = fixed(parts[0], 4);
  const std::string bus = fixed(parts[1], 2);
  const std::string device = fixed(parts[2], 2);
  if (domain.empty() || bus.empty() || device.empty() || parts[2].size() > 2 ||
      parts[1].size() > 2) {
    return "";
  }
  return domain + ":" + bus + ":" + device + "." + std::string(function);
}

std::vector<std::string> device_aliases(const InventoryDevice& d) {
  std::vector<std::string> out;
  if (d.vendor == "ascend") {
    if (!d.card.empty() && !d.chip.empty()) out.push_back(d.card + "-" + d.chip);
    out.push_back(ascend_family(d.model) + "-" + (d.physical_id.empty() ? d.id : d.physical_id));
    out.push_back("davinci" + d.id);
    out.push_back("npu:" + d.id);
  } else if (d.vendor == "nvidia") {
    out.push_back("nvidia" + d.id);
    out.push_back("cuda:" + d.id);
  }
  if (!d.bus_id.empty()) out.push_back(d.bus_id);
  if (!d.uuid.empty()) out.push_back(d.uuid);
  if (!d.serial.empty()) out.push_back(d.serial);
  return out;
}

void Inventory::load(std::vector<InventoryDevice> devices) {
  devices_.clear();
  for (auto& d : devices) devices_.emplace(d.id, std::move(d));
  index();
}

// Aliases are matched without case (UUIDs, bus ids and names are printed both ways); a bus id
// in any width. An alias that is another device's canonical id, or names two devices, is dropped:
// a name must never move a finding to the wrong device.
void Inventory::index() {
  aliases_.clear();
  std::set<std::string> ambiguous;
  for (const auto& [id, d] : devices_) {
    for (const auto& alias : device_aliases(d)) {
      const std::string bdf = normalize_bdf(alias);
      const std::string key = bdf.empty() ? lower(alias) : bdf;
      if (devices_.count(alias) != 0 && alias != id) continue;
      const auto [it, inserted] = aliases_.emplace(key, id);
      if (!inserted && it->second != id) ambiguous.insert(key);
    }
  }
  for (const auto& key : ambiguous) aliases_.erase(key);
}

InventoryChange Inventory::merge(const Discovery& discovery, TimePoint now) {
  InventoryChange change;
  std::set<std::string> listed;
  for (const auto& seen : discovery.devices) {
    if (seen.id.empty() || !listed.insert(seen.id).second) continue;
    auto it = devices_.find(seen.id);
    if (it == devices_.end()) {
      InventoryDevice d = seen;
      d.seen_by = {discovery.by};
      d.missing_from.clear();
      d.first_seen = d.last_seen = now;
      change.added.push_back(d.id);
      change.changed.push_back(d);
      devices_.emplace(d.id, std::move(d));
      continue;
    }
    InventoryDevice& d = it->second;
    const InventoryDevice before = d;
    take_facts(d, seen);
    add_unique(d.seen_by, discovery.by);
    if (remove_value(d.missing_from, discovery.by) && d.present()) change.returned.push_back(d.id);
    d.last_seen = now;
    if (!(d == before)) change.changed.push_back(d);
  }
  for (auto it = devices_.begin(); it != devices_.end();) {
    InventoryDevice& d = it->second;
    const bool listed_before =
        std::find(d.seen_by.begin(), d.seen_by.end(), discovery.by) != d.seen_by.end();
    if (!listed_before || listed.count(d.id) != 0) {
      ++it;
      continue;
    }
    if (discovery.by == kConfigDiscoverer) {
      remove_value(d.seen_by, discovery.by);
      if (d.seen_by.empty()) {
        change.removed.push_back(d.id);
        it = devices_.erase(it);
        continue;
      }
      change.changed.push_back(d);
    } else if (std::find(d.missing_from.begin(), d.missing_from.end(), discovery.by) ==
               d.missing_from.end()) {
      const bool was_present = d.present();
      add_unique(d.missing_from, discovery.by);
      if (was_present) change.lost.push_back(d.id);
      change.changed.push_back(d);
    }
    ++it;
  }
  index();
  return change;
}

std::optional<std::string> Inventory::resolve(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  if (const auto it = devices_.find(std::string(name)); it != devices_.end()) return it->first;
  const std::string bdf = normalize_bdf(name);
  const auto it = aliases_.find(bdf.empty() ? lower(name) : bdf);
  if (it == aliases_.end()) return std::nullopt;
  return it->second;
}

int Inventory::expected() const {
  return expected_config_ > 0 ? expected_config_ : static_cast<int>(devices_.size());
}

int Inventory::present() const {
  return static_cast<int>(std::count_if(devices_.begin(), devices_.end(),
                                        [](const auto& kv) { return kv.second.present(); }));
}

const InventoryDevice* Inventory::find(const std::string& id) const {
  const auto it = devices_.find(id);
  return it == devices_.end() ? nullptr : &it->second;
}

}  // namespace faultd
