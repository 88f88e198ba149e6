#include "collectors/flight_recorder/pickle_data.hpp"

#include <cstdio>
#include <cstring>

namespace faultd::pickle {

namespace {

uint64_t little_endian(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
  return v;
}

std::string opcode_name(unsigned char op) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op);
  return hex;
}

// Opcodes that name or call Python code, refused by name so the error says why.
const char* code_opcode(unsigned char op) {
  switch (op) {
    case 'c':
      return "GLOBAL";
    case 0x93:
      return "STACK_GLOBAL";
    case 'R':
      return "REDUCE";
    case 'b':
      return "BUILD";
    case 'i':
      return "INST";
    case 'o':
      return "OBJ";
    case 0x81:
      return "NEWOBJ";
    case 0x92:
      return "NEWOBJ_EX";
    case 'P':
      return "PERSID";
    case 'Q':
      return "BINPERSID";
    case 0x82:
    case 0x83:
    case 0x84:
      return "EXT";
    default:
      return nullptr;
  }
}

class Machine {
 public:
  Machine(std::string_view bytes, const PickleLimits& limits, std::vector<Value>& values)
      : p_(reinterpret_cast<const unsigned char*>(bytes.data())),
        n_(bytes.size()),
        limits_(limits),
        values_(values) {}

  uint32_t run() {
    if (n_ > limits_.max_bytes) {
      fail("larger than " + std::to_string(limits_.max_bytes) + " bytes");
    }
    while (at_ < n_) {
      const size_t op_at = at_;
      const unsigned char op = p_[at_++];
      if (!step(op, op_at)) {
        if (stack_.size() != 1 || !marks_.empty()) fail("STOP with an unbalanced stack");
        return stack_.back();
      }
    }
    fail("no STOP (truncated?)");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw PickleError("pickle: " + why + " at byte " + std::to_string(at_));
  }
  void need(size_t k) const {
    if (n_ - at_ < k) fail("truncated");
  }
  uint32_t make(Value v) {
    if (values_.size() >= limits_.max_values) {
      fail("more than " + std::to_string(limits_.max_values) + " values");
    }
    values_.push_back(std::move(v));
    return static_cast<uint32_t>(values_.size() - 1);
  }
  void push_new(Value v) { stack_.push_back(make(std::move(v))); }
  uint32_t pop() {
    if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size())) {
      fail("stack underflow");
    }
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::vector<uint32_t> pop_to_mark() {
    if (marks_.empty()) fail("no MARK");
    const size_t from = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    return items;
  }
  Value& container(uint32_t index, Kind kind, const char* opname) {
    Value& v = values_[index];
    if (v.kind != kind)
      fail(std::string(opname) + " on a value that is not a " +
           (kind == Kind::List ? "list" : "dict"));
    return v;
  }
  void str(size_t len) {
    need(len);
    Value v;
    v.kind = Kind::Str;
    v.text.assign(reinterpret_cast<const char*>(p_ + at_), len);
    at_ += len;
    push_new(std::move(v));
  }
  size_t length(size_t width) {
    need(width);
    const uint64_t len = little_endian(p_ + at_, width);
    at_ += width;
    if (len > n_) fail("a length beyond the file");
    return static_cast<size_t>(len);
  }
  void integer(int64_t x, Kind kind = Kind::Int) {
    Value v;
    v.kind = kind;
    v.integer = x;
    push_new(std::move(v));
  }
  void sequence(Kind kind, std::vector<uint32_t> items) {
    Value v;
    v.kind = kind;
    v.items = std::move(items);
    push_new(std::move(v));
  }
  void memo_put(uint64_t index) {
    if (stack_.empty()) fail("memo put on an empty stack");
    if (index > limits_.max_values) fail("memo index too large");
    if (memo_.size() <= index) memo_.resize(static_cast<size_t>(index) + 1, kNone);
    memo_[static_cast<size_t>(index)] = stack_.back();
  }
  void memo_get(uint64_t index) {
    if (index >= memo_.size() || memo_[static_cast<size_t>(index)] == kNone) {
      fail("memo get of an unset index");
    }
    stack_.push_back(memo_[static_cast<size_t>(index)]);
  }

  // One opcode; false at STOP.
  bool step(unsigned char op, size_t op_at) {
    switch (op) {
      case 0x80:  // PROTO
        need(1);
        if (p_[at_] < 2 || p_[at_] > 5) fail("protocol " + std::to_string(p_[at_]));
        ++at_;
        return true;
      case 0x95:  // FRAME: a length prefix only
        need(8);
        at_ += 8;
        return true;
      case '.':
        return false;
      case '(':
        marks_.push_back(stack_.size());
        return true;
      case '0':
        pop();
        return true;
      case '1':
        pop_to_mark();
        return true;
      case '2': {
        const uint32_t v = pop();
        stack_.push_back(v);
        stack_.push_back(v);
        return true;
      }
      case 'N':
        push_new(Value{});
        return true;
      case 0x88:
      case 0x89:
        integer(op == 0x88 ? 1 : 0, Kind::Bool);
        return true;
      case 'K':
        need(1);
        integer(p_[at_++]);
        return true;
      case 'M':
        need(2);
        integer(static_cast<int64_t>(little_endian(p_ + at_, 2)));
        at_ += 2;
        return true;
      case 'J': {
        need(4);
        const auto u = static_cast<uint32_t>(little_endian(p_ + at_, 4));
        at_ += 4;
        int32_t s = 0;
        std::memcpy(&s, &u, sizeof s);
        integer(s);
        return true;
      }
      case 0x8a: {  // LONG1: little-endian two's complement, up to 8 bytes here
        need(1);
        const size_t len = p_[at_++];
        need(len);
        if (len > 8) fail("an integer wider than 64 bits");
        uint64_t u = little_endian(p_ + at_, len);
        if (len > 0 && len < 8 && (p_[at_ + len - 1] & 0x80) != 0) u |= ~uint64_t{0} << (8 * len);
        at_ += len;
        int64_t s = 0;
        std::memcpy(&s, &u, sizeof s);
        integer(s);
        return true;
      }
      case 'G': {  // BINFLOAT, big-endian
        need(8);
        uint64_t bits = 0;
        for (size_t k = 0; k < 8; ++k) bits = (bits << 8) | p_[at_ + k];
        at_ += 8;
        Value v;
        v.kind = Kind::Float;
        std::memcpy(&v.number, &bits, sizeof v.number);
        push_new(std::move(v));
        return true;
      }
      case 0x8c:  // SHORT_BINUNICODE
      case 'U':   // SHORT_BINSTRING
      case 'C':   // SHORT_BINBYTES
        str(length(1));
        return true;
      case 'X':  // BINUNICODE
      case 'T':  // BINSTRING
      case 'B':  // BINBYTES
        str(length(4));
        return true;
      case 0x8d:  // BINUNICODE8
      case 0x8e:  // BINBYTES8
        str(length(8));
        return true;
      case ')':
        sequence(Kind::Tuple, {});
        return true;
      case 't':
        sequence(Kind::Tuple, pop_to_mark());
        return true;
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<uint32_t> items(static_cast<size_t>(op - 0x84));
        for (size_t k = items.size(); k-- > 0;) items[k] = pop();
        sequence(Kind::Tuple, std::move(items));
        return true;
      }
      case ']':
        sequence(Kind::List, {});
        return true;
      case 'l':
        sequence(Kind::List, pop_to_mark());
        return true;
      case '}':
        sequence(Kind::Dict, {});
        return true;
      case 'd': {
        auto items = pop_to_mark();
        if (items.size() % 2 != 0) fail("DICT with an odd number of items");
        sequence(Kind::Dict, std::move(items));
        return true;
      }
      case 'a': {
        const uint32_t item = pop();
        const uint32_t list = pop();
        container(list, Kind::List, "APPEND").items.push_back(item);
        stack_.push_back(list);
        return true;
      }
      case 'e': {
        auto items = pop_to_mark();
        const uint32_t list = pop();
        auto& into = container(list, Kind::List, "APPENDS").items;
        into.insert(into.end(), items.begin(), items.end());
        stack_.push_back(list);
        return true;
      }
      case 's': {
        const uint32_t value = pop();
        const uint32_t key = pop();
        const uint32_t dict = pop();
        auto& into = container(dict, Kind::Dict, "SETITEM").items;
        into.push_back(key);
        into.push_back(value);
        stack_.push_back(dict);
        return true;
      }
      case 'u': {
        auto items = pop_to_mark();
        if (items.size() % 2 != 0) fail("SETITEMS with an odd number of items");
        const uint32_t dict = pop();
        auto& into = container(dict, Kind::Dict, "SETITEMS").items;
        into.insert(into.end(), items.begin(), items.end());
        stack_.push_back(dict);
        return true;
      }
      case 'q':
        need(1);
        memo_put(p_[at_++]);
        return true;
      case 'r':
        need(4);
        memo_put(little_endian(p_ + at_, 4));
        at_ += 4;
        return true;
      case 0x94:  // MEMOIZE
        memo_put(memo_.size());
        return true;
      case 'h':
        need(1);
        memo_get(p_[at_++]);
        return true;
      case 'j':
        need(4);
        memo_get(little_endian(p_ + at_, 4));
        at_ += 4;
        return true;
      default:
        break;
    }
    at_ = op_at;
    if (const char* name = code_opcode(op)) {
      fail(std::string("refused opcode ") + name + " (it names or calls code)");
    }
    fail("unsupported opcode " + opcode_name(op));
  }

  static constexpr uint32_t kNone = UINT32_MAX;
  const unsigned char* p_;
  size_t n_;
  size_t at_ = 0;
  const PickleLimits& limits_;
  std::vector<Value>& values_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;  // stack sizes at each MARK
  std::vector<uint32_t> memo_;
};

