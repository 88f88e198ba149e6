// The DetectorBank turns the matches of detector rules (RuleSpec::detect) into verdicts. It
// owns one detector per (rule, series), where a series is (rule, job or source file, rank,
// device) — or (rule, device) for `per: device` rates — and attributes each verdict:
//
//   device   the match's device (from the line or path_fields); else the `rank` field mapped
//            by the rule's `rank_device` (`identity`, or a map); else none.
//   peers    a `peer_slow` rule compares each series' step time with the median of its peers:
//            the rule's other series of the same job (every series of the rule when the lines
//            name no job) seen within the rule's `window`. The bank fills that median into the
//            sample; the detector stays a function of its samples.
//   storm    when the same rule has given a verdict on at least `storm_min_series` series and
//            `storm_fraction` of its live series within `storm_window` (every rank of the job
//            overflowing, hanging or spiking at once), the problem is the job's software or
//            data, not a device: the verdict is kept but names no device, so nothing is
//            isolated for it, and it is annotated `storm: N of M series`. Verdicts that came
//            before the storm was recognised keep their device; the blast-radius limit is the
//            safety net for those.
//
// A verdict is a Finding: the triggering match (rule, source, file, line, offset, text) with
// the detector's level (the rule's fault level for fault verdicts, `warn_level` otherwise),
// the attributed device, and annotations `detector` and `verdict` (the reason). Stall verdicts
// come from tick() and carry the last step's match, so a restart that re-reads the same lines
// journals the same key.
//
// Memory is bounded: at most `max_series` series; the least recently used is evicted (and
// counted) to make room. Per-(device, rank) numbers for metrics (last step, overflow steps,
// loss-scale drops) are kept under the same cap.
//
// Lifecycle: owned by the app; configure() at start and on every reload keeps the series of
// rules whose spec did not change and drops the others. State is in memory only: after a
// restart the series warm up again. Threading: not thread-safe; the app's io thread only.
#pragma once

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/core/types.hpp"
#include "rules/detectors/detectors.hpp"
#include "rules/rule.hpp"

namespace faultd {

class DetectorBank {
 public:
  explicit DetectorBank(size_t max_series = 4096);
  ~DetectorBank();

  // The detector rules now in force.
  void configure(const std::vector<std::pair<std::string, DetectorSpec>>& rules);
  void configure(const RuleSet& rules) { configure(rules.detectors()); }
  // Some detector rule is loaded: only then does the app need a tick timer.
  bool active() const { return !specs_.empty(); }
  bool handles(std::string_view rule) const { return specs_.find(rule) != specs_.end(); }

  // A match of a detector rule (Finding::detector_input, with its fields), for its own rule
  // (not its more_detectors). Returns the verdict it completes, if any. Matches of rules the
  // bank does not know are ignored.
  std::optional<Finding> observe(const Finding& match, TimePoint now);
  // Replaces the detector inputs among `findings` by the verdicts they complete (order kept),
  // each observed at its own `time` by its rule and its more_detectors; other findings stay.
  void apply(std::vector<Finding>& findings);
  // Time-based verdicts (stalls) as of `now`.
  std::vector<Finding> tick(TimePoint now);

  // What a (device, rank) series showed, for metrics. Labels are bounded: device and rank are
  // validated ids, never file names; at most max_series entries.
  struct SeriesStats {
    std::string device;
    std::string rank;
    std::optional<int64_t> last_step;
    TimePoint last_step_time{};
    uint64_t overflow_steps = 0;
    uint64_t scale_drops = 0;
    std::optional<double> step_time;  // the last step time a step line printed, as printed
  };
  std::vector<SeriesStats> series_stats() const;

  struct Counters {
    size_t series = 0;
    uint64_t evicted = 0;        // series dropped to stay within max_series
    uint64_t refused_ranks = 0;  // rank values that were not valid ids (ignored)
    uint64_t storms = 0;         // verdicts recorded as node-level storms
  };
  Counters counters() const;

 private:
  struct Series;
  struct Labels;
  struct MatchFacts;
  Series& series_for(const std::string& key, std::string_view rule, const DetectorSpec& spec);
  struct Recent;
  Recent* recent_for(std::string_view rule);
  MatchFacts facts_of(const Finding& match);
  // `match` observed by one of the rules it feeds.
  std::optional<Finding> observe_rule(const std::shared_ptr<const Finding>& match,
                                      MatchFacts& facts, std::string_view rule, FaultLevel level,
                                      TimePoint now);
  std::optional<Finding> verdict(Series& s, const detect::Verdict& v, TimePoint now);
  // peer_slow: the sample's reference (the peers' median step time, or the line's own figure).
  void compare_with_peers(Series& s, const DetectorSpec& spec, detect::Sample& sample,
                          TimePoint now);
  void forget_peer(const Series& s);
  void count_numbers(const Finding& match, MatchFacts& facts, std::string_view device,
                     std::string_view rank, const detect::Sample& sample, TimePoint now);

  size_t max_series_;
  // Looked up by the views a detector input carries (Finding::more_detectors): no copy.
  struct IdHash {
    using is_transparent = void;
    size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  using Specs = std::unordered_map<std::string, DetectorSpec, IdHash, std::equal_to<>>;
  Specs specs_;
  std::list<std::string> lru_;  // most recently used first
  std::unordered_map<std::string, std::unique_ptr<Series>> series_;
  std::unordered_map<std::string, std::unique_ptr<Labels>> labels_;
  Counters counters_;
  std::string key_;  // scratch for series and label keys (no allocation per observation)
  // Per detector rule, its spec and the series it fed last: a step line feeds up to six rules,
  // each mostly the same series as on the line before, found without building and hashing its
  // key. Cleared whenever a series is dropped.
  struct Recent {
    std::string rule;
    const DetectorSpec* spec = nullptr;
    std::string stream, rank, device;  // what the series' key was built from
    Series* series = nullptr;
  };
  std::vector<Recent> recent_;
  std::vector<Finding> scratch_;  // apply()'s output before it is swapped into place
  // The series of each peer_slow rule, so that a step line compares with its peers without a
  // walk over every series; entries leave with their series.
  std::unordered_map<std::string, std::vector<Series*>> peers_;
  std::vector<double> peer_times_;  // scratch of compare_with_peers
};

}  // namespace faultd
