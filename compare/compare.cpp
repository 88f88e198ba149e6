#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <unordered_map>

#include "compare/python_text.hpp"

namespace faultd::compare {

namespace {

constexpr const char* kPass = "pass";
constexpr const char* kWarning = "warning";
constexpr const char* kError = "error";

int level(const std::string& r) { return r == kError ? 2 : (r == kWarning ? 1 : 0); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ---------------------------------------------------------------------------------------------
// Matching

bool is_float_dtype(const std::string& d) {
  static constexpr const char* kFloats[] = {"torch.float16", "torch.float32", "torch.bfloat16",
                                            "Float16",       "Float32",       "BFloat16"};
  return std::any_of(std::begin(kFloats), std::end(kFloats), [&](const char* f) { return d == f; });
}

// A dtype without its framework's spelling: torch.bfloat16 and MindSpore's BFloat16 are both
// "bfloat16" (msprobe check.py cross_dtype_mapping).
std::string plain_dtype(const std::string& d) {
  return lower(d.rfind("torch.", 0) == 0 ? d.substr(6) : d);
}

bool same_family_float(const std::string& a, const std::string& b) {
  const bool ta = a.rfind("torch.", 0) == 0;
  const bool tb = b.rfind("torch.", 0) == 0;
  return is_float_dtype(a) && is_float_dtype(b) && ta == tb;
}

// "Functional.conv2d.3.forward.input.0" -> "Functional.conv2d.forward.input.0";
// ptdbg "Functional_conv2d_3_forward_input.0" -> "Functional_conv2d_forward_input.0".
std::string without_call_index(const std::string& key) {
  for (const char* dir : {"forward", "backward"}) {
    for (const char sep : {'.', '_'}) {
      const std::string tag = std::string(1, sep) + dir;
      const size_t at = key.find(tag);
      if (at == std::string::npos || at == 0) continue;
      const size_t prev = key.rfind(sep, at - 1);
      if (prev == std::string::npos) continue;
      const std::string index = key.substr(prev + 1, at - prev - 1);
      if (!index.empty() && std::all_of(index.begin(), index.end(), ::isdigit)) {
        return key.substr(0, prev) + key.substr(at);
      }
      // modules: "Module.x.Conv2d.forward.0.input.0"
      const size_t after = at + tag.size();
      if (after < key.size() && key[after] == sep) {
        const size_t next = key.find(sep, after + 1);
        const std::string idx =
            key.substr(after + 1, next == std::string::npos ? std::string::npos : next - after - 1);
        if (!idx.empty() && std::all_of(idx.begin(), idx.end(), ::isdigit)) {
          return key.substr(0, after) + (next == std::string::npos ? "" : key.substr(next));
        }
      }
    }
  }
  return key;
}

void match_by_name(const RankCompare& rc, const CompareOptions& o, std::vector<ResultRow>& out) {
  const bool cross = rc.npu.framework != rc.bench.framework;
  std::unordered_map<std::string, size_t> bench_index;
  std::unordered_map<std::string, size_t> bench_by_name;  // for the data mapping
  for (size_t i = 0; i < rc.bench.rows.size(); ++i) {
    const auto& k = rc.bench.rows[i].key;
    bench_index.emplace(o.fuzzy ? without_call_index(k) : k, i);
    if (!o.data_mapping.empty()) bench_by_name.emplace(rc.bench.rows[i].name, i);
  }
  for (size_t i = 0; i < rc.npu.rows.size(); ++i) {
    ResultRow r;
    r.npu = i;
    if (const auto m = o.data_mapping.find(rc.npu.rows[i].name); m != o.data_mapping.end()) {
      if (const auto b = bench_by_name.find(m->second); b != bench_by_name.end())
        r.bench = b->second;
      out.push_back(std::move(r));
      continue;
    }
    std::string key = rc.npu.rows[i].key;
    if (cross) key = cross_framework_key(key);
    if (o.fuzzy) key = without_call_index(key);
    if (auto it = bench_index.find(key); it != bench_index.end()) {
      const auto& a = rc.npu.rows[i].dtype;
      const auto& b = rc.bench.rows[it->second].dtype;
      // msprobe's dtype gate: equal, or both half/single/bfloat of the same framework.
      if (a == b || same_family_float(a, b) ||
          (cross &&
           (plain_dtype(a) == plain_dtype(b) || (is_float_dtype(a) && is_float_dtype(b))))) {
        r.bench = it->second;
      }
    }
    out.push_back(std::move(r));
  }
}

struct Group {
  std::string api;
  size_t first = 0, end = 0;  // row range
};

std::vector<Group> groups_of(const Dump& d) {
  std::vector<Group> g;
  for (size_t i = 0; i < d.rows.size(); ++i) {
    if (g.empty() || g.back().api != d.rows[i].api) g.push_back({d.rows[i].api, i, i});
    g.back().end = i + 1;
  }
  return g;
}

bool dtype_compatible(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto pair = [&](const char* x, const char* y) {
    return (a == x && b == y) || (a == y && b == x);
  };
  return pair("torch.float16", "torch.float32") || pair("torch.float16", "torch.bfloat16");
}

// ptdbg check_op: the same tensor names and compatible structures.
bool same_api(const Dump& n, const Group& a, const Dump& b, const Group& g, bool fuzzy) {
  if (a.end - a.first != g.end - g.first) return false;
  for (size_t i = 0; i < a.end - a.first; ++i) {
    const auto& x = n.rows[a.first + i];
    const auto& y = b.rows[g.first + i];
    const std::string kx = fuzzy ? without_call_index(x.key) : x.key;
    const std::string ky = fuzzy ? without_call_index(y.key) : y.key;
    if (kx != ky || x.shape_text != y.shape_text || !dtype_compatible(x.dtype, y.dtype)) {
      return false;
    }
  }
  return true;
}

void match_by_queue(const RankCompare& rc, const CompareOptions& o, std::vector<ResultRow>& out) {
  const auto ng = groups_of(rc.npu);
  const auto bg = groups_of(rc.bench);
  auto unmatched = [&](size_t gi) {
    for (size_t i = ng[gi].first; i < ng[gi].end; ++i) {
      ResultRow r;
      r.npu = i;
      out.push_back(std::move(r));
    }
  };
  auto paired = [&](size_t gi, size_t bi) {
    for (size_t i = ng[gi].first; i < ng[gi].end; ++i) {
      ResultRow r;
      r.npu = i;
      r.bench = bg[bi].first + (i - ng[gi].first);
      out.push_back(std::move(r));
    }
  };
  std::deque<size_t> nq, bq;
  size_t i = 0, j = 0;
  while (i < ng.size() || j < bg.size()) {
    if (i < ng.size()) nq.push_back(i++);
    if (j < bg.size()) bq.push_back(j++);
    if (nq.empty() || bq.empty()) continue;
    auto test = [&](size_t a, size_t b) {
      return same_api(rc.npu, ng[nq[a]], rc.bench, bg[bq[b]], o.fuzzy);
    };
    std::optional<std::pair<size_t, size_t>> hit;
    for (size_t b = 0; b + 1 < bq.size() && !hit; ++b) {
      if (test(nq.size() - 1, b)) hit = {nq.size() - 1, b};
    }
    if (!hit && test(nq.size() - 1, bq.size() - 1)) hit = {nq.size() - 1, bq.size() - 1};
    for (size_t a = 0; a + 1 < nq.size() && !hit; ++a) {
      if (test(a, bq.size() - 1)) hit = {a, bq.size() - 1};
    }
    if (!hit) continue;
    // NPU APIs queued before the match have no partner; bench APIs before it are dropped.
    for (size_t a = 0; a < hit->first; ++a) unmatched(nq[a]);
    paired(nq[hit->first], bq[hit->second]);
    nq.erase(nq.begin(), nq.begin() + static_cast<std::ptrdiff_t>(hit->first + 1));
    bq.erase(bq.begin(), bq.begin() + static_cast<std::ptrdiff_t>(hit->second + 1));
  }
  for (size_t a : nq) unmatched(a);
}

// ---------------------------------------------------------------------------------------------
// Statistics (msprobe HEAD CalcStatsDiff)

enum class ValType { Num, Nan, Inf, NegInf, Device, NA, Other };

ValType classify(const Scalar& s) {
  if (s.kind == Scalar::Kind::Float) {
    if (std::isnan(s.number)) return ValType::Nan;
    if (std::isinf(s.number)) return s.number > 0 ? ValType::Inf : ValType::NegInf;
    return ValType::Num;
  }
  if (s.kind == Scalar::Kind::Int) return ValType::Num;
  const std::string t = lower(s.str());
  if (t == "nan") return ValType::Nan;
  if (t == "inf") return ValType::Inf;
  if (t == "-inf") return ValType::NegInf;
  if (s.kind == Scalar::Kind::Str && !t.empty()) {
    char* end = nullptr;
    std::strtod(s.text.c_str(), &end);
    if (end != nullptr && *end == '\0') return ValType::Num;
  }
  if (t.find("npu") != std::string::npos || t.find("cpu") != std::string::npos ||
      t.find("cuda") != std::string::npos)
    return ValType::Device;
  if (s.str() == "N/A") return ValType::NA;
  return ValType::Other;
}

// pandas.to_numeric on a cell's str(): msprobe takes every statistic through it before it
// subtracts. pandas parses with its own precise_xstrtod, which keeps at most 17 digits (leading
// zeros count) and scales by a power of ten, so it can differ from the nearest double in the
// last bit; the reference table's diffs carry that difference, and so do ours.
double pandas_to_numeric(const std::string& text) {
  static constexpr double kPow10[] = {
      1e0,   1e1,   1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,
      1e13,  1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22,  1e23,  1e24,  1e25,
      1e26,  1e27,  1e28,  1e29,  1e30,  1e31,  1e32,  1e33,  1e34,  1e35,  1e36,  1e37,  1e38,
      1e39,  1e40,  1e41,  1e42,  1e43,  1e44,  1e45,  1e46,  1e47,  1e48,  1e49,  1e50,  1e51,
      1e52,  1e53,  1e54,  1e55,  1e56,  1e57,  1e58,  1e59,  1e60,  1e61,  1e62,  1e63,  1e64,
      1e65,  1e66,  1e67,  1e68,  1e69,  1e70,  1e71,  1e72,  1e73,  1e74,  1e75,  1e76,  1e77,
      1e78,  1e79,  1e80,  1e81,  1e82,  1e83,  1e84,  1e85,  1e86,  1e87,  1e88,  1e89,  1e90,
      1e91,  1e92,  1e93,  1e94,  1e95,  1e96,  1e97,  1e98,  1e99,  1e100, 1e101, 1e102, 1e103,
      1e104, 1e105, 1e106, 1e107, 1e108, 1e109, 1e110, 1e111, 1e112, 1e113, 1e114, 1e115, 1e116,
      1e117, 1e118, 1e119, 1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129,
      1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136, 1e137, 1e138, 1e139, 1e140, 1e141, 1e142,
      1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149, 1e150, 1e151, 1e152, 1e153, 1e154, 1e155,
      1e156, 1e157, 1e158, 1e159, 1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168,
      1e169, 1e170, 1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179, 1e180, 1e181,
      1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189, 1e190, 1e191, 1e192, 1e193, 1e194,
      1e195, 1e196, 1e197, 1e198, 1e199, 1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207,
      1e208, 1e209, 1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218, 1e219, 1e220,
      1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229, 1e230, 1e231, 1e232, 1e233,
      1e234, 1e235, 1e236, 1e237, 1e238, 1e239, 1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246,
      1e247, 1e248, 1e249, 1e250, 1e251, 1e252, 1e253, 1e254, 1e255, 1e256, 1e257, 1e258, 1e259,
      1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266, 1e267, 1e268, 1e269, 1e270, 1e271, 1e272,
      1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279, 1e280, 1e281, 1e282, 1e283, 1e284, 1e285,
      1e286, 1e287, 1e288, 1e289, 1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298,
      1e299, 1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308};
  constexpr int kMaxDigits = 17;
  const char* p = text.c_str();
  while (*p == ' ') ++p;
  bool negative = false;
  if (*p == '-' || *p == '+') negative = *p++ == '-';
  double number = 0;
  int exponent = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9'; ++p) {
    if (digits < kMaxDigits) {
      number = number * 10. + (*p - '0');
      ++digits;
    } else {
      ++exponent;
    }
  }
  if (*p == '.') {
    ++p;
    int decimals = 0;
    for (; digits < kMaxDigits && *p >= '0' && *p <= '9'; ++p) {
      number = number * 10. + (*p - '0');
      ++digits;
      ++decimals;
    }
    while (*p >= '0' && *p <= '9') ++p;
    exponent -= decimals;
  }
  if (negative) number = -number;
  if (*p == 'e' || *p == 'E') {
    ++p;
    bool neg_exp = false;
    if (*p == '-' || *p == '+') neg_exp = *p++ == '-';
    int n = 0;
    for (; *p >= '0' && *p <= '9'; ++p) n = n < 100000 ? n * 10 + (*p - '0') : n;
    exponent += neg_exp ? -n : n;
  }
  if (exponent > 308) return negative ? -HUGE_VAL : HUGE_VAL;
  if (exponent > 0) return number * kPow10[exponent];
  if (exponent < -308) {
    if (exponent < -616) return 0.0 * number;
    return number / kPow10[-308 - exponent] / kPow10[308];
  }
  return number / kPow10[-exponent];
}

double number_of(const Scalar& s) { return pandas_to_numeric(s.str()); }

void stat_diff(const Scalar& n, const Scalar& b, std::string& diff, std::string& rel) {
  if (n.str() == b.str()) {
    diff = rel = "0";
    return;
  }
  const ValType x = classify(n);
  const ValType y = classify(b);
  using V = ValType;
  auto in = [](V v, std::initializer_list<V> set) {
    return std::find(set.begin(), set.end(), v) != set.end();
  };
  if (x == V::Num && y == V::Num) {
    const double d = number_of(n) - number_of(b);
    diff = python_float_repr(d);
    const double bv = number_of(b);
    rel = bv != 0 ? python_float_repr(std::fabs(d / bv * 100)) + "%" : "inf";
  } else if (x == V::NA || y == V::NA) {
    diff = rel = "N/A";
  } else if ((x == V::Nan && in(y, {V::Num, V::Nan, V::Inf, V::NegInf})) ||
             (y == V::Nan && in(x, {V::Num, V::Inf, V::NegInf}))) {
    diff = rel = "Nan";
  } else if ((x == V::Inf && in(y, {V::Num, V::NegInf})) || (x == V::Num && y == V::NegInf)) {
    diff = rel = "inf";
  } else if ((x == V::NegInf && in(y, {V::Num, V::Inf})) || (x == V::Num && y == V::Inf)) {
    diff = rel = "-inf";
  } else if (x == V::Device && y == V::Device) {
    diff = rel = "N/A";
  } else if (in(x, {V::Device, V::Other}) || in(y, {V::Device, V::Other})) {
    diff = rel = "Diff";
  } else {
    diff = rel = "N/A";
  }
}

// ptdbg summary mode: N - B, or Nan; a Warning when a statistic moved by more than half.
void ptdbg_stat_diff(const Scalar& n, const Scalar& b, std::string& diff, bool& warn) {
  if (!n.is_number() || !b.is_number() || std::isnan(n.as_double()) || std::isnan(b.as_double())) {
    diff = "Nan";
    return;
  }
  const double d = n.as_double() - b.as_double();
  diff = python_float_repr(d);
  const double scale = std::max(std::fabs(n.as_double()), std::fabs(b.as_double())) + 1e-10;
  if (std::fabs(d) / scale > 0.5) warn = true;
}

// ---------------------------------------------------------------------------------------------
// msprobe HEAD checkers (indicator_analysis): per API, over its input and output rows.

bool is_inf_or_nan(const Scalar& s) {
  if (s.kind == Scalar::Kind::Float) return std::isnan(s.number) || std::isinf(s.number);
  if (s.kind != Scalar::Kind::Str) return false;
  std::string t = lower(s.text);
  t.erase(0, t.find_first_not_of(' '));
  t.erase(t.find_last_not_of(' ') + 1);
  return t == "inf" || t == "-inf" || t == "nan";
}

// str2float: "12.5%" -> 0.125, "inf" -> inf; text that is no number -> 0.
double str2float(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '%') t.pop_back();
  while (!t.empty() && t.front() == '%') t.erase(0, 1);
  if (t.empty()) return 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == nullptr || *end != '\0') return 0;
  return v / 100;
}

