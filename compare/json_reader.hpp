// A JSON reader for the files the accuracy tools write with Python's json module: it accepts
// the NaN, Infinity and -Infinity tokens that json.dumps emits for non-finite floats, keeps
// object members in file order (dump order is execution order) and tells integers from floats
// (a statistic of 1 prints "1", of 1.0 prints "1.0", as the reference tools print them).
//
// A file cut short by a crash mid-write still yields everything that was complete: the error
// names the byte, line and column where reading stopped, and `open_path` says which values were
// still open there, so a caller can drop the one incomplete entry and keep the rest.
//
// Lifecycle: a value type built by one call. Threading: none shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::compare {

struct JsonMember;

struct JsonValue {
  enum class Type { Null, Bool, Int, Float, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;  // also set for Int
  std::string text;
  std::vector<JsonValue> items;
  std::vector<JsonMember> members;

  bool is_null() const { return type == Type::Null; }
  bool is_number() const { return type == Type::Int || type == Type::Float; }
  bool is_string() const { return type == Type::String; }
  bool is_array() const { return type == Type::Array; }
  bool is_object() const { return type == Type::Object; }
  // The first member named `key`, or nullptr (also when this is not an object).
  const JsonValue* find(std::string_view key) const;
};

// An object member (a struct, not a std::pair: a pair of an incomplete type may not be named
// inside JsonValue).
struct JsonMember {
  std::string first;  // the name
  JsonValue second;   // the value
};

struct JsonError {
  size_t offset = 0;  // byte offset where reading stopped
  size_t line = 1;
  size_t column = 1;
  bool truncated = false;  // the input ended inside a value
  std::string message;     // "unexpected end of input (line 3, column 5, byte 41)"
};

struct JsonParse {
  JsonValue value;                 // complete, or what was read before the error
  std::optional<JsonError> error;  // set when the text is not one complete JSON value
  std::vector<size_t> open_path;   // on error: index of the open member/item at each depth
};

// Nesting deeper than this is an error (no stack exhaustion on hostile input).
inline constexpr size_t kMaxJsonDepth = 200;

JsonParse parse_json(std::string_view text);

// The same, but each member of the root object's `member` object (a dump.json's "data") is
// handed to `sink` as soon as it is complete and not kept: a dump of any size costs one entry's
// tree. A member cut short by the end of the text is never handed over.
using MemberSink = std::function<void(std::string&& key, JsonValue&& value)>;
JsonParse parse_json_streaming(std::string_view text, std::string_view member,
                               const MemberSink& sink);

}  // namespace faultd::compare
