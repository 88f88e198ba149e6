// faultd: the per-node fault-detection daemon. See docs/design.md §3 for the command line.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/app/app.hpp"
#include "daemon/app/logging.hpp"
#include "daemon/app/replay.hpp"
#include "daemon/config/config.hpp"
#include "daemon/core/exit_codes.hpp"

namespace {

using faultd::kExitConfig;
using faultd::kExitUsage;

void usage(std::ostream& out) {
  out << "usage: faultd [--config PATH]                 run in the foreground\n"
         "       faultd --check-config [--config PATH]  validate config, rules and catalogues\n"
         "       faultd --replay [--config PATH] FILE...  run the rules over files, print "
         "findings\n"
         "       faultd --replay [--config PATH] --parser NAME FILE...  the same over a "
         "command's saved\n"
         "         output (npu_smi_health, npu_smi_info, deviceinfo_cm, nvidia_smi)\n"
         "       faultd --version\n";
}

int check_config(const std::string& path) {
  faultd::ErrorList errors;
  auto cfg = faultd::load_config(path, errors);
  if (!cfg) {
    std::cerr << errors.to_string();
    std::cerr << path << ": " << errors.size() << " error(s)\n";
    return kExitConfig;
  }
  for (const auto& w : cfg->warnings) std::cerr << "warning: " << w << '\n';
  if (!cfg->setup_errors.empty()) {
    std::cerr << cfg->setup_errors.to_string();
    std::cerr << path << ": " << cfg->setup_errors.size() << " error(s)\n";
    return kExitConfig;
  }
  std::cout << path << ": ok: " << cfg->rules->size() << " rule(s) from " << cfg->rule_files.size()
            << " file(s), " << cfg->sources.size() << " source(s), " << cfg->actions.size()
            << " action(s); ruleset sha256 " << cfg->rules->sha256() << '\n';
  if (!cfg->faultdiag_summary.empty()) std::cout << "faultdiag: " << cfg->faultdiag_summary << '\n';
  return 0;
}

int replay(const std::string& path, const std::vector<std::string>& files,
           const std::string& parser_name) {
  faultd::ErrorList errors;
  auto cfg = faultd::load_config(path, errors);
  if (!cfg) {
    std::cerr << errors.to_string();
    return kExitConfig;
  }
  std::ios::sync_with_stdio(false);
  faultd::ReplaySummary sum;
  if (parser_name.empty()) {
    sum = faultd::replay_files(*cfg, files, std::cout, std::cerr);
  } else {
    // "nvidia_smi" is the bus-id query's parser under the name of its tool
    const auto parser =
        faultd::parse_command_parser(parser_name == "nvidia_smi" ? "nvidia_smi_bus" : parser_name);
    if (!parser) {
      std::cerr << "faultd: unknown parser '" << parser_name
                << "' (known: " << faultd::command_parser_names() << ")\n";
      return kExitUsage;
    }
    sum = faultd::replay_outputs(*cfg, *parser, files, std::cout, std::cerr);
  }
  std::cout.flush();
  const double mb = static_cast<double>(sum.bytes) / 1e6;
  std::cerr << "replay: " << sum.files << " file(s), " << sum.bytes << " bytes, " << sum.lines
            << " lines, " << sum.findings << " finding(s)"
            << (sum.garbled > 0 ? ", " + std::to_string(sum.garbled) + " not parsed" : "") << " in "
            << sum.seconds << " s (" << (sum.seconds > 0 ? mb / sum.seconds : 0.0) << " MB/s)\n";
  return sum.unreadable > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config = faultd::kDefaultConfigPath;
  enum class Mode { Run, Check, Replay } mode = Mode::Run;
  std::vector<std::string> files;
  std::string parser;  // --replay --parser NAME: the files are a command's saved output
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" || arg == "-c") {
      if (i + 1 >= argc) {
        usage(std::cerr);
        return kExitUsage;
      }
      config = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config = arg.substr(9);
    } else if (arg == "--check-config") {
      mode = Mode::Check;
    } else if (arg == "--replay") {
      mode = Mode::Replay;
    } else if (arg == "--parser" && mode == Mode::Replay && i + 1 < argc) {
      parser = argv[++i];
    } else if (arg == "--version") {
      std::cout << "faultd " << FAULTD_VERSION << '\n';
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      usage(std::cout);
      return 0;
    } else if (mode == Mode::Replay && (arg.empty() || arg[0] != '-' || arg == "-")) {
      files.push_back(arg == "-" ? "/dev/stdin" : arg);
    } else {
      std::cerr << "faultd: unknown argument '" << arg << "'\n";
      usage(std::cerr);
      return kExitUsage;
    }
  }
  switch (mode) {
    case Mode::Check:
      return check_config(config);
    case Mode::Replay:
      if (files.empty()) {
        std::cerr << "faultd: --replay needs at least one file\n";
        return kExitUsage;
      }
      return replay(config, files, parser);
    case Mode::Run:
      break;
  }
  faultd::setup_logging();
  return faultd::run_daemon({config});
}
