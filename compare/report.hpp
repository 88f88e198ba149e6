// What a comparison prints: the result table as CSV with the reference tools' exact headers and
// cell spellings (msprobe HEAD for msprobe dumps, ptdbg 3.0 for .pkl dumps), the same rows as
// JSON, and a terminal summary naming each rank's first suspect API with its stack.
// Lifecycle: pure functions over finished comparisons. Threading: none shared.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "compare/compare.hpp"

namespace faultd::compare {

std::vector<std::string> table_header(const RankCompare& rc);
std::vector<std::string> table_cells(const RankCompare& rc, const ResultRow& row);
void write_csv(std::ostream& out, const RankCompare& rc);

// {"rank", "npu", "bench", "family", "mode", "rows", "pass", "warning", "error", "suspect",
//  "first_error", "first_seed", "notes", "results": [{header: cell, ..., "ptdbg_accuracy"}]}
nlohmann::json rank_json(const RankCompare& rc, bool with_results);

// The earliest suspect across ranks: the lowest data row among the ranks' suspects, preferring
// one before its rank's first communication op (a corrupted collective spreads to every rank).
const RankCompare* earliest_suspect(const std::vector<RankCompare>& ranks);

void print_summary(std::ostream& out, const std::vector<RankCompare>& ranks);

// 0 every row passes, 1 a suspect (error, warning or ptdbg No) was found.
int verdict_exit_code(const std::vector<RankCompare>& ranks);

}  // namespace faultd::compare
