// Loads one `sources:` entry of a test's YAML text with a source type's loader, as the config
// loader would, keeping the errors it reported (file:line:column) as text.
#pragma once

#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "daemon/core/errors.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd::testing {

template <typename Settings>
struct LoadedEntry {
  std::optional<Settings> config;
  std::string errors;
};

// `load(node, name, base_dir, ctx)` is the type's loader, e.g. load_command_source.
template <typename Loader>
auto load_source_entry(const std::string& text, const std::string& name, Loader load) {
  ErrorList errors;
  const yaml::Ctx ctx{"/etc/faultd/faultd.yaml", &errors};
  auto node = yaml::load_text(text, ctx);
  REQUIRE(node);
  using Settings = typename decltype(load(*node, name, "/etc/faultd", ctx))::value_type;
  LoadedEntry<Settings> out;
  out.config = load(*node, name, "/etc/faultd", ctx);
  out.errors = errors.to_string();
  return out;
}

}  // namespace faultd::testing
