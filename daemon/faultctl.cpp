// faultctl: the operator's client for faultd's control socket.
// Exit codes: 0 ok, 1 the daemon refused or failed, 2 usage, 69 daemon unreachable. compare
// and decode-overflow have their own (compare/cli.hpp, decode_overflow below): there, 1 says
// what was found, and an unexpected error (out of memory included) is 2, never 1.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/overflow_dump/dump_path.hpp"
#include "collectors/overflow_dump/overflow_dump_source.hpp"
#include "collectors/overflow_dump/overflow_status.hpp"
#include "compare/cli.hpp"
#include "compare/dump.hpp"
#include "compare/job_files.hpp"
#include "daemon/control/control_client.hpp"
#include "daemon/control/protocol.hpp"
#include "daemon/control/report_request.hpp"
#include "daemon/core/json.hpp"
#include "daemon/core/terminal_text.hpp"

using faultd::terminal_safe;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnavailable = 69;

constexpr const char* kExitCodes =
    "exit codes: 0 ok; 1 faultd refused or failed the request; 2 usage (a wrong option or\n"
    "argument); 69 faultd unreachable (is it running? is --socket right?). decode-overflow:\n"
    "1 some files could not be decoded. compare: see `faultctl compare --help`.\n";

// One entry per command: its synopsis (the global usage's line) and what `faultctl CMD --help`
// adds. compare's help is its own (compare/cli.cpp).
struct CommandHelp {
  const char* name;
  const char* synopsis;
  const char* text;
};
constexpr CommandHelp kCommands[] = {
    {"status", "status",
     "The devices faultd knows (state, level, code, reason), the inventory, and\n"
     "each source's lines, bytes, lag and errors.\n"},
    {"events", "events [--device D] [--job J] [--since DUR] [--limit N] [--before ID] [--verbose]",
     "The fault and action journal, newest first. DETAIL ends with the last line the action's\n"
     "hook printed. --verbose adds each fault's log line and all a hook printed; -o json\n"
     "carries both. --since takes a duration (30m, 24h); --before ID pages past fault ID.\n"},
    {"isolate", "isolate DEVICE --reason TEXT",
     "Isolate a device as an operator (runs the isolate hook; not counted by the budget).\n"},
    {"clear", "clear DEVICE --reason TEXT",
     "Return a device to healthy (an operator's decision).\n"},
    {"ack", "ack DEVICE --reason TEXT",
     "Acknowledge the device's open incident (its alert is annotated, not silenced).\n"},
    {"history", "history DEVICE | --serial S [--limit N]",
     "A device's transitions and incidents; with --serial, the findings of the card with that\n"
     "serial (or UUID) in whatever slot it was.\n"},
    {"incidents", "incidents [--device D] [--all] [--limit N]",
     "Open incidents (--all: recent closed ones too).\n"},
    {"budget", "budget",
     "The isolation budget: automatic isolations used in the window, and the\n"
     "operator's (not counted).\n"},
    {"reload", "reload",
     "Reload the configuration and rules (a bad one keeps the old, saying why).\n"},
    {"decode-overflow", "decode-overflow --status N [--kind K] | (DIR|FILE.json)...",
     "Name the causes of an overflow status (K: aicore (default), dha, l2), or decode converted\n"
     "overflow dumps (DIRs searched; links to dirs not entered): the earliest overflowing\n"
     "operator, then each dump, earliest (data_index, timestamp) first.\n"},
    {"compare", "compare NPU_DUMP BENCH_DUMP | --replicas STEP_DIR [--report] ...",
     "Compare accuracy dumps (msprobe, ptdbg); `faultctl compare --help` for the rest.\n"},
};

