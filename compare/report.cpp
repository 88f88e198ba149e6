#include "compare/report.hpp"

#include <cmath>

#include "compare/python_text.hpp"
#include "daemon/core/terminal_text.hpp"

namespace faultd::compare {

namespace {

bool msprobe(const RankCompare& rc) { return rc.semantics == Semantics::Msprobe; }

// A statistic cell: NaN as the tools write it ("Nan"), None as "None" (msprobe) or empty
// (ptdbg), else Python's str().
std::string stat_cell(const Scalar& s, bool ms) {
  if (s.kind == Scalar::Kind::Float && std::isnan(s.number)) return ms ? "Nan" : "";
  if (s.is_none()) return ms ? "None" : "";
  return s.str();
}

std::string req_grad_cell(const Scalar& s) { return s.is_none() ? "N/A" : s.str(); }

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += nlohmann::json(items[i]).dump(-1, ' ', true);
  }
  return out + "]";
}

bool is_communication(const std::string& api) {
  static constexpr const char* kOps[] = {"all_reduce",
                                         "allreduce",
                                         "all_gather",
                                         "reduce_scatter",
                                         "broadcast",
                                         "all_to_all",
                                         "isend",
                                         "irecv",
                                         ".send.",
                                         ".recv.",
                                         "barrier",
                                         "_reduce_scatter_base",
                                         "_all_gather_base",
                                         "batch_isend_irecv",
                                         "Distributed."};
  for (const char* op : kOps) {
    if (api.find(op) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> table_header(const RankCompare& rc) {
  std::vector<std::string> h;
  const DumpMode mode = rc.npu.mode;
  const std::vector<std::string> stats_npu = {"NPU max", "NPU min", "NPU mean", "NPU l2norm"};
  const std::vector<std::string> stats_bench = {"Bench max", "Bench min", "Bench mean",
                                                "Bench l2norm"};
  auto add = [&h](const std::vector<std::string>& v) { h.insert(h.end(), v.begin(), v.end()); };
  if (msprobe(rc)) {
    add({"NPU Name", "Bench Name", "NPU Dtype", "Bench Dtype", "NPU Tensor Shape",
         "Bench Tensor Shape", "NPU Requires_grad", "Bench Requires_grad"});
    if (mode == DumpMode::Statistics) {
      add({"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr", "MinRelativeErr",
           "MeanRelativeErr", "NormRelativeErr"});
    } else if (mode == DumpMode::Tensor) {
      add({"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
           "Five Thousandths Err Ratio"});
    } else {
      add({"NPU MD5", "BENCH MD5"});
    }
    if (mode != DumpMode::Md5) {
      add(stats_npu);
      add(stats_bench);
    }
    add({"Requires_grad Consistent", "Result", "Err_message"});
    if (rc.npu.has_stack) h.emplace_back("NPU_Stack_Info");
    if (mode == DumpMode::Tensor) h.emplace_back("Data_name");
    return h;
  }
  add({"NPU Name", "Bench Name", "NPU Tensor Dtype", "Bench Tensor Dtype", "NPU Tensor Shape",
       "Bench Tensor Shape"});
  if (mode == DumpMode::Tensor) {
    add({"Cosine", "MaxAbsErr", "MaxRelativeErr", "One Thousandth Err Ratio",
         "Five Thousandths Err Ratio"});
  } else if (mode == DumpMode::Statistics) {
    add({"Max diff", "Min diff", "Mean diff", "L2norm diff"});
  } else {
    add({"NPU MD5", "BENCH MD5", "Result"});
  }
  if (mode != DumpMode::Md5) {
    add(stats_npu);
    add(stats_bench);
    if (mode == DumpMode::Tensor) {
      add({"Accuracy Reached or Not", "Err_message"});
    } else {
      add({"Result", "Err_message"});
    }
  }
  if (rc.npu.has_stack) h.emplace_back("NPU_Stack_Info");
  return h;
}

std::vector<std::string> table_cells(const RankCompare& rc, const ResultRow& row) {
  const bool ms = msprobe(rc);
  const DumpMode mode = rc.npu.mode;
  const TensorRow& n = rc.npu.rows[row.npu];
  const TensorRow* b = row.bench ? &rc.bench.rows[*row.bench] : nullptr;
  const std::string none = ms ? "N/A" : "Nan";
  std::vector<std::string> c = {n.name,       b ? b->name : none,      n.dtype, b ? b->dtype : none,
                                n.shape_text, b ? b->shape_text : none};
  auto add = [&c](std::initializer_list<std::string> v) { c.insert(c.end(), v); };
  if (ms) add({req_grad_cell(n.requires_grad), b ? req_grad_cell(b->requires_grad) : "N/A"});
  if (mode == DumpMode::Statistics) {
    c.insert(c.end(), row.diff.begin(), row.diff.end());
    if (ms) c.insert(c.end(), row.rel.begin(), row.rel.end());
  } else if (mode == DumpMode::Tensor) {
    const auto& m = row.metrics;
    auto f = [&](const Metric& x, bool cos) {
      return b ? format_metric(x, rc.semantics, cos) : none;
    };
    c.push_back(f(m.cosine, true));
    if (ms) c.push_back(f(m.euc_dist, false));
    add({f(m.max_abs, false), f(m.max_rel, false), f(m.one_thousandth, false),
         f(m.five_thousandths, false)});
  } else {
    add({row.npu_md5, row.bench_md5});
    if (!ms) c.push_back(row.result == "pass" ? "Pass" : "Different");
  }
  if (mode != DumpMode::Md5) {
    for (const Scalar* s : {&n.max, &n.min, &n.mean, &n.norm}) c.push_back(stat_cell(*s, ms));
    if (b != nullptr) {
      for (const Scalar* s : {&b->max, &b->min, &b->mean, &b->norm}) c.push_back(stat_cell(*s, ms));
    } else {
      for (int i = 0; i < 4; ++i) c.push_back(none);
    }
  }
  if (ms) {
    const std::string nr = req_grad_cell(n.requires_grad);
    const std::string br = b ? req_grad_cell(b->requires_grad) : "N/A";
    add({nr == br ? "True" : "False", row.result, json_list(row.messages)});
  } else if (mode == DumpMode::Tensor) {
    add({row.accuracy, row.note});
  } else if (mode == DumpMode::Statistics) {
    add({row.result == "warning" ? "Warning" : "", row.note});
  }
  if (rc.npu.has_stack) {
    const auto it = rc.npu.stacks.find(n.api);
    c.push_back(it != rc.npu.stacks.end() ? it->second : "N/A");
  }
  if (ms && mode == DumpMode::Tensor) {
    c.push_back("['" + n.data_name + "', '" + (b ? b->data_name : std::string("-1")) + "']");
  }
  return c;
}

void write_csv(std::ostream& out, const RankCompare& rc) {
  auto line = [&out](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out << ',';
      out << csv_field(cells[i]);
    }
    out << '\n';
  };
  line(table_header(rc));
  for (const auto& row : rc.rows) line(table_cells(rc, row));
}

namespace {

nlohmann::json suspect_json(const RankCompare& rc, const Suspect& s) {
  nlohmann::json j{{"api", s.api}, {"name", s.name}, {"data_row", s.row + 1}, {"reason", s.reason}};
  if (const auto it = rc.npu.stacks.find(s.api); it != rc.npu.stacks.end()) j["stack"] = it->second;
  return j;
}

}  // namespace

nlohmann::json rank_json(const RankCompare& rc, bool with_results) {
  nlohmann::json j{{"rank", rc.label},
                   {"npu", rc.npu.path.string()},
                   {"bench", rc.bench.path.string()},
                   {"family", msprobe(rc) ? "msprobe" : "ptdbg"},
                   {"mode", mode_name(rc.npu.mode)},
                   {"rows", rc.rows.size()},
                   {"pass", rc.pass},
                   {"warning", rc.warning},
                   {"error", rc.error},
                   {"notes", rc.notes},
                   {"unreadable", rc.unreadable}};
  const std::pair<const char*, const std::optional<Suspect>*> kinds[] = {
      {"first_error", &rc.first_error},
      {"first_warning", &rc.first_warning},
      {"first_seed", &rc.first_seed},
      {"first_no", &rc.first_no}};
  for (const auto& [key, s] : kinds) j[key] = *s ? suspect_json(rc, **s) : nlohmann::json();
  j["suspect"] = rc.suspect() != nullptr ? suspect_json(rc, *rc.suspect()) : nlohmann::json();
  if (with_results) {
    const auto header = table_header(rc);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : rc.rows) {
      const auto cells = table_cells(rc, row);
      nlohmann::json r = nlohmann::json::object();
      for (size_t i = 0; i < header.size() && i < cells.size(); ++i) r[header[i]] = cells[i];
      if (!row.accuracy.empty()) r["ptdbg_accuracy"] = row.accuracy;
      if (!row.note.empty()) r["note"] = row.note;
      rows.push_back(std::move(r));
    }
    j["results"] = std::move(rows);
  }
  return j;
}

const RankCompare* earliest_suspect(const std::vector<RankCompare>& ranks) {
  const RankCompare* best = nullptr;
  bool best_pre = false;
  for (const auto& rc : ranks) {
    const Suspect* s = rc.suspect();
    if (s == nullptr) continue;
    // Is the suspect before the rank's first communication op?
    bool pre = true;
    for (size_t r = 0; r < s->row && pre; ++r) {
      if (is_communication(rc.npu.rows[rc.rows[r].npu].api)) pre = false;
    }
    if (best == nullptr || (pre && !best_pre) ||
        (pre == best_pre && s->row < best->suspect()->row)) {
      best = &rc;
      best_pre = pre;
    }
  }
  return best;
}

void print_summary(std::ostream& out, const std::vector<RankCompare>& ranks) {
  for (const auto& rc : ranks) {
    out << terminal_safe(rc.label) << ": " << rc.rows.size() << " rows, " << rc.pass << " pass, "
        << rc.warning << " warning, " << rc.error << " error\n";
    for (const auto& n : rc.notes) out << "  note: " << terminal_safe(n) << '\n';
    if (rc.unreadable > 0) {
      out << "  " << rc.unreadable
          << " row(s) with a tensor file that could not be read (the notes name them): "
             "warnings, not passes\n";
    }
    const Suspect* s = rc.suspect();
    if (s == nullptr) {
      out << "  no suspect: every row passes\n";
      continue;
    }
    out << "  first suspect: " << terminal_safe(s->api) << " (" << terminal_safe(s->name)
        << ", data row " << s->row + 1 << "): " << terminal_safe(s->reason) << '\n';
    if (const auto it = rc.npu.stacks.find(s->api); it != rc.npu.stacks.end()) {
      size_t start = 0;
      const std::string& st = it->second;
      while (start < st.size()) {
        size_t end = st.find('\n', start);
        if (end == std::string::npos) end = st.size();
        out << "    " << terminal_safe(std::string_view(st).substr(start, end - start)) << '\n';
        start = end + 1;
      }
    }
  }
  if (ranks.size() > 1) {
    if (const RankCompare* rc = earliest_suspect(ranks)) {
      out << "earliest suspect across ranks: " << terminal_safe(rc->label) << " "
          << terminal_safe(rc->suspect()->api) << '\n';
    }
  }
}

int verdict_exit_code(const std::vector<RankCompare>& ranks) {
  for (const auto& rc : ranks) {
    if (rc.error > 0 || rc.warning > 0 || rc.first_no) return 1;
  }
  return 0;
}

}  // namespace faultd::compare
