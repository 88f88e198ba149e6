// Helpers for validating YAML into plain structs with positions: every problem becomes a
// ConfigError at the node's file:line:column, and the caller carries on to find the next one.
// Used by the config loader and the rule loader alike.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"

namespace faultd::yaml {

// A cursor: the file a node came from and where errors go.
struct Ctx {
  std::string file;
  ErrorList* errors;
  void error(const YAML::Node& at, const std::string& message) const;
  void error(const YAML::Mark& at, const std::string& message) const;
};

// Parses a file (or text) into a node; a syntax error is reported with its position.
std::optional<YAML::Node> load_file(const std::string& path, const Ctx& ctx);
std::optional<YAML::Node> load_text(const std::string& text, const Ctx& ctx);

// Reports every key of `map` that is not in `allowed` ("unknown key 'x' (allowed: a, b)").
// Returns false if `map` is not a map (and reports that).
bool check_map(const YAML::Node& map, std::string_view what,
               std::initializer_list<std::string_view> allowed, const Ctx& ctx);

// Typed getters: absent → nullopt without error; present but wrong → error and nullopt.
std::optional<std::string> get_string(const YAML::Node& map, const char* key, const Ctx& ctx);
std::optional<bool> get_bool(const YAML::Node& map, const char* key, const Ctx& ctx);
std::optional<int64_t> get_int(const YAML::Node& map, const char* key, const Ctx& ctx, int64_t min,
                               int64_t max);
std::optional<Duration> get_duration(const YAML::Node& map, const char* key, const Ctx& ctx);
// One of MindCluster's fault levels (NotHandleFault ... ManuallySeparateNPU), by name.
std::optional<FaultLevel> get_fault_level(const YAML::Node& map, const char* key, const Ctx& ctx);
// The same for a node that is itself the level's name (a map key).
std::optional<FaultLevel> as_fault_level(const YAML::Node& node, const Ctx& ctx);
// A string or a list of strings.
std::optional<std::vector<std::string>> get_string_list(const YAML::Node& map, const char* key,
                                                        const Ctx& ctx);
std::optional<std::string> as_string(const YAML::Node& node, std::string_view what, const Ctx& ctx);

}  // namespace faultd::yaml
