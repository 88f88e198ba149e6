// Fuzzes the torch.save .pt reader alone (parse_pt: a stored ZIP archive, ZIP64 records, a
// protocol-2 pickle), with inputs up to 256 KiB so that the limits are reached: a 42-byte ZIP64
// end record, a stride whose extent wraps, 200,000 nested tuples. The reader must give a tensor
// or an InputError, never a crash, and every element a tensor claims must lie inside the file
// (tensor_bounds.hpp).
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
    faultd::fuzz::check_tensor_bounds(parse_pt(bytes, "t.pt"));
  } catch (const InputError&) {
    // a refused input, with its reason: fine
  }
  return 0;
}
