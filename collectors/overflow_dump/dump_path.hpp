// What the path of an overflow dump file says: device, model, iteration, task, stream and
// timestamp, in either documented layout.
//
//   CANN (TF adapter, seed "Overflow Detection"):
//     {dump_path}/{time}/{device_id}/{model_id}/{data_index}/OpDebug.Node_Opdebug.{task_id}.{timestamp}
//   MindSpore:
//     {path}/{step_id}/{time}/{device_id}/{model_name}/{model_id}/{iteration_id}/
//       Opdebug.Node_OpDebug.{task_id}.{stream_id}.{timestamp}[.output.N.json]
//
// The file name prefix is matched case-insensitively ("OpDebug.Node_Opdebug." and
// "Opdebug.Node_OpDebug." both occur). Numeric fields after the prefix: the first is the task,
// the last the timestamp, a middle one the stream; extra middle fields are tolerated and kept.
// The layout is told apart by the directories: four numeric directories above the file whose
// top one is a time stamp (8+ digits) is the CANN layout; otherwise the MindSpore layout needs
// numeric iteration, model id and device directories around a model name.
//
// Lifecycle: pure functions. Threading: none shared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::overflow {

struct DumpPath {
  enum class Layout { Cann, MindSpore } layout = Layout::Cann;
  std::string device;      // the device_id directory, raw
  std::string model_id;    // the model_id (CANN: subnetwork id) directory
  std::string model_name;  // MindSpore only
  // CANN data_index ("iterations to detect overflow") or MindSpore iteration_id.
  uint64_t iteration = 0;
  uint64_t task_id = 0;
  std::optional<uint64_t> stream_id;
  uint64_t timestamp = 0;
  std::vector<uint64_t> extra_fields;  // numeric fields between stream and timestamp
  // ".output.N.json" (or any ".json") converted form: the companion, not the dump itself.
  bool is_json = false;
  std::optional<uint64_t> output_index;  // N of ".output.N.json"
  // The file name without the ".output.N.json"/".json" suffix: the dump the JSON belongs to.
  std::string dump_name;
};

// True if the base name starts with the OpDebug prefix (case-insensitive): cheap filter for
// the directory scan before the full parse.
bool has_dump_prefix(std::string_view base_name);

// The file name alone (task, stream, timestamp, the JSON suffix; the layout fields stay empty):
// for converted dumps copied out of their tree, e.g. into msaccucmp's `-out` directory.
// Nullopt when the name is not a dump name.
std::optional<DumpPath> parse_dump_name(std::string_view base_name);

// Nullopt when the path fits neither layout (the caller counts it as a parse error).
std::optional<DumpPath> parse_dump_path(std::string_view path);

// The order in which dumps are analysed (the reference: the lowest data_index, then the lowest
// timestamp first).
bool dump_before(const DumpPath& x, const DumpPath& y);

// Which of `dumps` to analyse first, by dump_before. Returns dumps.size() when empty.
size_t earliest_dump(const std::vector<DumpPath>& dumps);

}  // namespace faultd::overflow
