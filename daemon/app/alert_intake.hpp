// Alertmanager's alerts in, the pipeline's requests out. An alert whose `faultd_action` label
// names an action, for this node (its `node` label, or the host of its `instance` label; an alert
// with neither is taken as meant for the only node an Alertmanager serves), and a valid `device`
// label, becomes: `isolate` → Pipeline::isolate_by_alert (journaled, so a repeated alert isolates
// once), `clear` → Pipeline::clear, any other configured action → Pipeline::run_action for the
// device's open incident. Each alert gets a result in the reply; a failing store answers 503, so
// Alertmanager retries and the journal makes the retry harmless.
//
// Threading: io thread only (the webhook server calls it there).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/control/webhook_server.hpp"
#include "daemon/pipeline/pipeline.hpp"

namespace faultd {

class AlertIntake {
 public:
  using Apply = std::function<void(const Step&)>;
  // `config` is the daemon's, swapped in place on reload; `apply` carries out each step.
  AlertIntake(const Config& config, Pipeline& pipeline, const Clock& clock, Apply apply);

  WebhookServer::Reply on_alerts(const WebhookBatch& batch);

 private:
  nlohmann::json on_alert(const WebhookAlert& alert, std::string& store_error);
  bool for_this_node(const WebhookAlert& alert) const;

  const Config& config_;
  Pipeline& pipeline_;
  const Clock& clock_;
  Apply apply_;
};

}  // namespace faultd