// Python equality of two cells (2 == 2.0, True == 1, text with text).
bool python_equal(const Scalar& a, const Scalar& b) {
  const bool an = a.is_number() || a.kind == Scalar::Kind::Bool;
  const bool bn = b.is_number() || b.kind == Scalar::Kind::Bool;
  auto num = [](const Scalar& s) {
    return s.kind == Scalar::Kind::Bool ? (s.boolean ? 1.0 : 0.0) : s.as_double();
  };
  if (an && bn) return num(a) == num(b);
  if (an != bn) return false;
  return a.kind == b.kind && a.text == b.text;
}

enum class Ignore { None, Input, All };

struct ApiView {
  std::vector<size_t> inputs, outputs;  // indices into rc.rows
};

class Checkers {
 public:
  Checkers(RankCompare& rc, DumpMode mode)
      : rc_(rc), mode_(mode), cross_(rc.npu.framework != rc.bench.framework) {}

  void run(const ApiView& api) {
    const Ignore ig = ignore_of(api);
    std::vector<size_t> all;
    if (ig == Ignore::None) all = api.inputs;
    if (ig != Ignore::All) all.insert(all.end(), api.outputs.begin(), api.outputs.end());
    if (mode_ == DumpMode::Md5) {
      crc32(all);
      return;
    }
    inf_nan(all);
    if (mode_ == DumpMode::Statistics) {
      if (ig == Ignore::None) relative_err(api);
    } else if (ig == Ignore::None) {
      one_thousandth(api);
    }
    requires_grad(all);
    if (ig == Ignore::None) parameters(api);
    dtype(all);
    shape(all);
    if (ig != Ignore::None) return;
    if (mode_ == DumpMode::Statistics) {
      relative_warn(api);
    } else {
      cosine_warn(api);
    }
  }

