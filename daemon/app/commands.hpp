// The control socket's commands (faultctl): reads of the store and the device states, and the
// operator's requests, which go through the pipeline like any other input. Replies are JSON
// objects with "ok"; a refused request says why in "error".
//
//   status | events [device, since, limit] | history device | incidents [device, all] | budget
//   isolate device reason | clear device reason | ack device reason | reload
//   report (a replica divergence measured by faultctl compare: daemon/control/report_request.hpp)
//
// Threading: io thread only (the control server calls it there).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectors/collector.hpp"
#include "daemon/actions/action_manager.hpp"
#include "daemon/pipeline/pipeline.hpp"

namespace faultd {

struct CommandContext {
  const Config& config;  // the daemon's, swapped in place on reload
  Store& store;
  Pipeline& pipeline;
  ActionManager& actions;
  const Clock& clock;
  std::function<std::vector<std::shared_ptr<Source>>()> sources;
  std::function<void(const Step&)> apply;  // carries out a step (metrics, logs, hooks)
  std::function<std::string()> reload;     // "" or the errors
};

nlohmann::json handle_command(const CommandContext& context, const nlohmann::json& request);

}  // namespace faultd
