#include "collectors/activity/hang_source.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "collectors/command/command_source.hpp"
#include "daemon/core/child_process.hpp"
#include "daemon/core/hash.hpp"

namespace faultd {

namespace {

// The value of `key=` in a record line (records.hpp: bare, or double-quoted with \" and \\).
std::optional<std::string> field(std::string_view line, std::string_view key) {
  size_t at = 0;
  while ((at = line.find(key, at)) != std::string_view::npos) {
    const bool starts = at > 0 && line[at - 1] == ' ';
    const size_t eq = at + key.size();
    if (!starts || eq >= line.size() || line[eq] != '=') {
      at = eq;
      continue;
    }
    std::string_view rest = line.substr(eq + 1);
    if (!rest.starts_with('"')) return std::string(rest.substr(0, rest.find(' ')));
    std::string out;
    for (size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] == '\\' && i + 1 < rest.size()) {
        out += rest[++i];
      } else if (rest[i] == '"') {
        return out;
      } else {
        out += rest[i];
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

template <typename T>
std::optional<T> number_field(std::string_view line, std::string_view key) {
  const auto text = field(line, key);
  if (!text) return std::nullopt;
  T v{};
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

// The verdict's record line (format in hang_source.hpp).
std::string format_hang_record(const HangVerdict& v, FaultLevel wedge_level) {
  const FaultLevel level = v.cause == "device-wedge" ? wedge_level : FaultLevel::NotHandleFault;
  std::string name = v.holder.name.empty() ? "-" : v.holder.name;
  for (char& c : name) {
    if (c == ' ' || c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) c = '_';
  }
  std::string out =
      "hang: device=" + v.device + " cause=" + v.cause + " level=" + std::string(to_string(level)) +
      " pid=" + std::to_string(v.holder.pid) + " process=" + name + " state=" + v.state +
      " wchan=" + (v.wchan.empty() ? "-" : v.wchan) + " cpu_per_min=" + fixed1(v.cpu_per_minute) +
      " util=" + fixed1(v.utilization) + " memory_mb=" + std::to_string(v.memory_mb) +
      " polls=" + std::to_string(v.polls) + " silent_for=" +
      (v.silent_for == Duration{}
           ? std::string("never")
           : format_duration(std::chrono::duration_cast<std::chrono::seconds>(v.silent_for))) +
      " job_devices_flat=" + std::to_string(v.job_devices_flat) + "/" +
      std::to_string(v.job_devices);
  return out;
}

struct HangSource::Impl {
  HangSourceConfig config;
  const LogActivity& logs;
  std::unique_ptr<ProcessReader> procs;
  HangJudge judge;
  SourceStats stats;
  std::array<uint64_t, kSourceErrorKindCount> own_errors{};  // this source's, not its probes'
  UniqueFd epoll_fd;
  std::unique_ptr<CommandSource> usage, holders, traffic;
  // Samples read since the last judgement, and the node's picture.
  std::map<std::string, DeviceSample> pending;
  std::map<std::string, std::vector<Holder>> held;   // device → holders (last process table)
  std::map<std::string, std::string> bus_to_device;  // nvidia-smi: bus id → index
  std::map<std::string, uint64_t> packets;           // device → last traffic counter
  std::map<std::string, DeviceSample> latest;        // for activity()
  std::optional<TimePoint> next_probe_check;
  uint64_t stream_end = 0;
  mutable std::mutex mu;  // guards latest and held's sizes for the exporter

  Impl(HangSourceConfig c, const LogActivity& l, std::unique_ptr<ProcessReader> p)
      : config(std::move(c)),
        logs(l),
        procs(p ? std::move(p) : std::make_unique<ProcfsReader>()),
        judge(config.thresholds) {
    const Duration interval = config.thresholds.interval;
    auto probe = [&](const std::string& suffix, std::vector<std::string> argv, std::string devices,
                     CommandParser parser) {
      CommandSourceConfig cc;
      cc.name = config.name + ":" + suffix;
      cc.argv = std::move(argv);
      cc.devices = std::move(devices);
      cc.interval = interval;
      cc.timeout = std::min(config.timeout, interval);
      cc.unresponsive_after = config.unresponsive_after;
      cc.max_output_bytes = size_t{256} * 1024;
      cc.parser = parser;
      return std::make_unique<CommandSource>(cc);
    };
    const std::string& tool = config.program;
    if (config.tool == HangTool::NpuSmi) {
      usage = probe("usage", {tool, "info", "-t", "usages", "-i", "{device}"}, config.devices,
                    CommandParser::NpuSmiUsages);
      holders = probe("holders", {tool, "info"}, "", CommandParser::NpuSmiProcesses);
      if (!config.hccn_tool.empty()) {
        traffic = probe("traffic", {config.hccn_tool, "-i", "{device}", "-stat", "-g"},
                        config.devices, CommandParser::HccnStat);
      }
    } else {
      usage = probe("usage",
                    {tool, "--query-gpu=" + std::string(command_parsers::kActivityGpuFields),
                     "--format=csv,noheader,nounits"},
                    "", CommandParser::NvidiaSmiActivity);
      holders = probe("holders",
                      {tool, "--query-compute-apps=gpu_bus_id,pid,used_memory",
                       "--format=csv,noheader,nounits"},
                      "", CommandParser::NvidiaSmiApps);
    }
    epoll_fd = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_fd.valid()) throw std::runtime_error("epoll_create1 failed");
    for (CommandSource* s : probes_list()) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = s;
      if (s->wake_fd() >= 0) epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, s->wake_fd(), &ev);
    }
  }

  std::vector<CommandSource*> probes_list() const {
    std::vector<CommandSource*> out{usage.get(), holders.get()};
    if (traffic) out.push_back(traffic.get());
    return out;
  }

  // Reads the samples out of a probe's chunk, then hands the chunk on as it is.
  class Tap final : public ChunkSink {
   public:
    Tap(Impl& impl, ChunkSink& next) : impl_(impl), next_(next) {}
    bool on_chunk(const Chunk& chunk) override {
      if (!next_.on_chunk(chunk)) return false;  // offered again with the next run
      if (chunk.source_type == "command") impl_.read_samples(chunk.data);
      return true;
    }

   private:
    Impl& impl_;
    ChunkSink& next_;
  };

  void read_samples(std::string_view data) {
    bool table = false;
    std::map<std::string, std::vector<Holder>> new_held;
    size_t start = 0;
    while (start < data.size()) {
      size_t end = data.find('\n', start);
      if (end == std::string_view::npos) end = data.size();
      const std::string_view line = data.substr(start, end - start);
      start = end + 1;
      if (line.starts_with("activity:")) {
        const auto util = number_field<double>(line, "util");
        const auto memory = number_field<uint64_t>(line, "memory_mb");
        auto device = field(line, "device");
        if (!util || !memory || !device || !is_valid_device_id(*device)) {
          ++own_errors[static_cast<size_t>(SourceErrorKind::Parse)];
          continue;
        }
        if (const auto bus = field(line, "bus_id")) bus_to_device[*bus] = *device;
        DeviceSample s;
        s.device = *device;
        s.utilization = *util;
        s.memory_mb = *memory;
        pending[*device] = s;
      } else if (line.starts_with("holders:")) {
        table = true;
      } else if (line.starts_with("holder:")) {
        auto device = field(line, "device");
        if (!device) {
          const auto bus = field(line, "bus_id");
          const auto it = bus ? bus_to_device.find(*bus) : bus_to_device.end();
          if (it != bus_to_device.end()) device = it->second;
        }
        const auto pid = number_field<int64_t>(line, "pid");
        if (!device || !pid || !is_valid_device_id(*device)) continue;  // a GPU not yet mapped
        auto& list = new_held[*device];
        if (list.size() < 64) list.push_back({*pid, field(line, "name").value_or("")});
      } else if (line.starts_with("traffic:")) {
        const auto device = field(line, "device");
        const auto count = number_field<uint64_t>(line, "packets");
        if (device && count) packets[*device] = *count;
      }
    }
    if (table) {
      std::lock_guard lock(mu);
      held = std::move(new_held);
    }
  }

  void judge_pending(TimePoint now, ChunkSink& sink) {
    // Usage probes that failed this interval: the device's figures are stale.
    if (!next_probe_check || now >= *next_probe_check) {
      next_probe_check = now + config.thresholds.interval;
      for (const auto& p : usage->probes()) {
        if (!p.up && !p.device.empty() && !pending.contains(p.device)) {
          DeviceSample s;
          s.device = p.device;
          s.probe_failed = true;
          pending[p.device] = s;
        }
      }
    }
    if (pending.empty()) return;
    std::vector<DeviceSample> samples;
    for (auto& [device, s] : pending) {
      if (const auto it = packets.find(device); it != packets.end()) s.packets = it->second;
      samples.push_back(s);
    }
    pending.clear();
    {
      std::lock_guard lock(mu);
      for (const auto& s : samples) {
        if (!s.probe_failed) latest[s.device] = s;
      }
    }
    const auto verdicts = judge.step(now, samples, held, *procs, logs);
    if (verdicts.empty()) return;
    std::string data;
    for (const auto& v : verdicts) data += format_hang_record(v, config.wedge_level) + "\n";
    Chunk chunk;
    chunk.source = config.name;
    chunk.source_type = "command";
    chunk.path = "hang verdict";
    chunk.identity.ino = fnv1a64(std::string_view("\0verdict", 8), fnv1a64(config.name)) | 1;
    chunk.start_offset = std::max<uint64_t>(
        static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count()),
        stream_end);
    chunk.end_offset = chunk.start_offset + data.size();
    chunk.first_line = 1;
    chunk.end_line = verdicts.size();
    chunk.data = data;
    chunk.noticed = now;
    // A verdict the sink refuses is lost: the flat run is not judged again (a new run is).
    if (!sink.on_chunk(chunk)) {
      ++own_errors[static_cast<size_t>(SourceErrorKind::Commit)];
      return;
    }
    stream_end = chunk.end_offset;
    stats.lines.fetch_add(verdicts.size(), std::memory_order_relaxed);
  }
};

HangSource::HangSource(HangSourceConfig config, const LogActivity& logs,
                       std::unique_ptr<ProcessReader> procs)
    : impl_(std::make_unique<Impl>(std::move(config), logs, std::move(procs))) {}

HangSource::~HangSource() = default;

const std::string& HangSource::name() const { return impl_->config.name; }

bool HangSource::poll_once(TimePoint now, ChunkSink& sink) {
  Impl::Tap tap(*impl_, sink);
  bool more = false;
  for (CommandSource* s : impl_->probes_list()) more |= s->poll_once(now, tap);
  // The probes' health is this source's: their bytes and errors add to its own.
  uint64_t bytes = 0;
  std::array<uint64_t, kSourceErrorKindCount> errors = impl_->own_errors;
  for (CommandSource* s : impl_->probes_list()) {
    bytes += s->stats().bytes.load();
    for (int k = 0; k < kSourceErrorKindCount; ++k) {
      errors[k] += s->stats().error_count(static_cast<SourceErrorKind>(k));
    }
  }
  impl_->stats.bytes.store(bytes, std::memory_order_relaxed);
  for (int k = 0; k < kSourceErrorKindCount; ++k) {
    impl_->stats.errors[k].store(errors[k], std::memory_order_relaxed);
  }
  impl_->judge_pending(now, sink);
  return more;
}

Duration HangSource::poll_interval() const {
  Duration d = impl_->usage->poll_interval();
  for (CommandSource* s : impl_->probes_list()) d = std::min(d, s->poll_interval());
  return d;
}

int HangSource::wake_fd() const { return impl_->epoll_fd.get(); }

void HangSource::drain_wake_fd() {
  epoll_event events[4];
  const int n = epoll_wait(impl_->epoll_fd.get(), events, 4, 0);
  for (int i = 0; i < n; ++i) static_cast<CommandSource*>(events[i].data.ptr)->drain_wake_fd();
}

SourceStats& HangSource::stats() { return impl_->stats; }

std::vector<ProbeUp> HangSource::probes() const {
  // A device is up when every probe run for it succeeded; the node-wide probes (the process
  // table, nvidia-smi's queries) are the "" probe.
  std::map<std::string, bool> up;
  for (CommandSource* s : impl_->probes_list()) {
    for (const auto& p : s->probes()) {
      auto [it, fresh] = up.emplace(p.device, p.up);
      if (!fresh) it->second = it->second && p.up;
    }
  }
  std::vector<ProbeUp> out;
  out.reserve(up.size());
  for (const auto& [device, ok] : up) out.push_back({device, ok});
  return out;
}

std::vector<DeviceActivity> HangSource::activity() const {
  std::lock_guard lock(impl_->mu);
  std::vector<DeviceActivity> out;
  for (const auto& [device, s] : impl_->latest) {
    const auto h = impl_->held.find(device);
    out.push_back(
        {device, s.utilization, s.memory_mb, h == impl_->held.end() ? 0 : h->second.size()});
  }
  return out;
}

}  // namespace faultd
