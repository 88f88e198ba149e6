// faultctl: the operator's client for faultd's control socket.
// Exit codes: 0 ok, 1 the daemon refused or failed, 2 usage, 69 daemon unreachable.
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "daemon/control/control_client.hpp"
#include "daemon/control/protocol.hpp"
#include "daemon/core/json.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnavailable = 69;

void usage(std::ostream& out) {
  out << "usage: faultctl [--socket PATH] [-o json] COMMAND\n"
         "  status                                   devices, sources, rules\n"
         "  events [--device D] [--since DUR] [--limit N]  the fault and action journal\n"
         "  isolate DEVICE --reason TEXT             isolate a device (runs the isolate hook)\n"
         "  clear DEVICE --reason TEXT               return a device to healthy\n"
         "  reload                                   reload config and rules\n"
         "  decode-overflow ...                      decode overflow dumps\n"
         "The socket defaults to $FAULTD_SOCKET, else /run/faultd/control.sock.\n";
}

struct Args {
  std::string socket;
  bool json = false;
  std::string command;
  std::vector<std::string> positional;
  std::string device, since, reason;
  size_t limit = 100;
};

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "";
  const auto& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

void print_status(const nlohmann::json& r) {
  std::cout << "node " << str(r, "node") << "  faultd " << str(r, "version") << "  rules "
            << str(r, "rules") << "  dry-run " << (r.value("dry_run", false) ? "yes" : "no")
            << "  hooks running " << str(r, "actions_in_flight") << "\n\n";
  std::cout << std::left << std::setw(12) << "DEVICE" << std::setw(10) << "STATE" << std::setw(26)
            << "SINCE" << std::setw(22) << "LEVEL" << std::setw(10) << "CODE"
            << "REASON\n";
  for (const auto& d : r["devices"]) {
    std::cout << std::setw(12) << str(d, "device") << std::setw(10) << str(d, "state")
              << std::setw(26) << str(d, "since") << std::setw(22) << str(d, "level")
              << std::setw(10) << str(d, "code") << str(d, "reason") << '\n';
  }
  if (r["devices"].empty()) std::cout << "(no device has reported a fault)\n";
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

void print_events(const nlohmann::json& r) {
  std::cout << std::left << std::setw(8) << "ID" << std::setw(26) << "TIME" << std::setw(10)
            << "DEVICE" << std::setw(22) << "LEVEL" << std::setw(10) << "CODE" << std::setw(34)
            << "RULE"
            << "WHERE\n";
  for (const auto& f : r["faults"]) {
    std::cout << std::setw(8) << str(f, "id") << std::setw(26) << str(f, "time") << std::setw(10)
              << (str(f, "device").empty() ? "-" : str(f, "device")) << std::setw(22)
              << str(f, "level") << std::setw(10) << str(f, "code") << std::setw(34)
              << str(f, "rule") << str(f, "file") << ':' << str(f, "line") << '\n';
    // What the rule knows about the fault (e.g. a FaultDiag cause and suggestion), indented
    // under its row so the table stays one row per fault.
    if (f.value("recovery", false))
      std::cout << "        recovery: the device reports it recovered\n";
    if (const auto a = f.find("annotations"); a != f.end() && a->is_object()) {
      for (const auto& [name, value] : a->items()) {
        std::cout << "        " << name << ": "
                  << (value.is_string() ? value.get<std::string>() : value.dump()) << '\n';
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
                << std::setw(10) << str(a, "attempts") << std::setw(6) << str(a, "exit_code")
                << str(a, "detail") << '\n';
    }
  }
}

int parse(int argc, char** argv, Args& a) {
  const char* env = std::getenv("FAULTD_SOCKET");
  a.socket = env != nullptr && *env != '\0' ? env : faultd::control::kDefaultSocket;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "--socket") {
      if (!value(a.socket)) return kExitUsage;
    } else if (arg == "-o" || arg == "--output") {
      if (!value(v) || (v != "json" && v != "text")) return kExitUsage;
      a.json = v == "json";
    } else if (arg == "-o=json" || arg == "-ojson") {
      a.json = true;
    } else if (arg == "--device") {
      if (!value(a.device)) return kExitUsage;
    } else if (arg == "--since") {
      if (!value(a.since)) return kExitUsage;
    } else if (arg == "--reason") {
      if (!value(a.reason)) return kExitUsage;
    } else if (arg == "--limit") {
      if (!value(v)) return kExitUsage;
      try {
        a.limit = static_cast<size_t>(std::stoul(v));
      } catch (const std::exception&) {
        return kExitUsage;
      }
    } else if (arg == "-h" || arg == "--help") {
      usage(std::cout);
      std::exit(kExitOk);
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "faultctl: unknown option " << arg << '\n';
      return kExitUsage;
    } else if (a.command.empty()) {
      a.command = arg;
    } else {
      a.positional.push_back(arg);
    }
  }
  return a.command.empty() ? kExitUsage : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (parse(argc, argv, a) != kExitOk) {
    usage(std::cerr);
    return kExitUsage;
  }
  nlohmann::json request{{"cmd", a.command}};
  if (a.command == "status" || a.command == "reload") {
    if (!a.positional.empty()) {
      usage(std::cerr);
      return kExitUsage;
    }
  } else if (a.command == "events") {
    if (!a.device.empty()) request["device"] = a.device;
    if (!a.since.empty()) request["since"] = a.since;
    request["limit"] = a.limit;
  } else if (a.command == "isolate" || a.command == "clear") {
    if (a.positional.size() != 1 || a.reason.empty()) {
      std::cerr << "faultctl: " << a.command << " needs a DEVICE and --reason TEXT\n";
      return kExitUsage;
    }
    request["device"] = a.positional[0];
    request["reason"] = a.reason;
  } else if (a.command == "decode-overflow") {
    std::cerr << "faultctl: decode-overflow is not available in this build\n";
    return kExitFailed;
  } else {
    std::cerr << "faultctl: unknown command '" << a.command << "'\n";
    usage(std::cerr);
    return kExitUsage;
  }

  // A reload compiles every rule; give it time.
  const auto timeout = std::chrono::milliseconds(a.command == "reload" ? 30000 : 10000);
  auto reply = faultd::control_call(a.socket, request, timeout);
  if (reply.status == faultd::ControlReply::Status::Unreachable) {
    std::cerr << "faultctl: cannot reach faultd: " << reply.error << '\n';
    return kExitUnavailable;
  }
  if (reply.status != faultd::ControlReply::Status::Ok) {
    std::cerr << "faultctl: " << reply.error << '\n';
    return kExitFailed;
  }
  const auto& body = reply.body;
  if (!body.value("ok", false)) {
    std::cerr << "faultctl: " << body.value("error", std::string("failed")) << '\n';
    if (a.json) std::cout << faultd::dump_json(body) << '\n';
    return kExitFailed;
  }
  if (a.json) {
    std::cout << body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else if (a.command == "status") {
    print_status(body);
  } else if (a.command == "events") {
    print_events(body);
  } else if (a.command == "reload") {
    std::cout << "reloaded: " << str(body, "rules") << " rule(s)\n";
  } else {
    std::cout << a.positional[0] << ": " << str(body, "state")
              << (body.value("changed", false) ? "" : " (unchanged)") << '\n';
  }
  return kExitOk;
}