const CommandHelp* find_command(const std::string& name) {
  for (const auto& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

void usage(std::ostream& out) {
  out << "usage: faultctl [--socket PATH] [-o json] COMMAND [OPTIONS]\n"
         "       faultctl COMMAND --help | --help | --version\n\n";
  for (const auto& c : kCommands) out << "  " << c.synopsis << '\n';
  out << "\nOptions take their value as `--opt VALUE` or `--opt=VALUE`.\n"
         "The socket defaults to $FAULTD_SOCKET, else /run/faultd/control.sock.\n"
      << kExitCodes << "See faultctl(8).\n";
}

void command_usage(std::ostream& out, const CommandHelp& c) {
  out << "usage: faultctl [--socket PATH] [-o json] " << c.synopsis << "\n\n"
      << c.text << '\n'
      << kExitCodes;
}

struct Args {
  std::string socket;
  bool json = false;
  std::string command;
  std::vector<std::string> positional;
  std::string device, since, reason, serial, job;
  std::string status, kind;  // decode-overflow
  size_t limit = 100;
  bool all = false;
  bool verbose = false;
  bool help = false;                      // --help: the command's usage, or the global one
  bool version = false;                   // --version
  std::optional<uint64_t> before;         // events: start after this fault id
  std::vector<std::string> compare_args;  // compare: every word after it, parsed by compare/
};

// A field for the terminal: whatever a log writer put in it (a file name, a reason) is shown
// with its control bytes escaped, never interpreted.
std::string str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "";
  const auto& v = j[key];
  return terminal_safe(v.is_string() ? v.get<std::string>() : v.dump());
}

// What is known about a device besides its state, shown before the reason: a diagnosis
// verdict (a faulty device is waiting for repair) and an operator's acknowledgement.
std::string marks(const nlohmann::json& d) {
  std::string out;
  if (d.value("repair", false)) {
    out += "[repair] ";
  } else if (const auto v = d.value("verdict", std::string()); !v.empty()) {
    out += "[diagnosis " + v + "] ";
  }
  if (d.value("acked", false)) out += "[acked: " + d.value("ack_reason", std::string()) + "] ";
  return out;
}

void print_status(const nlohmann::json& r) {
  std::cout << "node " << str(r, "node") << "  faultd " << str(r, "version") << "  rules "
            << str(r, "rules") << "  dry-run " << (r.value("dry_run", false) ? "yes" : "no")
            << "  hooks running " << str(r, "actions_in_flight") << "\n\n";
  if (const auto inv = r.find("inventory"); inv != r.end() && inv->value("known", false)) {
    std::cout << "inventory: " << str(*inv, "present") << " of " << str(*inv, "expected")
              << " device(s) present\n\n";
  }
  std::cout << std::left << std::setw(12) << "DEVICE" << std::setw(10) << "STATE" << std::setw(26)
            << "SINCE" << std::setw(22) << "LEVEL" << std::setw(12) << "CODE"
            << "REASON\n";
  for (const auto& d : r["devices"]) {
    const bool missing = d.contains("present") && !d.value("present", true);
    std::cout << std::setw(12) << str(d, "device") << std::setw(10) << str(d, "state")
              << std::setw(26) << str(d, "since") << std::setw(22) << str(d, "level")
              << std::setw(12) << str(d, "code") + ' ' << marks(d) << (missing ? "[missing] " : "")
              << str(d, "reason") << '\n';
  }
  if (r["devices"].empty()) std::cout << "(no device known: none has reported a fault)\n";
  std::cout << '\n'
            << std::setw(16) << "SOURCE" << std::setw(8) << "FILES" << std::setw(12) << "LINES"
            << std::setw(14) << "BYTES" << std::setw(12) << "LAG"
            << "ERRORS\n";
  for (const auto& s : r["sources"]) {
    std::cout << std::setw(16) << str(s, "name") << std::setw(8) << str(s, "files") << std::setw(12)
              << str(s, "lines") << std::setw(14) << str(s, "bytes") << std::setw(12)
              << str(s, "lag_bytes") << str(s, "errors") << '\n';
  }
}

// The last non-blank line a hook printed: what a hook says last is usually its outcome.
std::string last_output_line(const nlohmann::json& action) {
  const std::string output = action.value("output", std::string());
  const size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t newline = output.find_last_of("\r\n", end);
  const size_t from = newline == std::string::npos ? 0 : newline + 1;
  return terminal_safe(output.substr(from, end + 1 - from));
}

void print_events(const nlohmann::json& r, bool verbose) {
  std::cout << std::left << std::setw(8) << "ID" << std::setw(26) << "TIME" << std::setw(10)
            << "DEVICE" << std::setw(22) << "LEVEL" << std::setw(10) << "CODE" << std::setw(34)
            << "RULE"
            << "WHERE\n";
  for (const auto& f : r["faults"]) {
    std::cout << std::setw(8) << str(f, "id") << std::setw(26) << str(f, "time") << std::setw(10)
              << (str(f, "device").empty() ? "-" : str(f, "device")) << std::setw(22)
              << str(f, "level") << std::setw(10) << str(f, "code") + ' ' << std::setw(34)
              << str(f, "rule") << str(f, "file") << ':' << str(f, "line") << '\n';
    // What the rule knows about the fault (e.g. a FaultDiag cause and suggestion), indented
    // under its row so the table stays one row per fault.
    if (f.contains("job")) std::cout << "        job: " << str(f, "job") << '\n';
    if (f.contains("text")) std::cout << "        line: " << str(f, "text") << '\n';
    if (f.value("recovery", false))
      std::cout << "        recovery: the device reports it recovered\n";
    if (const auto a = f.find("annotations"); a != f.end() && a->is_object()) {
      for (const auto& [name, value] : a->items()) {
        std::cout << "        " << terminal_safe(name) << ": "
                  << terminal_safe(value.is_string() ? value.get<std::string>() : value.dump())
                  << '\n';
      }
    }
  }
  if (!r["actions"].empty()) {
    std::cout << '\n'
              << std::setw(8) << "FAULT" << std::setw(12) << "ACTION" << std::setw(10) << "DEVICE"
              << std::setw(10) << "STATUS" << std::setw(10) << "ATTEMPTS" << std::setw(6) << "EXIT"
              << "DETAIL\n";
    for (const auto& a : r["actions"]) {
      std::cout << std::setw(8) << str(a, "fault_id") << std::setw(12) << str(a, "action")
                << std::setw(10) << str(a, "device") << std::setw(10) << str(a, "status")
                << std::setw(10) << str(a, "attempts") << std::setw(6) << str(a, "exit_code");
      std::string detail = str(a, "detail");
      if (const auto said = last_output_line(a); !said.empty())
        detail += (detail.empty() ? "" : "; ") + std::string("said: ") + said;
      std::cout << detail << '\n';
      if (!verbose) continue;
      // All the hook printed, indented under its row like a fault's line.
      std::istringstream output(a.value("output", std::string()));
      for (std::string line; std::getline(output, line);)
        std::cout << "        | " << terminal_safe(line) << '\n';
    }
  }
}

void print_incidents(const nlohmann::json& list) {
  std::cout << std::left << std::setw(8) << "ID" << std::setw(10) << "DEVICE" << std::setw(6)
            << "OPEN" << std::setw(8) << "COUNT" << std::setw(26) << "LAST" << std::setw(22)
            << "LEVEL" << std::setw(34) << "RULE"
            << "NOTE\n";
  for (const auto& i : list) {
    std::string note = str(i, "escalation");
    if (note.empty()) note = str(i, "note");
    std::cout << std::setw(8) << str(i, "id") << std::setw(10)
              << (i.value("node_level", false) ? "(node)" : str(i, "device")) << std::setw(6)
              << (i.value("open", false) ? "yes" : "no") << std::setw(8) << str(i, "count")
              << std::setw(26) << str(i, "last") << std::setw(22) << str(i, "level")
              << std::setw(34) << str(i, "rule") << note << '\n';
  }
  if (list.empty()) std::cout << "(no incident)\n";
}

void print_history(const nlohmann::json& r) {
  std::cout << std::left << std::setw(26) << "TIME" << std::setw(10) << "FROM" << std::setw(10)
            << "TO" << std::setw(8) << "FAULT" << std::setw(22) << "LEVEL"
            << "REASON\n";
  for (const auto& t : r["transitions"]) {
    std::cout << std::setw(26) << str(t, "time") << std::setw(10) << str(t, "from") << std::setw(10)
              << str(t, "to") << std::setw(8) << str(t, "fault_id") << std::setw(22)
              << str(t, "level") << str(t, "reason") << '\n';
  }
  if (r["transitions"].empty()) std::cout << "(no transition)\n";
  std::cout << '\n';
  print_incidents(r["incidents"]);
}

void print_budget(const nlohmann::json& r) {
  std::cout << "isolations: " << str(r, "used") << " of " << str(r, "max_isolations") << " per "
            << str(r, "window") << ", " << str(r, "remaining") << " left"
            << (r.value("exhausted", false) ? " (exhausted: automatic isolation is held)" : "")
            << '\n';
  if (r.contains("operator_isolations")) {
    std::cout << "operator isolations: " << str(r, "operator_isolations") << " in the window"
              << " (not counted: an operator's isolation is not limited)\n";
  }
}

// Reads the command line into `a`; on a mistake, returns kExitUsage with `error` saying what
// was wrong, in one line.
int parse(int argc, char** argv, Args& a, std::string& error) {
  const char* env = std::getenv("FAULTD_SOCKET");
  a.socket = env != nullptr && *env != '\0' ? env : faultd::control::kDefaultSocket;
  auto fail = [&error](std::string why) {
    error = std::move(why);
    return kExitUsage;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // --opt=value is --opt value
    std::optional<std::string> inline_value;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    auto value = [&](std::string& out) {
      if (inline_value) {
        out = *inline_value;
      } else if (i + 1 < argc) {
        out = argv[++i];
      } else {
        return false;
      }
      return true;
    };
    auto flag = [&inline_value]() { return !inline_value; };
    std::string v;
    const auto needs = [&](const char* what) { return fail(arg + " needs " + what); };
    if (arg == "--socket") {
      if (!value(a.socket)) return needs("a path");
    } else if (arg == "-o" || arg == "--output") {
      if (!value(v)) return needs("json or text");
      if (v != "json" && v != "text") return fail(arg + " must be json or text, not '" + v + "'");
      a.json = v == "json";
    } else if (arg == "-o=json" || arg == "-ojson") {
      a.json = true;
    } else if (arg == "--device") {
      if (!value(a.device)) return needs("a device");
    } else if (arg == "--job") {
      if (!value(a.job) || a.job.empty()) return needs("a job name");
    } else if (arg == "--since") {
      if (!value(a.since)) return needs("a duration such as 30m or 24h");
    } else if (arg == "--reason") {
      if (!value(a.reason)) return needs("a text");
    } else if (arg == "--status") {
      if (!value(a.status)) return needs("a number");
    } else if (arg == "--kind") {
      if (!value(a.kind)) return needs("aicore, dha or l2");
    } else if (arg == "--limit") {
      if (!value(v) || v.empty() || !std::all_of(v.begin(), v.end(), ::isdigit) || v.size() > 9)
        return fail(arg + " needs a number of rows" + (v.empty() ? "" : ", not '" + v + "'"));
      a.limit = static_cast<size_t>(std::stoul(v));
    } else if (arg == "--all" && flag()) {
      a.all = true;
    } else if (arg == "--serial") {
      if (!value(a.serial) || a.serial.empty()) return needs("a serial or UUID");
    } else if ((arg == "--verbose" || arg == "-v") && flag()) {
      a.verbose = true;
    } else if (arg == "--before") {
      if (!value(v) || v.empty() || !std::all_of(v.begin(), v.end(), ::isdigit) || v.size() > 18)
        return fail(arg + " needs a fault id" + (v.empty() ? "" : ", not '" + v + "'"));
      a.before = std::stoull(v);
    } else if ((arg == "-h" || arg == "--help") && flag()) {
      a.help = true;
    } else if (arg == "--version" && flag()) {
      a.version = true;
    } else if (!arg.empty() && arg[0] == '-') {
      if (inline_value &&
          (arg == "--all" || arg == "--verbose" || arg == "--help" || arg == "--version"))
        return fail(arg + " takes no value");
      return fail("unknown option " + arg + (a.command.empty() ? "" : " for " + a.command));
    } else if (a.command.empty()) {
      a.command = arg;
      if (a.command == "compare") {  // its options (-o csv, --output FILE) are its own
        a.compare_args.assign(argv + i + 1, argv + argc);
        break;
      }
    } else {
      a.positional.push_back(arg);
    }
  }
  if (a.help || a.version) return kExitOk;
  if (a.command.empty()) return fail("no command given");
  return kExitOk;
}

// A journal a listing reads page by page: the reply's rows, the reply's cursor for the next
// page, and the request's.
struct Paged {
  const char* rows;
  const char* next;
  const char* cursor;
};

// faultd serves `events`, `incidents` and `history` a page at a time (its journals can be long);
// this reads pages of each journal the command lists until each has `limit` rows or no more.
faultd::ControlReply fetch_pages(const std::string& socket, nlohmann::json request, size_t limit,
                                 std::chrono::milliseconds timeout,
                                 const std::vector<Paged>& paged) {
  struct Journal {
    Paged paged;
    nlohmann::json got = nlohmann::json::array();
    bool wanted = true;
  };
  std::vector<Journal> journals;
  journals.reserve(paged.size());
  for (const auto& p : paged) journals.push_back({p});
  faultd::ControlReply reply;
  nlohmann::json body;
  for (;;) {
    size_t want = 0;
    for (auto& j : journals) {
      j.wanted = j.wanted && j.got.size() < limit;
      if (journals.size() > 1) request[j.paged.rows] = j.wanted;
      if (j.wanted) want = std::max(want, limit - j.got.size());
    }
    if (want == 0 && !body.is_null()) break;
    request["limit"] = want;
    reply = faultd::control_call(socket, request, timeout);
    if (reply.status != faultd::ControlReply::Status::Ok || !reply.body.value("ok", false))
      return reply;
    for (auto& j : journals) {
      if (!j.wanted) continue;
      for (auto& row : reply.body[j.paged.rows]) {
        if (j.got.size() < limit) j.got.push_back(std::move(row));
      }
      j.wanted = reply.body.contains(j.paged.next);
      if (j.wanted) request[j.paged.cursor] = reply.body[j.paged.next];
    }
    if (body.is_null()) body = reply.body;  // the fields besides the rows
    if (want == 0) break;
  }
  for (auto& j : journals) {
    body[j.paged.rows] = std::move(j.got);
    body.erase(j.paged.next);
  }
  reply.status = faultd::ControlReply::Status::Ok;
  reply.body = std::move(body);
  return reply;
}

// decode-overflow runs locally: it needs no daemon, so it works on a copy of the dumps too.
namespace ov = faultd::overflow;

std::optional<uint64_t> parse_status(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  const auto ok = hex ? std::all_of(digits.begin(), digits.end(), ::isxdigit)
                      : std::all_of(digits.begin(), digits.end(), ::isdigit);
  if (!ok || digits.empty() || digits.size() > (hex ? 16u : 19u)) return std::nullopt;
  return std::stoull(digits, nullptr, hex ? 16 : 10);
}

nlohmann::json decode_json(const ov::StatusDecode& d) {
  nlohmann::json causes = nlohmann::json::array();
  for (const auto& c : d.causes) {
    causes.push_back({{"code", c.code}, {"text", c.text}, {"known", c.known}});
  }
  return {{"kind", ov::short_name(d.kind)},
          {"record", ov::record_name(d.kind)},
          {"status", d.status},
          {"error", d.has_error()},
          {"causes", causes}};
}

void print_decode(const ov::StatusDecode& d, const std::string& indent) {
  std::ostringstream hex;
  hex << "0x" << std::uppercase << std::hex << std::setw(8) << std::setfill('0') << d.status;
  std::cout << indent << ov::record_name(d.kind) << " status " << d.status << " = " << hex.str();
  if (!d.has_error()) {
    std::cout << ": no error\n";
    return;
  }
  std::cout << ": " << d.cause_codes() << '\n';
  for (const auto& c : d.causes) {
    std::cout << indent << "  " << std::left << std::setw(12) << c.code << c.text << '\n';
  }
}

struct DecodedFile {
  std::string path;
  // Where the dump stands in the run: from its path's layout, else from its name alone (a
  // converted copy outside the dump tree: no device or data_index).
  std::optional<ov::DumpPath> where;
  bool located = false;  // the path fits a layout
  ov::DumpDecode dump;
  int rank() const { return located ? 0 : where ? 1 : 2; }
};

// Entries a directory walk looks at, at most: a mistyped root ("/") ends with a message instead
// of running for hours.
constexpr size_t kMaxWalkedEntries = 100000;
// Directories below a named one, at most: dump layouts are six deep; a job's chain of 10,000
// nested directories ends here instead of costing memory with the square of its depth.
constexpr size_t kMaxWalkDepth = 32;

// A converted dump, read from the descriptor whose type was checked (a job may swap the name
// for a link or a FIFO at any time), up to the daemon's own cap on a companion JSON.
struct ReadDump {
  std::string path;
  std::optional<ov::DumpDecode> dump;
  std::string error;
};

ReadDump read_dump_json(int dir_fd, const std::string& name, const std::string& path) {
  namespace cmp = faultd::compare;
  static const size_t cap = faultd::OverflowDumpSourceConfig{}.max_json_bytes;
  ReadDump r{path, std::nullopt, {}};
  try {
    const cmp::UniqueFd fd =
        dir_fd == AT_FDCWD ? cmp::open_job_file(path) : cmp::open_job_file_at(dir_fd, name, path);
    r.dump = ov::parse_dump_json(cmp::read_capped(fd.get(), path, cap), r.error);
  } catch (const cmp::InputError& e) {
    // The message names the path first; the caller names it again.
    r.error = e.what();
    if (r.error.rfind(path + ": ", 0) == 0) r.error.erase(0, path.size() + 2);
  }
  return r;
}

// Reads the converted dumps below `dir` into `out` (sorted by path). The walk keeps its own
// stack of directories, each opened O_NOFOLLOW relative to its parent: a symlink is never
// entered (a job's `ln -s / x` must not make faultctl walk the system) and a file is opened
// from the directory it was found in. Binary dumps (not converted yet) are counted; a
// dump-prefixed name that is no dump name, or a dump name that is no regular file, is named on
// stderr and counted in `failed`. Returns false when the walk did not finish.
bool walk_dumps(const std::string& dir, std::vector<ReadDump>& out, size_t& walked,
                size_t& unconverted, nlohmann::json& failed) {
  namespace cmp = faultd::compare;
  struct Pending {
    std::shared_ptr<cmp::UniqueFd> parent;  // kept open while a child waits on the stack
    std::string name, path;
    size_t depth = 0;
  };
  auto child_path = [](const std::string& parent, const std::string& name) {
    return !parent.empty() && parent.back() == '/' ? parent + name : parent + "/" + name;
  };
  std::vector<ReadDump> found;
  std::vector<Pending> stack;
  bool complete = true;
  bool too_deep = false;
  {
    auto root = std::make_shared<cmp::UniqueFd>(
        ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));  // as the operator named it
    if (root->get() < 0) {
      std::cerr << "faultctl: cannot read " << terminal_safe(dir) << ": " << std::strerror(errno)
                << '\n';
      return false;
    }
    stack.push_back({root, ".", dir, 0});
  }
  while (!stack.empty() && complete) {
    const Pending p = std::move(stack.back());
    stack.pop_back();
    auto fd = std::make_shared<cmp::UniqueFd>(
        ::openat(p.parent->get(), p.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd->get() < 0) {
      if (errno != EACCES && errno != ELOOP && errno != ENOTDIR && errno != ENOENT) {
        std::cerr << "faultctl: cannot read " << terminal_safe(p.path) << ": "
                  << std::strerror(errno) << '\n';
        complete = false;
      }
      continue;
    }
    // The names first, then each looked at from this directory's descriptor.
    std::vector<std::string> names;
    if (DIR* d = ::fdopendir(::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0)); d != nullptr) {
      while (const dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
      }
      ::closedir(d);
    }
    for (const auto& name : names) {
      if (++walked > kMaxWalkedEntries) {
        std::cerr << "faultctl: " << terminal_safe(dir) << ": stopped after " << kMaxWalkedEntries
                  << " entries; the earliest dump is the earliest of those read: name a smaller "
                     "directory (a device or data_index one)\n";
        complete = false;
        break;
      }
      const std::string path = child_path(p.path, name);
      struct stat st {};
      if (::fstatat(fd->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        if (p.depth + 1 > kMaxWalkDepth) {
          if (!too_deep) {
            std::cerr << "faultctl: " << terminal_safe(path) << ": more than " << kMaxWalkDepth
                      << " directories below " << terminal_safe(dir) << ": not walked\n";
          }
          too_deep = true;
          continue;
        }
        stack.push_back({fd, name, path, p.depth + 1});
        continue;
      }
      if (!ov::has_dump_prefix(name)) continue;
      const auto parsed = ov::parse_dump_name(name);
      if (!parsed) {
        std::cerr << "faultctl: " << terminal_safe(path) << ": not an overflow dump name\n";
        failed.push_back({{"file", path}, {"error", "not an overflow dump name"}});
      } else if (!parsed->is_json) {
        if (S_ISREG(st.st_mode)) ++unconverted;
      } else {
        found.push_back(read_dump_json(fd->get(), name, path));
      }
    }
  }
  if (too_deep) complete = false;
  std::sort(found.begin(), found.end(),
            [](const ReadDump& x, const ReadDump& y) { return x.path < y.path; });
  for (auto& f : found) out.push_back(std::move(f));
  return complete;
}

int decode_overflow(const Args& a) {
  if (!a.status.empty()) {
    if (!a.positional.empty()) {
      std::cerr << "faultctl: decode-overflow takes --status or files, not both\n";
      return kExitUsage;
    }
    const auto status = parse_status(a.status);
    if (!status) {
      std::cerr << "faultctl: --status needs a non-negative integer (decimal or 0x hex)\n";
      return kExitUsage;
    }
    auto kind = ov::StatusKind::AiCore;
    if (!a.kind.empty()) {
      auto k = ov::parse_status_kind(a.kind);
      if (!k) {
        std::cerr << "faultctl: --kind must be aicore, dha or l2\n";
        return kExitUsage;
      }
      kind = *k;
    }
    const auto d = ov::decode_status(kind, *status);
    if (a.json) {
      std::cout << faultd::dump_json(decode_json(d)) << '\n';
    } else {
      print_decode(d, "");
    }
    return kExitOk;
  }
  if (!a.kind.empty()) {
    std::cerr << "faultctl: --kind goes with --status (a file names its records' kinds)\n";
    return kExitUsage;
  }
  if (a.positional.empty()) {
    std::cerr << "faultctl: decode-overflow needs --status N, or dump files or directories\n";
    return kExitUsage;
  }
  // Directories are walked for their converted dumps; files are decoded as named.
  std::vector<ReadDump> read;
  nlohmann::json failed = nlohmann::json::array();
  size_t walked = 0, unconverted = 0;
  int rc = kExitOk;
  for (const auto& arg : a.positional) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      read.push_back(read_dump_json(AT_FDCWD, arg, arg));
    } else if (!walk_dumps(arg, read, walked, unconverted, failed)) {
      rc = kExitFailed;
    }
  }
  std::vector<DecodedFile> files;
  for (auto& r : read) {
    const std::string& path = r.path;
    if (!r.dump) {
      std::cerr << "faultctl: " << terminal_safe(path) << ": " << terminal_safe(r.error) << '\n';
      failed.push_back({{"file", path}, {"error", r.error}});
      continue;
    }
    DecodedFile f{path, ov::parse_dump_path(path), false, std::move(*r.dump)};
    f.located = f.where.has_value();
    if (!f.located) {
      const size_t slash = path.rfind('/');
      f.where = ov::parse_dump_name(slash == std::string::npos ? path : path.substr(slash + 1));
    }
    files.push_back(std::move(f));
  }
  if (!failed.empty()) {
    std::cerr << "faultctl: " << failed.size() << " file(s) could not be decoded\n";
    rc = kExitFailed;
  }
  if (unconverted > 0) {
    std::cerr << "faultctl: " << unconverted
              << " binary dump(s) skipped: convert them to JSON first (msaccucmp.py convert)\n";
  }
  // The reference: analyse the dump with the lowest data_index, then the lowest timestamp,
  // first. Dumps known by name alone follow (by timestamp), then files that are neither, in
  // their order.
  std::stable_sort(files.begin(), files.end(), [](const DecodedFile& x, const DecodedFile& y) {
    if (x.rank() != y.rank()) return x.rank() < y.rank();
    return x.where && ov::dump_before(*x.where, *y.where);
  });
  // The earliest overflowing operator: the first dump, in that order, whose records name an
  // error (with both detections on, the AI Core record comes first: the seed's advice). That
  // dump is the one to analyse first; without one, the earliest dump is.
  const auto overflowing = std::find_if(
      files.begin(), files.end(), [](const DecodedFile& f) { return !f.dump.errors().empty(); });
  const DecodedFile* earliest = overflowing == files.end() ? nullptr : &*overflowing;
  const auto first = static_cast<size_t>(earliest == nullptr ? 0 : overflowing - files.begin());
  auto record_json = [](const ov::StatusRecord& r) {
    auto j = decode_json(r.decoded);
    j["model_id"] = r.model_id;
    j["stream_id"] = r.stream_id;
    j["task_id"] = r.task_id;
    j["task_type"] = r.task_type;
    if (r.block_idx) j["block_idx"] = *r.block_idx;
    return j;
  };
  auto place_json = [](const DecodedFile& f, nlohmann::json& j) {
    j["file"] = f.path;
    if (f.located) {
      j["device"] = f.where->device;
      j["model_id"] = f.where->model_id;
      j["iteration"] = f.where->iteration;
    }
    if (f.where) j["timestamp"] = f.where->timestamp;
  };
  if (a.json) {
    nlohmann::json dumps = nlohmann::json::array();
    for (size_t i = 0; i < files.size(); ++i) {
      nlohmann::json records = nlohmann::json::array();
      for (const auto& r : files[i].dump.records) records.push_back(record_json(r));
      nlohmann::json entry{{"records", records}, {"first", i == first}};
      place_json(files[i], entry);
      dumps.push_back(std::move(entry));
    }
    nlohmann::json operator_found = nullptr;
    if (earliest != nullptr) {
      // The operator is known by its record's ids: the task id in the file name is not the
      // operator's (the reference says so).
      operator_found = {{"operator", record_json(*earliest->dump.errors().front())}};
      place_json(*earliest, operator_found);
    }
    nlohmann::json out{{"earliest", operator_found},
                       {"dumps", dumps},
                       {"failed", failed},
                       {"unconverted", unconverted}};
    std::cout << faultd::dump_json(out) << '\n';
    return rc;
  }
  if (earliest != nullptr) {
    const auto& r = *earliest->dump.errors().front();
    std::cout << "earliest overflow: " << ov::record_name(r.kind) << " operator task_id "
              << r.task_id << ", stream_id " << r.stream_id << ", model_id " << r.model_id << " ("
              << r.decoded.cause_codes() << ")";
    if (earliest->where) std::cout << ", timestamp " << earliest->where->timestamp;
    if (earliest->located) {
      std::cout << ", device " << earliest->where->device << ", data_index "
                << earliest->where->iteration;
    }
    std::cout << ": " << terminal_safe(earliest->path) << "\n\n";
  } else if (!files.empty()) {
    std::cout << "earliest overflow: none (no dump records an error)\n\n";
  }
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& f = files[i];
    std::cout << terminal_safe(f.path);
    if (f.located) {
      std::cout << " (device " << f.where->device << ", data_index " << f.where->iteration
                << ", timestamp " << f.where->timestamp << ")";
    }
    if (i == first && files.size() > 1) std::cout << "  <- analyse first";
    std::cout << '\n';
    for (const auto& r : f.dump.records) {
      print_decode(r.decoded, "  ");
      if (r.decoded.has_error()) {
        std::cout << "    model_id " << r.model_id << ", stream_id " << r.stream_id << ", task_id "
                  << r.task_id;
        if (r.block_idx) std::cout << ", block_idx " << *r.block_idx;
        std::cout << '\n';
      }
    }
  }
  return rc;
}

