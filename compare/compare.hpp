// One rank's comparison: NPU rows matched to bench rows as the tool that wrote the dump does
// it (msprobe: a join on the row name with a dtype gate; ptdbg: its queue matcher over whole
// APIs), each pair measured (statistics diffs, tensor metrics or checksums) and judged:
//
//   msprobe Result   pass / warning / error from the checkers of msprobe HEAD
//                    (indicator_analysis/algorithm.py), run per API over its input and
//                    output rows
//   ptdbg accuracy   check_accuracy on Cosine and MaxAbsErr: Yes / No / Nan / Unmatched
//                    (the seed's rule: Cosine < 0.99 and MaxAbsErr > 0.001, or Cosine < 0.9,
//                    or MaxAbsErr > 1, gives No)
//
// and the first suspect in dump order (which is execution order) is named.
// Lifecycle: compare_dumps builds a RankCompare from two dumps it takes over. Threading: pure;
// separate ranks may be compared on separate threads.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/dump.hpp"
#include "compare/layer_mapping.hpp"
#include "compare/metrics.hpp"

namespace faultd::compare {

struct CompareOptions {
  bool fuzzy = false;            // match names without their call index (call-index drift)
  size_t chunk = kDefaultChunk;  // tensor elements read at a time, per side
  // msprobe -dm: NPU tensor name -> bench tensor name, taken as given (no dtype gate), for
  // wrappers and renames no rule can guess.
  std::map<std::string, std::string> data_mapping;
  // msprobe -lm: layer names across frameworks or suites (layer_mapping.hpp); the pairs it
  // finds join the data mapping, whose own entries win.
  std::shared_ptr<const LayerMapping> layer_mapping;
};

struct ResultRow {
  size_t npu = 0;                   // index into the NPU dump's rows
  std::optional<size_t> bench;      // index into the bench dump's rows; none when unmatched
  std::array<std::string, 4> diff;  // statistics: Max/Min/Mean/L2norm diff
  std::array<std::string, 4> rel;   // statistics: Max/Min/Mean/NormRelativeErr
  PairMetrics metrics;              // tensor mode
  std::string npu_md5, bench_md5;
  std::string result = "pass";        // pass / warning / error
  std::vector<std::string> messages;  // the checkers' messages, in their order
  std::string accuracy;               // ptdbg check_accuracy (tensor mode); empty otherwise
  std::string note;                   // why metrics are missing or special (the tools' wording)
  bool unreadable = false;            // a tensor file could not be read: a warning, never a pass
};

// The message an unreadable tensor's row gets (after the level, as the checkers' messages).
inline constexpr const char* kUnreadableMessage =
    "a tensor file could not be read, so the row was not compared";

struct Suspect {
  size_t row = 0;  // index into rows
  std::string api;
  std::string name;
  std::string reason;  // "error", "warning", "cosine < 0.99 and MaxAbsErr > 0.001"
};

struct RankCompare {
  std::string label;  // "rank0", or "rank0-rank8" when the ids differ
  Dump npu, bench;
  Semantics semantics = Semantics::Msprobe;
  std::vector<ResultRow> rows;
  size_t pass = 0, warning = 0, error = 0;
  std::optional<Suspect> first_error;  // first row whose Result is error
  std::optional<Suspect> first_warning;
  std::optional<Suspect> first_seed;  // first ptdbg No with Cosine < 0.99, MaxAbsErr > 0.001
  std::optional<Suspect> first_no;    // first ptdbg No (inf/NaN position mismatches too)
  std::vector<std::string> notes;     // truncated inputs, unreadable tensor files
  size_t unreadable = 0;              // rows whose tensor files could not be read
  // The suspect this rank reports: the first seed-rule row, else the first error, else the
  // first ptdbg No, else the first warning.
  const Suspect* suspect() const;
};

// Throws InputError when the two dumps cannot be compared (different modes).
RankCompare compare_dumps(Dump npu, Dump bench, const CompareOptions& options);

// ptdbg's check_accuracy over the formatted Cosine and MaxAbsErr cells.
std::string check_accuracy(const std::string& cosine, const std::string& max_abs);

// The NPU-side name as the bench side would spell it (MindSpore vs PyTorch: Mint. -> Torch.,
// MintFunctional. -> Functional., Cell. -> Module.).
std::string cross_framework_key(const std::string& key);

}  // namespace faultd::compare
