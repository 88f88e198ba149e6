// Parsing `detect:` blocks. Defaults depend on the type, so they are set before the keys are
// read; every key a type does not use is an error (a typo must not silently keep a default).
#include "rules/detectors/spec.hpp"

#include <cmath>
#include <sstream>

#include "daemon/core/enum_names.hpp"
#include "daemon/core/yaml_check.hpp"

namespace faultd {
namespace {

using yaml::Ctx;
using namespace std::chrono_literals;

constexpr std::array<std::string_view, 9> kTypeNames = {
    "rate",      "loss_scale_collapse", "non_finite",   "feature_anomaly", "stall",
    "slow_step", "peer_slow",           "expect_every", "expect_within"};

std::optional<double> get_number(const YAML::Node& map, const char* key, const Ctx& ctx,
                                 double min) {
  const YAML::Node node = map[key];
  if (!node.IsDefined() || node.IsNull()) return std::nullopt;
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value)) {
    ctx.error(node, std::string("'") + key + "' must be a number");
    return std::nullopt;
  }
  if (value < min) {
    std::ostringstream s;
    s << "'" << key << "' must be at least " << min;
    ctx.error(node, s.str());
    return std::nullopt;
  }
  return value;
}

// A pair "L1,L2" as NPU_ASD_UPPER_THRESH writes it, or a YAML list of two numbers.
bool get_pair(const YAML::Node& map, const char* key, const Ctx& ctx, double& l1, double& l2) {
  const YAML::Node node = map[key];
  if (!node.IsDefined() || node.IsNull()) return true;
  std::vector<double> values;
  auto add = [&](const std::string& text) {
    try {
      size_t used = 0;
      const double v = std::stod(text, &used);
      if (used != text.size() || !std::isfinite(v) || v <= 0) return false;
      values.push_back(v);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  bool ok = true;
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    for (size_t start = 0; ok;) {
      const size_t comma = text.find(',', start);
      std::string part = text.substr(start, comma == std::string::npos ? comma : comma - start);
      part.erase(0, part.find_first_not_of(' '));
      part.erase(part.find_last_not_of(' ') + 1);
      ok = add(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) ok = ok && item.IsScalar() && add(item.Scalar());
  } else {
    ok = false;
  }
  if (!ok || values.size() != 2 || values[0] <= values[1]) {
    ctx.error(node, std::string("'") + key +
                        "' must be two positive numbers, level 1 above level 2 (e.g. "
                        "\"1000000,10000\")");
    return false;
  }
  l1 = values[0];
  l2 = values[1];
  return true;
}

void set_defaults(DetectorSpec& s) {
  switch (s.type) {
    case DetectorType::Rate:
      s.window = 10min;
      break;
    case DetectorType::LossScaleCollapse:
      s.field = "scale";
      s.window = 10min;
      s.window_steps = 100;
      s.warmup = 20;
      break;
    case DetectorType::NonFinite:
      s.fields = {"loss", "grad_norm"};
      s.counters = {"nan_iterations"};
      break;
    case DetectorType::FeatureAnomaly:
      s.field = "value";
      s.warmup = 10;
      break;
    case DetectorType::Stall:
    case DetectorType::ExpectEvery:
    case DetectorType::ExpectWithin:
      break;
    case DetectorType::SlowStep:
      s.field = "step_time";
      s.consecutive = 5;
      s.warmup = 5;
      break;
    case DetectorType::PeerSlow:
      // No warm-up: a device slow from its first step is slow against its peers. 20 % is far
      // above a healthy run's spread across ranks (docs/detection.md, "Slow devices"); five
      // steps in a row outlast a checkpoint or a data-loader hiccup.
      s.field = "step_time";
      s.consecutive = 5;
      s.window = 10min;
      break;
  }
}

std::vector<std::string_view> keys_for(DetectorType type) {
  std::vector<std::string_view> keys = {"type",           "warn_level",       "rank_device",
                                        "storm_fraction", "storm_min_series", "storm_window"};
  auto add = [&](std::initializer_list<std::string_view> more) {
    keys.insert(keys.end(), more.begin(), more.end());
  };
  switch (type) {
    case DetectorType::Rate:
      add({"count", "window", "window_steps", "warmup", "per", "field", "probe_scale"});
      break;
    case DetectorType::LossScaleCollapse:
      add({"field", "floor", "drops", "window", "window_steps", "warmup", "low_scale"});
      break;
    case DetectorType::NonFinite:
      add({"fields", "counters", "consecutive", "warn_first"});
      break;
    case DetectorType::FeatureAnomaly:
      add({"field", "generation", "upper_thresh", "sigma_thresh", "min_steps", "upper_thresh1",
           "upper_thresh2", "beta", "warmup", "cooldown", "strikes", "strikes_window"});
      break;
    case DetectorType::Stall:
      add({"floor", "factor", "min_intervals"});
      break;
    case DetectorType::SlowStep:
      add({"field", "ratio", "consecutive", "baseline", "warmup"});
      break;
    case DetectorType::ExpectEvery:
    case DetectorType::ExpectWithin:
      break;  // rule keys, never a `detect:` type (parse_detector_spec refuses them)
    case DetectorType::PeerSlow:
      add({"field", "margin", "consecutive", "min_peers", "window", "reference"});
      break;
  }
  return keys;
}

void put(std::ostringstream& out, std::string_view key, const std::string& value) {
  out << key << ' ' << value.size() << ':' << value << '\n';
}

}  // namespace

std::string_view to_string(DetectorType type) { return name_of(kTypeNames, type); }

std::optional<DetectorType> parse_detector_type(std::string_view text) {
  return enum_named<DetectorType>(kTypeNames, text);
}

std::string DetectorSpec::canonical() const {
  std::ostringstream out;
  out.precision(17);
  auto num = [](auto v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
  };
  put(out, "type", std::string(to_string(type)));
  put(out, "warmup", num(warmup));
  put(out, "window", num(window.count()));
  put(out, "window_steps", num(window_steps));
  put(out, "field", field);
  put(out, "warn_level", std::string(to_string(warn_level)));
  put(out, "count", num(count));
  put(out, "per_device", num(per_device));
  put(out, "floor", num(floor));
  put(out, "drops", num(drops));
  put(out, "probe_scale", num(probe_scale));
  put(out, "low_scale", num(low_scale));
  put(out, "warn_first", num(warn_first));
  for (const auto& f : fields) put(out, "fields", f);
  for (const auto& c : counters) put(out, "counters", c);
  put(out, "consecutive", num(consecutive));
  put(out, "generation", std::string(1, generation));
  for (double v : {upper_l1, upper_l2, sigma_l1, sigma_l2, upper_thresh1, upper_thresh2, beta,
                   factor, ratio, storm_fraction, margin}) {
    put(out, "n", num(v));
  }
  for (auto v : {min_steps, strikes, min_intervals, baseline, storm_min_series, min_peers})
    put(out, "i", num(v));
  for (auto d : {cooldown, strikes_window, stall_floor, storm_window})
    put(out, "d", num(d.count()));
  put(out, "expect", num(expect.count()));
  for (const auto& a : after) put(out, "after", a);
  for (const auto& u : until) put(out, "until", u);
  put(out, "reference", reference);
  put(out, "rank_identity", num(rank_identity));
  for (const auto& [rank, device] : rank_device) put(out, "rank_device", rank + "=" + device);
  return out.str();
}

DetectorSpec default_detector_spec(DetectorType type) {
  DetectorSpec s;
  s.type = type;
  set_defaults(s);
  return s;
}

std::optional<DetectorSpec> parse_detector_spec(const YAML::Node& node, const std::string& file,
                                                ErrorList& errors) {
  const Ctx ctx{file, &errors};
  const size_t errors_before = errors.size();
  if (!node.IsMap()) {
    ctx.error(node, "'detect' must be a map with a 'type'");
    return std::nullopt;
  }
  DetectorSpec s;
  const auto type_name = yaml::get_string(node, "type", ctx);
  if (!type_name) {
    if (!node["type"].IsDefined()) ctx.error(node, "'detect' has no 'type'");
    return std::nullopt;
  }
  const auto type = parse_detector_type(*type_name);
  if (!type) {
    ctx.error(node["type"], "unknown detector type '" + *type_name +
                                "' (known: " + joined_names(kTypeNames) + ")");
    return std::nullopt;
  }
  if (*type == DetectorType::ExpectEvery || *type == DetectorType::ExpectWithin) {
    ctx.error(node["type"], "'" + *type_name + "' is a rule key: write `" + *type_name +
                                ": T` beside `match:`, not in `detect:`");
    return std::nullopt;
  }
  s.type = *type;
  set_defaults(s);
  const auto keys = keys_for(s.type);
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>("");
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string allowed;
      for (auto k : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
      ctx.error(kv.first, "unknown key '" + key + "' for detector type '" + *type_name +
                              "' (allowed: " + allowed + ")");
    }
  }

  auto get_count = [&](const char* key, int64_t& out, int64_t min) {
    if (auto v = yaml::get_int(node, key, ctx, min, 1'000'000'000)) out = *v;
  };
  auto get_positive_duration = [&](const char* key, Duration& out) {
    if (auto d = yaml::get_duration(node, key, ctx)) {
      if (d->count() <= 0) {
        ctx.error(node[key], std::string("'") + key + "' must be longer than 0s");
      } else {
        out = *d;
      }
    }
  };
  auto get_field_name = [&](const char* key, std::string& out) {
    if (auto f = yaml::get_string(node, key, ctx)) {
      if (f->empty()) {
        ctx.error(node[key], std::string("'") + key + "' is empty");
      } else {
        out = *f;
      }
    }
  };

  if (auto level = yaml::get_fault_level(node, "warn_level", ctx)) s.warn_level = *level;
  if (const YAML::Node rd = node["rank_device"]; rd.IsDefined() && !rd.IsNull()) {
    if (rd.IsScalar() && rd.Scalar() == "identity") {
      s.rank_identity = true;
    } else if (rd.IsMap()) {
      for (const auto& kv : rd) {
        const std::string rank = kv.first.as<std::string>("");
        const std::string device = kv.second.IsScalar() ? kv.second.Scalar() : "";
        if (!is_valid_device_id(device)) {
          ctx.error(kv.second, "rank_device: '" + device + "' is not a valid device id");
        } else {
          s.rank_device[rank] = device;
        }
      }
    } else {
      ctx.error(rd, "'rank_device' must be 'identity' or a map of rank to device");
    }
  }
  if (auto v = get_number(node, "storm_fraction", ctx, 0)) s.storm_fraction = *v;
  get_count("storm_min_series", s.storm_min_series, 1);
  get_positive_duration("storm_window", s.storm_window);

  switch (s.type) {
    case DetectorType::Rate:
      get_count("count", s.count, 1);
      get_count("window_steps", s.window_steps, 0);
      get_count("warmup", s.warmup, 0);
      get_positive_duration("window", s.window);
      if (auto per = yaml::get_string(node, "per", ctx)) {
        if (*per == "device") {
          s.per_device = true;
        } else if (*per != "series") {
          ctx.error(node["per"], "'per' must be 'series' or 'device'");
        }
      }
      get_field_name("field", s.field);
      if (auto v = get_number(node, "probe_scale", ctx, 0)) s.probe_scale = *v;
      break;
    case DetectorType::LossScaleCollapse:
      get_field_name("field", s.field);
      if (auto v = get_number(node, "floor", ctx, 0)) s.floor = *v;
      get_count("drops", s.drops, 1);
      get_count("window_steps", s.window_steps, 0);
      get_count("warmup", s.warmup, 0);
      get_positive_duration("window", s.window);
      if (auto v = get_number(node, "low_scale", ctx, 0)) s.low_scale = *v;
      break;
    case DetectorType::NonFinite:
      if (auto f = yaml::get_string_list(node, "fields", ctx)) s.fields = *f;
      if (auto c = yaml::get_string_list(node, "counters", ctx)) s.counters = *c;
      get_count("consecutive", s.consecutive, 1);
      if (auto v = yaml::get_bool(node, "warn_first", ctx)) s.warn_first = *v;
      if (s.fields.empty() && s.counters.empty()) {
        ctx.error(node, "non_finite needs at least one of 'fields' or 'counters'");
      }
      break;
    case DetectorType::FeatureAnomaly:
      get_field_name("field", s.field);
      if (auto g = yaml::get_string(node, "generation", ctx)) {
        if (*g == "a" || *g == "b") {
          s.generation = (*g)[0];
        } else {
          ctx.error(node["generation"],
                    "'generation' must be 'a' (absolute and jump thresholds) or 'b' (strikes)");
        }
      }
      get_pair(node, "upper_thresh", ctx, s.upper_l1, s.upper_l2);
      get_pair(node, "sigma_thresh", ctx, s.sigma_l1, s.sigma_l2);
      get_count("min_steps", s.min_steps, 0);
      if (auto v = get_number(node, "upper_thresh1", ctx, 1)) s.upper_thresh1 = *v;
      if (auto v = get_number(node, "upper_thresh2", ctx, 1)) s.upper_thresh2 = *v;
      if (auto v = get_number(node, "beta", ctx, 0)) {
        if (*v >= 1) {
          ctx.error(node["beta"], "'beta' must be below 1");
        } else {
          s.beta = *v;
        }
      }
      get_count("warmup", s.warmup, 0);
      get_positive_duration("cooldown", s.cooldown);
      get_count("strikes", s.strikes, 1);
      get_positive_duration("strikes_window", s.strikes_window);
      break;
    case DetectorType::Stall:
      get_positive_duration("floor", s.stall_floor);
      if (auto v = get_number(node, "factor", ctx, 1)) s.factor = *v;
      get_count("min_intervals", s.min_intervals, 1);
      break;
    case DetectorType::SlowStep:
      get_field_name("field", s.field);
      if (auto v = get_number(node, "ratio", ctx, 1)) s.ratio = *v;
      get_count("consecutive", s.consecutive, 1);
      get_count("baseline", s.baseline, 1);
      get_count("warmup", s.warmup, 0);
      break;
    case DetectorType::PeerSlow:
      get_field_name("field", s.field);
      if (auto v = get_number(node, "margin", ctx, 0)) s.margin = *v;
      get_count("consecutive", s.consecutive, 1);
      get_count("min_peers", s.min_peers, 1);
      get_positive_duration("window", s.window);
      get_field_name("reference", s.reference);
      break;
    case DetectorType::ExpectEvery:
    case DetectorType::ExpectWithin:
      break;
  }
  if (errors.size() != errors_before) return std::nullopt;
  return s;
}

std::optional<DetectorSpec> parse_liveness_spec(const YAML::Node& rule, const std::string& file,
                                                ErrorList& errors) {
  const Ctx ctx{file, &errors};
  const size_t errors_before = errors.size();
  auto given = [&](const char* key) {
    const YAML::Node n = rule[key];
    return n.IsDefined() && !n.IsNull();
  };
  const bool every = given("expect_every");
  const bool within = given("expect_within");
  if (!every && !within) {
    for (const char* key : {"after", "until"}) {
      if (given(key)) {
        ctx.error(rule[key], std::string("'") + key + "' needs 'expect_every' or 'expect_within'");
      }
    }
    return std::nullopt;
  }
  if (every && within) {
    ctx.error(rule["expect_within"], "give 'expect_every' or 'expect_within', not both");
    return std::nullopt;
  }
  if (given("detect")) {
    ctx.error(rule[every ? "expect_every" : "expect_within"],
              "a liveness rule ('expect_every', 'expect_within') has no 'detect'");
  }
  DetectorSpec s;
  s.type = every ? DetectorType::ExpectEvery : DetectorType::ExpectWithin;
  const char* key = every ? "expect_every" : "expect_within";
  if (auto d = yaml::get_duration(rule, key, ctx)) {
    if (d->count() <= 0) {
      ctx.error(rule[key], std::string("'") + key + "' must be longer than 0s");
    } else {
      s.expect = *d;
    }
  }
  auto strings = [&](const char* name, std::vector<std::string>& out) {
    if (auto list = yaml::get_string_list(rule, name, ctx)) {
      for (size_t i = 0; i < list->size(); ++i) {
        if ((*list)[i].empty()) {
          const YAML::Node n = rule[name];
          ctx.error(n.IsSequence() ? n[i] : n, std::string("'") + name + "' has an empty string");
        }
      }
      out = std::move(*list);
    }
  };
  strings("after", s.after);
  strings("until", s.until);
  if (within && s.after.empty()) {
    ctx.error(rule["expect_within"],
              "'expect_within' needs 'after': the lines that start the wait");
  }
  if (every && given("after")) {
    ctx.error(rule["after"],
              "'after' belongs to 'expect_within'; 'expect_every' waits from each line");
  }
  if (errors.size() != errors_before) return std::nullopt;
  return s;
}

}  // namespace faultd
