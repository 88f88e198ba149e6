// Helpers shared by the rule engine's unit tests: build a RuleSet from YAML text (failing the
// test on any error) and scan text as one chunk of a file source would deliver it.
#pragma once

#include <catch2/catch.hpp>

#include "daemon/core/yaml_check.hpp"
#include "rules/rule.hpp"

namespace faultd::testing {

inline std::shared_ptr<const RuleSet> build(const std::string& yaml_text, CodeLevels levels = {}) {
  ErrorList errors;
  const yaml::Ctx ctx{"t.yaml", &errors};
  auto doc = yaml::load_text(yaml_text, ctx);
  REQUIRE(doc);
  std::vector<RuleSpec> specs;
  parse_rules((*doc)["rules"], "t.yaml", specs, errors);
  auto set = RuleSet::build(std::move(specs), std::move(levels), errors);
  INFO(errors.to_string());
  REQUIRE(errors.empty());
  REQUIRE(set);
  return set;
}

struct Scan {
  std::vector<Finding> findings;
  ScanStats stats;
};

inline Scan scan(const RuleSet& set, std::string_view data, std::string_view source = "plog",
                 const Fields* fields = nullptr, uint64_t first_line = 1, uint64_t start_offset = 0,
                 ScanContext* context = nullptr, std::string_view path = "/logs/x.log") {
  Chunk chunk;
  chunk.source = source;
  chunk.path = path;
  chunk.data = data;
  chunk.first_line = first_line;
  chunk.start_offset = start_offset;
  chunk.end_offset = start_offset + data.size();
  chunk.path_fields = fields;
  Scan s;
  set.scan(chunk, TimePoint{}, s.findings, &s.stats, context);
  return s;
}

inline std::vector<std::string> rules_of(const Scan& s) {
  std::vector<std::string> out;
  for (const auto& f : s.findings) out.push_back(f.rule + "@" + std::to_string(f.line));
  return out;
}

}  // namespace faultd::testing
