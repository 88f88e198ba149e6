#include "collectors/file/path_fields.hpp"

#include <re2/re2.h>

#include <algorithm>

namespace faultd {

std::unique_ptr<re2::RE2> compile_path_fields(const std::string& regex, std::string& error) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(regex, options);
  if (!re->ok()) {
    error = re->error();
    return nullptr;
  }
  return re;
}

Fields capture_path_fields(const re2::RE2& re, std::string_view path) {
  Fields out;
  const int groups = re.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> captures(static_cast<size_t>(groups) + 1);
  if (!re.Match(re2::StringPiece(path.data(), path.size()), 0, path.size(), RE2::UNANCHORED,
                captures.data(), groups + 1)) {
    return out;
  }
  std::vector<std::pair<int, std::string>> named;
  for (const auto& [name, index] : re.NamedCapturingGroups()) named.emplace_back(index, name);
  std::sort(named.begin(), named.end());
  for (const auto& [index, name] : named) {
    const re2::StringPiece& c = captures[static_cast<size_t>(index)];
    if (c.data() == nullptr) continue;  // an optional group that did not take part
    out.emplace_back(name, std::string(c.data(), c.size()));
  }
  return out;
}

}  // namespace faultd
