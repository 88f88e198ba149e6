#include "compare/ranks.hpp"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "compare/report.hpp"
#include "compare/tensor.hpp"

namespace faultd::compare {

namespace {

std::optional<int> rank_id(const std::string& name) {
  if (name.size() < 5 || name.compare(0, 4, "rank") != 0 || name.size() > 13) return std::nullopt;
  const std::string digits = name.substr(4);
  if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  return std::stoi(digits);
}

bool holds_dump(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const char* n : {"dump.json", "debug.json", "dump.json.gz"}) {
    if (std::filesystem::is_regular_file(dir / n, ec)) return true;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".pkl") return true;
  }
  return false;
}

std::string join_ids(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "rank" : ", rank") + std::to_string(id);
  return out;
}

}  // namespace

std::vector<RankInput> find_ranks(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path.string() + ": not found");
  if (!std::filesystem::is_directory(path, ec)) {
    // .../rank3/dump.json is called rank3; a .pkl by its name.
    const bool json = path.filename().string().rfind("dump.json", 0) == 0 ||
                      path.filename().string().rfind("debug.json", 0) == 0;
    const auto dir = path.parent_path().filename().string();
    return {{std::nullopt, json && !dir.empty() ? dir : path.filename().string(), path}};
  }
  if (holds_dump(path)) return {{std::nullopt, path.filename().string(), path}};
  std::vector<RankInput> ranks;
  std::vector<std::filesystem::path> procs;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (!e.is_directory(ec)) continue;
    const std::string name = e.path().filename().string();
    if (auto id = rank_id(name)) {
      ranks.push_back({id, name, e.path()});
    } else if (name.rfind("proc", 0) == 0) {
      procs.push_back(e.path());
    }
  }
  if (ranks.empty() && procs.size() == 1) {
    return {{std::nullopt, procs[0].filename().string(), procs[0]}};
  }
  if (ranks.empty()) {
    throw InputError(path.string() + ": no dump.json, .pkl or rank<N> folders in it");
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const RankInput& a, const RankInput& b) { return *a.id < *b.id; });
  return ranks;
}

std::vector<std::pair<RankInput, RankInput>> pair_ranks(const std::vector<RankInput>& npu,
                                                        const std::vector<RankInput>& bench,
                                                        bool by_order) {
  if (npu.size() == 1 && bench.size() == 1 && (!npu[0].id || !bench[0].id)) {
    return {{npu[0], bench[0]}};
  }
  if (npu.size() == 1 && !npu[0].id) {
    throw InputError("the NPU side is a single dump, the bench side has " +
                     std::to_string(bench.size()) + " ranks");
  }
  if (bench.size() == 1 && !bench[0].id) {
    throw InputError("the bench side is a single dump, the NPU side has " +
                     std::to_string(npu.size()) + " ranks");
  }
  if (by_order) {
    if (npu.size() != bench.size()) {
      throw InputError(
          "the two runs hold different numbers of ranks: " + std::to_string(npu.size()) +
          " on the NPU side, " + std::to_string(bench.size()) + " on the bench side");
    }
    std::vector<std::pair<RankInput, RankInput>> out;
    for (size_t i = 0; i < npu.size(); ++i) out.emplace_back(npu[i], bench[i]);
    return out;
  }
  std::map<int, const RankInput*> b;
  for (const auto& r : bench) b[*r.id] = &r;
  std::vector<int> npu_only, bench_only;
  std::set<int> n_ids;
  std::vector<std::pair<RankInput, RankInput>> out;
  for (const auto& r : npu) {
    n_ids.insert(*r.id);
    if (auto it = b.find(*r.id); it != b.end()) {
      out.emplace_back(r, *it->second);
    } else {
      npu_only.push_back(*r.id);
    }
  }
  for (const auto& r : bench) {
    if (n_ids.count(*r.id) == 0) bench_only.push_back(*r.id);
  }
  if (!npu_only.empty() || !bench_only.empty()) {
    std::string msg = "the two runs hold different ranks:";
    if (!npu_only.empty()) msg += " only on the NPU side: " + join_ids(npu_only) + ";";
    if (!bench_only.empty()) msg += " only on the bench side: " + join_ids(bench_only) + ";";
    msg.pop_back();
    throw InputError(msg);
  }
  return out;
}

