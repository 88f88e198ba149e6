#include "compare/metrics.hpp"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "compare/python_text.hpp"

namespace faultd::compare {

namespace {

std::vector<int64_t> squeezed(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (auto d : shape) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

void set_all(PairMetrics& m, MetricState s) {
  for (Metric* x :
       {&m.cosine, &m.euc_dist, &m.max_abs, &m.max_rel, &m.one_thousandth, &m.five_thousandths}) {
    x->state = s;
  }
}

Metric value(double v) {
  Metric m;
  m.state = std::isnan(v) ? MetricState::Nan : MetricState::Value;
  m.value = v;
  return m;
}

// |(n - b) / b| with eps added to both sides where b == 0, in float32 unless a side is float64
// (numpy's result_type(N, B, float32)).
double relative_error(double n, double b, bool wide) {
  if (wide) {
    if (b == 0) {
      n += DBL_EPSILON;
      b = DBL_EPSILON;
    }
    return std::fabs((n - b) / b);
  }
  auto nf = static_cast<float>(n);
  auto bf = static_cast<float>(b);
  if (bf == 0.0F) {
    nf += FLT_EPSILON;
    bf = FLT_EPSILON;
  }
  return std::fabs(static_cast<double>((nf - bf) / bf));
}

}  // namespace

PairMetrics compare_tensors(const Tensor& npu, const Tensor& bench, Semantics sem, bool npu_float64,
                            bool bench_float64, size_t chunk) {
  PairMetrics m;
  const bool ms = sem == Semantics::Msprobe;
  const auto npu_shape = ms ? squeezed(npu.shape) : npu.shape;
  const auto bench_shape = ms ? squeezed(bench.shape) : bench.shape;
  if (npu_shape != bench_shape || npu.count != bench.count) {
    set_all(m, MetricState::ShapeUnmatched);
    m.message = "Shape of NPU and bench tensor do not match. Skipped.";
    return m;
  }
  if (npu.count == 0) {
    set_all(m, MetricState::Unsupported);
    m.message = "This is empty data, can not compare.";
    return m;
  }
  if (npu.type != bench.type) m.message = "Dtype of NPU and bench tensor do not match.";
  const size_t n = npu.count;
  if (chunk == 0) chunk = kDefaultChunk;
  std::vector<double> a(std::min(chunk, n));
  std::vector<double> b(a.size());

  // One pass of running sums in float64. NaN and inf must sit at the same positions on both
  // sides (else nothing is comparable and every metric is N/A); there they count as 0.
  const bool wide = npu_float64 || bench_float64;
  const double eps = wide ? DBL_EPSILON : static_cast<double>(FLT_EPSILON);
  double dot = 0, nn = 0, bb = 0, sq = 0, max_abs = 0, max_rel = 0;
  size_t below_1 = 0, below_5 = 0;
  bool rel_nan = false;
  for (size_t at = 0; at < n; at += a.size()) {
    const size_t k = std::min(a.size(), n - at);
    npu.prefetch(at, k);
    bench.prefetch(at, k);
    npu.read(at, k, a.data());
    bench.read(at, k, b.data());
    npu.release(at, k);  // what has been read leaves memory: bounded by the chunk
    bench.release(at, k);
    for (size_t i = 0; i < k; ++i) {
      double x = a[i];
      double y = b[i];
      if (!std::isfinite(x) || !std::isfinite(y)) {
        if (std::isnan(x) != std::isnan(y) || std::isinf(x) != std::isinf(y)) {
          set_all(m, MetricState::NotApplicable);
          m.message = "The position of inf or nan in NPU and bench Tensor do not match.";
          return m;
        }
      }
      double re = 0;
      if (ms) {
        if (!std::isfinite(x)) x = y = 0;  // same positions: zeroed
        re = relative_error(x, y, wide);
      } else {
        re = relative_error(x, y, wide);  // before zeroing: a NaN stays a NaN
        if (std::isnan(re)) rel_nan = true;
        if (y == 0) {  // ptdbg shifts the arrays themselves
          x += eps;
          y += eps;
        }
        if (!std::isfinite(x) || !std::isfinite(y)) x = y = 0;
      }
      if (!std::isnan(re)) {
        if (re > max_rel) max_rel = re;
        if (re < 0.001) ++below_1;
        if (re < 0.005) ++below_5;
      }
      const double d = x - y;
      dot += x * y;
      nn += x * x;
      bb += y * y;
      sq += d * d;
      const double ad = std::fabs(d);
      if (ad > max_abs) max_abs = ad;
    }
  }
  m.max_abs = value(max_abs);
  m.max_rel = rel_nan ? Metric{MetricState::Nan, 0} : value(max_rel);
  const bool scalar = ms ? npu_shape.empty() : n == 1;
  if (scalar) {
    // 0-d and length-1 tensors: no direction to compare.
    m.cosine.state = MetricState::Unsupported;
    m.euc_dist.state = ms ? MetricState::Unsupported : MetricState::NotApplicable;
    const MetricState ratio = ms ? MetricState::Unsupported : MetricState::Nan;
    m.one_thousandth.state = ratio;
    m.five_thousandths.state = ratio;
    return m;
  }
  const double npu_norm = std::sqrt(nn);
  const double bench_norm = std::sqrt(bb);
  if (npu_norm <= DBL_EPSILON && bench_norm <= DBL_EPSILON) {
    m.cosine = value(1.0);
  } else if (npu_norm <= DBL_EPSILON || bench_norm <= DBL_EPSILON) {
    m.cosine.state = MetricState::Nan;
    m.message = std::string("Cannot compare by Cosine Similarity, All the data is Zero in ") +
                (npu_norm <= DBL_EPSILON ? "npu" : "Bench") + " dump data.";
  } else {
    m.cosine = value(dot / (npu_norm * bench_norm));
  }
  m.euc_dist = value(std::sqrt(sq));
  m.one_thousandth = value(static_cast<double>(below_1) / static_cast<double>(n));
  m.five_thousandths = value(static_cast<double>(below_5) / static_cast<double>(n));
  return m;
}

namespace {

double round_to(double v, int places) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", places, v);
  return std::strtod(buf, nullptr);
}

}  // namespace

bool metric_number(const Metric& m, Semantics sem, bool is_cosine, double& out) {
  if (!m.has_value()) return false;
  if (sem == Semantics::Msprobe) {
    out = is_cosine && m.value > 0.9999 ? round_to(m.value, 6) : round_to(m.value, 12);
  } else {
    out = is_cosine && m.value > 0.99999 ? 1.0 : round_to(m.value, 12);
  }
  return true;
}

std::string format_metric(const Metric& m, Semantics sem, bool is_cosine) {
  switch (m.state) {
    case MetricState::Nan:
      return "Nan";
    case MetricState::NotApplicable:
      return "N/A";
    case MetricState::Unsupported:
      return "unsupported";
    case MetricState::ShapeUnmatched:
      return "shape unmatched";
    case MetricState::Value:
      break;
  }
  double v = 0;
  metric_number(m, sem, is_cosine, v);
  if (sem == Semantics::Msprobe || (is_cosine && v == 1.0)) {
    if (std::isinf(v)) return v > 0 ? " inf" : " -inf";  // msprobe's guard against Excel
    return python_float_repr(v);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12f", m.value);
  return buf;
}

}  // namespace faultd::compare
