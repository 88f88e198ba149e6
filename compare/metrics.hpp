// The per-tensor metrics of real-data compare, as the reference tools compute them (msprobe
// npy_compare.py, ptdbg compare_by_op), streamed: both tensors are read in chunks of float64
// and every metric is a running sum, maximum or count, so memory is bounded by the chunk.
//
//   Cosine            N.B / (|N| |B|); 1.0 when both norms are ~0, Nan when one is
//   EucDist           |N - B|
//   MaxAbsErr         max |N - B|
//   MaxRelativeErr    max |(N - B) / B|, where B == 0 elements get eps added to both sides
//   One/Five Thousandth Err Ratio   share of elements with relative error < 0.001 / 0.005
//
// One pass: NaN and inf must sit at the same positions on both sides (else every metric is
// N/A); there they count as 0 on both sides.
// Lifecycle: pure functions. Threading: none shared.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compare/tensor.hpp"

namespace faultd::compare {

// msprobe: shapes are squeezed first; relative error after NaN/inf zeroing, on copies.
// ptdbg: shapes as dumped; the eps shift is in place (Cosine and MaxAbsErr see it) and the
// relative error is taken before the NaN/inf zeroing, so a NaN makes MaxRelativeErr Nan.
enum class Semantics { Msprobe, Ptdbg };

enum class MetricState { Value, Nan, NotApplicable, Unsupported, ShapeUnmatched };

struct Metric {
  MetricState state = MetricState::NotApplicable;
  double value = 0;
  bool has_value() const { return state == MetricState::Value; }
};

struct PairMetrics {
  Metric cosine, euc_dist, max_abs, max_rel, one_thousandth, five_thousandths;
  std::string message;  // why a metric is not a number, as the reference words it
};

inline constexpr size_t kDefaultChunk = 1 << 16;  // elements per chunk and side

// `npu_float64` / `bench_float64`: the dumped dtype is float64 (eps and precision of the
// relative error follow the wider side, as numpy's result_type does).
PairMetrics compare_tensors(const Tensor& npu, const Tensor& bench, Semantics sem,
                            bool npu_float64 = false, bool bench_float64 = false,
                            size_t chunk = kDefaultChunk);

// A metric as the result table shows it: msprobe float('{:.12f}') read back (Cosine above
// 0.9999 rounded to 6 places), ptdbg '{:.12f}' (Cosine above 0.99999 shown as 1.0); else the
// special strings Nan, N/A, unsupported, shape unmatched.
std::string format_metric(const Metric& m, Semantics sem, bool is_cosine = false);
// The number a verdict rule sees (the formatted value read back), when there is one.
bool metric_number(const Metric& m, Semantics sem, bool is_cosine, double& out);

}  // namespace faultd::compare
