// What a rule's `detect:` block says: which stateful detector consumes the rule's matches and
// with which parameters. A rule with a detector is a *detector input*: its matches are not
// faults by themselves; they are fed, with their named captures, to a DetectorBank, and only
// the detector's verdicts are journaled (see rules/detectors/bank.hpp).
//
// Field conventions (named captures of the rule's regex, or path fields): `step`, `rank`,
// `device`, `job`, `loss`, `grad_norm`, `scale`, `scale_from`, `overflow`, `step_time`,
// `value`, `nan_iterations`. A detector reads the ones its parameters name.
//
// Lifecycle: parsed once with the rule, compared on reload (an unchanged spec keeps its
// state). Plain value, no threading concerns.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "daemon/core/errors.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

enum class DetectorType {
  Rate,
  LossScaleCollapse,
  NonFinite,
  FeatureAnomaly,
  Stall,
  SlowStep,
  PeerSlow,
  ExpectEvery,   // the rule keys `expect_every: T` (liveness), not a `detect:` type
  ExpectWithin,  // `expect_within: T` with `after:`
};
std::string_view to_string(DetectorType type);
std::optional<DetectorType> parse_detector_type(std::string_view text);

struct DetectorSpec {
  DetectorType type = DetectorType::Rate;

  // Shared. `warmup` and `window_steps` count on the series' axis: the `step` field when the
  // match has one (the warm-up is then the first `warmup` steps of training), else the number
  // of matches seen in the series.
  int64_t warmup = 0;
  Duration window{};         // 0: no time window
  int64_t window_steps = 0;  // 0: no step window
  std::string field;         // the numeric field the detector reads
  // Level of a verdict below fault severity (a strike, an L2 alarm, a slow node); the fault
  // severity verdicts take the rule's `fault.level`.
  FaultLevel warn_level = FaultLevel::SubHealthFault;

  // rate: at least `count` matches within `window` (and `window_steps` if set), per series or
  // per device. With `field`, only matches whose field is set count (True, a word, or a number
  // above 0: an overflow reported); with `probe_scale`, not those at a loss scale (`scale`
  // field) at or above it: the scaler probing a healthy scale, calibration included.
  int64_t count = 3;
  bool per_device = false;
  double probe_scale = 0;  // 0: every scale counts

  // loss_scale_collapse: the scale drops to `floor` or below, or drops `drops` times within
  // the windows, after `warmup`.
  // With `low_scale`, the second test is instead `drops` drops that each land at or below
  // low_scale, with no rise between, at any time: calibration never takes a scale that low.
  double floor = 1.0;
  int64_t drops = 3;
  double low_scale = 0;  // 0: the windowed test

  // non_finite: any of `fields` NaN/Inf, or any of `counters` above 0, for `consecutive`
  // matches in a row.
  std::vector<std::string> fields;
  std::vector<std::string> counters;
  int64_t consecutive = 3;
  bool warn_first = false;  // the first non-finite sample of a run: a verdict at warn_level

  // feature_anomaly. Generation a (CANN SilentCheck): L1 = value above upper[0] or jump above
  // sigma[0] × running range; L2 = the same with [1]; jumps count after `min_steps` samples.
  // Generation b (MindSpore 2.7 strike model): see detectors.hpp.
  char generation = 'b';
  double upper_l1 = 1e6, upper_l2 = 1e4, sigma_l1 = 1e5, sigma_l2 = 5e3;
  int64_t min_steps = 7;
  double upper_thresh1 = 1e6, upper_thresh2 = 100, beta = 0.99;
  Duration cooldown = std::chrono::minutes(5);
  int64_t strikes = 3;
  Duration strikes_window = std::chrono::minutes(480);

  // stall: no new step for max(stall_floor, factor × median step interval).
  Duration stall_floor = std::chrono::minutes(10);
  double factor = 10;
  int64_t min_intervals = 5;  // intervals seen before the median counts

  // Liveness (the rule keys expect_every / expect_within; stall is expect_every with a limit
  // learnt from the step intervals). `expect`: the silence allowed; `after`: substrings of the
  // rule's lines that start the wait for its other lines (expect_within); `until`: substrings of
  // its lines that end the series cleanly (the job finished): no wait after them.
  Duration expect{};
  std::vector<std::string> after;
  std::vector<std::string> until;

  // slow_step: step time above ratio × baseline (median of the last `baseline` normal steps)
  // for `consecutive` steps.
  double ratio = 2.0;
  int64_t baseline = 20;

  // peer_slow: `field` above (1 + margin) × its peers' median for `consecutive` steps. The
  // peers are the rule's other series of the same job (all of them when no job is named) seen
  // within `window`, at least `min_peers` of them; with `reference`, the line itself names the
  // peers' figure (Megatron's straggler report: the fastest rank's time) instead.
  double margin = 0.2;
  int64_t min_peers = 2;
  std::string reference;

  // Attribution: rank → device when the match names no device.
  bool rank_identity = false;
  std::map<std::string, std::string> rank_device;

  // Every-rank storm: when at least `storm_min_series` series and `storm_fraction` of the
  // rule's live series had a verdict within `storm_window`, the verdict names no device.
  double storm_fraction = 0.5;
  int64_t storm_min_series = 3;
  Duration storm_window = std::chrono::minutes(2);

  friend bool operator==(const DetectorSpec&, const DetectorSpec&) = default;
  // Length-prefixed text of every parameter: part of the ruleset hash.
  std::string canonical() const;
};

// A spec of `type` with that type's documented defaults (what `detect: {type: T}` gives).
DetectorSpec default_detector_spec(DetectorType type);

// Parses a rule's liveness keys (`expect_every: T`, `expect_within: T`, `after:`, `until:`),
// or nullopt when it has none (or they are wrong: reported in `errors`).
std::optional<DetectorSpec> parse_liveness_spec(const YAML::Node& rule, const std::string& file,
                                                ErrorList& errors);

// Parses a `detect:` map with the type's defaults, reporting every problem at its node.
std::optional<DetectorSpec> parse_detector_spec(const YAML::Node& node, const std::string& file,
                                                ErrorList& errors);

}  // namespace faultd
