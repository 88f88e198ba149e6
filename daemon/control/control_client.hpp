// The client half of the control protocol, used by faultctl and by tests: connect, send one
// request line, read one reply line, with a deadline so a wedged daemon cannot hang the caller.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

namespace faultd {

struct ControlReply {
  enum class Status { Ok, Unreachable, Failed } status = Status::Failed;
  nlohmann::json body;  // the daemon's reply when it answered
  std::string error;    // why, when it did not
};

ControlReply control_call(const std::string& socket_path, const nlohmann::json& request,
                          std::chrono::milliseconds timeout);

}  // namespace faultd
