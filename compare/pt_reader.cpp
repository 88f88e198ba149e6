// torch.save files without Python: a ZIP archive whose members are stored uncompressed
// (<stem>/data.pkl, <stem>/data/<key>, <stem>/version), and in data.pkl a protocol-2 pickle
// that calls torch._utils._rebuild_tensor_v2((persistent id), offset, size, stride, ...)
// where the persistent id is ('storage', torch.<Type>Storage, key, location, numel). The
// pickle is run by a small stack machine that knows only the opcodes torch.save emits and
// builds no objects: it just records the calls, then the tensor is found among them.
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "compare/dump.hpp"
#include "compare/tensor.hpp"

namespace faultd::compare {

namespace {

struct ZipMember {
  std::string name;
  size_t offset = 0;  // of the data
  size_t size = 0;
};

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t u64(const uint8_t* p) { return u32(p) | (static_cast<uint64_t>(u32(p + 4)) << 32); }

std::vector<ZipMember> zip_members(const Bytes& bytes, const std::string& name) {
  const uint8_t* d = bytes.data();
  const size_t size = bytes.size();
  auto fail = [&name](const std::string& why) -> void {
    throw InputError(name + ": not a torch.save file: " + why);
  };
  if (size < 22) fail("too short for a ZIP archive");
  size_t eocd = std::string::npos;
  const size_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (size_t i = size - 22 + 1; i-- > lowest;) {
    if (u32(d + i) == 0x06054b50u) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) fail("no ZIP end record (truncated?)");
  uint64_t entries = u16(d + eocd + 10);
  uint64_t cd_offset = u32(d + eocd + 16);
  if (cd_offset == 0xFFFFFFFFu || entries == 0xFFFFu) {
    if (eocd < 20 || u32(d + eocd - 20) != 0x07064b50u) fail("bad ZIP64 locator");
    const uint64_t z = u64(d + eocd - 20 + 8);
    if (size < 56 || z > size - 56 || u32(d + z) != 0x06064b50u) fail("bad ZIP64 end record");
    entries = u64(d + z + 32);
    cd_offset = u64(d + z + 48);
  }
  std::vector<ZipMember> out;
  size_t at = cd_offset;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at > size || size - at < 46 || u32(d + at) != 0x02014b50u) fail("bad central directory");
    const uint16_t method = u16(d + at + 10);
    uint64_t comp = u32(d + at + 20);
    uint64_t uncomp = u32(d + at + 24);
    const size_t name_len = u16(d + at + 28);
    const size_t extra_len = u16(d + at + 30);
    const size_t comment_len = u16(d + at + 32);
    uint64_t local = u32(d + at + 42);
    if (size - at - 46 < name_len + extra_len + comment_len) fail("bad central directory");
    ZipMember m;
    m.name.assign(reinterpret_cast<const char*>(d + at + 46), name_len);
    // ZIP64 sizes and offset live in extra field 0x0001, in this order, when saturated.
    const uint8_t* x = d + at + 46 + name_len;
    for (size_t k = 0; k + 4 <= extra_len;) {
      const uint16_t id = u16(x + k);
      const size_t len = u16(x + k + 2);
      if (k + 4 + len > extra_len) break;
      if (id == 1) {
        size_t f = k + 4;
        auto take = [&](uint64_t& v) {
          if (v == 0xFFFFFFFFu && f + 8 <= k + 4 + len) {
            v = u64(x + f);
            f += 8;
          }
        };
        take(uncomp);
        take(comp);
        take(local);
      }
      k += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (local > size || size - local < 30 || u32(d + local) != 0x04034b50u)
      fail("bad local header");
    const size_t data_at = local + 30 + u16(d + local + 26) + u16(d + local + 28);
    if (method != 0) fail("member " + m.name + " is compressed (torch.save stores them)");
    if (data_at > size || comp > size - data_at) {
      fail("member " + m.name + " runs past the end of the file (truncated?)");
    }
    m.offset = data_at;
    m.size = static_cast<size_t>(comp);
    out.push_back(std::move(m));
  }
  return out;
}

// A pickle value; calls are kept as (callable, arguments), nothing is constructed.
struct PV;
using PVP = std::shared_ptr<const PV>;
struct PV {
  enum class K { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Call, PersId, Mark };
  K k = K::None;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<PVP> items;
  size_t depth = 0;  // of the deepest value inside it (0: holds none)

