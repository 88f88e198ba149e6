#include "compare/cli.hpp"

#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <new>
#include <sstream>
#include <thread>

#include "compare/job_files.hpp"
#include "compare/ranks.hpp"
#include "compare/report.hpp"
#include "daemon/core/terminal_text.hpp"
#include "daemon/core/types.hpp"

namespace faultd::compare {

namespace {

struct Options {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  bool overwrite = false;  // --output may replace an existing file (never through a link)
  bool replicas = false;
  bool help = false;
  bool pair_by_order = false;  // ranks paired by position, not id
  CompareOptions compare;
  unsigned jobs = 0;
  int devices_per_node = 0;  // --replicas: rank R is device R mod N of its node
  // --replicas: --device REPLICA=DEVICE, the device a replica (label, rank id or path) ran on
  std::vector<std::pair<std::string, std::string>> devices;
  bool report = false;        // --replicas: record the suspect with the running faultd
  std::string socket;         // faultd's control socket for --report (empty: faultctl's)
  std::string data_mapping;   // YAML file: NPU tensor name -> bench tensor name
  std::string layer_mapping;  // YAML file: layer class -> {NPU name: bench name}
};

// msprobe's data_mapping.yaml: a flat map of full tensor names.
std::map<std::string, std::string> load_data_mapping(const std::string& path) {
  std::map<std::string, std::string> out;
  try {
    const YAML::Node root = YAML::LoadFile(path);
    if (!root.IsMap()) throw InputError(path + ": expected a map of NPU name to bench name");
    for (const auto& kv : root) out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  } catch (const YAML::Exception& e) {
    throw InputError(path + ": " + e.what());
  }
  return out;
}

bool parse(const std::vector<std::string>& args, Options& o, std::ostream& err) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) {
        err << "faultctl compare: " << a << " needs a value\n";
        return false;
      }
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "-o" || a == "--format") {
      if (!value(o.format)) return false;
      if (o.format != "text" && o.format != "csv" && o.format != "json") {
        err << "faultctl compare: -o takes text, csv or json\n";
        return false;
      }
    } else if (a == "--output") {
      if (!value(o.output)) return false;
    } else if (a == "--overwrite") {
      o.overwrite = true;
    } else if (a == "--replicas") {
      o.replicas = true;
    } else if (a == "--devices-per-node") {
      if (!value(v)) return false;
      try {
        o.devices_per_node = std::stoi(v);
      } catch (const std::exception&) {
        o.devices_per_node = 0;
      }
      if (o.devices_per_node <= 0) {
        err << "faultctl compare: --devices-per-node takes a positive number\n";
        return false;
      }
    } else if (a == "--device") {
      if (!value(v)) return false;
      const size_t eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0 || !is_valid_device_id(v.substr(eq + 1))) {
        err << "faultctl compare: --device takes REPLICA=DEVICE (a rank label, rank id or dump "
               "path, and a device id such as 3)\n";
        return false;
      }
      o.devices.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--report") {
      o.report = true;
    } else if (a == "--socket") {
      if (!value(o.socket)) return false;
    } else if (a == "--data-mapping") {
      if (!value(o.data_mapping)) return false;
    } else if (a == "--layer-mapping") {
      if (!value(o.layer_mapping)) return false;
    } else if (a == "--pair-by-order") {
      o.pair_by_order = true;
    } else if (a == "--fuzzy") {
      o.compare.fuzzy = true;
    } else if (a == "--jobs" || a == "-j") {
      if (!value(v)) return false;
      try {
        o.jobs = static_cast<unsigned>(std::stoul(v));
      } catch (const std::exception&) {
        err << "faultctl compare: --jobs takes a number\n";
        return false;
      }
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (!a.empty() && a[0] == '-') {
      err << "faultctl compare: unknown option " << terminal_safe(a) << '\n';
      return false;
    } else {
      o.paths.push_back(a);
    }
  }
  return true;
}

// The device a replica ran on: named by --device (its label, rank id or path as given), else,
// when the node's size is known, its rank modulo that size (data-parallel ranks fill nodes in
// order).
std::optional<std::string> device_of(const Options& o, const RankInput& in) {
  for (const auto& [replica, device] : o.devices) {
    if (replica == in.label || replica == in.path.string() ||
        (in.id &&
         (replica == std::to_string(*in.id) || replica == "rank" + std::to_string(*in.id)))) {
      return device;
    }
  }
  if (o.devices_per_node <= 0 || !in.id) return std::nullopt;
  return std::to_string(*in.id % o.devices_per_node);
}

