// Reading a vendor catalogue (JSON) as it is: the whole file is parsed at once, and a syntax
// error is reported as file:line:column, so a bad catalogue fails --check-config with a precise
// message like a bad YAML file does. Pure functions, no state.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/core/errors.hpp"

namespace faultd::catalogs {

// The parsed document, or nullopt after reporting to `errors` (unreadable file: "cannot read
// the <what>"; invalid JSON with its line:column).
std::optional<nlohmann::json> read_json_file(const std::string& path, const std::string& what,
                                             ErrorList& errors);

// Upper case, without a leading 0x: "0x80e18005" → "80E18005". Empty when `text` is not 1 to
// 16 hex digits (MindCluster codes are 8, a few 9).
std::string hex_code(const std::string& text);

}  // namespace faultd::catalogs
