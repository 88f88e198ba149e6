// The stateful detectors for training numerics, one small class per `detect: type`. Each is
// pure: a sequence of samples (the captured fields of one series' matches, with `now`) in,
// verdicts out; time comes only from the samples and from tick(now), so tests replay any
// history without a clock. State lives in one object per (rule, series), owned by the
// DetectorBank; nothing here is shared or locked.
//
// The axis a window or warm-up counts on is the sample's `pos`: the `step` field when the
// match captured one, else the number of matches seen in the series. A warm-up is the first
// `warmup` steps of training (steps start at 0 or 1), else the first `warmup` matches: a daemon
// started in the middle of a run applies no grace by steps, and a job resumed from a
// checkpoint restores its loss scale, so it does not calibrate again.
//
// Each detector reports an episode once: a condition that persists gives one verdict, and it
// re-arms when the series is normal again.
//
//   rate                 ≥ count matches within window/window_steps, after `warmup` matches;
//                        with `field`, only matches that set it (an overflow reported), and
//                        with `probe_scale`, not those at a scale at or above it (calibration
//                        and the scaler's periodic probing happen at a healthy scale).
//   loss_scale_collapse  a drop of the scale (below the previous value, or below `scale_from`
//                        when captured) to ≤ floor, at any time; or `drops` drops within the
//                        windows once past `warmup` (the start-of-training halvings are
//                        calibration); or, with `low_scale`, `drops` drops that each land at
//                        ≤ low_scale with no rise between. A scale that never dropped (bf16's
//                        constant 1.0) is fine.
//   non_finite           a NaN/Inf in `fields`, or a counter of `counters` above 0, for
//                        `consecutive` samples in a row ("nan iterations: 0" is not NaN); with
//                        `warn_first`, the first of such a run is a warning verdict.
//   feature_anomaly a    CANN SilentCheck: NaN/Inf or value > upper[0] or, after min_steps,
//                        |value - previous| > sigma[0] × (running max - running min) → fault;
//                        the same with upper[1]/sigma[1] → warning.
//   feature_anomaly b    MindSpore 2.7 strikes: average = bias-corrected EMA (beta 0.99) of the
//                        accepted values; after `warmup` samples, value > upper_thresh1 × average
//                        and value - previous > upper_thresh1 × average is a strike (NaN/Inf is
//                        not: fp16 prints it on every overflowed step; non_finite judges it);
//                        values > upper_thresh2 × average stay out of the average; strikes within
//                        `cooldown` of the last one are the same strike; `strikes` strikes within
//                        `strikes_window` → fault, a single strike → warning.
//   stall                (tick) no new step for max(floor, factor × median step interval).
//   expect_every         (tick) no line of the rule for `expect` (stall with a fixed limit);
//                        a line carrying an `until` string ends the series: no wait after it.
//   expect_within        (tick) a line carrying an `after` string starts a wait that any other
//                        line of the rule ends; none within `expect` is the verdict. `until`
//                        lines end the wait too.
//   slow_step            step time > ratio × median of the last `baseline` normal step times
//                        for `consecutive` steps, after `warmup` steps → warning.
//   peer_slow            step time > (1 + margin) × the sample's `reference` (its peers'
//                        median, filled in by the DetectorBank, or a figure of the line) for
//                        `consecutive` steps, from the first step → warning. A sample without
//                        a reference (too few peers) breaks the run.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/core/types.hpp"
#include "rules/detectors/spec.hpp"

namespace faultd::detect {

// A line's fields read as numbers, each once however many detectors ask for it (a step line
// feeds up to six): the first kKept fields are remembered, the rest read again when asked.
class FieldNumbers {
 public:
  std::optional<double> of(std::string_view text, size_t index);

 private:
  static constexpr size_t kKept = 16;
  enum class State : uint8_t { Unread, Number, None };
  std::array<State, kKept> state_{};
  std::array<double, kKept> value_{};
};

struct Sample {
  TimePoint time{};
  int64_t pos = 0;  // step, or the ordinal (from 1) of the match in its series
  bool has_step = false;
  const Fields* fields = nullptr;
  FieldNumbers* numbers = nullptr;  // of `fields`, shared by the rules the line feeds; optional
  std::string_view text{};          // the line (liveness rules tell their lines apart by it)
  // peer_slow: what the step time is compared with, and how many peers gave it (0: the line).
  std::optional<double> reference = std::nullopt;
  size_t peers = 0;
  std::optional<std::string_view> get(std::string_view name) const;
  // The field as a number (NaN/Inf allowed); nullopt when absent or not a number.
  std::optional<double> number(std::string_view name) const;
};

enum class Severity { Warning, Fault };

struct Verdict {
  Severity severity = Severity::Fault;
  std::string reason;  // for operators: which threshold, which values
};

class Detector {
 public:
  virtual ~Detector() = default;
  virtual std::optional<Verdict> observe(const Sample& sample) = 0;
  // Time-based verdicts (stall, expect_every, expect_within); the others never report from here.
  virtual std::optional<Verdict> tick(TimePoint /*now*/) { return std::nullopt; }
};

std::unique_ptr<Detector> make_detector(const DetectorSpec& spec);

// A number as training logs print it: "0.752", "7.334521E-01", "65536", "nan", "-inf",
// "Infinity", "NaN"; surrounding blanks and one trailing "ms"/"s" unit are tolerated.
std::optional<double> parse_number(std::string_view text);

}  // namespace faultd::detect
