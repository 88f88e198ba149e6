#include "daemon/core/json.hpp"

#include "daemon/core/hang_cause.hpp"

namespace faultd {

nlohmann::json to_json(const Finding& f) {
  nlohmann::json j = {
      {"rule", f.rule},
      {"source", f.source},
      {"device", f.device},
      {"level", std::string(to_string(f.level))},
      {"code", f.code},
      {"file", f.file},
      {"line", f.line},
      {"offset", f.offset},
      // Log lines are not guaranteed UTF-8; replace invalid bytes instead of failing.
      {"text", f.text},
      {"time", format_time(f.time)},
  };
  if (f.id != 0) j["id"] = f.id;
  if (!f.device_from.empty()) j["device_from"] = f.device_from;
  if (!f.serial.empty()) j["serial"] = f.serial;
  if (!f.job.empty()) j["job"] = f.job;
  if (const auto cause = hang_cause(f.rule); !cause.empty()) j["cause"] = std::string(cause);
  // Written only when set, so the output of rules without them does not change.
  if (f.recovery) j["recovery"] = true;
  if (!f.annotations.empty()) {
    nlohmann::json a = nlohmann::json::object();
    for (const auto& [name, value] : f.annotations) a[name] = value;
    j["annotations"] = std::move(a);
  }
  return j;
}

nlohmann::json to_json(const Transition& t) {
  return {
      {"device", t.device},
      {"from", std::string(to_string(t.from))},
      {"to", std::string(to_string(t.to))},
      {"reason", t.reason},
      {"fault_id", t.fault_id},
      {"level", std::string(to_string(t.level))},
      {"rule", t.rule},
      {"code", t.code},
      {"time", format_time(t.time)},
  };
}

std::string dump_json(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace faultd
