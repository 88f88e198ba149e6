// JSON forms of the vocabulary types, shared by --replay, the control socket, hooks' stdin and
// the golden tests, so every consumer sees the same field names.
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/core/types.hpp"

namespace faultd {

// rule, source, device, level, code, file, line, offset, text, time (+ id when committed,
// + "recovery": true for a recovery).
nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const Transition& t);

// One line of JSON; invalid UTF-8 (log lines are not guaranteed to be UTF-8) becomes U+FFFD
// instead of an exception.
std::string dump_json(const nlohmann::json& j);

}  // namespace faultd