std::string evidence_text(const ReplicaReport& rep) {
  std::string text;
  for (const auto& [name, cell] : rep.evidence) {
    text += (text.empty() ? "" : ", ") + name + " " + cell;
  }
  return text;
}

// --report: what faultd made of the suspect, or why nothing was recorded.
struct ReportOutcome {
  nlohmann::json::object_t summary;  // for -o json
  std::string line;                  // for the terminal
  bool failed = false;               // nothing recorded although there was something to record
  bool input_error = false;          // ... and the command exits 2 for it
};

ReportOutcome report_suspect(const Options& o, const ReplicaReport& rep,
                             const std::optional<std::string>& device, const Reporter& reporter) {
  ReportOutcome r;
  auto not_recorded = [&r](std::string why, bool input_error) {
    r.summary = {{"recorded", false}, {"error", why}};
    r.line = "--report: " + why + "; nothing recorded";
    r.failed = true;
    r.input_error = input_error;
    return r;
  };
  if (rep.labels.size() < 3) {
    return not_recorded("two replicas cannot name a suspect (give three or more)", false);
  }
  if (rep.rows.empty()) {
    r.summary = {{"recorded", false}, {"note", "the replicas agree: nothing to report"}};
    r.line = "--report: the replicas agree: nothing to report";
    return r;
  }
  if (!rep.suspect || !rep.first) return not_recorded("no replica can be blamed", false);
  const std::string& label = rep.labels[*rep.suspect];
  if (!device) {
    return not_recorded("the device of " + label + " is not known: give --device " + label +
                            "=DEVICE (or --devices-per-node N)",
                        true);
  }
  if (!reporter) return not_recorded("no connection to faultd", true);
  const ReportResult result = reporter(rep, *device, o.socket);
  if (result.status == ReportResult::Status::Unreachable) {
    return not_recorded("cannot reach faultd: " + result.error, true);
  }
  if (result.status == ReportResult::Status::Refused) {
    return not_recorded("faultd did not record it: " + result.error, true);
  }
  r.summary = result.reply;
  r.summary.erase("ok");
  r.summary["recorded"] = true;
  r.line = "reported to faultd: " + label + " on device " + *device + " (" +
           result.reply.value("result", std::string("recorded"));
  if (const auto id = result.reply.value("fault_id", int64_t{0}); id != 0) {
    r.line += ", fault " + std::to_string(id);
  }
  r.line += ", device " + result.reply.value("state", std::string("?")) + ")";
  return r;
}