 private:
  const TensorRow& npu(size_t r) const { return rc_.npu.rows[rc_.rows[r].npu]; }
  const TensorRow* bench(size_t r) const {
    return rc_.rows[r].bench ? &rc_.bench.rows[*rc_.rows[r].bench] : nullptr;
  }
  void flag(size_t r, const char* lvl, const std::string& msg) {
    auto& row = rc_.rows[r];
    if (level(lvl) > level(row.result)) row.result = lvl;
    row.messages.push_back(std::string(lvl) + ": " + msg);
  }

  Ignore ignore_of(const ApiView& api) const {
    if (api.inputs.empty()) return Ignore::None;
    const std::string& name = npu(api.inputs[0]).name;
    const size_t a = name.find('.');
    if (a == std::string::npos) return Ignore::None;
    const size_t b = name.find('.', a + 1);
    const std::string op =
        name.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    static constexpr const char* kAll[] = {"empty",
                                           "empty_like",
                                           "numpy",
                                           "to",
                                           "__setitem__",
                                           "empty_with_format",
                                           "new_empty_strided",
                                           "new_empty",
                                           "empty_strided"};
    static constexpr const char* kInput[] = {"_reduce_scatter_base", "_all_gather_base",
                                             "all_to_all_single", "batch_isend_irecv"};
    for (const char* x : kAll) {
      if (op == x) return Ignore::All;
    }
    for (const char* x : kInput) {
      if (op == x) return Ignore::Input;
    }
    return Ignore::None;
  }