  PV() = default;
  PV(PV&&) = default;
  PV& operator=(PV&&) = default;
  PV(const PV&) = delete;
  PV& operator=(const PV&) = delete;
  // Freed without recursion: the depth cap bounds it already, but a tree is never freed on the
  // stack a value's nesting decides.
  ~PV() {
    std::vector<PVP> pending = std::move(items);
    while (!pending.empty()) {
      PVP v = std::move(pending.back());
      pending.pop_back();
      if (v.use_count() == 1) {  // the last owner: take its children before it goes
        auto& kids = const_cast<PV&>(*v).items;
        for (auto& c : kids) pending.push_back(std::move(c));
        kids.clear();
      }
    }
  }
};

// Limits on what a job's data.pkl may build (docs/compare.md): torch.save's pickle for one
// tensor nests about five deep and holds a few short names.
constexpr size_t kMaxPickleDepth = 64;  // as find_rebuild looks
constexpr size_t kMaxPickleNameBytes = 4096;
constexpr size_t kMaxPickleBuiltBytes = size_t{64} << 20;
constexpr size_t kMaxPickleBytes = size_t{64} << 20;

PVP make(PV v) {
  auto p = std::make_shared<PV>(std::move(v));
  return p;
}

PVP run_pickle(const uint8_t* p, size_t n, const std::string& name) {
  auto fail = [&name](const std::string& why) -> void {
    throw InputError(name + ": data.pkl: " + why);
  };
  if (n > kMaxPickleBytes) fail("more than " + std::to_string(kMaxPickleBytes >> 20) + " MiB");
  std::vector<PVP> stack;
  std::vector<PVP> memo;
  size_t at = 0;
  size_t built = 0;  // bytes of text made so far: memo gets share, STACK_GLOBAL concatenates
  auto spend = [&](size_t bytes) {
    built += bytes;
    if (built > kMaxPickleBuiltBytes) {
      fail("builds more than " + std::to_string(kMaxPickleBuiltBytes >> 20) + " MiB of text");
    }
  };
  // A value holding others is one deeper than the deepest of them.
  auto nest = [&](PV& v) {
    for (const auto& c : v.items) v.depth = std::max(v.depth, c->depth + 1);
    if (v.depth > kMaxPickleDepth) {
      fail("nested deeper than " + std::to_string(kMaxPickleDepth) + " at byte " +
           std::to_string(at));
    }
  };
  auto need = [&](size_t k) {
    if (n - at < k) fail("truncated at byte " + std::to_string(at));
  };
  auto pop = [&]() {
    if (stack.empty()) fail("stack underflow at byte " + std::to_string(at));
    PVP v = stack.back();
    stack.pop_back();
    return v;
  };
  auto pop_mark = [&]() {
    std::vector<PVP> items;
    while (!stack.empty() && stack.back()->k != PV::K::Mark) {
      items.push_back(stack.back());
      stack.pop_back();
    }
    if (stack.empty()) fail("no mark");
    stack.pop_back();
    return std::vector<PVP>(items.rbegin(), items.rend());
  };
  auto put = [&](size_t idx) {
    if (stack.empty() || idx > 1000000) fail("bad memo put");
    if (memo.size() <= idx) memo.resize(idx + 1);
    memo[idx] = stack.back();
  };
  auto get = [&](size_t idx) {
    if (idx >= memo.size() || !memo[idx]) fail("bad memo get");
    stack.push_back(memo[idx]);
  };
  auto str = [&](size_t len) {
    need(len);
    spend(len);
    PV v;
    v.k = PV::K::Str;
    v.s.assign(reinterpret_cast<const char*>(p + at), len);
    at += len;
    stack.push_back(make(std::move(v)));
  };
  auto integer = [&](int64_t x) {
    PV v;
    v.k = PV::K::Int;
    v.i = x;
    stack.push_back(make(std::move(v)));
  };
  auto seq = [&](PV::K kind, std::vector<PVP> items) {
    PV v;
    v.k = kind;
    v.items = std::move(items);
    nest(v);
    stack.push_back(make(std::move(v)));
  };
  while (at < n) {
    if (stack.size() > 100000) fail("stack too deep");
    const uint8_t op = p[at++];
    switch (op) {
      case 0x80:  // PROTO
        need(1);
        ++at;
        break;
      case 0x95:  // FRAME
        need(8);
        at += 8;
        break;
      case 'c': {  // GLOBAL module\nname\n
        const auto* nl1 = static_cast<const uint8_t*>(std::memchr(p + at, '\n', n - at));
        if (nl1 == nullptr) fail("truncated GLOBAL");
        const auto* nl2 =
            static_cast<const uint8_t*>(std::memchr(nl1 + 1, '\n', n - (nl1 + 1 - p)));
        if (nl2 == nullptr) fail("truncated GLOBAL");
        PV v;
        v.k = PV::K::Global;
        v.s.assign(reinterpret_cast<const char*>(p + at), nl1 - (p + at));
        v.s += '.';
        v.s.append(reinterpret_cast<const char*>(nl1 + 1), nl2 - (nl1 + 1));
        if (v.s.size() > kMaxPickleNameBytes) fail("GLOBAL name too long");
        spend(v.s.size());
        at = static_cast<size_t>(nl2 + 1 - p);
        stack.push_back(make(std::move(v)));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        const PVP nm = pop();
        const PVP mod = pop();
        if (mod->s.size() + nm->s.size() >= kMaxPickleNameBytes) fail("STACK_GLOBAL name too long");
        PV v;
        v.k = PV::K::Global;
        v.s = mod->s + "." + nm->s;
        spend(v.s.size());
        stack.push_back(make(std::move(v)));
        break;
      }
      case 'q':
        need(1);
        put(p[at++]);
        break;
      case 'r':
        need(4);
        put(u32(p + at));
        at += 4;
        break;
      case 0x94:
        put(memo.size());
        break;
      case 'h':
        need(1);
        get(p[at++]);
        break;
      case 'j':
        need(4);
        get(u32(p + at));
        at += 4;
        break;
      case '(': {
        PV v;
        v.k = PV::K::Mark;
        stack.push_back(make(std::move(v)));
        break;
      }
      case 't':
        seq(PV::K::Tuple, pop_mark());
        break;
      case ')':
        seq(PV::K::Tuple, {});
        break;
      case 0x85:
      case 0x86:
      case 0x87: {
        std::vector<PVP> items(op - 0x84);
        for (size_t k = items.size(); k-- > 0;) items[k] = pop();
        seq(PV::K::Tuple, std::move(items));
        break;
      }
      case ']':
        seq(PV::K::List, {});
        break;
      case 'l':
        seq(PV::K::List, pop_mark());
        break;
      case '}':
        seq(PV::K::Dict, {});
        break;
      case 'd':
        seq(PV::K::Dict, pop_mark());
        break;
      case 'a':
        pop();
        break;
      case 'e':
      case 'u':
        pop_mark();  // list items and dict entries are not needed
        break;
      case 's':
        pop();
        pop();
        break;
      case 'X':
        need(4);
        at += 4;
        str(u32(p + at - 4));
        break;
      case 0x8c:
      case 'U':
        need(1);
        ++at;
        str(p[at - 1]);
        break;
      case 'T':
        need(4);
        at += 4;
        str(u32(p + at - 4));
        break;
      case 0x8d: {
        need(8);
        const uint64_t len = u64(p + at);
        at += 8;
        if (len > n) fail("string too long");
        str(static_cast<size_t>(len));
        break;
      }
      case 'J':
        need(4);
        integer(static_cast<int32_t>(u32(p + at)));
        at += 4;
        break;
      case 'K':
        need(1);
        integer(p[at++]);
        break;
      case 'M':
        need(2);
        integer(u16(p + at));
        at += 2;
        break;
      case 0x8a: {  // LONG1
        need(1);
        const size_t len = p[at++];
        need(len);
        if (len > 8) fail("integer too large");
        uint64_t v = 0;
        for (size_t k = 0; k < len; ++k) v |= static_cast<uint64_t>(p[at + k]) << (8 * k);
        if (len > 0 && len < 8 && (p[at + len - 1] & 0x80) != 0) v |= ~uint64_t{0} << (8 * len);
        at += len;
        int64_t sv = 0;
        std::memcpy(&sv, &v, sizeof sv);
        integer(sv);
        break;
      }
      case 'G': {
        need(8);
        uint64_t bits = 0;
        for (size_t k = 0; k < 8; ++k) bits = (bits << 8) | p[at + k];
        at += 8;
        PV v;
        v.k = PV::K::Float;
        std::memcpy(&v.f, &bits, sizeof v.f);
        stack.push_back(make(std::move(v)));
        break;
      }
      case 'N':
        stack.push_back(make(PV{}));
        break;
      case 0x88:
      case 0x89: {
        PV v;
        v.k = PV::K::Bool;
        v.i = op == 0x88 ? 1 : 0;
        stack.push_back(make(std::move(v)));
        break;
      }
      case 'Q': {
        PV v;
        v.k = PV::K::PersId;
        v.items.push_back(pop());
        nest(v);
        stack.push_back(make(std::move(v)));
        break;
      }
      case 'R':
      case 0x81: {  // REDUCE, NEWOBJ
        PV v;
        v.k = PV::K::Call;
        const PVP args = pop();
        const PVP fn = pop();
        v.items = {fn, args};
        nest(v);
        stack.push_back(make(std::move(v)));
        break;
      }
      case 'b':
        pop();  // BUILD: the state is not needed
        break;
      case '.':
        if (stack.empty()) fail("empty result");
        return stack.back();
      default:
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("unsupported pickle opcode ") + hex + " at byte " +
             std::to_string(at - 1));
    }
  }
  fail("no STOP (truncated)");
  return nullptr;
}