std::vector<RankCompare> compare_ranks(const std::vector<std::pair<RankInput, RankInput>>& pairs,
                                       const CompareOptions& options, unsigned threads,
                                       const Progress& progress) {
  std::vector<std::optional<RankCompare>> results(pairs.size());
  std::vector<std::exception_ptr> errors(pairs.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;  // guards done and the callback
  size_t done = 0;
  auto work = [&]() {
    for (size_t i = next++; i < pairs.size(); i = next++) {
      try {
        const auto& [n, b] = pairs[i];
        RankCompare rc = compare_dumps(read_dump(n.path), read_dump(b.path), options);
        rc.label = n.label == b.label || !n.id ? n.label : n.label + "-" + b.label;
        results[i] = std::move(rc);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      if (progress) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        progress(++done, pairs.size());
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(pairs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  std::vector<RankCompare> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

namespace {

// What must be identical on every replica: the statistics and checksum, and in tensor mode a
// checksum of the tensor's bytes. A tensor that cannot be read agrees with nothing (its replica
// is outside any majority) and is named in `unreadable`: unreadable files must not make
// replicas agree.
std::string fingerprint(const Dump& d, const TensorRow& r, size_t replica,
                        std::vector<std::string>& unreadable) {
  std::string f = r.dtype + "|" + r.shape_text + "|" + r.max.str() + "|" + r.min.str() + "|" +
                  r.mean.str() + "|" + r.norm.str() + "|" + r.md5;
  if (d.mode == DumpMode::Tensor && r.data_name != "-1") {
    try {
      const Tensor t = read_dump_tensor(d.data_dir, r.data_name);
      uLong crc = crc32(0L, Z_NULL, 0);
      std::vector<double> buf(std::min<size_t>(t.count, kDefaultChunk));
      for (size_t at = 0; at < t.count; at += buf.size()) {
        const size_t k = std::min(buf.size(), t.count - at);
        t.read(at, k, buf.data());
        crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), k * sizeof(double));
      }
      f += "|" + std::to_string(crc);
    } catch (const InputError& e) {
      f += "|unreadable in replica " + std::to_string(replica);
      unreadable.emplace_back(e.what());
    }
  }
  return f;
}

// The dump's metadata with one of its rows: a table of one row to compare.
Dump with_row(const Dump& d, const TensorRow& row) {
  return Dump{d.family, d.mode, d.framework, d.path, d.data_dir, {row}, {}, false, std::nullopt};
}

// The suspect's first disagreeing tensor against the majority replica's, as one row of the
// result table (the suspect as NPU, the majority as bench).
void measure_first(const std::vector<Dump>& replicas, ReplicaReport& rep) {
  const Dump& suspect = replicas[*rep.suspect];
  const Dump& reference = replicas[rep.first->reference];
  const auto find = [&](const Dump& d) -> const TensorRow* {
    for (const auto& r : d.rows) {
      if (r.key == rep.first->key) return &r;
    }
    return nullptr;
  };
  const TensorRow* s = find(suspect);
  const TensorRow* r = find(reference);
  if (s == nullptr || r == nullptr) return;
  rep.first_data_row = static_cast<size_t>(s - suspect.rows.data()) + 1;
  RankCompare rc;
  try {
    rc = compare_dumps(with_row(suspect, *s), with_row(reference, *r), {});
  } catch (const InputError&) {
    return;  // replicas dumped in different modes: the disagreement stands, unmeasured
  }
  if (rc.rows.empty()) return;
  // What the replicas share by construction (names, dtypes, shapes) and the long texts are left
  // out; the rest is the measurement. The table's "NPU" side is the suspect, "Bench" the majority.
  static const std::set<std::string> not_evidence = {"NPU Name",
                                                     "Bench Name",
                                                     "NPU Dtype",
                                                     "Bench Dtype",
                                                     "NPU Tensor Dtype",
                                                     "Bench Tensor Dtype",
                                                     "NPU Tensor Shape",
                                                     "Bench Tensor Shape",
                                                     "NPU Requires_grad",
                                                     "Bench Requires_grad",
                                                     "Requires_grad Consistent",
                                                     "Err_message",
                                                     "NPU_Stack_Info",
                                                     "Data_name"};
  const auto header = table_header(rc);
  const auto cells = table_cells(rc, rc.rows[0]);
  for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
    const std::string& h = header[i];
    if (not_evidence.count(h) != 0) continue;
    std::string name = h;
    if (h.rfind("NPU ", 0) == 0) {
      name = "Suspect " + h.substr(4);
    } else if (h.rfind("Bench ", 0) == 0 || h.rfind("BENCH ", 0) == 0) {
      name = "Majority " + h.substr(6);
    }
    rep.evidence.emplace_back(std::move(name), cells[i]);
  }
}

}  // namespace

ReplicaReport compare_replicas(const std::vector<Dump>& replicas,
                               const std::vector<std::string>& labels) {
  ReplicaReport rep;
  rep.labels = labels;
  const size_t n = replicas.size();
  rep.disagreements.assign(n, 0);
  if (n == 0) return rep;
  std::vector<std::unordered_map<std::string, const TensorRow*>> index(n);
  for (size_t i = 1; i < n; ++i) {
    for (const auto& r : replicas[i].rows) index[i].emplace(r.key, &r);
  }
  for (const auto& r0 : replicas[0].rows) {
    std::vector<std::string> prints(n);
    prints[0] = fingerprint(replicas[0], r0, 0, rep.unreadable);
    bool everywhere = true;
    for (size_t i = 1; i < n && everywhere; ++i) {
      const auto it = index[i].find(r0.key);
      if (it == index[i].end()) {
        everywhere = false;
      } else {
        prints[i] = fingerprint(replicas[i], *it->second, i, rep.unreadable);
      }
    }
    if (!everywhere) continue;
    std::map<std::string, size_t> votes;
    for (const auto& p : prints) ++votes[p];
    const auto top = std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) {
      return a.second < b.second;
    });
    // Only values a strict majority shares say anything: activations differ on every replica.
    if (top->second * 2 <= n) continue;
    ++rep.rows_checked;
    if (top->second == n) continue;
    ReplicaRow row;
    row.name = r0.name;
    row.key = r0.key;
    row.api = r0.api;
    row.majority = top->second;
    row.reference =
        static_cast<size_t>(std::find(prints.begin(), prints.end(), top->first) - prints.begin());
    for (size_t i = 0; i < n; ++i) {
      if (prints[i] != top->first) {
        row.outliers.push_back(i);
        ++rep.disagreements[i];
      }
    }
    rep.rows.push_back(std::move(row));
  }
  rep.mode = replicas[0].mode;
  if (n >= 3) {
    const auto most = std::max_element(rep.disagreements.begin(), rep.disagreements.end());
    if (*most > 0) {
      rep.suspect = static_cast<size_t>(most - rep.disagreements.begin());
      for (const auto& row : rep.rows) {
        if (std::find(row.outliers.begin(), row.outliers.end(), *rep.suspect) !=
            row.outliers.end()) {
          rep.first = row;
          break;
        }
      }
    }
  }
  if (rep.first) measure_first(replicas, rep);
  return rep;
}

}  // namespace faultd::compare
