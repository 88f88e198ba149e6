// Paths in a config file: a relative one is relative to the directory of the file it is written
// in, so a config and its rules, hooks and state can live together (the demo relies on it); and
// whether a path is a glob, in the project's one glob dialect (collectors/file/glob.hpp).
#pragma once

#include <string>
#include <string_view>

namespace faultd {

std::string resolve_config_path(const std::string& base_dir, const std::string& path);
bool has_wildcard(std::string_view path);

}  // namespace faultd
