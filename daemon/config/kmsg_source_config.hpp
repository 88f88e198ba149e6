// Config loading for the `kmsg` source: one entry of `sources:` with `type: kmsg` into a
// KmsgSourceConfig, every problem reported at its file:line:column.
//
//   - { name: kernel, type: kmsg }                       # reads /dev/kmsg
//   - { name: kernel, type: kmsg, path: /dev/kmsg, boot_id_path: /proc/sys/kernel/random/boot_id,
//       poll_interval: 5s, max_records_per_poll: 1024 }
//
// Relative paths are relative to the config file's directory (`base_dir`). Lifecycle: called
// by the config loader once per kmsg entry. Threading: none shared.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "collectors/kmsg/kmsg_source.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {

// `n` is the source's map (its `name` and `type` already read by the caller, who passes the
// name). Nullopt when anything was reported to ctx.
std::optional<KmsgSourceConfig> load_kmsg_source(const YAML::Node& n, const std::string& name,
                                                 const std::string& base_dir, const yaml::Ctx& ctx);

}  // namespace faultd
