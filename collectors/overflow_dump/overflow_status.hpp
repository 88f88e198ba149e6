// Decoding of Ascend overflow-detection results: the `status` register values of the "AI Core",
// "DHA Atomic Add" and "L2 Atomic Add" records that msaccucmp writes when it converts an
// OpDebug overflow dump to JSON (CANN "Overflow Detection", Status Reference). Every cause is
// named; a bit or field value the reference does not list is reported as unknown, never
// dropped, so a new hardware revision shows up instead of passing as "no error".
//
//   AI Core         decimal status read as bit flags: 0x8, 0x10, 0x20, 0x80, 0x100, 0x400
//                   (combinations: 272 = 0x10 + 0x100)
//   DHA Atomic Add  bits 8-15 form one code: 0x9 overflow ... 0xD bothnan (2546 -> 0x9)
//   L2 Atomic Add   bits 16-18 form one code: 001 overflow ... 101 bothnan (2546 -> 000, none)
//
// Used by the overflow_dump source (causes appended to its record line) and by
// `faultctl decode-overflow`. Lifecycle: pure functions over values. Threading: none shared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::overflow {

enum class StatusKind { AiCore, DhaAtomicAdd, L2AtomicAdd };
inline constexpr StatusKind kStatusKinds[] = {StatusKind::AiCore, StatusKind::DhaAtomicAdd,
                                              StatusKind::L2AtomicAdd};

// "AI Core", "DHA Atomic Add", "L2 Atomic Add": the record names of the JSON.
std::string_view record_name(StatusKind kind);
// "aicore", "dha", "l2": the short names of the command line and of record lines.
std::string_view short_name(StatusKind kind);
// Either form, case-insensitive.
std::optional<StatusKind> parse_status_kind(std::string_view text);

struct Cause {
  std::string code;  // as the reference writes it: "0x00000010", "0x9", "001"
  std::string text;  // the reference's meaning, or "unknown ..." for values it does not list
  bool known = true;
};

struct StatusDecode {
  StatusKind kind = StatusKind::AiCore;
  uint64_t status = 0;
  std::vector<Cause> causes;  // empty: the register reports no error
  bool has_error() const { return !causes.empty(); }
  // "0x00000010+0x00000100", or "none".
  std::string cause_codes() const;
};

StatusDecode decode_status(StatusKind kind, uint64_t status);

// One record of the converted dump.
struct StatusRecord {
  StatusKind kind = StatusKind::AiCore;
  int64_t model_id = 0;
  int64_t stream_id = 0;
  int64_t task_id = 0;
  int64_t task_type = 0;
  std::optional<int64_t> block_idx;  // AI Core only
  StatusDecode decoded;
};

struct DumpDecode {
  std::vector<StatusRecord> records;  // in kStatusKinds order, only those present
  // The records whose status names an error (the reference: with both detections on, only
  // the earliest overflow is filled in, so usually one).
  std::vector<const StatusRecord*> errors() const;
};

// Parses the JSON text msaccucmp writes ({"DHA Atomic Add": {...}, "L2 Atomic Add": {...},
// "AI Core": {...}}). Returns nullopt and sets `error` when the text is not such an object (no
// known record, a record that is not an object, a status that is not a non-negative integer).
// Unknown top-level keys and record fields are ignored.
std::optional<DumpDecode> parse_dump_json(std::string_view text, std::string& error);

}  // namespace faultd::overflow
