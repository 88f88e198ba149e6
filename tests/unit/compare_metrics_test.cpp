// Per-tensor metrics on hand-made pairs, with the expected values worked out from the formulas
// (metrics.hpp): zero vectors, NaN and inf at the same and at different positions, shape and
// dtype mismatches, 0-d and length-1 tensors, bf16, empty tensors, and chunking.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <vector>

#include "compare/compare.hpp"
#include "compare/metrics.hpp"
#include "tests/support/compare_files.hpp"

namespace cmp = faultd::compare;
using cmp::MetricState;
using cmp::Semantics;
using faultd::testing::npy_file;
using faultd::testing::raw_bytes;

namespace {

cmp::Tensor f32(const std::vector<float>& v, const std::string& shape = "") {
  const std::string s = shape.empty() ? "(" + std::to_string(v.size()) + ",)" : shape;
  return cmp::parse_npy(cmp::Bytes::copy_of(npy_file("<f4", s, raw_bytes(v))), "t.npy");
}

cmp::Tensor bf16(const std::vector<uint16_t>& bits) {
  cmp::Tensor t =
      cmp::parse_npy(cmp::Bytes::copy_of(npy_file("<u2", "(" + std::to_string(bits.size()) + ",)",
                                                  raw_bytes(bits))),
                     "t.npy");
  t.type = cmp::ElemType::BF16;  // npy has no bf16; the bits are read as bf16
  return t;
}

std::string fmt(const cmp::Metric& m, bool cos = false) {
  return cmp::format_metric(m, Semantics::Msprobe, cos);
}

}  // namespace

TEST_CASE("identical tensors: cosine 1, no error, every element within a thousandth") {
  const auto m = cmp::compare_tensors(f32({1, 2, 3}), f32({1, 2, 3}), Semantics::Msprobe);
  CHECK(m.cosine.value == Approx(1.0).epsilon(1e-15));
  CHECK(fmt(m.cosine, true) == "1.0");
  CHECK(m.euc_dist.value == 0);
  CHECK(m.max_abs.value == 0);
  CHECK(m.max_rel.value == 0);
  CHECK(m.one_thousandth.value == 1);
  CHECK(m.five_thousandths.value == 1);
  CHECK(cmp::check_accuracy(fmt(m.cosine, true), fmt(m.max_abs)) == "Yes");
}

TEST_CASE("orthogonal vectors; a zero bench element gets eps on both sides") {
  // N = [1, 0], B = [0, 1]: N.B = 0 -> cosine 0; |N - B| = sqrt(2); max |N - B| = 1.
  // Relative error, float32: element 0 has B == 0, so ((1 + eps) - eps) / eps = 1 / eps = 2^23;
  // element 1: |0 - 1| / 1 = 1.
  const auto m = cmp::compare_tensors(f32({1, 0}), f32({0, 1}), Semantics::Msprobe);
  CHECK(m.cosine.value == 0);
  CHECK(m.euc_dist.value == Approx(std::sqrt(2.0)));
  CHECK(m.max_abs.value == 1);
  CHECK(m.max_rel.value == 8388608.0);
  CHECK(m.one_thousandth.value == 0);
  CHECK(cmp::check_accuracy(fmt(m.cosine, true), fmt(m.max_abs)) == "No");
  CHECK(fmt(m.max_rel) == "8388608.0");
}

TEST_CASE("zero vectors: both zero is cosine 1, one side zero is Nan with the reason") {
  const auto both = cmp::compare_tensors(f32({0, 0, 0}), f32({0, 0, 0}), Semantics::Msprobe);
  CHECK(both.cosine.value == 1.0);
  CHECK(both.max_rel.value == 0);  // (0 + eps - eps) / eps
  CHECK(both.one_thousandth.value == 1);
  const auto one = cmp::compare_tensors(f32({0, 0}), f32({1, 2}), Semantics::Msprobe);
  CHECK(one.cosine.state == MetricState::Nan);
  CHECK(fmt(one.cosine, true) == "Nan");
  CHECK(one.message ==
        "Cannot compare by Cosine Similarity, All the data is Zero in npu dump data.");
  CHECK(one.max_abs.value == 2);
  CHECK(cmp::check_accuracy(fmt(one.cosine, true), fmt(one.max_abs)) == "Nan");
  const auto bench = cmp::compare_tensors(f32({1, 2}), f32({0, 0}), Semantics::Msprobe);
  CHECK(bench.message.find("in Bench dump data") != std::string::npos);
}

