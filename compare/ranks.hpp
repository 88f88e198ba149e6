// Many ranks at once. Rank folders (rank0, rank1, ... under a step directory) are paired by
// their numeric id, not by sorted order as the reference tools do (ptdbg sorts the names as
// strings, so rank10 pairs with rank2's partner); when the two sides hold different ids the
// error names the ranks found on one side only. Pairs are compared on a bounded set of threads.
//
// Replica consistency (`--replicas`): the same step dumped by N data-parallel ranks. Tensors
// that must be bit-identical on every replica (parameters, their gradients after the
// all-reduce, a collective's output) are grouped by value; where a majority agrees, a rank
// outside it disagrees. The rank disagreeing most often is named, with its first disagreeing
// API in execution order: silent data corruption on one device looks exactly like that. That
// tensor is then measured against a majority replica's, for the evidence.
//
// Lifecycle: functions over dumps. Threading: compare_ranks starts and joins its own threads;
// each thread owns the ranks it compares.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/compare.hpp"

namespace faultd::compare {

struct RankInput {
  std::optional<int> id;  // none for a single dump given directly
  std::string label;      // "rank3", or the file/folder name
  std::filesystem::path path;
};

// A dump (file or folder holding one), or a folder of rank<N> folders.
std::vector<RankInput> find_ranks(const std::filesystem::path& path);

// Pairs by numeric id; a single dump on each side pairs with each other. Throws InputError
// naming the ranks present on one side only. `by_order`: pair the i-th lowest id with the i-th
// lowest (msprobe's way: rank0..7 against rank8..15); the counts must still be equal.
std::vector<std::pair<RankInput, RankInput>> pair_ranks(const std::vector<RankInput>& npu,
                                                        const std::vector<RankInput>& bench,
                                                        bool by_order = false);

// Reads and compares every pair, at most `threads` at a time; results in pair order.
// Throws the first InputError met (after every thread has finished). `progress`, when set, is
// called (from the comparing threads, one call at a time) with the pairs done so far.
using Progress = std::function<void(size_t done, size_t total)>;
std::vector<RankCompare> compare_ranks(const std::vector<std::pair<RankInput, RankInput>>& pairs,
                                       const CompareOptions& options, unsigned threads,
                                       const Progress& progress = {});

struct ReplicaRow {
  std::string name;  // the tensor, as the first replica names it
  std::string key;   // what the replicas' rows are joined on
  std::string api;
  std::vector<size_t> outliers;  // indices into the replica list
  size_t majority = 0;           // replicas holding the majority's value
  size_t reference = 0;          // the first of them (an index into the replica list)
};

struct ReplicaReport {
  std::vector<std::string> labels;    // the replicas, in the order given
  size_t rows_checked = 0;            // rows present everywhere with a majority value
  std::vector<size_t> disagreements;  // per replica
  std::vector<ReplicaRow> rows;       // every row with an outlier, in dump order
  std::optional<size_t> suspect;      // the replica disagreeing most (needs 3 or more)
  std::optional<ReplicaRow> first;    // the suspect's first disagreeing row
  size_t first_data_row = 0;          // its 1-based data row in the suspect's dump
  // The suspect's tensor against the same tensor of a majority replica (`first->reference`),
  // measured as `faultctl compare` measures an NPU row against its bench row: the result
  // table's cells (header, cell) without names, dtypes, shapes, the stack and the message, the
  // "NPU" and "Bench" columns named "Suspect" and "Majority". The dump mode decides which:
  // statistics diffs, Cosine and the error ratios, or checksums; then the verdict.
  std::vector<std::pair<std::string, std::string>> evidence;
  DumpMode mode = DumpMode::Statistics;
  // Tensor files that could not be read (each error names its file): such a tensor agrees with
  // no replica, and any of them makes the command exit 1.
  std::vector<std::string> unreadable;
};

ReplicaReport compare_replicas(const std::vector<Dump>& replicas,
                               const std::vector<std::string>& labels);

}  // namespace faultd::compare