  // The cell a checker reads for a metric, as get_min_or_max_value sees it: a number, or
  // nothing for Nan, N/A and other text ("12.5%" counts as 0.125).
  bool metric_cell(size_t r, bool cosine, double& v) const {
    const auto& row = rc_.rows[r];
    if (mode_ == DumpMode::Statistics) {
      const std::string& cell = row.rel[3];
      if (cell.empty() || cell.back() != '%') return false;
      v = str2float(cell);
      return true;
    }
    if (!row.bench) return false;
    const Metric& m = cosine ? row.metrics.cosine : row.metrics.one_thousandth;
    return metric_number(m, Semantics::Msprobe, cosine, v);
  }

  double min_or_max(const std::vector<size_t>& rows, bool cosine, bool is_min) const {
    double acc = is_min ? 1.0 : 0.0;
    for (size_t r : rows) {
      double v = 0;
      if (!metric_cell(r, cosine, v)) continue;
      acc = is_min ? std::min(acc, v) : std::max(acc, v);
    }
    return acc;
  }

  void inf_nan(const std::vector<size_t>& rows) {
    for (size_t r : rows) {
      const TensorRow* b = bench(r);
      const Scalar na = Scalar::of_text("N/A");
      if (is_inf_or_nan(b ? b->max : na) || is_inf_or_nan(b ? b->min : na)) continue;
      if (is_inf_or_nan(npu(r).max) || is_inf_or_nan(npu(r).min)) {
        flag(r, kError, "There is nan/inf/-inf in the maximum or minimum value of NPU.");
      }
    }
  }