// The first _rebuild_tensor call, depth-first (a parameter wraps one).
const PV* find_rebuild(const PV& v, size_t depth, size_t& budget) {
  if (depth > 64 || budget == 0) return nullptr;
  --budget;
  if (v.k == PV::K::Call && v.items.size() == 2 && v.items[0]->k == PV::K::Global &&
      v.items[0]->s.rfind("torch._utils._rebuild_tensor", 0) == 0) {
    return &v;
  }
  for (const auto& c : v.items) {
    if (const PV* hit = find_rebuild(*c, depth + 1, budget)) return hit;
  }
  return nullptr;
}

bool ints_of(const PV& v, std::vector<int64_t>& out) {
  if (v.k != PV::K::Tuple && v.k != PV::K::List) return false;
  for (const auto& x : v.items) {
    if (x->k != PV::K::Int) return false;
    out.push_back(x->i);
  }
  return true;
}

}  // namespace

Tensor parse_pt(std::shared_ptr<const Bytes> bytes, const std::string& name) {
  const auto members = zip_members(*bytes, name);
  const ZipMember* pkl = nullptr;
  for (const auto& m : members) {
    if (m.name.size() >= 8 && m.name.compare(m.name.size() - 8, 8, "data.pkl") == 0) pkl = &m;
  }
  if (pkl == nullptr) throw InputError(name + ": no data.pkl in the archive");
  const std::string prefix = pkl->name.substr(0, pkl->name.size() - 8);
  const PVP root = run_pickle(bytes->data() + pkl->offset, pkl->size, name);
  size_t budget = 100000;
  const PV* call = find_rebuild(*root, 0, budget);
  if (call == nullptr || call->items[1]->k != PV::K::Tuple || call->items[1]->items.size() < 4) {
    throw InputError(name + ": data.pkl holds no tensor");
  }
  const auto& args = call->items[1]->items;
  const PV& pid = *args[0];
  const PV* id = pid.k == PV::K::PersId && !pid.items.empty() ? pid.items[0].get() : nullptr;
  if (id == nullptr || id->k != PV::K::Tuple || id->items.size() < 3 ||
      id->items[1]->k != PV::K::Global || id->items[2]->k != PV::K::Str ||
      args[1]->k != PV::K::Int) {
    throw InputError(name + ": data.pkl: unexpected storage reference");
  }
  static constexpr std::pair<const char*, ElemType> kStorages[] = {
      {"torch.FloatStorage", ElemType::F32},     {"torch.HalfStorage", ElemType::F16},
      {"torch.BFloat16Storage", ElemType::BF16}, {"torch.DoubleStorage", ElemType::F64},
      {"torch.LongStorage", ElemType::I64},      {"torch.IntStorage", ElemType::I32},
      {"torch.ShortStorage", ElemType::I16},     {"torch.CharStorage", ElemType::I8},
      {"torch.ByteStorage", ElemType::U8},       {"torch.BoolStorage", ElemType::Bool}};
  Tensor t;
  bool known = false;
  for (const auto& [storage, type] : kStorages) {
    if (id->items[1]->s == storage) {
      t.type = type;
      known = true;
    }
  }
  if (!known) throw InputError(name + ": unsupported storage " + id->items[1]->s);
  if (!ints_of(*args[2], t.shape) || !ints_of(*args[3], t.strides) ||
      t.shape.size() != t.strides.size() || t.shape.size() > 64) {
    throw InputError(name + ": data.pkl: bad size or stride");
  }
  const std::string key = prefix + "data/" + id->items[2]->s;
  const ZipMember* storage = nullptr;
  for (const auto& m : members) {
    if (m.name == key) storage = &m;
  }
  if (storage == nullptr) throw InputError(name + ": storage " + key + " is missing");
  const int64_t offset = args[1]->i;
  const size_t es = elem_size(t.type);
  // Elements reached: offset + sum((size - 1) * stride) + 1, all within the storage member,
  // every product checked (a stride of 2^40 over 2^24 elements must not wrap to 0).
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] < 0 || t.strides[i] < 0) throw InputError(name + ": negative size or stride");
  }
  size_t count = 0;
  size_t reach = 0;
  if (!tensor_extent(t.shape, t.strides, es, count, reach) ||
      count > std::numeric_limits<uint32_t>::max() * size_t{1024}) {
    throw InputError(name + ": tensor too large");
  }
  bool row_major = true;
  int64_t expect = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] > 1 && t.strides[i] != expect) row_major = false;
    if (__builtin_mul_overflow(expect, t.shape[i] > 0 ? t.shape[i] : 1, &expect)) {
      throw InputError(name + ": tensor too large");
    }
  }
  if (offset < 0 || static_cast<uint64_t>(offset) > storage->size / es) {
    throw InputError(name + ": bad storage offset");
  }
  const size_t skip = static_cast<size_t>(offset) * es;
  if (count > 0 && reach > storage->size - skip) {
    throw InputError(name + ": storage holds " + std::to_string(storage->size) + " bytes, " +
                     (reach > std::numeric_limits<size_t>::max() - skip
                          ? std::string("more")
                          : std::to_string(skip + reach)) +
                     " needed (truncated?)");
  }
  t.count = count;
  t.contiguous = row_major;
  t.base = bytes->data() + storage->offset + static_cast<size_t>(offset) * es;
  t.bytes = std::move(bytes);
  return t;
}

Tensor read_pt(const std::filesystem::path& path) {
  return parse_pt(Bytes::map_file(path), path.string());
}

}  // namespace faultd::compare