// compare --replicas --report: the suspect replica, as a `report` request to faultd.
faultd::compare::ReportResult report_replicas(const std::string& socket,
                                              const faultd::compare::ReplicaReport& rep,
                                              const std::string& device) {
  using faultd::compare::ReportResult;
  faultd::control::ReplicaDivergence r;
  r.device = device;
  // The dumps chose these names: cut and made printable rather than have faultd refuse all.
  using faultd::control::fit_report_text;
  r.replica = fit_report_text(rep.labels[*rep.suspect], faultd::control::kMaxReportLabelBytes);
  r.reference =
      fit_report_text(rep.labels[rep.first->reference], faultd::control::kMaxReportLabelBytes);
  r.api = fit_report_text(rep.first->api, faultd::control::kMaxReportNameBytes);
  r.tensor = fit_report_text(rep.first->name, faultd::control::kMaxReportNameBytes);
  r.mode = faultd::compare::mode_name(rep.mode);
  r.data_row = rep.first_data_row;
  r.replicas = rep.labels.size();
  r.majority = rep.first->majority;
  r.disagreements = rep.disagreements[*rep.suspect];
  r.rows_checked = rep.rows_checked;
  r.metrics = rep.evidence;
  ReportResult result;
  const auto reply = faultd::control_call(socket, faultd::control::report_request(r),
                                          std::chrono::milliseconds(10000));
  if (reply.status != faultd::ControlReply::Status::Ok) {
    result.error = reply.error;
    return result;
  }
  result.reply = reply.body;
  if (!reply.body.value("ok", false)) {
    result.status = ReportResult::Status::Refused;
    result.error = reply.body.value("error", std::string("failed"));
    return result;
  }
  result.status = ReportResult::Status::Recorded;
  return result;
}

