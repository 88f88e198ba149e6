// Shared by the tensor reader targets: every element offset Tensor::read may touch lies inside
// the bytes the tensor was parsed from. Checked from the shape and strides, since a tensor may
// claim 2^40 elements within a small file and reading them all is not the point; then the
// first and the last element are read, so that AddressSanitizer sees the furthest offset the
// reader's own arithmetic computes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compare/tensor.hpp"
#include "tests/support/fuzz_support.hpp"

namespace faultd::fuzz {

inline void check_tensor_bounds(const faultd::compare::Tensor& t) {
  using namespace faultd::compare;
  FAULTD_FUZZ_CHECK(t.bytes != nullptr && t.shape.size() == t.strides.size());
  const size_t es = elem_size(t.type);
  size_t count = 0;
  size_t reach = 0;
  FAULTD_FUZZ_CHECK(tensor_extent(t.shape, t.strides, es, count, reach));
  FAULTD_FUZZ_CHECK(count == t.count);
  const uint8_t* lo = t.bytes->data();
  const uint8_t* hi = lo + t.bytes->size();
  FAULTD_FUZZ_CHECK(t.count == 0 || (t.base >= lo && t.base <= hi));
  if (t.count == 0) return;
  const auto room = static_cast<size_t>(hi - t.base);
  FAULTD_FUZZ_CHECK(reach <= room);
  if (t.contiguous) FAULTD_FUZZ_CHECK(t.count <= room / es);
  double v[2];
  t.read(0, 1, &v[0]);
  t.read(t.count - 1, 1, &v[1]);
}

}  // namespace faultd::fuzz
