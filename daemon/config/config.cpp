#include "daemon/config/config.hpp"

#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "collectors/file/glob.hpp"
#include "daemon/config/command_source_config.hpp"
#include "daemon/config/flight_recorder_source_config.hpp"
#include "daemon/config/hang_source_config.hpp"
#include "daemon/config/inventory_config.hpp"
#include "daemon/config/kmsg_source_config.hpp"
#include "daemon/config/overflow_dump_source_config.hpp"
#include "daemon/config/paths.hpp"
#include "daemon/core/fault_code.hpp"
#include "daemon/core/yaml_check.hpp"
#include "daemon/state/inventory.hpp"
#include "rules/catalogs/mindcluster.hpp"

namespace faultd {
namespace {

namespace fs = std::filesystem;
using yaml::Ctx;

bool valid_name(const std::string& s) {
  static const std::regex re("^[a-z0-9][a-z0-9_.-]{0,63}$");
  return std::regex_match(s, re);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

struct Loader {
  explicit Loader(ErrorList& e) : errors(e) {}
  Config cfg;
  ErrorList& errors;
  std::vector<RuleSpec> rule_specs;
  std::string base_dir;

  void load_main(const std::string& path);
  void load_sources(const YAML::Node& list, const Ctx& ctx);
  void load_file_source(const YAML::Node& n, FileSourceConfig src, const Ctx& ctx);
  void load_actions(const YAML::Node& map, const Ctx& ctx);
  void load_catalogs(const YAML::Node& map, const Ctx& ctx);
  void load_policy(const YAML::Node& map, const Ctx& ctx);
  void load_retention(const YAML::Node& map, const Ctx& ctx);
  void load_escalations(const YAML::Node& list, const Ctx& ctx);
  void load_correlations(const YAML::Node& list, const Ctx& ctx);
  void load_includes(const YAML::Node& origin, const Ctx& ctx);
  void check_action_refs(const YAML::Node& origin, const Ctx& ctx,
                         const std::set<std::string>& explicit_levels);
  void check_hook(const YAML::Node& argv, const std::string& name, const std::string& program);
  void check_setup(size_t rules);
  YAML::Node main_root;  // the main file, for the positions of check_setup's errors
};

void Loader::load_catalogs(const YAML::Node& c, const Ctx& ctx) {
  if (!yaml::check_map(
          c, "catalogs",
          {"mindcluster_fault_codes", "mindcluster_customization", "faultdiag_knowledge"}, ctx)) {
    return;
  }
  if (auto v = yaml::get_string(c, "mindcluster_fault_codes", ctx)) {
    cfg.mindcluster_fault_codes = resolve_config_path(base_dir, *v);
  }
  if (auto v = yaml::get_string(c, "mindcluster_customization", ctx)) {
    cfg.mindcluster_customization = resolve_config_path(base_dir, *v);
  }
  const YAML::Node kg = c["faultdiag_knowledge"];
  if (!kg.IsDefined() || kg.IsNull()) return;
  if (!yaml::check_map(kg, "faultdiag_knowledge", {"path", "source_classes", "level"}, ctx)) {
    return;
  }
  if (auto v = yaml::get_string(kg, "path", ctx)) {
    cfg.faultdiag_knowledge = resolve_config_path(base_dir, *v);
  } else {
    ctx.error(kg, "faultdiag_knowledge needs a 'path' (kg-config.json)");
  }
  if (const YAML::Node classes = kg["source_classes"]; classes.IsDefined()) {
    if (!classes.IsMap()) {
      ctx.error(classes, "'source_classes' maps a FaultDiag log class to a list of sources");
    } else {
      for (const auto& kv : classes) {
        if (auto names = yaml::get_string_list(classes, kv.first.Scalar().c_str(), ctx)) {
          cfg.faultdiag.source_classes[kv.first.Scalar()] = *names;
        }
      }
    }
  }
  if (auto level = yaml::get_fault_level(kg, "level", ctx)) cfg.faultdiag.level = *level;
}

void Loader::load_main(const std::string& path) {
  cfg.path = path;
  base_dir = fs::path(path).parent_path().string();
  const Ctx ctx{path, &errors};
  auto root = yaml::load_file(path, ctx);
  if (!root) return;
  if (root->IsNull()) {
    errors.add(path, 0, 0, "the config file is empty");
    return;
  }
  if (!yaml::check_map(*root, "the config",
                       {"node", "state_dir", "state", "metrics", "control", "webhook", "include",
                        "catalogs", "sources", "actions", "policy", "rules", "log", "inventory"},
                       ctx)) {
    return;
  }
  main_root = *root;
  const YAML::Node& r = *root;
  cfg.node = yaml::get_string(r, "node", ctx).value_or("");
  if (cfg.node.empty()) cfg.node = host_name();
  if (auto v = yaml::get_string(r, "state_dir", ctx))
    cfg.state_dir = resolve_config_path(base_dir, *v);

  if (auto st = r["state"]; st.IsDefined() && yaml::check_map(st, "state", {"retention"}, ctx)) {
    load_retention(st["retention"], ctx);
  }
  if (auto m = r["metrics"]; m.IsDefined() && yaml::check_map(m, "metrics", {"listen"}, ctx)) {
    if (auto v = yaml::get_string(m, "listen", ctx)) cfg.metrics_listen = *v;
  }
  if (auto c = r["control"];
      c.IsDefined() && yaml::check_map(c, "control", {"socket", "group", "idle_timeout"}, ctx)) {
    if (auto v = yaml::get_string(c, "socket", ctx))
      cfg.control_socket = resolve_config_path(base_dir, *v);
    if (auto v = yaml::get_string(c, "group", ctx)) cfg.control_group = *v;
    if (auto v = yaml::get_duration(c, "idle_timeout", ctx)) {
      if (*v < std::chrono::seconds(1)) {
        ctx.error(c["idle_timeout"], "idle_timeout must be at least 1s");
      } else {
        cfg.control_idle_timeout = *v;
      }
    }
  }
  if (auto w = r["webhook"];
      w.IsDefined() && yaml::check_map(w, "webhook", {"listen", "token_file"}, ctx)) {
    cfg.webhook_listen = yaml::get_string(w, "listen", ctx).value_or("127.0.0.1:9848");
    if (auto v = yaml::get_string(w, "token_file", ctx)) {
      cfg.webhook_token_file = resolve_config_path(base_dir, *v);
      std::ifstream token(cfg.webhook_token_file);
      std::string first;
      if (!token || !(token >> first)) {
        ctx.error(w["token_file"], "cannot read a token from '" + cfg.webhook_token_file + "'");
      }
    } else {
      ctx.error(w, "webhook needs a token_file (the bearer token Alertmanager sends)");
    }
  }
  if (auto l = r["log"]; l.IsDefined()) load_log_config(l, ctx, cfg.log);
  if (auto inv = r["inventory"]; inv.IsDefined()) {
    load_inventory_config(inv, base_dir, ctx, cfg.inventory);
  }
  if (auto c = r["catalogs"]; c.IsDefined()) load_catalogs(c, ctx);
  if (auto s = r["sources"]; s.IsDefined()) load_sources(s, ctx);
  if (auto a = r["actions"]; a.IsDefined()) load_actions(a, ctx);

  std::set<std::string> explicit_levels;
  if (auto p = r["policy"]; p.IsDefined()) {
    load_policy(p, ctx);
    if (p.IsMap() && p["levels"].IsMap()) {
      for (const auto& kv : p["levels"]) explicit_levels.insert(kv.first.Scalar());
    }
  }
  check_action_refs(r["policy"], ctx, explicit_levels);

  if (auto inc = r["include"]; inc.IsDefined()) {
    if (auto list = yaml::get_string_list(r, "include", ctx)) {
      cfg.include.clear();
      for (const auto& g : *list) cfg.include.push_back(resolve_config_path(base_dir, g));
    }
  }
  if (auto rules = r["rules"]; rules.IsDefined()) {
    parse_rules(rules, path, rule_specs, errors);
    cfg.rule_files.push_back(path);
  }
  load_includes(r["include"], ctx);
}

void Loader::load_sources(const YAML::Node& list, const Ctx& ctx) {
  if (!list.IsSequence()) {
    ctx.error(list, "sources must be a list");
    return;
  }
  std::set<std::string> names;
  for (const auto& n : list) {
    if (!n.IsMap()) {
      ctx.error(n, "a source must be a map");
      continue;
    }
    auto name = yaml::get_string(n, "name", ctx);
    if (!name) {
      ctx.error(n, "a source needs a name");
      continue;
    }
    if (!valid_name(*name)) {
      ctx.error(n["name"], "source name '" + *name + "' must match ^[a-z0-9][a-z0-9_.-]*$");
    } else if (*name == kInventorySource || *name == "faultd") {
      // faultd's own findings come from these: a log named so could recover what they raised.
      ctx.error(n["name"], "source name '" + *name + "' is reserved for faultd's own findings");
    } else if (!names.insert(*name).second) {
      ctx.error(n["name"], "duplicate source name '" + *name + "'");
    }
    const std::string type = yaml::get_string(n, "type", ctx).value_or("file");
    if (type == "file") {
      FileSourceConfig src;
      src.name = *name;
      load_file_source(n, std::move(src), ctx);
    } else if (type == "command") {
      if (auto c = load_command_source(n, *name, base_dir, ctx)) cfg.sources.emplace_back(*c);
    } else if (type == "kmsg") {
      if (auto c = load_kmsg_source(n, *name, base_dir, ctx)) cfg.sources.emplace_back(*c);
    } else if (type == "overflow_dump") {
      if (auto c = load_overflow_dump_source(n, *name, base_dir, ctx)) cfg.sources.emplace_back(*c);
    } else if (type == "flight_recorder") {
      if (auto c = load_flight_recorder_source(n, *name, base_dir, ctx))
        cfg.sources.emplace_back(*c);
    } else if (type == "hang") {
      if (auto c = load_hang_source(n, *name, base_dir, ctx)) cfg.sources.emplace_back(*c);
    } else {
      ctx.error(n["type"],
                "unknown source type '" + type +
                    "' (one of: file, command, kmsg, overflow_dump, flight_recorder, hang)");
    }
  }
}

void Loader::load_file_source(const YAML::Node& n, FileSourceConfig src, const Ctx& ctx) {
  yaml::check_map(
      n, "a file source",
      {"name", "type", "paths", "start_at", "path_fields", "max_line_bytes", "scan_interval",
       "follow_symlinks", "max_directories", "max_partial_bytes", "kernel_log"},
      ctx);
  if (auto paths = yaml::get_string_list(n, "paths", ctx)) {
    for (const auto& p : *paths) src.paths.push_back(resolve_config_path(base_dir, p));
  }
  if (src.paths.empty()) ctx.error(n, "file source '" + src.name + "' needs paths");
  if (auto v = yaml::get_string(n, "start_at", ctx)) {
    if (*v == "beginning") {
      src.start_at = FileSourceConfig::StartAt::Beginning;
    } else if (*v == "end") {
      src.start_at = FileSourceConfig::StartAt::End;
    } else {
      ctx.error(n["start_at"], "start_at must be 'beginning' or 'end'");
    }
  }
  if (auto v = yaml::get_string(n, "path_fields", ctx)) {
    RE2::Options opts;
    opts.set_log_errors(false);
    RE2 re(*v, opts);
    if (!re.ok()) {
      ctx.error(n["path_fields"], "invalid RE2 in path_fields: " + re.error());
    } else if (re.NamedCapturingGroups().empty()) {
      ctx.error(n["path_fields"],
                "path_fields needs at least one named group, e.g. (?P<device>\\d+)");
    }
    src.path_fields = *v;
  }
  if (auto v = yaml::get_int(n, "max_line_bytes", ctx, 256, int64_t{16} * 1024 * 1024)) {
    src.max_line_bytes = static_cast<size_t>(*v);
  }
  if (auto v = yaml::get_duration(n, "scan_interval", ctx)) {
    if (*v < std::chrono::milliseconds(10)) {
      ctx.error(n["scan_interval"], "scan_interval must be at least 10ms");
    } else {
      src.scan_interval = *v;
    }
  }
  if (auto v = yaml::get_bool(n, "follow_symlinks", ctx)) src.follow_symlinks = *v;
  if (auto v = yaml::get_bool(n, "kernel_log", ctx)) src.kernel_log = *v;
  if (auto v = yaml::get_int(n, "max_directories", ctx, 1, 1000000)) {
    src.max_directories = static_cast<size_t>(*v);
  }
  if (auto v = yaml::get_int(n, "max_partial_bytes", ctx, 4096, int64_t{1} << 30)) {
    src.max_partial_bytes = static_cast<size_t>(*v);
  }
  cfg.sources.emplace_back(std::move(src));
}

void Loader::load_actions(const YAML::Node& map, const Ctx& ctx) {
  if (!map.IsMap()) {
    ctx.error(map, "actions must be a map of action name to hook");
    return;
  }
  for (const auto& kv : map) {
    const std::string name = kv.first.Scalar();
    const YAML::Node& n = kv.second;
    if (!valid_name(name)) {
      ctx.error(kv.first, "action name '" + name + "' must match ^[a-z0-9][a-z0-9_.-]*$");
    }
    if (!yaml::check_map(n, "action '" + name + "'",
                         {"argv", "timeout", "retries", "after", "kill_grace"}, ctx)) {
      continue;
    }
    ActionConfig a;
    a.name = name;
    if (auto argv = yaml::get_string_list(n, "argv", ctx)) a.hook.argv = *argv;
    if (a.hook.argv.empty() || a.hook.argv[0].empty()) {
      ctx.error(n, "action '" + name + "' needs argv (the hook program and its arguments)");
    } else {
      if (a.hook.argv[0].find('/') != std::string::npos) {
        a.hook.argv[0] = resolve_config_path(base_dir, a.hook.argv[0]);
      }
      check_hook(n["argv"], name, a.hook.argv[0]);
    }
    if (auto v = yaml::get_duration(n, "timeout", ctx)) a.hook.timeout = *v;
    if (auto v = yaml::get_duration(n, "kill_grace", ctx)) a.hook.kill_grace = *v;
    if (auto v = yaml::get_int(n, "retries", ctx, 0, 100)) a.hook.retries = static_cast<int>(*v);
    if (auto v = yaml::get_string(n, "after", ctx)) a.after = *v;
    cfg.actions[name] = std::move(a);
  }
  for (const auto& kv : map) {
    const std::string name = kv.first.Scalar();
    auto it = cfg.actions.find(name);
    if (it == cfg.actions.end() || it->second.after.empty()) continue;
    // Follow the chain: it must end at an action without `after`, never come back.
    std::set<std::string> seen{name};
    std::string cur = it->second.after;
    while (!cur.empty()) {
      auto next = cfg.actions.find(cur);
      if (next == cfg.actions.end()) {
        ctx.error(kv.second["after"],
                  "action '" + name + "' runs after unknown action '" + cur + "'");
        break;
      }
      if (!seen.insert(cur).second) {
        ctx.error(kv.second["after"], "action '" + name + "' is part of an 'after' cycle");
        break;
      }
      cur = next->second.after;
    }
  }
}

// A hook that cannot run is found when its first fault comes, the worst time; said here.
void Loader::check_hook(const YAML::Node& argv, const std::string& name,
                        const std::string& program) {
  const Ctx setup{cfg.path, &cfg.setup_errors};
  const YAML::Node at = argv.IsSequence() && argv.size() > 0 ? argv[0] : argv;
  const std::string what = "action '" + name + "': hook '" + program + "' ";
  const auto exe = hook_executable(program);
  struct stat st {};
  if (!exe) {
    setup.error(at, what + "is not found in PATH");
  } else if (::stat(exe->c_str(), &st) != 0) {
    setup.error(at, what + "does not exist");
  } else if (!S_ISREG(st.st_mode)) {
    setup.error(at, what + "is not a file");
  } else if (::access(exe->c_str(), X_OK) != 0) {
    setup.error(at, what + "is not executable (chmod +x?)");
  }
}

// What leaves a loaded config unable to detect anything: no rule at all (a missing rules
// directory makes every include a warning only), and no source. A node that only acts on the
// cluster's alerts legitimately reads nothing: with a webhook, no source is a warning.
void Loader::check_setup(size_t rules) {
  const Ctx setup{cfg.path, &cfg.setup_errors};  // an absent key: the file as a whole
  const YAML::Node& r = main_root;
  if (rules == 0) {
    std::string globs;
    for (const auto& g : cfg.include) globs += (globs.empty() ? "" : ", ") + g;
    setup.error(
        r["include"].IsDefined() ? r["include"] : r["rules"],
        "no rules: the included rule files (" + globs + ") hold none and the config defines none");
  }
  if (cfg.sources.empty()) {
    if (!cfg.webhook_listen.empty()) {
      cfg.warnings.push_back(
          "no sources: this faultd reads no log and acts only on the webhook's alerts and "
          "faultctl's requests");
    } else {
      setup.error(r["sources"], "no sources: faultd would read nothing");
    }
  }
}

void Loader::load_retention(const YAML::Node& map, const Ctx& ctx) {
  if (!map.IsDefined() || !yaml::check_map(map, "retention", {"max_age", "max_rows"}, ctx)) return;
  if (auto v = yaml::get_duration(map, "max_age", ctx)) {
    if (*v < std::chrono::hours(1)) {
      ctx.error(map["max_age"], "max_age must be at least 1h (the journals explain recent faults)");
    } else {
      cfg.retention.max_age = *v;
    }
  }
  if (auto v = yaml::get_int(map, "max_rows", ctx, 1000, int64_t{1} << 40))
    cfg.retention.max_rows = *v;
}

void Loader::load_policy(const YAML::Node& map, const Ctx& ctx) {
  if (!yaml::check_map(map, "policy",
                       {"max_isolations", "max_concurrent_hooks", "dry_run", "default_level",
                        "levels", "incident_ttl", "storm", "escalate", "correlate", "diagnosis"},
                       ctx)) {
    return;
  }
  if (auto v = yaml::get_duration(map, "incident_ttl", ctx)) cfg.policy.incident_ttl = *v;
  if (auto st = map["storm"];
      st.IsDefined() &&
      yaml::check_map(st, "storm", {"window", "min_devices", "fraction", "devices"}, ctx)) {
    auto& storm = cfg.policy.storm;
    if (auto v = yaml::get_duration(st, "window", ctx)) storm.window = *v;
    if (auto v = yaml::get_int(st, "min_devices", ctx, 2, 100000)) {
      storm.min_devices = static_cast<int>(*v);
    }
    if (auto v = yaml::get_int(st, "devices", ctx, 1, 100000)) {
      storm.node_devices = static_cast<int>(*v);
    }
    if (auto f = st["fraction"]; f.IsDefined()) {
      try {
        storm.fraction = f.as<double>();
        if (storm.fraction <= 0 || storm.fraction > 1) throw std::out_of_range("fraction");
      } catch (const std::exception&) {
        ctx.error(f, "storm.fraction must be a number in (0, 1]");
      }
    }
  }
  if (auto e = map["escalate"]; e.IsDefined()) load_escalations(e, ctx);
  if (auto c = map["correlate"]; c.IsDefined()) load_correlations(c, ctx);
  if (auto d = map["diagnosis"];
      d.IsDefined() && yaml::check_map(d, "diagnosis", {"on_pass"}, ctx)) {
    const std::string on_pass = yaml::get_string(d, "on_pass", ctx).value_or("release");
    if (on_pass == "release" || on_pass == "keep") {
      cfg.policy.release_on_diagnosis_pass = on_pass == "release";
    } else {
      ctx.error(d["on_pass"], "diagnosis.on_pass must be 'release' or 'keep'");
    }
  }
  if (auto v = yaml::get_int(map, "max_concurrent_hooks", ctx, 1, 128)) {
    cfg.policy.max_concurrent_hooks = static_cast<int>(*v);
  }
  if (auto m = map["max_isolations"];
      m.IsDefined() && yaml::check_map(m, "max_isolations", {"count", "window"}, ctx)) {
    if (auto v = yaml::get_int(m, "count", ctx, 0, 100000)) {
      cfg.policy.max_isolations = static_cast<int>(*v);
    }
    if (auto v = yaml::get_duration(m, "window", ctx)) cfg.policy.isolation_window = *v;
  }
  if (auto v = yaml::get_bool(map, "dry_run", ctx)) cfg.policy.dry_run = *v;
  if (auto level = yaml::get_fault_level(map, "default_level", ctx)) {
    cfg.policy.default_level = *level;
  }
  const YAML::Node levels = map["levels"];
  if (!levels.IsDefined()) return;
  if (!levels.IsMap()) {
    ctx.error(levels, "policy.levels must be a map of fault level to {state, actions}");
    return;
  }
  for (const auto& kv : levels) {
    const auto level = yaml::as_fault_level(kv.first, ctx);
    if (!level) continue;
    if (!yaml::check_map(kv.second, "a level policy", {"state", "actions", "recover"}, ctx)) {
      continue;
    }
    LevelPolicy lp;
    const std::string state = yaml::get_string(kv.second, "state", ctx).value_or("none");
    if (state == "warning") {
      lp.warn = true;
    } else if (state != "none") {
      ctx.error(kv.second["state"], "a level's state must be 'warning' or 'none'");
    }
    if (auto actions = yaml::get_string_list(kv.second, "actions", ctx)) lp.actions = *actions;
    lp.recover = yaml::get_bool(kv.second, "recover", ctx).value_or(true);
    cfg.policy.levels[static_cast<size_t>(*level)] = std::move(lp);
  }
}

// policy.escalate: frequency escalation for faultd's own rules and for codes, with the meaning of
// MindCluster's FaultFrequency (times within window → level; released after `release`).
void Loader::load_escalations(const YAML::Node& list, const Ctx& ctx) {
  if (!list.IsSequence()) {
    ctx.error(list, "policy.escalate must be a list of {codes|rules, times, window, to}");
    return;
  }
  for (const auto& n : list) {
    if (!yaml::check_map(n, "an escalation", {"codes", "rules", "times", "window", "to", "release"},
                         ctx)) {
      continue;
    }
    FrequencyEscalation e;
    if (auto codes = yaml::get_string_list(n, "codes", ctx)) {
      for (const auto& c : *codes) e.codes.insert(normalize_code(c));
    }
    if (auto rules = yaml::get_string_list(n, "rules", ctx)) {
      e.rules.insert(rules->begin(), rules->end());
    }
    if (e.codes.empty() && e.rules.empty()) ctx.error(n, "an escalation needs codes or rules");
    if (auto v = yaml::get_int(n, "times", ctx, 1, 1000000)) e.times = static_cast<int>(*v);
    if (auto v = yaml::get_duration(n, "window", ctx)) e.window = *v;
    if (auto v = yaml::get_duration(n, "release", ctx)) e.release = *v;
    if (auto level = yaml::get_fault_level(n, "to", ctx)) e.to = *level;
    cfg.policy.escalations.push_back(std::move(e));
  }
}

// policy.correlate replaces the default (80818C00 from two rules within 10m → SeparateNPU).
void Loader::load_correlations(const YAML::Node& list, const Ctx& ctx) {
  cfg.policy.correlations.clear();
  if (!list.IsSequence()) {
    ctx.error(list, "policy.correlate must be a list of {codes, signals, window, to}");
    return;
  }
  for (const auto& n : list) {
    if (!yaml::check_map(n, "a correlation", {"codes", "signals", "window", "to"}, ctx)) continue;
    Correlation c;
    if (auto codes = yaml::get_string_list(n, "codes", ctx)) {
      for (const auto& code : *codes) c.codes.insert(normalize_code(code));
    }
    if (auto v = yaml::get_int(n, "signals", ctx, 2, 100)) c.signals = static_cast<int>(*v);
    if (auto v = yaml::get_duration(n, "window", ctx)) c.window = *v;
    if (auto level = yaml::get_fault_level(n, "to", ctx)) c.to = *level;
    cfg.policy.correlations.push_back(std::move(c));
  }
}

// Explicit level policies must name defined actions; the built-in defaults quietly use only the
// actions that exist, so a config without hooks still detects and marks devices.
void Loader::check_action_refs(const YAML::Node& policy, const Ctx& ctx,
                               const std::set<std::string>& explicit_levels) {
  for (int i = 0; i < kFaultLevelCount; ++i) {
    auto& lp = cfg.policy.levels[static_cast<size_t>(i)];
    const std::string level_name(to_string(static_cast<FaultLevel>(i)));
    const bool is_explicit = explicit_levels.count(level_name) > 0;
    std::vector<std::string> kept;
    for (const auto& a : lp.actions) {
      auto it = cfg.actions.find(a);
      if (it == cfg.actions.end()) {
        if (is_explicit) {
          ctx.error(policy["levels"][level_name]["actions"],
                    "level " + level_name + " names unknown action '" + a + "'");
        }
        continue;
      }
      if (!it->second.after.empty()) {
        if (is_explicit) {
          ctx.error(policy["levels"][level_name]["actions"],
                    "level " + level_name + " names action '" + a +
                        "', which runs by itself after '" + it->second.after + "'");
        }
        continue;
      }
      kept.push_back(a);
    }
    lp.actions = std::move(kept);
  }
}

void Loader::load_includes(const YAML::Node& origin, const Ctx& ctx) {
  std::set<std::string> seen;
  for (const auto& pattern : cfg.include) {
    // The sources' own glob dialect (`**` included), in sorted order.
    const std::vector<std::string> files = glob_expand(pattern, nullptr);
    if (files.empty()) {
      if (!has_wildcard(pattern)) {
        ctx.error(origin, "included rule file '" + pattern + "' does not exist");
      } else {
        cfg.warnings.push_back("include '" + pattern + "' matches no file");
      }
      continue;
    }
    for (const auto& f : files) {
      if (!seen.insert(f).second || f == cfg.path) continue;
      const Ctx fctx{f, &errors};
      auto doc = yaml::load_file(f, fctx);
      if (!doc) continue;
      if (doc->IsNull()) continue;  // an empty drop-in is fine
      if (!yaml::check_map(*doc, "a rule file", {"rules"}, fctx)) continue;
      if ((*doc)["rules"].IsDefined()) parse_rules((*doc)["rules"], f, rule_specs, errors);
      cfg.rule_files.push_back(f);
    }
  }
}

}  // namespace

const std::string& source_name(const SourceConfig& source) {
  return std::visit([](const auto& s) -> const std::string& { return s.name; }, source);
}

std::vector<std::string_view> chunk_source_types(const std::vector<SourceConfig>& sources) {
  std::vector<std::string_view> types;
  auto add = [&](std::string_view type) {
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
  };
  for (const auto& source : sources) {
    if (const auto* file = std::get_if<FileSourceConfig>(&source)) {
      add(file->source_type());
    } else if (std::holds_alternative<KmsgSourceConfig>(source)) {
      add("kmsg");
    } else if (std::holds_alternative<OverflowDumpSourceConfig>(source)) {
      add("overflow_dump");
    } else {
      // command sources, and the sources that write faultd's own records (Flight Recorder
      // dumps, the hang verdict) as a command's
      add("command");
      if (std::holds_alternative<CommandSourceConfig>(source)) add("command_output");
    }
  }
  return types;
}

std::vector<FileSourceConfig> Config::file_sources() const {
  std::vector<FileSourceConfig> out;
  for (const auto& s : sources) {
    if (const auto* f = std::get_if<FileSourceConfig>(&s)) out.push_back(*f);
  }
  return out;
}

PolicyConfig default_policy() {
  PolicyConfig p;
  auto set = [&p](FaultLevel level, bool warn, std::vector<std::string> actions) {
    p.levels[static_cast<size_t>(level)] = LevelPolicy{warn, std::move(actions)};
  };
  set(FaultLevel::NotHandleFault, false, {});
  set(FaultLevel::SubHealthFault, true, {});
  // Restart the job, not a device fault: every rank of a job logs these when one peer dies, so
  // marking devices would flag the whole job. Recorded and counted only.
  set(FaultLevel::RestartRequest, false, {});
  set(FaultLevel::RestartBusiness, false, {});
  set(FaultLevel::FreeRestartNPU, true, {});
  set(FaultLevel::RestartNPU, true, {});
  set(FaultLevel::PreSeparateNPU, true, {});
  set(FaultLevel::SeparateNPU, true, {"isolate"});
  set(FaultLevel::ManuallySeparateNPU, true, {"isolate"});
  return p;
}

std::optional<Config> load_config(const std::string& path, ErrorList& errors) {
  Loader loader(errors);
  loader.load_main(path);
  if (!errors.empty()) return std::nullopt;
  CodeLevels levels;
  if (!loader.cfg.mindcluster_fault_codes.empty()) {
    levels = load_mindcluster_fault_codes(loader.cfg.mindcluster_fault_codes, errors);
  }
  levels.default_level = loader.cfg.policy.default_level;
  if (!loader.cfg.mindcluster_customization.empty()) {
    loader.cfg.customization = std::make_shared<const FaultCustomization>(
        load_fault_customization(loader.cfg.mindcluster_customization, errors));
  }
  // The catalogue's escalations come after policy.escalate, so an operator's entry for a code
  // wins over the vendor's.
  for (const auto& f : loader.cfg.customization->frequency) {
    FrequencyEscalation e;
    e.codes.insert(f.codes.begin(), f.codes.end());
    e.times = static_cast<int>(f.times);
    e.window = f.window;
    e.to = f.level;
    e.release = f.release_window.value_or(Duration{0});
    loader.cfg.policy.escalations.push_back(std::move(e));
  }
  for (const auto& d : loader.cfg.customization->duration) {
    DurationEscalation e;
    e.codes.insert(d.codes.begin(), d.codes.end());
    e.fault_timeout = d.fault_timeout;
    e.to = d.level;
    loader.cfg.policy.duration_escalations.push_back(std::move(e));
  }
  if (!loader.cfg.faultdiag_knowledge.empty()) {
    FaultDiagImport kg =
        load_faultdiag_knowledge(loader.cfg.faultdiag_knowledge, loader.cfg.faultdiag, errors);
    loader.cfg.faultdiag_summary = loader.cfg.faultdiag_knowledge + ": " + kg.summary();
    for (const auto& detail : kg.skipped_detail) {
      loader.cfg.warnings.push_back(loader.cfg.faultdiag_knowledge + ": skipped " + detail);
    }
    std::move(kg.rules.begin(), kg.rules.end(), std::back_inserter(loader.rule_specs));
  }
  auto rules = RuleSet::build(std::move(loader.rule_specs), std::move(levels), errors);
  if (!errors.empty() || !rules) return std::nullopt;
  for (const auto& w : rules->warnings()) loader.cfg.warnings.push_back(w);
  // A rule kept to sources the config does not have never runs: said, not silent.
  for (const auto& named : rules->named_sources()) {
    const std::string& source = named.first;
    if (std::none_of(loader.cfg.sources.begin(), loader.cfg.sources.end(),
                     [&](const SourceConfig& s) { return source_name(s) == source; })) {
      loader.cfg.warnings.push_back("rule '" + named.second +
                                    "' (and any other naming it) reads only source '" + source +
                                    "', which this config does not define");
    }
  }
  loader.check_setup(rules->size());
  loader.cfg.rules = std::move(rules);
  return std::move(loader.cfg);
}

}  // namespace faultd