  void relative_err(const ApiView& api) {
    if (std::fabs(min_or_max(api.inputs, false, false)) >= 0.1) return;
    for (size_t r : api.outputs) {
      if (std::fabs(str2float(rc_.rows[r].rel[3])) > 0.5) {
        flag(r, kError, "The NormRelativeErr of output is greater than 0.5.");
      }
    }
  }

  void relative_warn(const ApiView& api) {
    if (api.outputs.empty()) return;
    const double in = std::fabs(min_or_max(api.inputs, false, false));
    const double out = std::fabs(min_or_max(api.outputs, false, false));
    if ((in == 0 && out > 0.1) || (in != 0 && out / in > 10)) {
      flag(api.outputs[0], kWarning,
           "The norm relative error of output is 10 times that of input.");
    }
  }

  void one_thousandth(const ApiView& api) {
    if (api.outputs.empty()) return;
    const double in = min_or_max(api.inputs, false, true);
    const double out = min_or_max(api.outputs, false, true);
    if (in > 0.9 && out < 0.1) {
      flag(api.outputs[0], kError,
           "The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.");
    }
  }

  void cosine_warn(const ApiView& api) {
    if (api.outputs.empty()) return;
    const double in = min_or_max(api.inputs, true, true);
    const double out = min_or_max(api.outputs, true, true);
    if (in > 0.9 && in - out > 0.1) {
      flag(api.outputs[0], kWarning,
           "The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1");
    }
  }

