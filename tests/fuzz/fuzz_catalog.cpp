// Fuzzes the MindCluster faultCode.json reader. The catalogue ships with the vendor's software
// and is rewritten by its upgrades; a truncated or garbled one must give errors with line:column
// and whatever could be read, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "rules/catalogs/mindcluster.hpp"
#include "tests/support/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = faultd::fuzz::write_scratch("faultCode.json", text);
  faultd::ErrorList errors;
  auto levels = faultd::load_mindcluster_fault_codes(path, errors);
  for (const auto& [code, level] : levels.levels) {
    FAULTD_FUZZ_CHECK(!code.empty());
    (void)level;
  }
  return 0;
}
