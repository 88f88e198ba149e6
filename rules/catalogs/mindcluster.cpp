#include "rules/catalogs/mindcluster.hpp"

#include <set>

#include "rules/catalogs/json_file.hpp"

namespace faultd {

CodeLevels load_mindcluster_fault_codes(const std::string& path, ErrorList& errors) {
  CodeLevels out;
  const auto doc = catalogs::read_json_file(path, "MindCluster fault code catalogue", errors);
  if (!doc) return out;
  if (!doc->is_object()) {
    errors.add(path, 1, 1, "the catalogue must be a JSON object of \"<Level>Codes\" lists");
    return out;
  }
  for (const auto& [key, codes] : doc->items()) {
    const std::string suffix = "Codes";
    std::optional<FaultLevel> level;
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
      level = parse_fault_level(key.substr(0, key.size() - suffix.size()));
    }
    if (!level) {
      errors.add(path, 0, 0, "unknown key \"" + key + "\" (expected <FaultLevel>Codes)");
      continue;
    }
    if (!codes.is_array()) {
      errors.add(path, 0, 0, "\"" + key + "\" must be a list of codes");
      continue;
    }
    for (const auto& c : codes) {
      // Codes are written without 0x here; the real catalogue also lists 9-digit ones.
      const std::string raw = c.is_string() ? c.get<std::string>() : std::string();
      const std::string code = raw.starts_with("0x") ? "" : hex_code(raw);
      if (code.empty()) {
        errors.add(path, 0, 0, "\"" + key + "\" holds a malformed code " + c.dump());
        continue;
      }
      // A code listed twice keeps its most severe level: safer to over- than under-react.
      auto [it, inserted] = out.levels.emplace(code, *level);
      if (!inserted && more_severe(*level, it->second)) it->second = *level;
    }
  }
  return out;
}

namespace {

// Reads one entry of FaultFrequency / FaultDuration, reporting at "<list>[i].<field>".
class EntryReader {
 public:
  EntryReader(const std::string& path, std::string where, const nlohmann::json& entry,
              ErrorList& errors)
      : path_(path), where_(std::move(where)), entry_(entry), errors_(errors) {}

  bool ok() const { return ok_; }

  void fail(const std::string& field, const std::string& message) {
    errors_.add(path_, 0, 0, where_ + (field.empty() ? "" : "." + field) + ": " + message);
    ok_ = false;
  }

  std::vector<std::string> codes(std::set<std::string>& seen) {
    std::vector<std::string> out;
    const auto it = entry_.find("EventId");
    if (it == entry_.end() || !it->is_array() || it->empty()) {
      fail("EventId", "must be a non-empty list of fault codes");
      return out;
    }
    for (const auto& c : *it) {
      const std::string code = c.is_string() ? hex_code(c.get<std::string>()) : "";
      if (code.empty()) {
        fail("EventId", "malformed code " + c.dump());
      } else if (!seen.insert(code).second) {
        fail("EventId", "code " + code + " is listed by more than one entry");
      } else {
        out.push_back(code);
      }
    }
    return out;
  }

  // A whole number of seconds, > 0 (or >= 0 when `zero_ok`).
  std::optional<Duration> seconds(const char* field, bool required, bool zero_ok = false) {
    const auto it = entry_.find(field);
    if (it == entry_.end()) {
      if (required) fail(field, "is missing");
      return std::nullopt;
    }
    if (!it->is_number_integer() || it->get<int64_t>() < (zero_ok ? 0 : 1)) {
      fail(field, std::string("must be a whole number of seconds") + (zero_ok ? "" : " > 0") +
                      ", not " + it->dump());
      return std::nullopt;
    }
    return std::chrono::seconds(it->get<int64_t>());
  }

  uint32_t count(const char* field) {
    const auto it = entry_.find(field);
    if (it == entry_.end() || !it->is_number_integer() || it->get<int64_t>() < 1 ||
        it->get<int64_t>() > 1000000) {
      fail(field, "must be a count of occurrences >= 1");
      return 0;
    }
    return static_cast<uint32_t>(it->get<int64_t>());
  }