// Depth of every value reachable from the root, without recursion; a value met again while it
// is being walked is a cycle (a container holding itself through the memo).
void check_shape(const std::vector<Value>& values, uint32_t root, size_t max_depth) {
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(values.size(), kNew);
  std::vector<uint32_t> depth(values.size(), 0);
  struct Frame {
    uint32_t value;
    size_t next;
  };
  std::vector<Frame> path{{root, 0}};
  state[root] = kOpen;
  while (!path.empty()) {
    Frame& f = path.back();
    const auto& items = values[f.value].items;
    if (f.next == items.size()) {
      state[f.value] = kDone;
      const uint32_t d = depth[f.value];
      path.pop_back();
      if (!path.empty()) {
        uint32_t& parent = depth[path.back().value];
        parent = std::max(parent, d + 1);
      }
      continue;
    }
    const uint32_t child = items[f.next++];
    if (state[child] == kOpen) throw PickleError("pickle: a container that holds itself");
    if (state[child] == kDone) {
      depth[f.value] = std::max(depth[f.value], depth[child] + 1);
      continue;
    }
    if (path.size() >= max_depth) {
      throw PickleError("pickle: nested deeper than " + std::to_string(max_depth));
    }
    state[child] = kOpen;
    path.push_back({child, 0});
  }
}

}  // namespace

