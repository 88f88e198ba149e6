// faultd: the per-node fault-detection daemon. See docs/design.md §3 for the command line.
#include <cstring>
#include <iostream>
#include <optional>
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
         "       faultd --replay --rules RULES.yaml [-o text|json] FILE...  try a rule file "
         "without a config\n"
         "         (with --config: its sources, these rules); each finding printed once\n"
         "       faultd --version | --help\n"
         "Options take their value as `--opt VALUE` or `--opt=VALUE`.\n"
         "exit codes: 0 ok; 1 a replayed file unreadable, a listener that cannot start, another\n"
         "fatal error; 64 usage; 73 the state store cannot be opened or another faultd holds\n"
         "state_dir; 78 configuration error. See faultd(8) and faultd.yaml(5).\n";
}

// A usage error in one line, naming what was wrong.
int usage_error(const std::string& why) {
  std::cerr << "faultd: " << why << " (see `faultd --help`)\n";
  return kExitUsage;
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

// `--rules FILE` without `--config`: those rules alone; with `--config`: the config's sources
// and policy with those rules instead of its own.
int replay(const std::string& path, bool config_given, const std::vector<std::string>& rule_files,
           const std::vector<std::string>& files, const std::string& parser_name,
           faultd::ReplayOutput format) {
  faultd::ErrorList errors;
  std::optional<faultd::Config> cfg;
  if (config_given || rule_files.empty()) cfg = faultd::load_config(path, errors);
  if (errors.empty() && !rule_files.empty()) {
    auto rules_only = faultd::rules_only_config(rule_files, errors);
    if (rules_only && cfg) {
      cfg->rules = rules_only->rules;
    } else if (rules_only) {
      cfg = std::move(rules_only);
    }
  }
  if (!cfg || !errors.empty()) {
    std::cerr << errors.to_string();
    return kExitConfig;
  }
  std::ios::sync_with_stdio(false);
  faultd::ReplaySummary sum;
  if (parser_name.empty()) {
    sum = faultd::replay_files(*cfg, files, std::cout, std::cerr, format);
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
  bool config_given = false;
  std::vector<std::string> rule_files;  // --replay --rules FILE
  auto format = faultd::ReplayOutput::Json;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" || arg == "-c") {
      if (i + 1 >= argc) return usage_error(arg + " needs a path");
      config = argv[++i];
      config_given = true;
    } else if (arg.rfind("--config=", 0) == 0) {
      config = arg.substr(9);
      config_given = true;
    } else if (arg == "--rules" || arg.rfind("--rules=", 0) == 0) {
      if (mode != Mode::Replay) return usage_error("--rules goes after --replay");
      if (arg == "--rules" && i + 1 >= argc) return usage_error("--rules needs a rule file");
      rule_files.push_back(arg == "--rules" ? argv[++i] : arg.substr(8));
    } else if (arg == "-o" || arg == "--output" || arg.rfind("--output=", 0) == 0) {
      if (mode != Mode::Replay) return usage_error(arg + " goes after --replay");
      if (arg.rfind("--output=", 0) != 0 && i + 1 >= argc)
        return usage_error(arg + " needs json or text");
      const std::string value = arg.rfind("--output=", 0) == 0 ? arg.substr(9) : argv[++i];
      if (value != "json" && value != "text")
        return usage_error(arg + " must be json or text, not '" + value + "'");
      format = value == "text" ? faultd::ReplayOutput::Text : faultd::ReplayOutput::Json;
    } else if (arg == "--check-config") {
      mode = Mode::Check;
    } else if (arg == "--replay") {
      mode = Mode::Replay;
    } else if (arg == "--parser" || arg.rfind("--parser=", 0) == 0) {
      if (mode != Mode::Replay) return usage_error("--parser goes after --replay");
      if (arg == "--parser" && i + 1 >= argc) return usage_error("--parser needs a name");
      parser = arg == "--parser" ? argv[++i] : arg.substr(9);
    } else if (arg == "--version") {
      std::cout << "faultd " << FAULTD_VERSION << '\n';
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      usage(std::cout);
      return 0;
    } else if (mode == Mode::Replay && (arg.empty() || arg[0] != '-' || arg == "-")) {
      files.push_back(arg == "-" ? "/dev/stdin" : arg);
    } else {
      return usage_error("unknown argument '" + arg + "'");
    }
  }
  switch (mode) {
    case Mode::Check:
      return check_config(config);
    case Mode::Replay:
      if (files.empty()) return usage_error("--replay needs at least one file");
      return replay(config, config_given, rule_files, files, parser, format);
    case Mode::Run:
      break;
  }
  faultd::setup_logging();
  return faultd::run_daemon({config});
}