int run_replicas(const Options& o, std::ostream& out, std::ostream& err, const Reporter& reporter) {
  std::vector<RankInput> inputs;
  if (o.paths.size() == 1) {
    inputs = find_ranks(o.paths[0]);
  } else {
    for (const auto& p : o.paths) inputs.push_back({std::nullopt, p, p});
  }
  if (inputs.size() < 2) throw InputError("--replicas needs the dumps of two or more ranks");
  std::vector<Dump> dumps;
  std::vector<std::string> labels;
  for (const auto& in : inputs) {
    dumps.push_back(read_dump(in.path));
    labels.push_back(in.label);
    if (dumps.back().truncated) err << "faultctl compare: " << *dumps.back().truncated << '\n';
  }
  const ReplicaReport rep = compare_replicas(dumps, labels);
  std::optional<std::string> device;
  if (rep.suspect) device = device_of(o, inputs[*rep.suspect]);
  std::optional<ReportOutcome> reported;
  if (o.report) reported = report_suspect(o, rep, device, reporter);
  if (o.format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : rep.rows) {
      nlohmann::json outl = nlohmann::json::array();
      for (size_t i : r.outliers) outl.push_back(rep.labels[i]);
      rows.push_back({{"name", r.name}, {"api", r.api}, {"outliers", outl}});
    }
    nlohmann::json j{
        {"replicas", rep.labels},
        {"rows_checked", rep.rows_checked},
        {"disagreements", rep.disagreements},
        {"rows", rows},
        {"suspect", rep.suspect ? nlohmann::json(rep.labels[*rep.suspect]) : nlohmann::json()}};
    if (rep.first) {
      nlohmann::json evidence = nlohmann::json::object();
      for (const auto& [name, cell] : rep.evidence) evidence[name] = cell;
      j["first"] = {
          {"name", rep.first->name},         {"api", rep.first->api},
          {"data_row", rep.first_data_row},  {"reference", rep.labels[rep.first->reference]},
          {"majority", rep.first->majority}, {"evidence", evidence}};
    }
    if (device) j["device"] = *device;
    if (reported) j["report"] = reported->summary;
    j["unreadable"] = rep.unreadable;
    out << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    out << rep.labels.size() << " replicas, " << rep.rows_checked
        << " tensors shared by a majority\n";
    for (size_t i = 0; i < rep.labels.size(); ++i) {
      out << "  " << terminal_safe(rep.labels[i]) << ": " << rep.disagreements[i]
          << " disagreement(s)\n";
    }
    if (rep.suspect) {
      out << "suspect: " << terminal_safe(rep.labels[*rep.suspect]);
      if (device) out << " (device " << terminal_safe(*device) << " of its node)";
      out << " disagrees with the majority, first at " << terminal_safe(rep.first->api) << " ("
          << terminal_safe(rep.first->name) << ", data row " << rep.first_data_row << ")\n";
      if (!rep.evidence.empty()) {
        out << "  against " << terminal_safe(rep.labels[rep.first->reference]) << " ("
            << rep.first->majority << " of " << rep.labels.size()
            << " agree): " << terminal_safe(evidence_text(rep)) << '\n';
      }
    } else if (!rep.rows.empty()) {
      out << "the replicas disagree (" << rep.rows.size()
          << " tensors) but no majority names one of them: give three or more\n";
    } else {
      out << "no disagreement\n";
    }
    if (!rep.unreadable.empty()) {
      out << rep.unreadable.size()
          << " tensor file(s) could not be read; each agrees with no other replica:\n";
      for (const auto& u : rep.unreadable) out << "  note: " << terminal_safe(u) << '\n';
    }
  }
  // A report that failed is an error on stderr; one that went through (or found nothing to
  // report) is part of the summary, or of the JSON.
  if (reported && reported->failed) {
    err << "faultctl compare: " << terminal_safe(reported->line) << '\n';
  } else if (reported && o.format != "json") {
    out << terminal_safe(reported->line) << '\n';
  }
  if (reported && reported->input_error) return kExitInputError;
  return rep.rows.empty() && rep.unreadable.empty() ? kExitAllPass : kExitSuspect;
}

int run_pairs(Options o, std::ostream& out, std::ostream& err) {
  if (!o.data_mapping.empty()) o.compare.data_mapping = load_data_mapping(o.data_mapping);
  if (!o.layer_mapping.empty()) {
    try {
      o.compare.layer_mapping = std::make_shared<LayerMapping>(load_layer_mapping(o.layer_mapping));
    } catch (const InputError& e) {
      // Every problem of the file on a line of its own, at its file:line:column.
      const std::string what = e.what();
      for (size_t start = 0; start < what.size();) {
        const size_t end = std::min(what.find('\n', start), what.size());
        err << "faultctl compare: " << terminal_safe(what.substr(start, end - start)) << '\n';
        start = end + 1;
      }
      return kExitInputError;
    }
  }
  const auto pairs = pair_ranks(find_ranks(o.paths[0]), find_ranks(o.paths[1]), o.pair_by_order);
  const unsigned jobs =
      o.jobs > 0 ? o.jobs : std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  // A progress line on a terminal, when several ranks take a while.
  Progress progress;
  if (pairs.size() > 1 && isatty(STDERR_FILENO) != 0) {
    progress = [&err](size_t done, size_t total) {
      err << "\rcompared " << done << " of " << total << " ranks" << (done == total ? "\n" : "")
          << std::flush;
    };
  }
  const auto ranks = compare_ranks(pairs, o.compare, jobs, progress);
  const int code = verdict_exit_code(ranks);
  if (o.format == "text") {
    print_summary(out, ranks);
    return code;
  }
  // Machine-readable output goes to stdout or --output; the summary then goes to stderr.
  if (o.format == "csv" && ranks.size() > 1) {
    if (o.output.empty()) {
      throw InputError("-o csv with " + std::to_string(ranks.size()) +
                       " ranks needs --output DIR (one table per rank)");
    }
    const UniqueFd dir = open_output_dir(o.output);
    for (const auto& rc : ranks) {
      const std::string name = "compare_result_" + rc.label + ".csv";
      std::ostringstream table;
      write_csv(table, rc);
      write_new_file(dir.get(), name, table.str(), o.overwrite,
                     (std::filesystem::path(o.output) / name).string());
    }
    print_summary(err, ranks);
    return code;
  }
  std::ostringstream text;
  if (o.format == "csv") {
    write_csv(text, ranks[0]);
  } else {
    nlohmann::json j{{"ranks", nlohmann::json::array()}, {"exit", code}};
    for (const auto& rc : ranks) j["ranks"].push_back(rank_json(rc, true));
    if (const RankCompare* first = earliest_suspect(ranks)) {
      j["earliest_suspect"] = {{"rank", first->label}, {"api", first->suspect()->api}};
    }
    text << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  }
  if (o.output.empty()) {
    out << text.str();
  } else {
    const std::filesystem::path file(o.output);
    const std::filesystem::path parent = file.parent_path().empty() ? "." : file.parent_path();
    const UniqueFd dir = open_output_dir(parent);
    write_new_file(dir.get(), file.filename().string(), text.str(), o.overwrite, o.output);
  }
  print_summary(err, ranks);
  return code;
}

}  // namespace

