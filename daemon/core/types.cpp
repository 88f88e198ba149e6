#include "daemon/core/types.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>

#include "daemon/core/enum_names.hpp"

namespace faultd {
namespace {

constexpr std::array<std::string_view, kFaultLevelCount> kLevelNames = {
    "NotHandleFault", "SubHealthFault", "RestartRequest", "RestartBusiness",    "FreeRestartNPU",
    "RestartNPU",     "PreSeparateNPU", "SeparateNPU",    "ManuallySeparateNPU"};
constexpr std::array<std::string_view, kDeviceStateCount> kStateNames = {"healthy", "warning",
                                                                         "isolated"};

}  // namespace

std::string_view to_string(FaultLevel level) { return name_of(kLevelNames, level); }

std::optional<FaultLevel> parse_fault_level(std::string_view text) {
  return enum_named<FaultLevel>(kLevelNames, text);
}

std::string fault_level_names() { return joined_names(kLevelNames); }

std::string_view to_string(DeviceState state) { return name_of(kStateNames, state); }

std::optional<DeviceState> parse_device_state(std::string_view text) {
  return enum_named<DeviceState>(kStateNames, text);
}

bool is_source_type(std::string_view type) {
  return std::find(kSourceTypes.begin(), kSourceTypes.end(), type) != kSourceTypes.end();
}

namespace {

// An id that starts with a letter or digit (never an option such as `-sc` in a hook's argv,
// never `.` or `..` in a path built from it) and holds only those and `extra`.
bool is_plain_id(std::string_view id, size_t max_size, std::string_view extra) {
  if (id.empty() || id.size() > max_size) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(id.front())) return false;
  return std::all_of(id.begin(), id.end(),
                     [&](char c) { return alnum(c) || extra.find(c) != std::string_view::npos; });
}

}  // namespace

bool is_valid_device_id(std::string_view id) { return is_plain_id(id, 64, "._:-"); }

// No component of a namespace/name path starts with a dot either.
bool is_valid_job_id(std::string_view id) {
  return is_plain_id(id, 128, "._:/-") && id.find("/.") == std::string_view::npos &&
         id.back() != '/';
}

std::optional<Duration> parse_duration(std::string_view text) {
  using namespace std::chrono;
  if (text.empty()) return std::nullopt;
  Duration total{0};
  size_t i = 0;
  while (i < text.size()) {
    uint64_t value = 0;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (value > 1'000'000'000ULL) return std::nullopt;  // absurd, and guards overflow
      value = value * 10 + static_cast<uint64_t>(text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    size_t unit_start = i;
    while (i < text.size() && ((text[i] >= 'a' && text[i] <= 'z'))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    const auto v = static_cast<int64_t>(value);
    if (unit == "ms")
      total += milliseconds(v);
    else if (unit == "s")
      total += seconds(v);
    else if (unit == "m")
      total += minutes(v);
    else if (unit == "h")
      total += hours(v);
    else if (unit == "us")
      total += microseconds(v);
    else
      return std::nullopt;
  }
  return total;
}

std::string format_duration(Duration d) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(d).count();
  if (ms % 3'600'000 == 0 && ms != 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0 && ms != 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

int64_t to_unix_ms(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

TimePoint from_unix_ms(int64_t ms) {
  return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::milliseconds{ms})};
}

std::string format_time(TimePoint t) {
  const int64_t ms = to_unix_ms(t);
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace faultd
