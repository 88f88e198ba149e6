#include "collectors/overflow_dump/dump_path.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <tuple>

namespace faultd::overflow {
namespace {

constexpr std::string_view kPrefix = "opdebug.node_opdebug.";
constexpr std::string_view kJson = ".json";
constexpr std::string_view kOutput = ".output.";
// A time directory: "20200808163566" in the reference; anything shorter than a date is not one.
constexpr size_t kMinTimeDigits = 8;

bool iequals_prefix(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != lower_prefix[i]) return false;
  }
  return true;
}

bool iends_with(std::string_view s, std::string_view lower_suffix) {
  return s.size() >= lower_suffix.size() &&
         iequals_prefix(s.substr(s.size() - lower_suffix.size()), lower_suffix);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<uint64_t> number(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    const auto part = s.substr(start, end == std::string_view::npos ? end : end - start);
    if (!part.empty()) out.push_back(part);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

bool has_dump_prefix(std::string_view base_name) { return iequals_prefix(base_name, kPrefix); }

std::optional<DumpPath> parse_dump_name(std::string_view base_name) {
  if (!has_dump_prefix(base_name)) return std::nullopt;

  DumpPath d;
  std::string_view name = base_name;
  if (iends_with(name, kJson)) {
    d.is_json = true;
    name.remove_suffix(kJson.size());
    // ".output.N" before ".json": N is the output index.
    const size_t dot = name.rfind('.');
    if (dot != std::string_view::npos && dot >= kOutput.size() - 1) {
      const auto n = number(name.substr(dot + 1));
      const size_t out_at = dot + 1 - kOutput.size();
      if (n && iequals_prefix(name.substr(out_at), kOutput)) {
        d.output_index = n;
        name = name.substr(0, out_at);
      }
    }
  }
  // "<prefix>output.0.json" strips down to less than the prefix: no task or timestamp.
  if (name.size() <= kPrefix.size()) return std::nullopt;
  d.dump_name = std::string(name);

  const auto fields = split(name.substr(kPrefix.size()), '.');
  if (fields.size() < 2 ||
      fields.size() !=
          static_cast<size_t>(std::count(name.begin() + kPrefix.size(), name.end(), '.')) + 1) {
    return std::nullopt;  // empty fields ("..") or fewer than task and timestamp
  }
  std::vector<uint64_t> nums;
  for (auto f : fields) {
    auto n = number(f);
    if (!n) return std::nullopt;
    nums.push_back(*n);
  }
  d.task_id = nums.front();
  d.timestamp = nums.back();
  if (nums.size() >= 3) d.stream_id = nums[1];
  if (nums.size() > 3) d.extra_fields.assign(nums.begin() + 2, nums.end() - 1);
  return d;
}

std::optional<DumpPath> parse_dump_path(std::string_view path) {
  auto parts = split(path, '/');
  if (parts.size() < 5) return std::nullopt;
  auto parsed = parse_dump_name(parts.back());
  if (!parsed) return std::nullopt;
  DumpPath& d = *parsed;

  // Directories above the file, nearest first.
  const size_t ndirs = parts.size() - 1;
  auto dir = [&](size_t up) { return parts[ndirs - up]; };  // up = 1 is the parent
  if (ndirs >= 4 && all_digits(dir(1)) && all_digits(dir(2)) && all_digits(dir(3)) &&
      all_digits(dir(4)) && dir(4).size() >= kMinTimeDigits) {
    d.layout = DumpPath::Layout::Cann;
    d.iteration = *number(dir(1));
    d.model_id = std::string(dir(2));
    d.device = std::string(dir(3));
    return parsed;
  }
  if (ndirs >= 5 && all_digits(dir(1)) && all_digits(dir(2)) && all_digits(dir(4))) {
    d.layout = DumpPath::Layout::MindSpore;
    d.iteration = *number(dir(1));
    d.model_id = std::string(dir(2));
    d.model_name = std::string(dir(3));
    d.device = std::string(dir(4));
    return parsed;
  }
  return std::nullopt;
}

bool dump_before(const DumpPath& x, const DumpPath& y) {
  return std::tie(x.iteration, x.timestamp) < std::tie(y.iteration, y.timestamp);
}

size_t earliest_dump(const std::vector<DumpPath>& dumps) {
  size_t best = dumps.size();
  for (size_t i = 0; i < dumps.size(); ++i) {
    if (best == dumps.size() || dump_before(dumps[i], dumps[best])) {
      best = i;
    }
  }
  return best;
}

}  // namespace faultd::overflow