  void requires_grad(const std::vector<size_t>& rows) {
    for (size_t r : rows) {
      const TensorRow* b = bench(r);
      if (b == nullptr) continue;
      const Scalar& x = npu(r).requires_grad;
      const Scalar& y = b->requires_grad;
      if (x.is_none() || y.is_none()) continue;
      if (x.str() != y.str())
        flag(r, kError, "The Required_Grad of NPU and Bench are inconsistent");
    }
  }

  void parameters(const ApiView& api) {
    for (size_t r : api.inputs) {
      const TensorRow* b = bench(r);
      if (b == nullptr) continue;
      const TensorRow& n = npu(r);
      if (n.dtype.find("class") == std::string::npos || b->dtype.find("class") == std::string::npos)
        continue;
      if (n.shape_text != "[]") continue;
      if (!python_equal(n.max, b->max)) {
        flag(r, kError, "The scalar parameters of NPU and Bench are inconsistent.");
      }
    }
  }

  void dtype(const std::vector<size_t>& rows) {
    for (size_t r : rows) {
      const TensorRow* b = bench(r);
      if (b == nullptr || npu(r).dtype == "None" || b->dtype == "None") continue;
      const bool differ =
          cross_ ? plain_dtype(npu(r).dtype) != plain_dtype(b->dtype) : npu(r).dtype != b->dtype;
      if (differ) flag(r, kError, "The dtype of NPU and Bench are inconsistent.");
    }
  }

  void shape(const std::vector<size_t>& rows) {
    for (size_t r : rows) {
      const TensorRow* b = bench(r);
      if (b == nullptr || npu(r).shape_text == "None" || b->shape_text == "None") continue;
      if (npu(r).shape_text != b->shape_text) {
        flag(r, kError, "The shape of NPU and Bench are inconsistent.");
      }
    }
  }

  void crc32(const std::vector<size_t>& rows) {
    for (size_t r : rows) {
      const auto& row = rc_.rows[r];
      if (row.npu_md5 == row.bench_md5) continue;
      auto missing = [](const std::string& s) { return s == "N/A" || s == "Nan"; };
      if (missing(row.npu_md5) || missing(row.bench_md5)) {
        flag(r, kWarning, "The parameter of NPU does not match the bench.");
      } else {
        flag(r, kError, "The CRC-32 value of NPU differs from that of the bench.");
      }
    }
  }

  RankCompare& rc_;
  DumpMode mode_;
  bool cross_;  // MindSpore against PyTorch: dtypes compared without their spelling
};

bool is_float64(const std::string& dtype) {
  return dtype == "torch.float64" || dtype == "Float64" || dtype == "float64";
}

}  // namespace

