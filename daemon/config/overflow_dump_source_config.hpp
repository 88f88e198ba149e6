// Config loading for the `overflow_dump` source: one entry of `sources:` with
// `type: overflow_dump` into an OverflowDumpSourceConfig, every problem reported at its
// file:line:column.
//
//   - { name: overflow, type: overflow_dump, root: /var/log/npu/overflow }
//   - { name: overflow, type: overflow_dump, root: dumps, scan_interval: 10s, settle: 2s,
//       max_files_per_poll: 1000, max_directories: 4096 }
//
// `root` is required; relative to the config file's directory when relative. Lifecycle: called
// by the config loader once per overflow_dump entry. Threading: none shared.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "collectors/overflow_dump/overflow_dump_source.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {

std::optional<OverflowDumpSourceConfig> load_overflow_dump_source(const YAML::Node& n,
                                                                  const std::string& name,
                                                                  const std::string& base_dir,
                                                                  const yaml::Ctx& ctx);

}  // namespace faultd