TEST_CASE("NaN and inf at the same positions are zeroed on both sides") {
  // N = [nan, 1, 2], B = [nan, 1, 2.5] -> [0, 1, 2] against [0, 1, 2.5]:
  // cosine = 6 / (sqrt(5) sqrt(7.25)) = 6 / sqrt(36.25); max |d| = 0.5; relative errors 0, 0,
  // 0.2 -> 2 of 3 within a thousandth.
  const auto m = cmp::compare_tensors(f32({NAN, 1, 2}), f32({NAN, 1, 2.5F}), Semantics::Msprobe);
  CHECK(m.cosine.value == Approx(6 / std::sqrt(36.25)).epsilon(1e-14));
  CHECK(m.max_abs.value == 0.5);
  CHECK(m.max_rel.value == Approx(0.2).epsilon(1e-7));
  CHECK(m.one_thousandth.value == Approx(2.0 / 3));
  CHECK(m.five_thousandths.value == Approx(2.0 / 3));
  CHECK(m.message.empty());
  // +inf against -inf at one position is the same mask: zeroed, and the rest are equal.
  const auto inf =
      cmp::compare_tensors(f32({INFINITY, 1, 2}), f32({-INFINITY, 1, 2}), Semantics::Msprobe);
  CHECK(inf.cosine.value == Approx(1.0));
  CHECK(inf.max_abs.value == 0);
}

TEST_CASE("NaN or inf at different positions: every metric N/A, and ptdbg says No") {
  const auto m = cmp::compare_tensors(f32({NAN, 1}), f32({1, NAN}), Semantics::Msprobe);
  for (const auto* x :
       {&m.cosine, &m.euc_dist, &m.max_abs, &m.max_rel, &m.one_thousandth, &m.five_thousandths}) {
    CHECK(x->state == MetricState::NotApplicable);
  }
  CHECK(m.message == "The position of inf or nan in NPU and bench Tensor do not match.");
  CHECK(cmp::check_accuracy(fmt(m.cosine, true), fmt(m.max_abs)) == "No");
  const auto inf = cmp::compare_tensors(f32({INFINITY, 1}), f32({1, 1}), Semantics::Msprobe);
  CHECK(inf.cosine.state == MetricState::NotApplicable);
}

TEST_CASE("shapes: a mismatch is shape unmatched; msprobe squeezes size-1 dimensions first") {
  const auto m = cmp::compare_tensors(f32({1, 2, 3, 4, 5, 6}, "(2, 3)"),
                                      f32({1, 2, 3, 4, 5, 6}, "(3, 2)"), Semantics::Msprobe);
  CHECK(m.cosine.state == MetricState::ShapeUnmatched);
  CHECK(fmt(m.max_abs) == "shape unmatched");
  CHECK(m.message == "Shape of NPU and bench tensor do not match. Skipped.");
  CHECK(cmp::check_accuracy(fmt(m.cosine, true), fmt(m.max_abs)) == "Unmatched");
  const auto squeezed =
      cmp::compare_tensors(f32({1, 2, 3}, "(1, 3)"), f32({1, 2, 3}, "(3,)"), Semantics::Msprobe);
  CHECK(squeezed.cosine.has_value());
  const auto ptdbg =
      cmp::compare_tensors(f32({1, 2, 3}, "(1, 3)"), f32({1, 2, 3}, "(3,)"), Semantics::Ptdbg);
  CHECK(ptdbg.cosine.state == MetricState::ShapeUnmatched);
}

TEST_CASE("0-d and length-1 tensors: no cosine, but the absolute and relative errors") {
  // 2 against 3: |d| = 1; relative error |(2 - 3) / 3| in float32 = 0.3333333432674408.
  for (const char* shape : {"()", "(1,)"}) {
    const auto m = cmp::compare_tensors(f32({2}, shape), f32({3}, shape), Semantics::Msprobe);
    CHECK(m.cosine.state == MetricState::Unsupported);
    CHECK(m.euc_dist.state == MetricState::Unsupported);
    CHECK(m.one_thousandth.state == MetricState::Unsupported);
    CHECK(m.max_abs.value == 1);
    CHECK(m.max_rel.value == static_cast<double>(1.0F / 3.0F));
    CHECK(fmt(m.max_rel) == "0.333333343267");
  }
  const auto ptdbg = cmp::compare_tensors(f32({2}), f32({3}), Semantics::Ptdbg);
  CHECK(ptdbg.cosine.state == MetricState::Unsupported);
  CHECK(ptdbg.one_thousandth.state == MetricState::Nan);
  CHECK(cmp::format_metric(ptdbg.max_abs, Semantics::Ptdbg) == "1.000000000000");
}

TEST_CASE("empty tensors cannot be compared") {
  const auto m = cmp::compare_tensors(f32({}, "(0,)"), f32({}, "(0,)"), Semantics::Msprobe);
  CHECK(m.cosine.state == MetricState::Unsupported);
  CHECK(m.message == "This is empty data, can not compare.");
}

