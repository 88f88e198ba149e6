// A data-only pickle reader: builds None, bools, ints, floats, strings, tuples, lists and dicts
// from a pickle stream (protocols 2 to 5, as PyTorch's C++ Pickler and Python's pickle module
// write them) and nothing else. It refuses every opcode that names or calls Python code
// (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, persistent ids, extension codes),
// so reading a hostile file can never run anything: the worst it can do is be refused.
//
// Bounds (PickleLimits): the input's size, the number of values built, the nesting depth and
// the memo's size; a file past any of them is refused with the reason and the byte offset.
// Values live in one arena owned by the PickleDoc and refer to each other by index, so a memo
// reference that would make a container hold itself is found (the depth walk after the STOP)
// and refused instead of leaking or recursing.
//
// Lifecycle: parse_pickle() returns a complete document or throws PickleError.
// Threading: none shared; a document is a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::pickle {

class PickleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PickleLimits {
  size_t max_bytes = size_t{16} << 20;
  size_t max_values = 1'000'000;
  size_t max_depth = 32;
};

enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict };

struct Value {
  Kind kind = Kind::None;
  int64_t integer = 0;  // Int, Bool (0 or 1)
  double number = 0;    // Float
  std::string text;     // Str (unicode or bytes alike)
  // Tuple and List: the items; Dict: key, value, key, value, ... in insertion order.
  std::vector<uint32_t> items;
};

class PickleDoc {
 public:
  const Value& root() const { return values_[root_]; }
  const Value& at(uint32_t index) const { return values_.at(index); }
  // The value under a string key of a dict (the last one written, as Python keeps it).
  const Value* find(const Value& dict, std::string_view key) const;
  // An Int, or a Str holding a decimal integer (some versions write counters as text).
  std::optional<int64_t> as_int(const Value* v) const;
  const std::string* as_str(const Value* v) const;

 private:
  friend PickleDoc parse_pickle(std::string_view bytes, const PickleLimits& limits);
  std::vector<Value> values_;
  uint32_t root_ = 0;
};

PickleDoc parse_pickle(std::string_view bytes, const PickleLimits& limits = {});

}  // namespace faultd::pickle
