// Reading a vendor catalogue (JSON) as it is: the whole file is parsed at once, and a syntax
// error is reported as file:line:column, so a bad catalogue fails --check-config with a precise
// message like a bad YAML file does. Pure functions, no state.
#pragma once

#include <optional>
#include <string>

#include "daemon/core/fault_code.hpp"

#include <nlohmann/json.hpp>

#include "daemon/core/errors.hpp"

namespace faultd::catalogs {

// The parsed document, or nullopt after reporting to `errors` (unreadable file: "cannot read
// the <what>"; invalid JSON with its line:column).
std::optional<nlohmann::json> read_json_file(const std::string& path, const std::string& what,
                                             ErrorList& errors);

}  // namespace faultd::catalogs