PickleDoc parse_pickle(std::string_view bytes, const PickleLimits& limits) {
  PickleDoc doc;
  Machine machine(bytes, limits, doc.values_);
  doc.root_ = machine.run();
  check_shape(doc.values_, doc.root_, limits.max_depth);
  return doc;
}

const Value* PickleDoc::find(const Value& dict, std::string_view key) const {
  if (dict.kind != Kind::Dict) return nullptr;
  const Value* hit = nullptr;
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Value& kv = values_[dict.items[k]];
    if (kv.kind == Kind::Str && kv.text == key) hit = &values_[dict.items[k + 1]];
  }
  return hit;
}

std::optional<int64_t> PickleDoc::as_int(const Value* v) const {
  if (v == nullptr) return std::nullopt;
  if (v->kind == Kind::Int) return v->integer;
  if (v->kind != Kind::Str || v->text.empty() || v->text.size() > 18) return std::nullopt;
  int64_t x = 0;
  for (const char c : v->text) {
    if (c < '0' || c > '9') return std::nullopt;
    x = x * 10 + (c - '0');
  }
  return x;
}

const std::string* PickleDoc::as_str(const Value* v) const {
  return v != nullptr && v->kind == Kind::Str ? &v->text : nullptr;
}

}  // namespace faultd::pickle
