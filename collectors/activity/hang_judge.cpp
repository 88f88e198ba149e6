#include "collectors/activity/hang_judge.hpp"

#include <algorithm>
#include <set>

namespace faultd {

void HangJudge::reset(Track& t, std::vector<int64_t> pids) {
  t = Track{};
  t.pids = std::move(pids);
}

size_t HangJudge::flat_devices() const {
  return static_cast<size_t>(std::count_if(tracks_.begin(), tracks_.end(),
                                           [](const auto& e) { return e.second.flat > 0; }));
}

std::string HangJudge::classify(const DeviceSample& s, const ProcessSample& p,
                                double cpu_per_minute) const {
  if (!s.probe_failed && s.utilization >= t_.busy_above) return "device-wedge";
  if (p.state == 'D') {
    if (s.probe_failed) return "device-wedge";
    for (const auto& prefix : t_.device_wchan) {
      if (p.wchan.starts_with(prefix)) return "device-wedge";
    }
    return "host";
  }
  if (p.state == 'R' || cpu_per_minute >= t_.cpu_seconds_per_minute) return "data-stall";
  return "collective-wait";
}

std::vector<HangVerdict> HangJudge::step(TimePoint now, const std::vector<DeviceSample>& samples,
                                         const std::map<std::string, std::vector<Holder>>& holders,
                                         const ProcessReader& procs, const LogActivity& logs) {
  struct Candidate {
    const DeviceSample* sample;
    ProcessSample proc;
    Holder holder;
    double cpu_per_minute;
  };
  std::vector<Candidate> candidates;
  const double minutes = std::chrono::duration<double>(t_.interval).count() / 60.0;

  for (const DeviceSample& s : samples) {
    Track& track = tracks_[s.device];
    const auto h = holders.find(s.device);
    std::vector<int64_t> pids;
    if (h != holders.end()) {
      for (const Holder& holder : h->second) pids.push_back(holder.pid);
    }
    std::sort(pids.begin(), pids.end());
    if (pids.empty()) {  // nobody holds it: whatever the figures, not a hang
      reset(track, {});
      continue;
    }
    if (pids != track.pids) reset(track, pids);
    // The holders' state; one that is gone ends the job on this device.
    std::optional<ProcessSample> main;
    Holder main_holder;
    uint64_t cpu = 0;
    bool gone = false;
    for (const Holder& holder : h->second) {
      const auto p = procs.read(holder.pid);
      if (!p || p->state == 'Z' || p->state == 'X') {
        gone = true;
        break;
      }
      cpu += p->cpu_ticks;
      // The holder that says most: one in D state, else one running, else the first.
      if (!main || (p->state == 'D' && main->state != 'D') ||
          (p->state == 'R' && main->state != 'D' && main->state != 'R')) {
        main = p;
        main_holder = holder;
      }
    }
    if (gone || !main) {
      reset(track, {});
      continue;
    }
    const bool idle = !s.probe_failed && s.utilization < t_.util_below;
    const bool busy = !s.probe_failed && s.utilization >= t_.busy_above;
    if (!s.probe_failed && !idle) track.armed = true;
    const std::optional<TimePoint> log_last = logs.last_line(s.device);
    bool flat = false;
    if (track.armed) {
      const DeviceSample& base = track.last.value_or(s);
      const bool memory_grew = !s.probe_failed && s.memory_mb > base.memory_mb;
      bool traffic_quiet = true, traffic_known = false;
      if (s.packets && base.packets && minutes > 0) {
        traffic_known = true;
        const uint64_t delta = *s.packets >= *base.packets ? *s.packets - *base.packets : 0;
        traffic_quiet = static_cast<double>(delta) / minutes < t_.packets_per_minute;
      }
      const bool busy_counts = busy && (traffic_known || log_last.has_value());
      const bool stuck_probe = s.probe_failed && main->state == 'D';
      flat = !memory_grew && traffic_quiet && (idle || busy_counts || stuck_probe);
    }
    if (flat) {
      if (track.flat == 0) track.cpu_start = track.cpu_last;
      ++track.flat;
    } else {
      track.flat = 0;
      track.reported = false;
    }
    track.cpu_last = cpu;
    if (!s.probe_failed) track.last = s;
    track.session = main->session;
    if (track.flat < t_.polls || track.reported) continue;
    // The log half: no line naming the device over the flat run (its first poll excepted: a
    // line the job wrote just before it stopped may be read a moment after that poll).
    const Duration quiet = t_.interval * (t_.polls - 1);
    if (log_last && now - *log_last < quiet) continue;
    const double ticks = procs.ticks_per_second();
    const double cpu_seconds =
        static_cast<double>(cpu >= track.cpu_start ? cpu - track.cpu_start : 0) / ticks;
    const double per_minute = cpu_seconds / (minutes * track.flat);
    track.reported = true;
    candidates.push_back({&s, *main, main_holder, per_minute});
  }

  std::vector<HangVerdict> out;
  for (const Candidate& c : candidates) {
    const Track& track = tracks_[c.sample->device];
    HangVerdict v;
    v.device = c.sample->device;
    v.cause = classify(*c.sample, c.proc, c.cpu_per_minute);
    v.holder = c.holder;
    v.state = c.proc.state;
    v.wchan = c.proc.wchan;
    v.cpu_per_minute = c.cpu_per_minute;
    v.utilization = track.last ? track.last->utilization : 0;
    v.memory_mb = track.last ? track.last->memory_mb : 0;
    v.polls = track.flat;
    if (const auto last = logs.last_line(v.device)) v.silent_for = now - *last;
    // The job's local devices: those whose holders share its session.
    for (const auto& [device, other] : tracks_) {
      if (other.pids.empty() || other.session != track.session) continue;
      ++v.job_devices;
      if (other.flat > 0) ++v.job_devices_flat;
    }
    out.push_back(std::move(v));
  }
  // Devices that left the samples for good are forgotten with their holders (bounded by the
  // configured device list anyway).
  return out;
}

}  // namespace faultd
