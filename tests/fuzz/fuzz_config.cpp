// Fuzzes the config loader: the text of faultd.yaml → load_config, which also reads the rule
// files and the MindCluster catalogue it names. --check-config and SIGHUP run this on whatever
// an operator (or a config-management tool) wrote; every problem must come back as an error
// with its position, never as a crash or an exception out of the loader.
//
// The scratch directory holds copies of the shipped rule packs (rules.d/) and a catalogue (the
// demo's own code-to-level file, as faultCode.json) so the seeds, which include them by relative
// path, reach the rule and catalogue code as well.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "daemon/config/config.hpp"
#include "tests/support/fuzz_support.hpp"

namespace {

void install_fixtures() {
  namespace fs = std::filesystem;
  const fs::path root(FAULTD_SOURCE_DIR);
  const auto& dir = faultd::fuzz::scratch_dir();
  fs::create_directories(dir / "rules.d");
  for (const auto& entry : fs::directory_iterator(root / "etc/faultd/rules.d")) {
    fs::copy_file(entry.path(), dir / "rules.d" / entry.path().filename(),
                  fs::copy_options::overwrite_existing);
  }
  fs::copy_file(root / "etc/demo/fault-levels.json", dir / "faultCode.json",
                fs::copy_options::overwrite_existing);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool installed = (install_fixtures(), true);
  (void)installed;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = faultd::fuzz::write_scratch("faultd.yaml", text);
  faultd::ErrorList errors;
  auto config = faultd::load_config(path, errors);
  FAULTD_FUZZ_CHECK(config.has_value() == errors.empty());
  if (config) FAULTD_FUZZ_CHECK(config->rules != nullptr);
  return 0;
}
