#include "rules/detectors/detectors.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <sstream>
#include <vector>

namespace faultd::detect {
namespace {

std::string num(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

std::string seconds(Duration d) { return num(std::chrono::duration<double>(d).count()) + "s"; }

// The median of `values`, through `scratch` (a detector's own: a step line allocates nothing).
double median(const std::deque<double>& values, std::vector<double>& scratch) {
  std::vector<double>& v = scratch;
  v.assign(values.begin(), values.end());
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Timestamps (and axis positions) of recent events, trimmed to the detector's windows.
class Window {
 public:
  Window(Duration window, int64_t window_steps) : window_(window), steps_(window_steps) {}
  size_t add(TimePoint t, int64_t pos) {
    events_.push_back({t, pos});
    while (!events_.empty() && ((window_.count() > 0 && events_.front().first < t - window_) ||
                                (steps_ > 0 && events_.front().second <= pos - steps_))) {
      events_.pop_front();
    }
    return events_.size();
  }
  void clear() { events_.clear(); }

 private:
  Duration window_;
  int64_t steps_;
  std::deque<std::pair<TimePoint, int64_t>> events_;
};

// The first `length` steps of training, or the first `length` matches without steps.
bool in_warmup(const Sample& x, int64_t length) {
  return x.has_step ? x.pos < length : x.pos <= length;
}

std::string window_text(const DetectorSpec& s) {
  std::string text;
  if (s.window_steps > 0) text += std::to_string(s.window_steps) + " steps";
  if (s.window.count() > 0) text += (text.empty() ? "" : " and ") + seconds(s.window);
  return text.empty() ? "the series" : text;
}

// A flag field reports something: True, a number above 0, or a word ("OVERFLOW"); not False,
// 0 or absent.
bool is_set(std::optional<std::string_view> value) {
  if (!value || value->empty()) return false;
  if (const auto n = parse_number(*value)) return *n > 0;
  return *value != "False" && *value != "false" && *value != "FALSE";
}

class Rate final : public Detector {
 public:
  explicit Rate(const DetectorSpec& s) : s_(s), window_(s.window, s.window_steps) {}
  std::optional<Verdict> observe(const Sample& x) override {
    // The scale the step overflowed at: the one the scaler says it attempted (DeepSpeed's
    // "Attempted loss scale: 4096, reducing to 2048"), else the last one the series named
    // (apex names only the scale it lowers to; its bare "Gradient overflow" none), else this
    // line's own.
    const std::optional<double> scale = x.number("scale");
    const std::optional<double> from = x.number("scale_from");
    const std::optional<double> at = from ? from : last_scale_ ? last_scale_ : scale;
    if (scale) {
      last_scale_ = scale;
    } else if (from) {
      last_scale_ = from;
    }
    const bool overflow = s_.field.empty() || is_set(x.get(s_.field));
    // A scaler that overflows step after step and never lowers its scale is not calibrating:
    // a dynamic one halves it on the second overflow in a row at the latest (its hysteresis),
    // a fixed one (Megatron's --loss-scale) never will, and no step trains. Only lines that
    // name their step and scale tell: four ranks printing one overflow are not four steps.
    bool held = false;
    if (x.has_step && scale) {
      held = overflow && previous_overflowed_ && x.pos > previous_pos_ && *scale >= previous_scale_;
      previous_overflowed_ = overflow;
      previous_pos_ = x.pos;
      previous_scale_ = *scale;
    }
    if (!overflow) return std::nullopt;
    if (s_.probe_scale > 0 && at && *at >= s_.probe_scale && !held) return std::nullopt;
    if (in_warmup(x, s_.warmup)) return std::nullopt;
    if (window_.add(x.time, x.pos) < static_cast<size_t>(s_.count)) return std::nullopt;
    window_.clear();  // the next verdict needs `count` new matches
    return Verdict{Severity::Fault,
                   std::to_string(s_.count) + " matches within " + window_text(s_)};
  }

 private:
  const DetectorSpec s_;
  Window window_;
  std::optional<double> last_scale_;
  bool previous_overflowed_ = false;  // the last line with a step and a scale overflowed
  int64_t previous_pos_ = 0;          // its step
  double previous_scale_ = 0;         // its scale
};

class LossScaleCollapse final : public Detector {
 public:
  explicit LossScaleCollapse(const DetectorSpec& s) : s_(s), window_(s.window, s.window_steps) {}
  std::optional<Verdict> observe(const Sample& x) override {
    const auto scale = x.number(s_.field);
    if (!scale || !std::isfinite(*scale)) return std::nullopt;
    const bool warming = in_warmup(x, s_.warmup);
    const std::optional<double> attempted = x.number("scale_from");
    std::optional<double> from = attempted;
    if (!from) from = previous_;
    previous_ = *scale;
    if (*scale > s_.floor) at_floor_ = false;
    if (from && *scale > *from) {  // a rise ends a run of drops
      run_ = 0;
      run_fired_ = false;
    }
    // A scaler that overflows at the floor and stays there ("Attempted loss scale: 0.0,
    // reducing to 0.0") has collapsed as surely as one that drops to it. Only a scale it names
    // as attempted: bf16 prints a constant 1.0 with no overflow.
    const bool stuck = attempted && *attempted <= s_.floor && *scale <= s_.floor;
    if (stuck && !at_floor_) {
      at_floor_ = true;
      return Verdict{Severity::Fault, "loss scale stuck at " + num(*scale) + " (floor " +
                                          num(s_.floor) + "): the scaler overflows at it"};
    }
    if (!from || !(*scale < *from)) return std::nullopt;
    if (*scale <= s_.floor && !at_floor_) {
      at_floor_ = true;
      return Verdict{Severity::Fault, "loss scale dropped from " + num(*from) + " to " +
                                          num(*scale) + " (floor " + num(s_.floor) + ")"};
    }
    if (s_.low_scale > 0) {
      if (*scale > s_.low_scale || ++run_ < s_.drops || run_fired_) return std::nullopt;
      run_fired_ = true;
      return Verdict{Severity::Fault, "loss scale dropped " + std::to_string(run_) +
                                          " times in a row to at or below " + num(s_.low_scale) +
                                          ", now " + num(*scale)};
    }
    if (warming) return std::nullopt;  // the start-of-training halvings are calibration
    if (window_.add(x.time, x.pos) < static_cast<size_t>(s_.drops)) return std::nullopt;
    window_.clear();
    return Verdict{Severity::Fault, "loss scale dropped " + std::to_string(s_.drops) +
                                        " times within " + window_text(s_) + ", now " +
                                        num(*scale)};
  }

 private:
  const DetectorSpec s_;
  Window window_;
  std::optional<double> previous_;
  bool at_floor_ = false;
  int64_t run_ = 0;  // drops in a row that landed at or below low_scale
  bool run_fired_ = false;
};

class NonFinite final : public Detector {
 public:
  explicit NonFinite(const DetectorSpec& s) : s_(s) {}
  std::optional<Verdict> observe(const Sample& x) override {
    bool seen = false;
    std::string bad;
    for (const auto& f : s_.fields) {
      if (auto v = x.number(f)) {
        seen = true;
        if (!std::isfinite(*v)) bad += (bad.empty() ? "" : ", ") + f + "=" + num(*v);
      }
    }
    for (const auto& c : s_.counters) {
      if (auto v = x.number(c)) {
        seen = true;
        if (!(*v <= 0)) bad += (bad.empty() ? "" : ", ") + c + "=" + num(*v);
      }
    }
    if (!seen) return std::nullopt;  // the line says nothing about these values
    if (bad.empty()) {
      run_ = 0;
      fired_ = false;
      return std::nullopt;
    }
    ++run_;
    if (run_ == 1 && s_.warn_first && s_.consecutive > 1) {
      return Verdict{Severity::Warning, bad + " (the first non-finite step)"};
    }
    if (run_ < s_.consecutive || fired_) return std::nullopt;
    fired_ = true;
    return Verdict{Severity::Fault, bad + " for " + std::to_string(run_) + " consecutive step(s)"};
  }

 private:
  const DetectorSpec s_;
  int64_t run_ = 0;
  bool fired_ = false;
};

// Generation a: CANN SilentCheck (aclnnSilentCheck) over a log-borne series.
class AbsoluteJump final : public Detector {
 public:
  explicit AbsoluteJump(const DetectorSpec& s) : s_(s) {}
  std::optional<Verdict> observe(const Sample& x) override {
    const auto v = x.number(s_.field);
    if (!v) return std::nullopt;
    int level = 0;  // 0 normal, 2 warning (L2), 1 fault (L1)
    std::string why;
    auto raise = [&](int l, std::string reason) {
      if (level == 0 || l < level) {
        level = l;
        why = std::move(reason);
      }
    };
    if (!std::isfinite(*v)) {
      raise(1, s_.field + " is " + num(*v));
    } else {
      if (*v > s_.upper_l1) {
        raise(1, s_.field + " " + num(*v) + " above " + num(s_.upper_l1));
      } else if (*v > s_.upper_l2) {
        raise(2, s_.field + " " + num(*v) + " above " + num(s_.upper_l2));
      }
      if (n_ >= s_.min_steps && max_ > min_) {
        const double jump = std::fabs(*v - pre_) / (max_ - min_);
        const std::string text = "jump " + num(jump) + " × running range " + num(max_ - min_);
        if (jump > s_.sigma_l1) {
          raise(1, text + " above " + num(s_.sigma_l1));
        } else if (jump > s_.sigma_l2) {
          raise(2, text + " above " + num(s_.sigma_l2));
        }
      }
      pre_ = *v;
      min_ = n_ == 0 ? *v : std::min(min_, *v);
      max_ = n_ == 0 ? *v : std::max(max_, *v);
      ++n_;
    }
    if (level == 0) {
      active_ = 0;
      return std::nullopt;
    }
    if (active_ != 0 && active_ <= level) return std::nullopt;  // same episode, not worse
    active_ = level;
    return Verdict{level == 1 ? Severity::Fault : Severity::Warning,
                   std::string(level == 1 ? "L1: " : "L2: ") + why};
  }

 private:
  const DetectorSpec s_;
  int64_t n_ = 0;
  double pre_ = 0, min_ = 0, max_ = 0;
  int active_ = 0;
};

// Generation b: MindSpore 2.7's strike model.
class Strikes final : public Detector {
 public:
  explicit Strikes(const DetectorSpec& s) : s_(s), strikes_(s.strikes_window, 0) {}
  std::optional<Verdict> observe(const Sample& x) override {
    const auto v = x.number(s_.field);
    if (!v) return std::nullopt;
    const bool warm = n_ >= s_.warmup && n_ > 0;
    const double avg = n_ > 0 ? ema_ / (1 - std::pow(s_.beta, static_cast<double>(n_))) : 0;
    bool alarm = false;
    double jump = 0;
    if (warm && std::isfinite(*v)) {
      const double limit = s_.upper_thresh1 * avg;
      jump = previous_ ? *v - *previous_ : 0;
      alarm = *v > limit && jump > limit;
    }
    if (std::isfinite(*v)) {
      const bool excluded = warm && *v > s_.upper_thresh2 * avg;
      if (!excluded) {
        ema_ = s_.beta * ema_ + (1 - s_.beta) * *v;
        ++n_;
      }
      previous_ = *v;
    }
    if (!alarm) return std::nullopt;
    if (last_strike_ && x.time - *last_strike_ < s_.cooldown) return std::nullopt;
    last_strike_ = x.time;
    // Written only for a strike: formatting numbers costs more than the whole observation.
    const std::string why = s_.field + " " + num(*v) + " and its jump " + num(jump) + " above " +
                            num(s_.upper_thresh1) + " × average " + num(avg);
    const size_t count = strikes_.add(x.time, 0);
    if (count >= static_cast<size_t>(s_.strikes)) {
      strikes_.clear();
      return Verdict{Severity::Fault, "strikes out: " + std::to_string(count) + " strikes within " +
                                          seconds(s_.strikes_window) + "; last: " + why};
    }
    return Verdict{Severity::Warning, "strike " + std::to_string(count) + " of " +
                                          std::to_string(s_.strikes) + ": " + why};
  }

 private:
  const DetectorSpec s_;
  int64_t n_ = 0;
  double ema_ = 0;
  std::optional<double> previous_;
  std::optional<TimePoint> last_strike_;
  Window strikes_;
};

bool carries_any(std::string_view text, const std::vector<std::string>& strings) {
  return std::any_of(strings.begin(), strings.end(),
                     [&](const std::string& s) { return text.find(s) != std::string_view::npos; });
}

// stall and expect_every: a series whose lines stop coming. The limit is `expect` (expect_every)
// or max(floor, factor × median interval) (stall, learnt from the series' own pace).
class Silence final : public Detector {
 public:
  explicit Silence(const DetectorSpec& s) : s_(s) {}
  std::optional<Verdict> observe(const Sample& x) override {
    if (carries_any(x.text, s_.until)) {  // the job said it is done: silence is expected
      ended_ = true;
      return std::nullopt;
    }
    if (last_pos_ && x.pos <= *last_pos_) return std::nullopt;  // not a new step
    if (last_time_ && !ended_) {
      intervals_.push_back(std::chrono::duration<double>(x.time - *last_time_).count());
      if (intervals_.size() > kKeep) intervals_.pop_front();
    }
    last_pos_ = x.pos;
    last_time_ = x.time;
    fired_ = false;
    ended_ = false;
    return std::nullopt;
  }
  std::optional<Verdict> tick(TimePoint now) override {
    if (!last_time_ || fired_ || ended_) return std::nullopt;
    const double limit = limit_seconds();
    const double quiet = std::chrono::duration<double>(now - *last_time_).count();
    if (!(quiet > limit)) return std::nullopt;
    fired_ = true;
    const std::string what = s_.type == DetectorType::Stall ? "no new step" : "no new line";
    const std::string since = s_.type == DetectorType::Stall ? "step" : "line";
    return Verdict{Severity::Fault, what + " for " + num(quiet) + "s (limit " + num(limit) +
                                        "s) after " + since + " " + std::to_string(*last_pos_)};
  }

 private:
  double limit_seconds() {
    if (s_.type != DetectorType::Stall) return std::chrono::duration<double>(s_.expect).count();
    double limit = std::chrono::duration<double>(s_.stall_floor).count();
    if (intervals_.size() >= static_cast<size_t>(s_.min_intervals)) {
      limit = std::max(limit, s_.factor * median(intervals_, scratch_));
    }
    return limit;
  }
  static constexpr size_t kKeep = 64;
  const DetectorSpec s_;
  std::optional<int64_t> last_pos_;
  std::optional<TimePoint> last_time_;
  std::deque<double> intervals_;
  std::vector<double> scratch_;
  bool fired_ = false;
  bool ended_ = false;
};

// expect_within: an `after` line opens a wait, the rule's next other line closes it.
class ExpectWithin final : public Detector {
 public:
  explicit ExpectWithin(const DetectorSpec& s) : s_(s) {}
  std::optional<Verdict> observe(const Sample& x) override {
    if (carries_any(x.text, s_.after)) {
      waiting_since_ = x.time;  // a new start (a relaunch) waits afresh
      after_pos_ = x.pos;
    } else {
      waiting_since_.reset();  // the awaited line, or an `until` line
    }
    return std::nullopt;
  }
  std::optional<Verdict> tick(TimePoint now) override {
    if (!waiting_since_) return std::nullopt;
    const double quiet = std::chrono::duration<double>(now - *waiting_since_).count();
    const double limit = std::chrono::duration<double>(s_.expect).count();
    if (!(quiet > limit)) return std::nullopt;
    waiting_since_.reset();  // once per start
    return Verdict{Severity::Fault, "no expected line within " + num(limit) + "s of line " +
                                        std::to_string(after_pos_) + " (waited " + num(quiet) +
                                        "s)"};
  }

 private:
  const DetectorSpec s_;
  std::optional<TimePoint> waiting_since_;
  int64_t after_pos_ = 0;
};

class SlowStep final : public Detector {
 public:
  explicit SlowStep(const DetectorSpec& s) : s_(s) {}
  std::optional<Verdict> observe(const Sample& x) override {
    const auto t = x.number(s_.field);
    if (!t || !std::isfinite(*t) || *t <= 0) return std::nullopt;
    if (++n_ <= s_.warmup) return std::nullopt;  // first steps compile graphs
    const size_t needed = static_cast<size_t>(std::min<int64_t>(s_.baseline, 5));
    if (normal_.size() < needed) {
      remember(*t);
      return std::nullopt;
    }
    const double base = median(normal_, scratch_);
    if (!(*t > s_.ratio * base)) {
      run_ = 0;
      fired_ = false;
      remember(*t);
      return std::nullopt;
    }
    if (++run_ < s_.consecutive || fired_) return std::nullopt;
    fired_ = true;
    return Verdict{Severity::Warning, s_.field + " " + num(*t) + " above " + num(s_.ratio) +
                                          " × baseline " + num(base) + " for " +
                                          std::to_string(run_) + " steps"};
  }

 private:
  void remember(double t) {
    normal_.push_back(t);
    if (normal_.size() > static_cast<size_t>(s_.baseline)) normal_.pop_front();
  }
  const DetectorSpec s_;
  int64_t n_ = 0;
  int64_t run_ = 0;
  bool fired_ = false;
  std::deque<double> normal_;
  std::vector<double> scratch_;
};

class PeerSlow final : public Detector {
 public:
  explicit PeerSlow(const DetectorSpec& s) : s_(s) {}
  std::optional<Verdict> observe(const Sample& x) override {
    const auto t = x.number(s_.field);
    if (!t || !std::isfinite(*t) || *t <= 0) return std::nullopt;
    const double limit = x.reference ? (1 + s_.margin) * *x.reference : 0;
    if (!x.reference || !(*x.reference > 0) || !(*t > limit)) {
      run_ = 0;
      fired_ = false;
      return std::nullopt;
    }
    if (++run_ < s_.consecutive || fired_) return std::nullopt;
    fired_ = true;
    const std::string of = x.peers > 0 ? "the median " + num(*x.reference) + " of " +
                                             std::to_string(x.peers) + " peers"
                                       : s_.reference + " " + num(*x.reference);
    return Verdict{Severity::Warning, s_.field + " " + num(*t) + " is " +
                                          num(std::round((*t / *x.reference - 1) * 100)) +
                                          " % above " + of + " for " + std::to_string(run_) +
                                          " steps"};
  }

 private:
  const DetectorSpec s_;
  int64_t run_ = 0;
  bool fired_ = false;
};

}  // namespace

std::optional<std::string_view> Sample::get(std::string_view name) const {
  if (fields == nullptr) return std::nullopt;
  for (const auto& [n, v] : *fields) {
    if (n == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<double> FieldNumbers::of(std::string_view text, size_t index) {
  if (index >= kKept) return parse_number(text);
  if (state_[index] == State::Unread) {
    const std::optional<double> v = parse_number(text);
    state_[index] = v ? State::Number : State::None;
    value_[index] = v.value_or(0);
  }
  return state_[index] == State::Number ? std::optional<double>(value_[index]) : std::nullopt;
}

std::optional<double> Sample::number(std::string_view name) const {
  if (fields == nullptr) return std::nullopt;
  for (size_t i = 0; i < fields->size(); ++i) {
    const auto& [n, v] = (*fields)[i];
    if (n != name) continue;
    return numbers != nullptr ? numbers->of(v, i) : parse_number(v);
  }
  return std::nullopt;
}

std::optional<double> parse_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  if (text.size() > 2 && text.substr(text.size() - 2) == "ms") {
    text.remove_suffix(2);
  } else if (text.size() > 1 && text.back() == 's' && text[text.size() - 2] >= '0' &&
             text[text.size() - 2] <= '9') {
    text.remove_suffix(1);
  }
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::unique_ptr<Detector> make_detector(const DetectorSpec& spec) {
  switch (spec.type) {
    case DetectorType::Rate:
      return std::make_unique<Rate>(spec);
    case DetectorType::LossScaleCollapse:
      return std::make_unique<LossScaleCollapse>(spec);
    case DetectorType::NonFinite:
      return std::make_unique<NonFinite>(spec);
    case DetectorType::FeatureAnomaly:
      if (spec.generation == 'a') return std::make_unique<AbsoluteJump>(spec);
      return std::make_unique<Strikes>(spec);
    case DetectorType::Stall:
    case DetectorType::ExpectEvery:
      return std::make_unique<Silence>(spec);
    case DetectorType::ExpectWithin:
      return std::make_unique<ExpectWithin>(spec);
    case DetectorType::SlowStep:
      return std::make_unique<SlowStep>(spec);
    case DetectorType::PeerSlow:
      return std::make_unique<PeerSlow>(spec);
  }
  return nullptr;
}

}  // namespace faultd::detect
