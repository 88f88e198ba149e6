#include "rules/matcher.hpp"

namespace faultd {

Matcher::Matcher() = default;
Matcher::~Matcher() = default;

void Matcher::configure(std::shared_ptr<const RuleSet> rules) {
  rules_ = std::move(rules);
  const auto ids = rules_->device_field_rule_ids();
  device_field_rules_ = {ids.begin(), ids.end()};
  detectors_.configure(*rules_);  // unchanged detector rules keep their series
}

size_t Matcher::match(const Chunk& chunk, TimePoint now, std::vector<Finding>& out) {
  const size_t before = out.size();
  scan(chunk, now, out);
  const size_t matches = out.size() - before;
  if (detectors_.active() && matches > 0) detect(out);
  return matches;
}

void Matcher::scan(const Chunk& chunk, TimePoint now, std::vector<Finding>& out) {
  auto context = contexts_.find(chunk.source);
  if (context == contexts_.end()) context = contexts_.try_emplace(std::string(chunk.source)).first;
  ScanStats stats;
  const size_t from = out.size();
  rules_->scan(chunk, now, out, &stats, &context->second);
  neighbours_.settle(chunk, now, out, from, [this](std::string_view rule) {
    return device_field_rules_.count(rule) != 0;
  });
  if (stats.device_refused > 0) refusals_->devices.fetch_add(stats.device_refused);
  if (stats.code_refused > 0) refusals_->codes.fetch_add(stats.code_refused);
  if (stats.job_refused > 0) refusals_->jobs.fetch_add(stats.job_refused);
  if (stats.source_type_refused > 0) {
    refusals_->source_types.fetch_add(stats.source_type_refused);
  }
}

void Matcher::detect(std::vector<Finding>& findings) { detectors_.apply(findings); }

std::vector<Finding> Matcher::tick(TimePoint now) {
  std::vector<Finding> out = detectors_.tick(now);
  neighbours_.release_expired(now, out);
  return out;
}

std::vector<Finding> Matcher::flush() {
  std::vector<Finding> out;
  neighbours_.flush(out);
  return out;
}

ReadPosition Matcher::clamp(ReadPosition position) const {
  if (const auto held = neighbours_.held_from(position.source, position.identity, position.path)) {
    if (held->first < position.offset) {
      position.offset = held->first;
      position.line = held->second;
    }
  }
  return position;
}

}  // namespace faultd