TEST_CASE("bf16 against float32: compared in float64, with the dtype noted") {
  // bf16 [1.0, 2.0, 1.5] (0x3F80, 0x4000, 0x3FC0) against float32 [1.0, 2.0, 1.503]:
  // max |d| = 0.003 (float32 1.503 = 1.50300002098083...), relative error 0.002/...
  const auto m =
      cmp::compare_tensors(bf16({0x3F80, 0x4000, 0x3FC0}), f32({1, 2, 1.503F}), Semantics::Msprobe);
  CHECK(m.message == "Dtype of NPU and bench tensor do not match.");
  CHECK(m.max_abs.value == Approx(static_cast<double>(1.503F) - 1.5));
  CHECK(m.one_thousandth.value == Approx(2.0 / 3));  // 0.003 / 1.503 = 0.002 > 0.001
  CHECK(m.five_thousandths.value == 1.0);
}

TEST_CASE("ptdbg: the eps shift is in place and a NaN reaches MaxRelativeErr") {
  // Same NaN position: msprobe zeroes first (relative error 0); ptdbg takes it before, so Nan.
  const auto ms = cmp::compare_tensors(f32({NAN, 1}), f32({NAN, 1}), Semantics::Msprobe);
  const auto pt = cmp::compare_tensors(f32({NAN, 1}), f32({NAN, 1}), Semantics::Ptdbg);
  CHECK(ms.max_rel.value == 0);
  CHECK(pt.max_rel.state == MetricState::Nan);
  CHECK(pt.one_thousandth.value == 0.5);  // the NaN element counts as failing
  // Cosine in ptdbg sees [1 + eps, 1] against [eps, 1]; printed 1.0 only above 0.99999.
  const auto shifted = cmp::compare_tensors(f32({1, 1}), f32({0, 1}), Semantics::Ptdbg);
  const double eps = FLT_EPSILON;
  const double expect =
      ((1 + eps) * eps + 1) / (std::sqrt((1 + eps) * (1 + eps) + 1) * std::sqrt(eps * eps + 1));
  CHECK(shifted.cosine.value == Approx(expect).epsilon(1e-12));
  CHECK(cmp::format_metric(shifted.cosine, Semantics::Ptdbg, true) == "0.707106823333");
}

TEST_CASE("streaming: any chunk size gives the same metrics, bit for bit") {
  std::vector<float> a, b;
  for (int i = 0; i < 1001; ++i) {
    a.push_back(std::sin(static_cast<float>(i)) * 3);
    b.push_back(std::sin(static_cast<float>(i)) * 3 + (i % 7 == 0 ? 0.01F : 0.0F));
  }
  const auto whole = cmp::compare_tensors(f32(a), f32(b), Semantics::Msprobe, false, false, 4096);
  for (size_t chunk : {1u, 2u, 7u, 1000u}) {
    const auto m = cmp::compare_tensors(f32(a), f32(b), Semantics::Msprobe, false, false, chunk);
    CHECK(m.cosine.value == whole.cosine.value);
    CHECK(m.euc_dist.value == whole.euc_dist.value);
    CHECK(m.max_abs.value == whole.max_abs.value);
    CHECK(m.max_rel.value == whole.max_rel.value);
    CHECK(m.one_thousandth.value == whole.one_thousandth.value);
  }
  CHECK(whole.max_abs.value == Approx(0.01).epsilon(1e-3));
  CHECK(whole.one_thousandth.value < 1.0);
}

TEST_CASE("msprobe formatting: 12 places read back, cosine above 0.9999 to 6") {
  cmp::Metric m{MetricState::Value, 0.99999612345};
  CHECK(cmp::format_metric(m, Semantics::Msprobe, true) == "0.999996");
  CHECK(cmp::format_metric(m, Semantics::Ptdbg, true) == "1.0");  // above 0.99999
  m.value = 0.99998612345;
  CHECK(cmp::format_metric(m, Semantics::Ptdbg, true) == "0.999986123450");
  CHECK(cmp::format_metric(m, Semantics::Msprobe, true) == "0.999986");
  m.value = 3.5762787e-05;
  CHECK(cmp::format_metric(m, Semantics::Msprobe) == "3.5762787e-05");  // 0.000035762787
  m.value = 3.57627871234e-05;
  CHECK(cmp::format_metric(m, Semantics::Msprobe) == "3.5762787e-05");
  m.value = 11.8469257354736;
  CHECK(cmp::format_metric(m, Semantics::Msprobe) == "11.846925735474");
}

TEST_CASE("check_accuracy: the seed's rule and its two extra clauses") {
  CHECK(cmp::check_accuracy("0.98", "0.002") == "No");  // cos < 0.99 and |d| > 0.001
  CHECK(cmp::check_accuracy("0.98", "0.0005") == "Yes");
  CHECK(cmp::check_accuracy("0.89", "0.0001") == "No");  // cos < 0.9
  CHECK(cmp::check_accuracy("0.999", "1.5") == "No");    // |d| > 1
  CHECK(cmp::check_accuracy("unsupported", "1.5") == "Nan");
  CHECK(cmp::check_accuracy("N/A", "N/A") == "No");
}
