#include "daemon/app/alert_intake.hpp"

#include <spdlog/spdlog.h>

#include "daemon/actions/action_manager.hpp"
#include "daemon/core/fault_code.hpp"
#include "daemon/core/hash.hpp"
#include "daemon/core/json.hpp"
#include "daemon/export/metrics.hpp"

namespace faultd {
namespace {

std::string value_of(const std::map<std::string, std::string>& map, const char* key) {
  auto it = map.find(key);
  return it == map.end() ? std::string() : it->second;
}

// The journal key of an alert's firing: its fingerprint and start time, so the repeats
// Alertmanager sends (repeat_interval, retries) are one row. The seed is the one stored keys were
// made with (daemon/core/hash.hpp).
uint64_t alert_key(const WebhookAlert& alert) {
  const uint64_t key = fnv1a64(alert.fingerprint + "@" + alert.starts_at, kFnvLegacySeed);
  return key == 0 ? 1 : key;
}

}  // namespace

AlertIntake::AlertIntake(const Config& config, Pipeline& pipeline, const Clock& clock, Apply apply)
    : config_(config), pipeline_(pipeline), clock_(clock), apply_(std::move(apply)) {}

bool AlertIntake::for_this_node(const WebhookAlert& alert) const {
  if (auto it = alert.labels.find("node"); it != alert.labels.end()) {
    return it->second == config_.node;
  }
  if (auto it = alert.labels.find("instance"); it != alert.labels.end()) {
    const std::string& instance = it->second;
    const auto colon = instance.rfind(':');
    return instance.substr(0, colon) == config_.node;
  }
  return true;
}

WebhookServer::Reply AlertIntake::on_alerts(const WebhookBatch& batch) {
  if (batch.truncated_alerts > 0) {
    spdlog::warn("webhook: Alertmanager left out {} alert(s) of group {}", batch.truncated_alerts,
                 batch.group_key);
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& alert : batch.alerts) {
    std::string store_error;
    results.push_back(on_alert(alert, store_error));
    if (!store_error.empty()) {
      spdlog::error("webhook: state store failed: {}", store_error);
      return {503, dump_json({{"error", "state store unavailable"}})};
    }
  }
  return {200, dump_json({{"results", results}})};
}

nlohmann::json AlertIntake::on_alert(const WebhookAlert& alert, std::string& store_error) {
  auto label = [&alert](const char* key) { return value_of(alert.labels, key); };
  const std::string action = label("faultd_action");
  std::string device = label("device");
  nlohmann::json r = {{"alertname", label("alertname")}, {"fingerprint", alert.fingerprint}};
  auto outcome = [&r](const char* result, const std::string& reason) {
    r["result"] = result;
    if (!reason.empty()) r["reason"] = reason;
    return r;
  };
  if (action.empty()) return outcome("ignored", "no faultd_action label");
  if (!for_this_node(alert)) return outcome("ignored", "for another node");
  if (alert.status != "firing") {
    spdlog::info("webhook: {} for device {} resolved", label("alertname"), device);
    return outcome("recorded", "resolved");
  }
  if (!is_valid_device_id(device)) return outcome("rejected", "missing or invalid device label");
  if (auto id = pipeline_.device_of(device)) {
    device = *id;
  } else {
    return outcome("rejected", "device " + device + " is not in this node's inventory");
  }
  spdlog::info("webhook: {} asks for {} of device {}", label("alertname"), action, device);

  Step step;
  if (action == kIsolateAction) {
    Finding f;
    f.rule = "alertmanager.isolate";
    f.source = "alertmanager";
    f.device = device;
    f.level = parse_fault_level(label("level")).value_or(FaultLevel::SeparateNPU);
    f.code = code_label(label("code"));
    if (f.code == "invalid") f.code.clear();
    f.time = f.noticed = clock_.now();
    f.identity.ino = alert_key(alert);
    f.text = ("alertmanager: " + label("alertname") + " " + value_of(alert.annotations, "summary"))
                 .substr(0, kMaxEvidenceBytes);
    step = pipeline_.isolate_by_alert(std::move(f));
  } else if (action == kClearAction) {
    step = pipeline_.clear(device, "alertmanager: " + label("alertname"));
  } else {
    step = pipeline_.run_action(device, action);
  }
  apply_(step);
  if (!step.store_error.empty()) {
    store_error = step.store_error;
    return r;
  }
  if (!step.refused.empty()) return outcome("rejected", step.refused);
  if (action == kIsolateAction) {
    r["fault_id"] = step.fault_id;
    if (step.duplicate) return outcome("duplicate", "");
    const DeviceRecord* d = pipeline_.find(device);
    if (d != nullptr && d->state == DeviceState::Isolated) {
      return outcome("unchanged", "already isolated");
    }
    return outcome("started", "");
  }
  if (action == kClearAction) return outcome(step.transitions.empty() ? "unchanged" : "done", "");
  return outcome("started", "");
}

}  // namespace faultd
