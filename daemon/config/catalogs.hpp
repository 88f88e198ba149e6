// Vendor catalogues that nodes already carry, read as they are. MindCluster's faultCode.json
// lists fault codes under "<Level>Codes" keys (SeparateNPUCodes, NotHandleFaultCodes, ...);
// it gives each code its handling level when a rule does not set one.
#pragma once

#include <string>

#include "daemon/core/errors.hpp"
#include "rules/rule.hpp"

namespace faultd {

// Errors (unreadable file, bad JSON with its line:column, unknown level key, malformed code)
// go to `errors`; whatever could be read is returned.
CodeLevels load_mindcluster_fault_codes(const std::string& path, ErrorList& errors);

}  // namespace faultd
