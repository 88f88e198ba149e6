#include "daemon/state/lifecycle.hpp"

#include <algorithm>
#include <cmath>

namespace faultd {
namespace {

std::string seconds_text(Duration d) {
  return format_duration(std::chrono::duration_cast<std::chrono::seconds>(d));
}

}  // namespace

std::string signature_of(const std::string& rule, const std::string& code) {
  return code.empty() ? rule : rule + "/" + code;
}

std::string rule_of_signature(const std::string& signature) {
  return signature.substr(0, signature.find('/'));
}

void Lifecycle::configure(LifecycleSettings settings) { settings_ = std::move(settings); }

void Lifecycle::load(const std::vector<Incident>& incidents) {
  incidents_.clear();
  open_.clear();
  open_per_rule_.clear();
  storms_.clear();
  storms_per_source_.clear();
  dirty_.clear();
  for (const auto& i : incidents) {
    incidents_[i.id] = i;
    if (!i.device.empty()) devices_seen_.insert(i.device);
    if (i.open && !i.node_level) track_open(i);
  }
}

void Lifecycle::track_open(const Incident& i) {
  auto [it, added] = open_.insert_or_assign(key_of(i.device, i.rule, i.code), i.id);
  if (added) ++open_per_rule_[{i.device, i.rule}];
}

Lifecycle::OpenMap::iterator Lifecycle::untrack_open(OpenMap::iterator it) {
  const Incident& i = incidents_[it->second];
  if (auto n = open_per_rule_.find({i.device, i.rule});
      n != open_per_rule_.end() && --n->second == 0) {
    open_per_rule_.erase(n);
  }
  return open_.erase(it);
}

// A new code gets an incident of its own while its (device, rule) and the node have room.
bool Lifecycle::room_for_incident(const Finding& f) const {
  if (open_.size() >= settings_.limits.open) return false;
  const auto n = open_per_rule_.find({f.device, f.rule});
  return n == open_per_rule_.end() || n->second < settings_.limits.open_per_device_rule;
}

const FrequencyEscalation* Lifecycle::frequency_for(const Finding& f) const {
  for (const auto& e : settings_.frequency) {
    if ((!f.code.empty() && e.codes.count(f.code)) || e.rules.count(f.rule)) return &e;
  }
  return nullptr;
}

void Lifecycle::mark_dirty(int64_t id) { dirty_.insert(id); }

// A code's incident is the device's whichever rule reports it (correlation); a folded one is
// its rule's.
Lifecycle::Key Lifecycle::key_of(const std::string& device, const std::string& rule,
                                 const std::string& code) {
  if (code.empty()) return Key{device, rule, ""};
  if (code == kTooManyCodes) return Key{device, rule, code};
  return Key{device, "", code};
}

Lifecycle::StormKey Lifecycle::storm_key(const Finding& f) {
  return {f.source, signature_of(f.rule, f.code)};
}

Incident* Lifecycle::open_incident(const Key& key, TimePoint now) {
  auto it = open_.find(key);
  if (it == open_.end()) return nullptr;
  Incident& i = incidents_[it->second];
  if (now - i.last < settings_.incident_ttl) return &i;
  i.open = false;  // the TTL passed: a finding now is a new occurrence
  mark_dirty(i.id);
  untrack_open(it);
  return nullptr;
}

void Lifecycle::correlate(Incident& i, const Finding& f, TimePoint now, Decision& d) {
  i.rules.push_back(f.rule);
  d.kind = Kind::Evidence;
  for (const auto& c : settings_.correlations) {
    if (!c.codes.empty() && !c.codes.count(i.code)) continue;
    if (now - i.first > c.window || static_cast<int>(i.rules.size()) < c.signals) continue;
    if (!more_severe(c.to, i.level)) continue;
    std::string rules;
    for (const auto& r : i.rules) rules += (rules.empty() ? "" : ", ") + r;
    i.level = c.to;
    i.escalation = std::to_string(i.rules.size()) + " signals within " + seconds_text(c.window) +
                   " (" + rules + ") raise it to " + std::string(to_string(c.to));
    d.level = i.level;
    d.escalation = i.escalation;
    d.raised = true;
    return;
  }
}

// Closes incidents whose last finding is older than the TTL and forgets closed ones that no
// window can count any more.
void Lifecycle::expire(TimePoint now) {
  Duration keep = settings_.incident_ttl;
  for (const auto& e : settings_.frequency) keep = std::max({keep, e.window, e.release});
  for (auto it = open_.begin(); it != open_.end();) {
    Incident& i = incidents_[it->second];
    if (now - i.last >= settings_.incident_ttl) {
      i.open = false;
      mark_dirty(i.id);
      it = untrack_open(it);
    } else {
      ++it;
    }
  }
  for (auto it = incidents_.begin(); it != incidents_.end();) {
    const bool old = !it->second.open && now - it->second.last > keep;
    const bool crowded = incidents_.size() > kMaxKeptIncidents && !it->second.open;
    it = (old || crowded) ? incidents_.erase(it) : std::next(it);
  }
}

// The window of `f`'s source and signature with `f`'s device counted in it and devices older
// than the window dropped; nullptr when it is new and its source or the node holds all the
// windows it may.
Lifecycle::StormWindow* Lifecycle::storm_window(const Finding& f, TimePoint now) {
  auto key = storm_key(f);
  auto found = storms_.find(key);
  if (found == storms_.end()) {
    size_t& of_source = storms_per_source_[f.source];
    if (storms_.size() >= settings_.limits.storm_windows ||
        of_source >= settings_.limits.storm_windows_per_source) {
      if (of_source == 0) storms_per_source_.erase(f.source);
      return nullptr;
    }
    ++of_source;
    found = storms_.emplace(std::move(key), StormWindow{}).first;
  }
  StormWindow& w = found->second;
  if (w.active && now - w.last > settings_.storm.window) w.active = false;
  for (auto it = w.devices.begin(); it != w.devices.end();) {
    it = now - it->second > settings_.storm.window ? w.devices.erase(it) : std::next(it);
  }
  w.devices[f.device] = now;
  return &w;
}

void Lifecycle::anticipate(const std::vector<Finding>& batch) {
  for (const auto& f : batch) {
    if (f.device.empty() || f.recovery || settings_.shadow_rules.count(f.rule)) continue;
    devices_seen_.insert(f.device);
    storm_window(f, f.time);
  }
}

bool Lifecycle::storm_check(const Finding& f, TimePoint now, Decision& d) {
  StormWindow* window = storm_window(f, now);
  if (window == nullptr) {
    ++storm_refusals_;
    return false;
  }
  StormWindow& w = *window;
  const int devices =
      std::max(settings_.storm.node_devices, static_cast<int>(devices_seen_.size()));
  const int threshold = std::max(
      settings_.storm.min_devices,
      static_cast<int>(std::ceil(settings_.storm.fraction * static_cast<double>(devices))));
  if (!w.active && static_cast<int>(w.devices.size()) < threshold) return false;
  d.kind = Kind::Storm;
  d.level = f.level;
  if (!w.active) {
    w.active = true;
    Incident storm;
    storm.rule = f.rule;
    storm.code = f.code;
    storm.level = storm.base_level = f.level;
    storm.first = storm.last = now;
    storm.count = 0;
    storm.node_level = true;
    std::string list;
    for (const auto& [dev, t] : w.devices) list += (list.empty() ? "" : ",") + dev;
    storm.note = "the same fault on " + std::to_string(w.devices.size()) + " devices (" + list +
                 ") within " + seconds_text(settings_.storm.window) +
                 ": a software or data problem, no device is isolated for it";
    d.storm_started = std::move(storm);
  } else if (auto it = incidents_.find(w.incident); it != incidents_.end()) {
    it->second.count++;
    it->second.last = now;
    d.incident = w.incident;
    mark_dirty(w.incident);
  }
  w.last = now;
  return true;
}

Lifecycle::Decision Lifecycle::decide(const Finding& f, TimePoint now) {
  Decision d;
  d.level = f.level;
  if (settings_.shadow_rules.count(f.rule)) {
    d.kind = Kind::Shadow;
    return d;
  }
  if (f.device.empty()) {
    d.kind = Kind::NoDevice;
    return d;
  }
  devices_seen_.insert(f.device);
  if (f.recovery) {
    d.kind = Kind::Recovery;
    for (auto it = open_.begin(); it != open_.end();) {
      const bool match = it->first.device == f.device &&
                         (f.code.empty() || it->first.code == f.code) &&
                         incidents_[it->second].source == f.source;
      if (!match) {
        ++it;
        continue;
      }
      Incident& i = incidents_[it->second];
      i.open = false;
      i.last = now;
      mark_dirty(i.id);
      d.closed.push_back(i.id);
      it = untrack_open(it);
    }
    return d;
  }
  if (storm_check(f, now, d)) return d;
  d.code = f.code;
  Incident* open = open_incident(key_of(f.device, f.rule, f.code), now);
  if (open == nullptr && !room_for_incident(f)) {
    d.code = kTooManyCodes;
    d.folded = true;
    open = open_incident(key_of(f.device, f.rule, d.code), now);
  }
  if (open != nullptr) {
    Incident& i = *open;
    i.count++;
    i.last = now;
    mark_dirty(i.id);
    d.kind = Kind::Grouped;
    d.incident = i.id;
    d.level = i.level;
    if (i.rules.empty()) i.rules.push_back(i.rule);  // loaded from the store
    if (std::find(i.rules.begin(), i.rules.end(), f.rule) == i.rules.end()) correlate(i, f, now, d);
    return d;
  }
  d.kind = Kind::NewIncident;
  if (const auto* e = frequency_for(f)) {
    const auto index = static_cast<size_t>(e - settings_.frequency.data());
    TimePoint since = now - e->window;
    if (auto r = released_.find(f.device + "\n" + std::to_string(index)); r != released_.end()) {
      since = std::max(since, r->second);
    }
    int occurrences = 1;  // this one
    for (const auto& [id, i] : incidents_) {
      const bool same =
          i.device == f.device && !i.node_level &&
          ((!f.code.empty() && i.code == f.code) || (f.code.empty() && i.rule == f.rule));
      if (same && i.first > since) ++occurrences;
    }
    if (occurrences >= e->times && more_severe(e->to, d.level)) {
      d.level = e->to;
      d.escalation = std::to_string(occurrences) + " occurrences within " +
                     seconds_text(e->window) + " raise " + std::string(to_string(f.level)) +
                     " to " + std::string(to_string(e->to));
    }
  }
  return d;
}

void Lifecycle::opened(const Finding& f, const Decision& d) {
  Incident i;
  i.id = f.id;
  i.device = f.device;
  i.rule = f.rule;
  i.code = d.code;
  i.source = f.source;
  i.level = d.level;
  i.base_level = f.level;
  i.first = i.last = f.time;
  i.escalation = d.escalation;
  if (d.folded) {
    i.note = "more open incidents of rule " + f.rule + " on this device than " +
             std::to_string(settings_.limits.open_per_device_rule) + " (or on the node than " +
             std::to_string(settings_.limits.open) + "): further codes are counted here";
  }
  i.rules = {f.rule};
  incidents_[i.id] = i;
  track_open(i);
  mark_dirty(i.id);
}

void Lifecycle::storm_recorded(const Finding& f, const Incident& incident) {
  if (auto w = storms_.find(storm_key(f)); w != storms_.end()) w->second.incident = incident.id;
  incidents_[incident.id] = incident;
  mark_dirty(incident.id);
}

std::vector<Incident> Lifecycle::tick(TimePoint now) {
  expire(now);
  std::vector<Incident> changed;
  for (auto& [key, id] : open_) {
    Incident& i = incidents_[id];
    for (const auto& e : settings_.duration) {
      if (!e.codes.count(i.code) || !more_severe(e.to, i.level)) continue;
      if (now - i.first < e.fault_timeout) continue;
      i.level = e.to;
      i.escalation = "open for " + seconds_text(now - i.first) + " (fault timeout " +
                     seconds_text(e.fault_timeout) + ") raises it to " +
                     std::string(to_string(e.to));
      mark_dirty(i.id);
      changed.push_back(i);
    }
  }
  // Release: an escalated incident with no new occurrence for the release window.
  for (size_t index = 0; index < settings_.frequency.size(); ++index) {
    const auto& e = settings_.frequency[index];
    const Duration release = e.release > Duration{0} ? e.release : e.window;
    for (auto it = open_.begin(); it != open_.end();) {
      Incident& i = incidents_[it->second];
      const bool covered = e.codes.count(i.code) || e.rules.count(i.rule);
      if (!covered || i.escalation.empty() || now - i.last < release) {
        ++it;
        continue;
      }
      i.open = false;
      i.note = "released: no occurrence for " + seconds_text(release);
      released_[i.device + "\n" + std::to_string(index)] = now;
      mark_dirty(i.id);
      changed.push_back(i);
      it = untrack_open(it);
    }
  }
  for (auto& [sig, w] : storms_) {
    if (!w.active || now - w.last <= settings_.storm.window) continue;
    w.active = false;
    if (auto it = incidents_.find(w.incident); it != incidents_.end()) {
      it->second.open = false;
      mark_dirty(it->second.id);
    }
  }
  for (auto it = storms_.begin(); it != storms_.end();) {
    const StormWindow& w = it->second;
    const bool over =
        !w.active && (w.devices.empty() || now - std::max_element(
                                                     w.devices.begin(), w.devices.end(),
                                                     [](const auto& a, const auto& b) {
                                                       return a.second < b.second;
                                                     })->second >
                                               settings_.storm.window);
    if (!over) {
      ++it;
      continue;
    }
    if (auto n = storms_per_source_.find(it->first.first);
        n != storms_per_source_.end() && --n->second == 0) {
      storms_per_source_.erase(n);
    }
    it = storms_.erase(it);
  }
  return changed;
}

std::vector<Incident> Lifecycle::take_dirty() {
  std::vector<Incident> out;
  for (int64_t id : dirty_) {
    if (auto it = incidents_.find(id); it != incidents_.end() && id != 0) out.push_back(it->second);
  }
  dirty_.clear();
  return out;
}

const Incident* Lifecycle::find(int64_t id) const {
  auto it = incidents_.find(id);
  return it == incidents_.end() ? nullptr : &it->second;
}

std::vector<Incident> Lifecycle::open_incidents() const {
  std::vector<Incident> out;
  for (const auto& [id, i] : incidents_) {
    if (i.open) out.push_back(i);
  }
  return out;
}

bool Lifecycle::storm_active(TimePoint now) const {
  return std::any_of(storms_.begin(), storms_.end(), [&](const auto& kv) {
    return kv.second.active && now - kv.second.last <= settings_.storm.window;
  });
}

}  // namespace faultd
