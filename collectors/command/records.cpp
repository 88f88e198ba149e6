#include "collectors/command/records.hpp"

#include "daemon/core/enum_names.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>

namespace faultd {

using command_parsers::DeviceHealth;

namespace {

constexpr size_t kMaxInfoBytes = 1024;
constexpr std::string_view kProbePrefix = "probe";

bool is_bare(std::string_view v) {
  if (v.empty()) return false;
  for (const char c : v) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == ':' || c == '/' || c == '+' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void append_field(std::string& out, std::string_view key, std::string_view value) {
  out += ' ';
  out += key;
  out += '=';
  if (is_bare(value)) {
    out += value;
    return;
  }
  out += '"';
  for (const char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_identity(std::string& out, std::string_view prefix, std::string_view device,
                     std::string_view chip) {
  out += prefix;
  out += ':';
  if (!device.empty()) append_field(out, "device", device);
  if (!chip.empty()) append_field(out, "chip", chip);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

namespace {
constexpr std::array<std::string_view, 10> kParserNames = {
    "npu_smi_health", "npu_smi_info",    "deviceinfo_cm",       "nvidia_smi_bus",
    "npu_smi_usages", "npu_smi_procs",   "nvidia_smi_activity", "nvidia_smi_apps",
    "hccn_stat",      "nvidia_smi_query"};
}  // namespace

std::optional<CommandParser> parse_command_parser(std::string_view name) {
  return enum_named<CommandParser>(kParserNames, name);
}

std::string_view to_string(CommandParser parser) { return name_of(kParserNames, parser); }

std::string command_parser_names() { return joined_names(kParserNames); }

std::string_view record_prefix(CommandParser parser) {
  switch (parser) {
    case CommandParser::NpuSmiHealth:
      return "npu-smi health";
    case CommandParser::NpuSmiInfo:
      return "npu-smi info";
    case CommandParser::DeviceInfoCm:
      return "deviceinfo";
    case CommandParser::NvidiaSmiBus:
      return "nvidia-smi gpu";
    case CommandParser::NpuSmiUsages:
    case CommandParser::NvidiaSmiActivity:
      return "activity";
    case CommandParser::NpuSmiProcesses:
    case CommandParser::NvidiaSmiApps:
      return "holder";
    case CommandParser::HccnStat:
      return "traffic";
    case CommandParser::NvidiaSmiQuery:
      return "nvidia-smi query";
  }
  return "?";
}

bool is_sample_parser(CommandParser parser) {
  return parser == CommandParser::NpuSmiUsages || parser == CommandParser::NpuSmiProcesses ||
         parser == CommandParser::NvidiaSmiActivity || parser == CommandParser::NvidiaSmiApps ||
         parser == CommandParser::HccnStat;
}

namespace {
std::string percent_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
}  // namespace

std::string format_activity_record(const command_parsers::DeviceUsage& u) {
  std::string out;
  append_identity(out, "activity", u.device, "");
  if (!u.bus_id.empty()) append_field(out, "bus_id", u.bus_id);
  append_field(out, "util", percent_text(u.utilization));
  append_field(out, "memory_mb", std::to_string(u.memory_mb));
  return out;
}

std::string format_holder_record(const command_parsers::DeviceProcess& p) {
  std::string out;
  append_identity(out, "holder", p.device, "");
  if (!p.bus_id.empty()) append_field(out, "bus_id", p.bus_id);
  append_field(out, "pid", std::to_string(p.pid));
  append_field(out, "name", p.name.empty() ? std::string_view("-") : std::string_view(p.name));
  append_field(out, "memory_mb", std::to_string(p.memory_mb));
  return out;
}

std::string format_traffic_record(std::string_view device, uint64_t packets) {
  std::string out;
  append_identity(out, "traffic", device, "");
  append_field(out, "packets", std::to_string(packets));
  return out;
}

std::string format_health_record(std::string_view prefix, const DeviceHealth& h,
                                 std::string_view code) {
  std::string out;
  append_identity(out, prefix, h.device, h.chip);
  append_field(out, "status", h.status.empty() ? std::string_view("?") : h.status);
  if (!code.empty()) append_field(out, "code", code);
  if (!h.fault_level.empty()) append_field(out, "fault_level", h.fault_level);
  if (!h.info.empty()) {
    std::string info;
    for (const std::string& piece : h.info) {
      if (!info.empty()) info += "; ";
      info += piece;
    }
    if (info.size() > kMaxInfoBytes) info.resize(kMaxInfoBytes);
    append_field(out, "info", info);
  }
  return out;
}

std::string format_recovery_record(std::string_view prefix, std::string_view device,
                                   std::string_view chip) {
  std::string out;
  append_identity(out, prefix, device, chip);
  out += " status=OK recovered";
  return out;
}

std::string format_gpu_record(const command_parsers::GpuBus& gpu) {
  std::string out = "nvidia-smi gpu:";
  append_field(out, "index", gpu.index);
  append_field(out, "bus_id", gpu.bus_id);
  return out;
}

std::string format_unresponsive_record(std::string_view device, uint32_t failures,
                                       std::string_view reason) {
  std::string out;
  append_identity(out, kProbePrefix, device, "");
  append_field(out, "status", "unresponsive");
  append_field(out, "failures", std::to_string(failures));
  append_field(out, "reason", reason.substr(0, kMaxInfoBytes));
  return out;
}

std::vector<std::string> failed_output_lines(std::string_view output) {
  std::vector<std::string> lines;
  while (!output.empty() && lines.size() < kMaxFailedOutputLines) {
    const size_t nl = output.find('\n');
    std::string_view line = output.substr(0, nl);
    output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    lines.emplace_back(line.substr(0, kMaxInfoBytes));
  }
  return lines;
}

std::vector<std::string> ProbeTracker::failed_output(const std::string& device,
                                                     std::string_view output) {
  std::vector<std::string> lines = failed_output_lines(output);
  if (lines.empty()) return lines;
  Probe& p = probes_[device];
  std::string joined;
  for (const auto& line : lines) joined += line + '\n';
  const size_t hash = std::hash<std::string>{}(joined);
  if (std::find(p.outputs_handed.begin(), p.outputs_handed.end(), hash) != p.outputs_handed.end()) {
    return {};  // a failure said before: no news
  }
  p.output_pending = hash;
  return lines;
}

std::optional<std::string> ProbeTracker::failed(const std::string& device,
                                                std::string_view reason) {
  Probe& p = probes_[device];
  p.up = false;
  if (p.failures < UINT32_MAX) ++p.failures;
  if (p.reported || p.failures < unresponsive_after_) return std::nullopt;
  return format_unresponsive_record(device, p.failures, reason);
}

std::optional<std::string> ProbeTracker::succeeded(const std::string& device) {
  Probe& p = probes_[device];
  p.up = true;
  p.failures = 0;
  p.outputs_handed.clear();  // a failure after this one is news again
  p.output_pending.reset();
  if (!p.reported) return std::nullopt;
  return format_recovery_record(kProbePrefix, device, "");
}

void ProbeTracker::handed_on(const std::string& device) {
  const auto it = probes_.find(device);
  if (it != probes_.end()) it->second.reported = !it->second.up;
}

void ProbeTracker::output_handed_on(const std::string& device) {
  const auto it = probes_.find(device);
  if (it == probes_.end() || !it->second.output_pending) return;
  std::vector<size_t>& handed = it->second.outputs_handed;
  if (handed.size() == kFailedOutputsKept) handed.erase(handed.begin());
  handed.push_back(*it->second.output_pending);
  it->second.output_pending.reset();
}

std::vector<ProbeUp> ProbeTracker::up() const {
  std::vector<ProbeUp> out;
  for (const auto& [device, p] : probes_) out.push_back({device, p.up});
  return out;
}

uint32_t ProbeTracker::failures(const std::string& device) const {
  const auto it = probes_.find(device);
  return it == probes_.end() ? 0 : it->second.failures;
}

std::vector<std::string> HealthTracker::diff(const std::vector<DeviceHealth>& observed) const {
  std::vector<std::string> lines;
  for (const DeviceHealth& h : observed) {
    const auto it = seen_.find({h.device, h.chip});
    const bool was_sick = it != seen_.end() && it->second.status != "OK";
    if (h.ok()) {
      if (was_sick) lines.push_back(format_recovery_record(prefix_, h.device, h.chip));
      continue;
    }
    if (h.codes.empty()) {
      if (!was_sick || it->second.status != h.status) {
        lines.push_back(format_health_record(prefix_, h, ""));
      }
      continue;
    }
    for (const std::string& code : h.codes) {
      if (!was_sick || !contains(it->second.codes, code)) {
        lines.push_back(format_health_record(prefix_, h, code));
      }
    }
  }
  return lines;
}

void HealthTracker::commit(const std::vector<DeviceHealth>& observed) {
  for (const DeviceHealth& h : observed) seen_[{h.device, h.chip}] = Seen{h.status, h.codes};
}

std::optional<Observation> observe(CommandParser parser, std::string_view output,
                                   std::string_view device, std::string_view chip,
                                   std::string& error) {
  Observation o;
  switch (parser) {
    case CommandParser::NpuSmiHealth: {
      auto health = command_parsers::parse_npu_smi_health(output, error);
      if (!health) return std::nullopt;
      health->device = std::string(device);
      health->chip = std::string(chip);
      o.health.push_back(std::move(*health));
      break;
    }
    case CommandParser::NpuSmiInfo: {
      auto table = command_parsers::parse_npu_smi_info(output, error, &o.truncated);
      if (!table) return std::nullopt;
      o.health = std::move(*table);
      break;
    }
    case CommandParser::DeviceInfoCm: {
      auto list = command_parsers::parse_deviceinfo_cm(output, error);
      if (!list) return std::nullopt;
      o.health = std::move(*list);
      break;
    }
    case CommandParser::NvidiaSmiBus: {
      auto map = command_parsers::parse_nvidia_smi_bus(output, error);
      if (!map) return std::nullopt;
      o.gpus = std::move(*map);
      break;
    }
    case CommandParser::NpuSmiUsages:
    case CommandParser::NvidiaSmiActivity: {
      std::vector<command_parsers::DeviceUsage> usages;
      if (parser == CommandParser::NpuSmiUsages) {
        auto usage = command_parsers::parse_npu_smi_usages(output, error);
        if (!usage) return std::nullopt;
        usage->device = std::string(device);
        usages.push_back(std::move(*usage));
      } else {
        auto list = command_parsers::parse_nvidia_smi_activity(output, error);
        if (!list) return std::nullopt;
        usages = std::move(*list);
      }
      for (const auto& u : usages) o.samples.push_back(format_activity_record(u));
      break;
    }
    case CommandParser::NpuSmiProcesses:
    case CommandParser::NvidiaSmiApps: {
      auto list = parser == CommandParser::NpuSmiProcesses
                      ? command_parsers::parse_npu_smi_processes(output, error)
                      : command_parsers::parse_nvidia_smi_apps(output, error);
      if (!list) return std::nullopt;
      o.samples.push_back("holders: count=" + std::to_string(list->size()));
      for (const auto& p : *list) o.samples.push_back(format_holder_record(p));
      break;
    }
    case CommandParser::HccnStat: {
      const auto packets = command_parsers::parse_hccn_stat_packets(output, error);
      if (!packets) return std::nullopt;
      o.samples.push_back(format_traffic_record(device, *packets));
      break;
    }
    case CommandParser::NvidiaSmiQuery: {
      auto gpus = command_parsers::parse_nvidia_smi_query(output, error);
      if (!gpus) return std::nullopt;
      o.health = std::move(*gpus);
      break;
    }
  }
  return o;
}

}  // namespace faultd