int run(int argc, char** argv) {
  Args a;
  std::string error;
  const CommandHelp* command = nullptr;
  auto usage_error = [&](const std::string& why) {
    std::cerr << "faultctl: " << terminal_safe(why) << " (see `faultctl "
              << (command != nullptr ? std::string(command->name) + " " : "") << "--help`)\n";
    return kExitUsage;
  };
  const int parsed = parse(argc, argv, a, error);
  command = find_command(a.command);
  if (parsed != kExitOk) return usage_error(error);
  if (a.version) {
    std::cout << "faultctl " << FAULTD_VERSION << '\n';
    return kExitOk;
  }
  if (a.help) {
    if (command != nullptr) {
      command_usage(std::cout, *command);
    } else {
      usage(std::cout);
    }
    return kExitOk;
  }
  if (command == nullptr) {
    return usage_error("unknown command '" + a.command + "'");
  }
  nlohmann::json request{{"cmd", a.command}};
  if (a.command == "status" || a.command == "reload" || a.command == "budget") {
    if (!a.positional.empty()) return usage_error(a.command + " takes no argument");
  } else if (a.command == "events") {
    if (!a.device.empty()) request["device"] = a.device;
    if (!a.job.empty()) request["job"] = a.job;
    if (!a.since.empty()) request["since"] = a.since;
    if (a.before) request["before"] = *a.before;
    request["verbose"] = a.verbose;
  } else if (a.command == "history") {
    if (a.positional.size() != (a.serial.empty() ? 1u : 0u)) {
      return usage_error("history needs a DEVICE, or --serial S");
    }
    if (a.serial.empty()) {
      request["device"] = a.positional[0];
    } else {
      request["serial"] = a.serial;
    }
    request["limit"] = a.limit;
  } else if (a.command == "incidents") {
    if (!a.device.empty()) request["device"] = a.device;
    request["all"] = a.all;
    request["limit"] = a.limit;
  } else if (a.command == "isolate" || a.command == "clear" || a.command == "ack") {
    if (a.positional.size() != 1 || a.reason.empty()) {
      return usage_error(a.command + " needs a DEVICE and --reason TEXT");
    }
    request["device"] = a.positional[0];
    request["reason"] = a.reason;
  } else if (a.command == "decode-overflow") {
    try {
      return decode_overflow(a);
    } catch (const std::bad_alloc&) {
      std::cerr << "faultctl: decode-overflow: out of memory\n";
      return kExitUsage;  // never 1, which says some files could not be decoded
    } catch (const std::exception& e) {
      std::cerr << "faultctl: decode-overflow: unexpected error: " << terminal_safe(e.what())
                << '\n';
      return kExitUsage;
    }
  } else if (a.command == "compare") {
    return faultd::compare::run_compare_command(
        a.compare_args, a.json, std::cout, std::cerr,
        [&a](const auto& report, const auto& device, const auto& socket) {
          return report_replicas(socket.empty() ? a.socket : socket, report, device);
        });
  }

  // A reload compiles every rule; give it time.
  const auto timeout = std::chrono::milliseconds(a.command == "reload" ? 30000 : 10000);
  std::vector<Paged> paged;  // the listings' journals, read page by page
  if (a.command == "events") {
    paged = {{"faults", "next_before", "before"},
             {"actions", "next_actions_before", "actions_before"}};
  } else if (a.command == "incidents") {
    paged = {{"incidents", "next_before", "before"}};
  } else if (a.command == "history" && a.serial.empty()) {
    paged = {{"transitions", "next_before", "before"},
             {"incidents", "next_incidents_before", "incidents_before"}};
  } else if (a.command == "history") {
    paged = {{"faults", "next_before", "before"}};
  }
  auto reply = paged.empty() ? faultd::control_call(a.socket, request, timeout)
                             : fetch_pages(a.socket, request, a.limit, timeout, paged);
  if (reply.status == faultd::ControlReply::Status::Unreachable) {
    std::cerr << "faultctl: cannot reach faultd: " << reply.error << '\n';
    return kExitUnavailable;
  }
  if (reply.status != faultd::ControlReply::Status::Ok) {
    std::cerr << "faultctl: " << terminal_safe(reply.error) << '\n';
    return kExitFailed;
  }
  const auto& body = reply.body;
  if (!body.value("ok", false)) {
    std::cerr << "faultctl: " << terminal_safe(body.value("error", std::string("failed"))) << '\n';
    if (a.json) std::cout << faultd::dump_json(body) << '\n';
    return kExitFailed;
  }
  if (a.json) {
    std::cout << body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else if (a.command == "status") {
    print_status(body);
  } else if (a.command == "events") {
    print_events(body, a.verbose);
  } else if (a.command == "reload") {
    std::cout << "reloaded: " << str(body, "rules") << " rule(s)\n";
  } else if (a.command == "history" && body.contains("serial")) {
    print_events(body, a.verbose);
  } else if (a.command == "history") {
    print_history(body);
  } else if (a.command == "incidents") {
    print_incidents(body["incidents"]);
  } else if (a.command == "budget") {
    print_budget(body);
  } else if (a.command == "ack") {
    std::cout << a.positional[0] << ": incident " << str(body, "fault_id") << " acknowledged\n";
  } else {
    std::cout << a.positional[0] << ": " << str(body, "state")
              << (body.value("changed", false) ? "" : " (unchanged)") << '\n';
    if (body.contains("note")) std::cout << "note: " << str(body, "note") << '\n';
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "faultctl: " << e.what() << '\n';
    return 1;
  }
}