std::string cross_framework_key(const std::string& key) {
  static constexpr std::pair<const char*, const char*> kPrefixes[] = {
      {"MintFunctional.", "Functional."}, {"Mint.", "Torch."}, {"Cell.", "Module."}};
  for (const auto& [from, to] : kPrefixes) {
    const std::string f = from;
    if (key.rfind(f, 0) == 0) return to + key.substr(f.size());
  }
  return key;
}

std::string check_accuracy(const std::string& cosine, const std::string& max_abs) {
  if (cosine == "shape unmatched") return "Unmatched";
  if (cosine == "Nan" || max_abs == "Nan") return "Nan";
  if (cosine == "N/A" || max_abs == "N/A") return "No";
  char* e1 = nullptr;
  char* e2 = nullptr;
  const double c = std::strtod(cosine.c_str(), &e1);
  const double m = std::strtod(max_abs.c_str(), &e2);
  if (cosine.empty() || max_abs.empty() || *e1 != '\0' || *e2 != '\0') return "Nan";
  if (c < 0.99 && m > 0.001) return "No";
  if (c < 0.9 || m > 1) return "No";
  return "Yes";
}

const Suspect* RankCompare::suspect() const {
  for (const auto* s : {&first_seed, &first_error, &first_no, &first_warning}) {
    if (*s) return &**s;
  }
  return nullptr;
}

