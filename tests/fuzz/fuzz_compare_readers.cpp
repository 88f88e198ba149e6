// Fuzzes the readers of `faultctl compare`: Python-dialect JSON, msprobe dump.json, ptdbg .pkl,
// .npy and torch.save .pt. The first input byte picks the reader. Dumps come from training jobs
// that crash mid-write and from other tools' versions, so anything may arrive: the reader must
// give a result or an InputError, never a crash. What it returns must be usable: every row of a
// dump compares against itself, and a tensor against itself has no absolute error (NaN and
// inf sit at the same positions, so they are zeroed).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compare/compare.hpp"
#include "compare/dump.hpp"
#include "compare/json_reader.hpp"
#include "compare/metrics.hpp"
#include "compare/report.hpp"
#include "compare/tensor.hpp"
#include "tests/support/fuzz_support.hpp"

namespace {

using namespace faultd::compare;

void check_self_compare(const Dump& d) {
  const RankCompare rc = compare_dumps(d, d, {});
  FAULTD_FUZZ_CHECK(rc.rows.size() == d.rows.size());
  FAULTD_FUZZ_CHECK(rc.pass + rc.warning + rc.error == rc.rows.size());
  const size_t columns = table_header(rc).size();
  for (const auto& row : rc.rows) FAULTD_FUZZ_CHECK(table_cells(rc, row).size() == columns);
}

void check_tensor(const Tensor& t) {
  FAULTD_FUZZ_CHECK(t.shape.size() == t.strides.size());
  if (t.count > (1u << 20)) return;  // large claims within the file: reading is not the point
  const PairMetrics m = compare_tensors(t, t, Semantics::Msprobe, false, false, 7);
  if (m.max_abs.has_value()) FAULTD_FUZZ_CHECK(m.max_abs.value == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 5) {
      case 0: {
        const JsonParse p = parse_json(text);
        if (p.error) FAULTD_FUZZ_CHECK(p.error->offset <= text.size());
        break;
      }
      case 1:
        check_self_compare(parse_msprobe_dump(text, "dump.json"));
        break;
      case 2:
        check_self_compare(parse_ptdbg_pkl(text, "dump.pkl"));
        break;
      case 3:
        check_tensor(parse_npy(Bytes::copy_of(text), "t.npy"));
        break;
      default:
        check_tensor(parse_pt(Bytes::copy_of(text), "t.pt"));
    }
  } catch (const InputError&) {
    // a refused input, with its reason: fine
  }
  return 0;
}
