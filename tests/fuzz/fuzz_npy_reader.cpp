// Fuzzes the .npy reader alone (parse_npy: versions 1-3, C and Fortran order, every dtype it
// knows). It must give a tensor or an InputError, never a crash, and every element a tensor
// claims must lie inside the file (tensor_bounds.hpp): a header may claim any shape.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compare/dump.hpp"
#include "compare/tensor.hpp"
#include "tests/fuzz/tensor_bounds.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace faultd::compare;
  try {
    const auto bytes = Bytes::copy_of(std::string_view(reinterpret_cast<const char*>(data), size));
    faultd::fuzz::check_tensor_bounds(parse_npy(bytes, "t.npy"));
  } catch (const InputError&) {
    // a refused input, with its reason: fine
  }
  return 0;
}
