#include "rules/detectors/bank.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace faultd {

using namespace std::chrono_literals;

struct DetectorBank::Series {
  std::string rule;
  std::string device;
  std::string rank;
  std::unique_ptr<detect::Detector> detector;
  std::list<std::string>::iterator lru;
  int64_t ordinal = 0;
  std::optional<int64_t> last_step;
  std::string job;                  // peer_slow: the series' peers share it
  std::optional<double> step_time;  // peer_slow: the last one its lines printed
  TimePoint last_seen{};
  std::optional<TimePoint> last_verdict;
  // What a tick verdict is attributed to: the line last observed (shared by the rules that
  // line fed) and this rule's level.
  std::shared_ptr<const Finding> last_match;
  FaultLevel level = FaultLevel::NotHandleFault;
};

struct DetectorBank::Labels {
  SeriesStats stats;
  TimePoint updated{};
  // The lines last counted, so the rules that share a line count it once.
  std::pair<std::string, uint64_t> overflow_at{"", UINT64_MAX};
  std::pair<std::string, uint64_t> scale_at{"", UINT64_MAX};
  std::optional<double> scale;
};

namespace {

std::optional<std::string_view> field(const Finding& f, std::string_view name) {
  for (const auto& [n, v] : f.fields) {
    if (n == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<int64_t> step_of(const Finding& f) {
  const auto text = field(f, "step");
  if (!text) return std::nullopt;
  const auto v = detect::parse_number(*text);
  if (!v || !(*v >= 0) || *v > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

bool truthy(std::string_view v) {
  return !(v.empty() || v == "False" || v == "false" || v == "0" || v == "no" || v == "None");
}

}  // namespace

DetectorBank::DetectorBank(size_t max_series) : max_series_(std::max<size_t>(max_series, 1)) {}
DetectorBank::~DetectorBank() = default;

void DetectorBank::configure(const std::vector<std::pair<std::string, DetectorSpec>>& rules) {
  Specs next(rules.begin(), rules.end());
  for (auto it = series_.begin(); it != series_.end();) {
    const auto old_spec = specs_.find(it->second->rule);
    const auto new_spec = next.find(it->second->rule);
    if (new_spec != next.end() && old_spec != specs_.end() &&
        old_spec->second == new_spec->second) {
      ++it;
      continue;
    }
    forget_peer(*it->second);
    lru_.erase(it->second->lru);
    it = series_.erase(it);
  }
  specs_ = std::move(next);
  recent_.clear();
  if (specs_.empty()) labels_.clear();
}

DetectorBank::Series& DetectorBank::series_for(const std::string& key, std::string_view rule,
                                               const DetectorSpec& spec) {
  if (auto it = series_.find(key); it != series_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second->lru);
    return *it->second;
  }
  while (series_.size() >= max_series_ && !lru_.empty()) {
    for (auto& r : recent_) r.series = nullptr;
    if (auto old = series_.find(lru_.back()); old != series_.end()) forget_peer(*old->second);
    series_.erase(lru_.back());
    lru_.pop_back();
    ++counters_.evicted;
  }
  auto s = std::make_unique<Series>();
  s->rule = rule;
  s->detector = detect::make_detector(spec);
  lru_.push_front(key);
  s->lru = lru_.begin();
  if (spec.type == DetectorType::PeerSlow) peers_[s->rule].push_back(s.get());
  return *series_.emplace(key, std::move(s)).first->second;
}

void DetectorBank::forget_peer(const Series& s) {
  const auto it = peers_.find(s.rule);
  if (it == peers_.end()) return;
  std::erase(it->second, &s);
  if (it->second.empty()) peers_.erase(it);
}

void DetectorBank::compare_with_peers(Series& s, const DetectorSpec& spec, detect::Sample& sample,
                                      TimePoint now) {
  if (!spec.reference.empty()) {
    sample.reference = sample.number(spec.reference);
    return;
  }
  peer_times_.clear();
  if (const auto it = peers_.find(s.rule); it != peers_.end()) {
    for (const Series* p : it->second) {
      if (p == &s || !p->step_time || p->job != s.job || p->last_seen < now - spec.window) {
        continue;
      }
      peer_times_.push_back(*p->step_time);
    }
  }
  if (const auto t = sample.number(spec.field); t && std::isfinite(*t) && *t > 0) s.step_time = t;
  if (peer_times_.size() < static_cast<size_t>(spec.min_peers)) return;
  // The median; of an even count, the mean of the middle two (two peers: their mean).
  auto& v = peer_times_;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double median = *mid;
  if (v.size() % 2 == 0) median = (median + *std::max_element(v.begin(), mid)) / 2;
  sample.reference = median;
  sample.peers = v.size();
}

DetectorBank::Recent* DetectorBank::recent_for(std::string_view rule) {
  for (auto& r : recent_) {
    if (r.rule == rule) return &r;
  }
  const auto it = specs_.find(rule);
  if (it == specs_.end()) return nullptr;
  Recent& r = recent_.emplace_back();
  r.rule = rule;
  r.spec = &it->second;
  return &r;
}

// What a match says that every rule it feeds reads the same way: read once per line.
struct DetectorBank::MatchFacts {
  std::string_view rank;    // a valid rank id, or empty
  std::string_view job;     // the job field, or empty
  std::string_view stream;  // the job, else the file: which run the series follows
  std::optional<int64_t> step;
  std::string counted;           // the labels key (device, rank) this match was last counted under
  detect::FieldNumbers numbers;  // its fields as numbers, read once
};

DetectorBank::MatchFacts DetectorBank::facts_of(const Finding& match) {
  MatchFacts facts;
  if (auto r = field(match, "rank"); r && !r->empty()) {
    if (is_valid_device_id(*r)) {
      facts.rank = *r;
    } else {
      ++counters_.refused_ranks;
    }
  }
  const auto job = field(match, "job");
  if (job) facts.job = *job;
  facts.stream = job && !job->empty() ? *job : std::string_view(match.file);
  facts.step = step_of(match);
  return facts;
}

std::optional<Finding> DetectorBank::observe(const Finding& match, TimePoint now) {
  const auto shared = std::make_shared<const Finding>(match);
  MatchFacts facts = facts_of(*shared);
  return observe_rule(shared, facts, match.rule, match.level, now);
}

std::optional<Finding> DetectorBank::observe_rule(const std::shared_ptr<const Finding>& shared,
                                                  MatchFacts& facts, std::string_view rule,
                                                  FaultLevel level, TimePoint now) {
  Recent* recent = recent_for(rule);
  if (recent == nullptr) return std::nullopt;
  const DetectorSpec& spec = *recent->spec;
  const Finding& match = *shared;

  const std::string_view rank = facts.rank;
  std::string_view device = match.device;
  if (device.empty() && !rank.empty()) {
    if (spec.rank_identity) {
      device = rank;
    } else if (auto it = spec.rank_device.find(std::string(rank)); it != spec.rank_device.end()) {
      device = it->second;
    }
  }
  Series* found = recent->series;
  if (found != nullptr && recent->device == device && recent->rank == rank &&
      recent->stream == facts.stream) {
    lru_.splice(lru_.begin(), lru_, found->lru);
  } else {
    key_.assign(rule);
    key_ += '\x1f';
    if (!spec.per_device || device.empty()) {
      key_.append(facts.stream);
      key_ += '\x1f';
      key_ += rank;
    }
    key_ += '\x1f';
    key_ += device;
    found = &series_for(key_, rule, spec);
    recent->series = found;
    recent->stream.assign(facts.stream);
    recent->rank.assign(rank);
    recent->device.assign(device);
  }
  Series& s = *found;
  s.device.assign(device);
  s.rank.assign(spec.per_device ? std::string_view() : rank);
  const std::optional<int64_t> step = facts.step;
  if (step && s.last_step && *step < *s.last_step && !spec.per_device) {
    // The step went back: a new run (or a resume from a checkpoint) in the same series.
    s.detector = detect::make_detector(spec);
    s.ordinal = 0;
  }
  ++s.ordinal;
  if (step) s.last_step = step;
  s.last_seen = now;
  s.last_match = shared;
  s.level = level;

  detect::Sample sample{now,           step.value_or(s.ordinal), step.has_value(),
                        &match.fields, &facts.numbers,           match.text};
  if (spec.type == DetectorType::PeerSlow) {
    s.job.assign(facts.job);
    compare_with_peers(s, spec, sample, now);
  }
  count_numbers(match, facts, s.device, rank, sample, now);
  auto v = s.detector->observe(sample);
  if (!v) return std::nullopt;
  return verdict(s, *v, now);
}

void DetectorBank::apply(std::vector<Finding>& findings) {
  if (std::none_of(findings.begin(), findings.end(),
                   [](const Finding& f) { return f.detector_input; })) {
    return;
  }
  // Written into a vector kept across calls and swapped with `findings`: both keep their
  // capacity, so a chunk of step lines allocates no new vector.
  std::vector<Finding>& out = scratch_;
  out.clear();
  for (auto& f : findings) {
    if (!f.detector_input) {
      out.push_back(std::move(f));
      continue;
    }
    // The rules it feeds view the rule set that scanned it: read now, never kept.
    const auto feeds = std::move(f.more_detectors);
    f.more_detectors.clear();
    const auto match = std::make_shared<const Finding>(std::move(f));
    const TimePoint at = match->time;
    MatchFacts facts = facts_of(*match);
    if (auto v = observe_rule(match, facts, match->rule, match->level, at)) {
      out.push_back(std::move(*v));
    }
    for (const auto& [rule, level] : feeds) {
      if (auto v = observe_rule(match, facts, rule, level, at)) out.push_back(std::move(*v));
    }
  }
  findings.swap(out);
  out.clear();
}

std::vector<Finding> DetectorBank::tick(TimePoint now) {
  std::vector<Series*> due;
  std::vector<detect::Verdict> verdicts;
  for (auto& [key, s] : series_) {
    if (auto v = s->detector->tick(now)) {
      due.push_back(s.get());
      verdicts.push_back(std::move(*v));
    }
  }
  std::vector<Finding> out;
  for (size_t i = 0; i < due.size(); ++i) {
    if (auto f = verdict(*due[i], verdicts[i], now)) out.push_back(std::move(*f));
  }
  return out;
}

std::optional<Finding> DetectorBank::verdict(Series& s, const detect::Verdict& v, TimePoint now) {
  const DetectorSpec& spec = specs_.at(s.rule);
  s.last_verdict = now;
  // Storm: how many of this rule's live series have a verdict within the storm window.
  size_t firing = 0, live = 0;
  const TimePoint live_since = now - std::max<Duration>(spec.storm_window, 1h);
  for (const auto& [key, other] : series_) {
    if (other->rule != s.rule) continue;
    const bool fired = other->last_verdict && *other->last_verdict >= now - spec.storm_window;
    if (fired || other->last_seen >= live_since) ++live;
    if (fired) ++firing;
  }
  const bool storm = firing >= static_cast<size_t>(spec.storm_min_series) &&
                     static_cast<double>(firing) >= spec.storm_fraction * static_cast<double>(live);

  Finding f = *s.last_match;
  f.rule = s.rule;
  f.device = s.device;
  f.detector_input = false;
  f.fields.clear();
  f.more_detectors.clear();
  f.level = v.severity == detect::Severity::Fault ? s.level : spec.warn_level;
  f.time = now;
  f.annotations.emplace_back("detector", std::string(to_string(spec.type)));
  f.annotations.emplace_back("verdict", v.reason);
  if (!s.rank.empty()) f.annotations.emplace_back("rank", s.rank);
  if (storm) {
    ++counters_.storms;
    if (!f.device.empty()) f.annotations.emplace_back("storm_device", f.device);
    f.device.clear();
    f.annotations.emplace_back(
        "storm", std::to_string(firing) + " of " + std::to_string(live) +
                     " series: a node-level software or data problem, no device is blamed");
  }
  return f;
}

void DetectorBank::count_numbers(const Finding& match, MatchFacts& facts, std::string_view device,
                                 std::string_view rank, const detect::Sample& sample,
                                 TimePoint now) {
  if (device.empty() && rank.empty()) return;
  key_.assign(device);
  key_ += '\x1f';
  key_ += rank;
  // The rules a line feeds mostly name the same (device, rank): counted once.
  if (key_ == facts.counted) return;
  facts.counted = key_;
  const std::string& key = key_;
  auto it = labels_.find(key);
  if (it == labels_.end()) {
    while (labels_.size() >= max_series_) {
      auto oldest = std::min_element(
          labels_.begin(), labels_.end(),
          [](const auto& a, const auto& b) { return a.second->updated < b.second->updated; });
      labels_.erase(oldest);
    }
    it = labels_.emplace(key, std::make_unique<Labels>()).first;
    it->second->stats.device = device;
    it->second->stats.rank = rank;
  }
  Labels& l = *it->second;
  l.updated = now;
  // Claims `at` for this line; false when another rule's match of the line counted it.
  auto first_time = [&match](std::pair<std::string, uint64_t>& at) {
    if (at.second == match.offset && at.first == match.file) return false;
    at = {match.file, match.offset};
    return true;
  };
  if (sample.has_step && (!l.stats.last_step || sample.pos != *l.stats.last_step)) {
    l.stats.last_step = sample.pos;
    l.stats.last_step_time = now;
  }
  if (auto o = sample.get("overflow"); o && truthy(*o) && first_time(l.overflow_at)) {
    ++l.stats.overflow_steps;
  }
  if (auto scale = sample.number("scale");
      scale && std::isfinite(*scale) && first_time(l.scale_at)) {
    auto from = sample.number("scale_from");
    if (!from) from = l.scale;
    if (from && *scale < *from) ++l.stats.scale_drops;
    l.scale = *scale;
  }
  if (const auto t = sample.number("step_time"); t && std::isfinite(*t) && *t > 0) {
    l.stats.step_time = t;
  }
}

std::vector<DetectorBank::SeriesStats> DetectorBank::series_stats() const {
  std::vector<SeriesStats> out;
  out.reserve(labels_.size());
  for (const auto& [key, l] : labels_) out.push_back(l->stats);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.device, a.rank) < std::tie(b.device, b.rank);
  });
  return out;
}

DetectorBank::Counters DetectorBank::counters() const {
  Counters c = counters_;
  c.series = series_.size();
  return c;
}

}  // namespace faultd