  FaultLevel level() {
    const auto it = entry_.find("FaultHandling");
    std::optional<FaultLevel> level;
    if (it != entry_.end() && it->is_string()) level = parse_fault_level(it->get<std::string>());
    if (!level) {
      fail("FaultHandling", "must be a MindCluster fault level such as ManuallySeparateNPU");
      return FaultLevel::NotHandleFault;
    }
    return *level;
  }

 private:
  const std::string& path_;
  std::string where_;
  const nlohmann::json& entry_;
  ErrorList& errors_;
  bool ok_ = true;
};

template <class Entry>
const Entry* find_code(const std::vector<Entry>& entries, std::string_view code) {
  const std::string wanted = hex_code(std::string(code));
  for (const auto& e : entries) {
    for (const auto& c : e.codes) {
      if (c == wanted) return &e;
    }
  }
  return nullptr;
}

}  // namespace

const FaultFrequency* FaultCustomization::frequency_for(std::string_view code) const {
  return find_code(frequency, code);
}

const FaultDuration* FaultCustomization::duration_for(std::string_view code) const {
  return find_code(duration, code);
}

FaultCustomization load_fault_customization(const std::string& path, ErrorList& errors) {
  FaultCustomization out;
  const auto doc = catalogs::read_json_file(path, "MindCluster fault customization", errors);
  if (!doc) return out;
  if (!doc->is_object()) {
    errors.add(path, 1, 1, "the customization must be a JSON object");
    return out;
  }
  for (const auto& [key, value] : doc->items()) {
    if (key != "FaultFrequency" && key != "FaultDuration" && key != "GraceTolerance") {
      errors.add(
          path, 0, 0,
          "unknown key \"" + key + "\" (known: FaultFrequency, FaultDuration, GraceTolerance)");
    }
  }
  auto list = [&](const char* key) -> const nlohmann::json* {
    const auto it = doc->find(key);
    if (it == doc->end()) return nullptr;
    if (!it->is_array()) {
      errors.add(path, 0, 0, std::string(key) + ": must be a list of entries");
      return nullptr;
    }
    return &*it;
  };
  if (const auto* entries = list("FaultFrequency")) {
    std::set<std::string> seen;
    for (size_t i = 0; i < entries->size(); ++i) {
      const auto& e = (*entries)[i];
      EntryReader r(path, "FaultFrequency[" + std::to_string(i) + "]", e, errors);
      if (!e.is_object()) {
        r.fail("", "must be an object");
        continue;
      }
      FaultFrequency f;
      f.codes = r.codes(seen);
      f.window = r.seconds("TimeWindow", true).value_or(Duration{});
      f.times = r.count("Times");
      f.level = r.level();
      f.release_window = r.seconds("ReleaseTimeWindow", false);
      if (r.ok()) out.frequency.push_back(std::move(f));
    }
  }
  if (const auto* entries = list("FaultDuration")) {
    std::set<std::string> seen;
    for (size_t i = 0; i < entries->size(); ++i) {
      const auto& e = (*entries)[i];
      EntryReader r(path, "FaultDuration[" + std::to_string(i) + "]", e, errors);
      if (!e.is_object()) {
        r.fail("", "must be an object");
        continue;
      }
      FaultDuration d;
      d.codes = r.codes(seen);
      d.fault_timeout = r.seconds("FaultTimeout", true, true).value_or(Duration{});
      d.recover_timeout = r.seconds("RecoverTimeout", true, true).value_or(Duration{});
      d.level = r.level();
      if (r.ok()) out.duration.push_back(std::move(d));
    }
  }
  if (const auto it = doc->find("GraceTolerance"); it != doc->end()) {
    if (!it->is_object()) {
      errors.add(path, 0, 0, "GraceTolerance: must be an object");
    } else {
      EntryReader r(path, "GraceTolerance", *it, errors);
      out.grace.wait_process_read_cm = r.seconds("WaitProcessReadCMTime", false, true);
      out.grace.wait_device_reset = r.seconds("WaitDeviceResetTime", false, true);
      out.grace.wait_fault_self_healing = r.seconds("WaitFaultSelfHealingTime", false, true);
    }
  }
  return out;
}

}  // namespace faultd