RankCompare compare_dumps(Dump npu, Dump bench, const CompareOptions& options) {
  RankCompare rc;
  rc.npu = std::move(npu);
  rc.bench = std::move(bench);
  rc.semantics = rc.npu.family == DumpFamily::Ptdbg ? Semantics::Ptdbg : Semantics::Msprobe;
  for (const Dump* d : {&rc.npu, &rc.bench}) {
    if (d->truncated) rc.notes.push_back(*d->truncated);
  }
  const DumpMode mode = rc.npu.mode;
  if (rc.bench.mode != mode) {
    throw InputError(std::string("cannot compare a ") + mode_name(mode) + " dump (" +
                     rc.npu.path.string() + ") with a " + mode_name(rc.bench.mode) + " dump (" +
                     rc.bench.path.string() + ")");
  }
  if (rc.semantics == Semantics::Ptdbg) {
    match_by_queue(rc, options, rc.rows);
  } else if (options.layer_mapping) {
    CompareOptions mapped = options;
    for (auto& [n, b] : layer_data_mapping(rc.npu, rc.bench, *options.layer_mapping)) {
      mapped.data_mapping.emplace(n, b);
    }
    match_by_name(rc, mapped, rc.rows);
  } else {
    match_by_name(rc, options, rc.rows);
  }

  const bool ms = rc.semantics == Semantics::Msprobe;
  for (auto& row : rc.rows) {
    const TensorRow& n = rc.npu.rows[row.npu];
    const TensorRow* b = row.bench ? &rc.bench.rows[*row.bench] : nullptr;
    if (mode == DumpMode::Md5) {
      row.npu_md5 = n.md5;
      row.bench_md5 = b ? b->md5 : "N/A";
      if (!ms) row.result = b && n.md5 == b->md5 ? "Pass" : "Different";
      continue;
    }
    if (mode == DumpMode::Statistics) {
      const Scalar* ns[] = {&n.max, &n.min, &n.mean, &n.norm};
      if (b == nullptr) {
        row.diff.fill(ms ? "N/A" : "Nan");
        row.rel.fill("N/A");
        if (!ms) row.note = "No bench data matched.";
        continue;
      }
      const Scalar* bs[] = {&b->max, &b->min, &b->mean, &b->norm};
      bool warn = false;
      for (size_t k = 0; k < 4; ++k) {
        if (ms) {
          stat_diff(*ns[k], *bs[k], row.diff[k], row.rel[k]);
        } else {
          ptdbg_stat_diff(*ns[k], *bs[k], row.diff[k], warn);
        }
      }
      if (!ms && warn) {
        row.result = "Warning";
        row.note = "Need double check api accuracy.";
      } else if (!ms) {
        row.result = "";
      }
      continue;
    }
    // Tensor mode: read both files, chunk by chunk.
    if (b == nullptr) {
      row.metrics = PairMetrics{};
      row.note = "No bench data matched.";
      row.accuracy = "Nan";  // check_accuracy's value for a row without a partner
      continue;
    }
    if (n.data_name == "-1" || b->data_name == "-1") {
      for (Metric* m :
           {&row.metrics.cosine, &row.metrics.euc_dist, &row.metrics.max_abs, &row.metrics.max_rel,
            &row.metrics.one_thousandth, &row.metrics.five_thousandths}) {
        m->state = MetricState::Unsupported;
      }
    } else {
      try {
        const Tensor tn = read_dump_tensor(rc.npu.data_dir, n.data_name);
        const Tensor tb = read_dump_tensor(rc.bench.data_dir, b->data_name);
        row.metrics = compare_tensors(tn, tb, rc.semantics, is_float64(n.dtype),
                                      is_float64(b->dtype), options.chunk);
        if (n.dtype != b->dtype && ms && row.metrics.message.empty()) {
          row.metrics.message = "Dtype of NPU and bench tensor do not match.";
        }
      } catch (const InputError& e) {
        for (Metric* m :
             {&row.metrics.cosine, &row.metrics.euc_dist, &row.metrics.max_abs,
              &row.metrics.max_rel, &row.metrics.one_thousandth, &row.metrics.five_thousandths}) {
          m->state = ms ? MetricState::Unsupported : MetricState::Nan;
        }
        row.metrics.message = ms ? "Dump file: " + n.data_name + " not found or read failed."
                                 : "Dump file: " + n.data_name + " not found.";
        rc.notes.push_back(e.what());
        row.unreadable = true;
      }
    }
    row.note = row.metrics.message;
    row.accuracy = check_accuracy(format_metric(row.metrics.cosine, rc.semantics, true),
                                  format_metric(row.metrics.max_abs, rc.semantics));
  }

  // Verdicts: msprobe's checkers per API (its Result column); ptdbg's own columns otherwise.
  if (ms) {
    std::vector<std::string> order;
    std::map<std::string, ApiView> apis;
    for (size_t r = 0; r < rc.rows.size(); ++r) {
      const TensorRow& n = rc.npu.rows[rc.rows[r].npu];
      auto [it, fresh] = apis.try_emplace(n.api);
      if (fresh) order.push_back(n.api);
      (n.name.find(".output.") != std::string::npos ? it->second.outputs : it->second.inputs)
          .push_back(r);
    }
    Checkers checkers(rc, mode);
    for (const auto& api : order) checkers.run(apis[api]);
  } else {
    for (auto& row : rc.rows) {
      if (mode == DumpMode::Tensor) {
        row.result = row.accuracy == "No" ? kError : kPass;
      } else if (mode == DumpMode::Md5) {
        row.result = row.result == "Pass" ? kPass : (row.bench ? kError : kWarning);
      } else {
        row.result = row.result == "Warning" ? kWarning : kPass;
      }
    }
  }

  // A tensor that could not be read was not compared, so it cannot pass: a job writing an
  // unreadable file in place of a diverging one would otherwise hide the divergence.
  for (auto& row : rc.rows) {
    if (!row.unreadable) continue;
    ++rc.unreadable;
    if (row.result == kPass) row.result = kWarning;
    row.messages.push_back(std::string(kWarning) + ": " + kUnreadableMessage);
  }

  for (size_t r = 0; r < rc.rows.size(); ++r) {
    const auto& row = rc.rows[r];
    const TensorRow& n = rc.npu.rows[row.npu];
    auto note = [&](std::optional<Suspect>& slot, const std::string& why) {
      if (!slot) slot = Suspect{r, n.api, n.name, why};
    };
    if (row.result == kError) {
      ++rc.error;
      note(rc.first_error, row.messages.empty() ? "error" : row.messages.front());
    } else if (row.result == kWarning) {
      ++rc.warning;
      note(rc.first_warning, row.messages.empty() ? "warning" : row.messages.front());
    } else {
      ++rc.pass;
    }
    if (row.accuracy == "No") {
      note(rc.first_no, "Accuracy Reached or Not: No");
      double c = 0, m = 0;
      if (metric_number(row.metrics.cosine, rc.semantics, true, c) &&
          metric_number(row.metrics.max_abs, rc.semantics, false, m) && c < 0.99 && m > 0.001) {
        note(rc.first_seed, "Cosine < 0.99 and MaxAbsErr > 0.001");
      }
    }
  }
  return rc;
}

}  // namespace faultd::compare
