#include "collectors/overflow_dump/overflow_status.hpp"

#include "daemon/core/enum_names.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace faultd::overflow {
namespace {

struct Meaning {
  uint64_t value;
  const char* code;
  const char* text;
};

// The texts are the CANN reference's own words (including its "multiplication, or
// multiplication"), so an operator can search the documentation for them.
constexpr Meaning kAiCoreBits[] = {
    {0x8, "0x00000008", "inversion overflow of the minimum negative sign bit of a signed integer"},
    {0x10, "0x00000010",
     "integer addition, subtraction, multiplication, or multiplication overflow"},
    {0x20, "0x00000020", "floating-point computation overflow"},
    {0x80, "0x00000080", "negative input for floating-point to unsigned conversion"},
    {0x100, "0x00000100",
     "FP32 to FP16 conversion or 32-bit signed integer to FP16 conversion overflow"},
    {0x400, "0x00000400", "Cube accumulation overflow"},
};

constexpr Meaning kDhaCodes[] = {
    {0x9, "0x9", "atomic overflow"},
    {0xA, "0xA", "atomic underflow"},
    {0xB, "0xB", "atomic srcnnan (invalid source operand)"},
    {0xC, "0xC", "atomic dstnan (invalid destination operand)"},
    {0xD, "0xD", "atomic bothnan (invalid source operand and destination operand)"},
};

constexpr Meaning kL2Codes[] = {
    {1, "001", "atomic overflow"},
    {2, "010", "atomic underflow"},
    {3, "011", "atomic srcnnan (invalid source operand)"},
    {4, "100", "atomic dstnan (invalid destination operand)"},
    {5, "101", "atomic bothnan (invalid source operand and destination operand)"},
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string hex(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llX", width, static_cast<unsigned long long>(v));
  return buf;
}

// A code field (DHA bits 8-15, L2 bits 16-18): one value, known or not.
template <size_t N>
void decode_field(uint64_t field, const Meaning (&table)[N], std::string code,
                  std::string_view what, std::vector<Cause>& out) {
  if (field == 0) return;
  for (const auto& m : table) {
    if (m.value == field) {
      out.push_back({m.code, m.text, true});
      return;
    }
  }
  out.push_back({std::move(code), "unknown " + std::string(what) + " cause", false});
}

std::string binary3(uint64_t v) {
  std::string s;
  for (int bit = 2; bit >= 0; --bit) s += ((v >> bit) & 1) != 0 ? '1' : '0';
  return s;
}

std::optional<uint64_t> status_value(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (i >= 0) return static_cast<uint64_t>(i);
    return std::nullopt;
  }
  if (v.is_string()) {  // tolerated: some converters quote numbers
    const auto s = v.get<std::string>();
    if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), ::isdigit)) {
      return std::nullopt;
    }
    return std::stoull(s);
  }
  return std::nullopt;
}

int64_t int_field(const nlohmann::json& record, const char* key) {
  auto it = record.find(key);
  if (it == record.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  return 0;
}

}  // namespace

namespace {
// How the dump records name each kind, and the short names `--kind` takes.
constexpr std::array<std::string_view, 3> kRecordNames = {"AI Core", "DHA Atomic Add",
                                                          "L2 Atomic Add"};
constexpr std::array<std::string_view, 3> kShortNames = {"aicore", "dha", "l2"};
}  // namespace

std::string_view record_name(StatusKind kind) { return name_of(kRecordNames, kind); }

std::string_view short_name(StatusKind kind) { return name_of(kShortNames, kind); }

std::optional<StatusKind> parse_status_kind(std::string_view text) {
  const auto t = lower(text);
  for (auto kind : kStatusKinds) {
    if (t == short_name(kind) || t == lower(record_name(kind))) return kind;
  }
  return std::nullopt;
}

std::string StatusDecode::cause_codes() const {
  if (causes.empty()) return "none";
  std::string out;
  for (const auto& c : causes) {
    if (!out.empty()) out += '+';
    out += c.code;
  }
  return out;
}

StatusDecode decode_status(StatusKind kind, uint64_t status) {
  StatusDecode d;
  d.kind = kind;
  d.status = status;
  switch (kind) {
    case StatusKind::AiCore: {
      uint64_t known_mask = 0;
      for (const auto& m : kAiCoreBits) {
        known_mask |= m.value;
        if ((status & m.value) != 0) d.causes.push_back({m.code, m.text, true});
      }
      // Every other set bit on its own, in bit order after the known ones.
      for (int bit = 0; bit < 64; ++bit) {
        const uint64_t b = uint64_t{1} << bit;
        if ((status & b) != 0 && (known_mask & b) == 0) {
          d.causes.push_back({hex(b, 8), "unknown AI Core status bit", false});
        }
      }
      break;
    }
    case StatusKind::DhaAtomicAdd: {
      const uint64_t field = (status >> 8) & 0xFF;
      decode_field(field, kDhaCodes, hex(field, 1), "DHA Atomic Add", d.causes);
      break;
    }
    case StatusKind::L2AtomicAdd: {
      const uint64_t field = (status >> 16) & 0x7;
      decode_field(field, kL2Codes, binary3(field), "L2 Atomic Add", d.causes);
      break;
    }
  }
  return d;
}

std::vector<const StatusRecord*> DumpDecode::errors() const {
  std::vector<const StatusRecord*> out;
  for (const auto& r : records) {
    if (r.decoded.has_error()) out.push_back(&r);
  }
  return out;
}

std::optional<DumpDecode> parse_dump_json(std::string_view text, std::string& error) {
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = "not valid JSON";
    return std::nullopt;
  }
  if (!j.is_object()) {
    error = "expected a JSON object with \"AI Core\", \"DHA Atomic Add\" or \"L2 Atomic Add\"";
    return std::nullopt;
  }
  DumpDecode out;
  for (auto kind : kStatusKinds) {
    auto it = j.find(std::string(record_name(kind)));
    if (it == j.end()) continue;
    const std::string name(record_name(kind));
    if (!it->is_object()) {
      error = "\"" + name + "\" is not an object";
      return std::nullopt;
    }
    auto st = it->find("status");
    if (st == it->end()) {
      error = "\"" + name + "\" has no status";
      return std::nullopt;
    }
    auto status = status_value(*st);
    if (!status) {
      error = "\"" + name + "\" status is not a non-negative integer";
      return std::nullopt;
    }
    StatusRecord r;
    r.kind = kind;
    r.model_id = int_field(*it, "model_id");
    r.stream_id = int_field(*it, "stream_id");
    r.task_id = int_field(*it, "task_id");
    r.task_type = int_field(*it, "task_type");
    if (it->contains("block_idx") && (*it)["block_idx"].is_number_integer()) {
      r.block_idx = (*it)["block_idx"].get<int64_t>();
    }
    r.decoded = decode_status(kind, *status);
    out.records.push_back(std::move(r));
  }
  if (out.records.empty()) {
    error = "no \"AI Core\", \"DHA Atomic Add\" or \"L2 Atomic Add\" record";
    return std::nullopt;
  }
  return out;
}

}  // namespace faultd::overflow