void compare_usage(std::ostream& out) {
  out << "usage: faultctl compare NPU_DUMP BENCH_DUMP [-o text|csv|json] [--output FILE|DIR\n"
         "                        [--overwrite]]\n"
         "                        [--fuzzy] [--data-mapping YAML] [--layer-mapping YAML]\n"
         "                        [--pair-by-order] [--jobs N]\n"
         "       faultctl compare --replicas DUMP DUMP DUMP...|STEP_DIR [-o text|json]\n"
         "                        [--devices-per-node N] [--device REPLICA=DEVICE]...\n"
         "                        [--report [--socket PATH]]\n"
         "A dump is a dump.json, a .pkl, a rank folder holding one, or a step folder of\n"
         "rank<N> folders (ranks are paired by id). Exit: 0 all pass, 1 suspect, 2 input error.\n"
         "--output never writes over an existing file or through a link: give --overwrite to\n"
         "replace a file (a fresh one is renamed over it). Never write results into a job's\n"
         "tree as root.\n"
         "--report records the replica that disagrees with a running faultd, as a finding on\n"
         "its device (compare.replica-divergence); exit 2 when it cannot be recorded.\n";
}

int run_compare_command(const std::vector<std::string>& args, bool global_json, std::ostream& out,
                        std::ostream& err, const Reporter& reporter) {
  Options o;
  if (global_json) o.format = "json";
  if (!parse(args, o, err)) return kExitInputError;
  if (o.help) {
    compare_usage(out);
    return kExitAllPass;
  }
  if (o.replicas ? o.paths.empty() : o.paths.size() != 2) {
    compare_usage(err);
    return kExitInputError;
  }
  if (o.replicas && o.format == "csv") {
    err << "faultctl compare: --replicas prints text or json\n";
    return kExitInputError;
  }
  if (!o.replicas && (o.report || !o.devices.empty() || !o.socket.empty())) {
    err << "faultctl compare: --report, --device and --socket go with --replicas\n";
    return kExitInputError;
  }
  try {
    return o.replicas ? run_replicas(o, out, err, reporter) : run_pairs(o, out, err);
  } catch (const InputError& e) {
    err << "faultctl compare: " << terminal_safe(e.what()) << '\n';
    return kExitInputError;
  } catch (const std::filesystem::filesystem_error& e) {
    err << "faultctl compare: " << terminal_safe(e.what()) << '\n';
    return kExitInputError;
  } catch (const std::bad_alloc&) {
    // Never exit 1, which says a suspect was found.
    err << "faultctl compare: out of memory reading the dumps: nothing was compared\n";
    return kExitInputError;
  } catch (const std::exception& e) {
    err << "faultctl compare: unexpected error: " << terminal_safe(e.what())
        << ": nothing was compared\n";
    return kExitInputError;
  }
}

}  // namespace faultd::compare
