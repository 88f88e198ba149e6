// The control protocol between faultctl and faultd: one JSON object per line over a Unix
// socket. A request is {"cmd": "status" | "events" | "isolate" | "clear" | "reload", ...};
// every response is {"ok": true, ...} or {"ok": false, "error": "..."}.
#pragma once

#include <cstddef>

namespace faultd::control {

inline constexpr size_t kMaxRequestBytes = 64 * 1024;
inline constexpr const char* kDefaultSocket = "/run/faultd/control.sock";

}  // namespace faultd::control
