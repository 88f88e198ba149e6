#include "daemon/config/paths.hpp"

#include <filesystem>

#include "collectors/file/glob.hpp"

namespace faultd {

std::string resolve_config_path(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

bool has_wildcard(std::string_view path) {
  for (size_t at = 0; at <= path.size();) {
    const size_t slash = std::min(path.find('/', at), path.size());
    if (glob::has_magic(path.substr(at, slash - at))) return true;
    at = slash + 1;
  }
  return false;
}

}  // namespace faultd
