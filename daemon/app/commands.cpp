#include "daemon/app/commands.hpp"

#include <spdlog/spdlog.h>

#include "daemon/control/report_request.hpp"
#include "daemon/core/json.hpp"

namespace faultd {
namespace {

using json = nlohmann::json;

json error(const std::string& why) { return {{"ok", false}, {"error", why}}; }

json to_json(const DeviceRecord& d) {
  return {{"device", d.device},
          {"state", std::string(to_string(d.state))},
          {"reason", d.reason},
          {"fault_id", d.fault_id},
          {"level", d.fault_id != 0 ? std::string(to_string(d.level)) : ""},
          {"rule", d.rule},
          {"code", d.code},
          {"since", d.since == TimePoint{} ? "" : format_time(d.since)},  // never changed
          {"verdict", d.verdict},
          {"repair", d.verdict == "faulty"},
          {"acked", d.acked},
          {"ack_reason", d.ack_reason}};
}

json to_json(const ActionRecord& a) {
  return {{"id", a.id},
          {"action", a.action},
          {"device", a.device},
          {"fault_id", a.fault_id},
          {"status", std::string(to_string(a.status))},
          {"attempts", a.attempts},
          {"exit_code", a.exit_code},
          {"detail", a.detail},
          {"output", a.output},  // what the hook printed (capped by the runner)
          {"created", format_time(a.created)},
          {"finished", a.finished == TimePoint{} ? "" : format_time(a.finished)}};
}

json to_json(const Incident& i) {
  return {{"id", i.id},
          {"device", i.device},
          {"rule", i.rule},
          {"code", i.code},
          {"level", std::string(to_string(i.level))},
          {"base_level", std::string(to_string(i.base_level))},
          {"first", format_time(i.first)},
          {"last", format_time(i.last)},
          {"count", i.count},
          {"open", i.open},
          {"node_level", i.node_level},
          {"escalation", i.escalation},
          {"note", i.note}};
}

// What the inventory knows of a device (nothing for a device outside it).
void add_inventory(json& j, const InventoryDevice* d) {
  if (d == nullptr) return;
  j["present"] = d->present();
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"model", &d->model},
                                   {"serial", &d->serial},
                                   {"bus_id", &d->bus_id},
                                   {"uuid", &d->uuid},
                                   {"physical_id", &d->physical_id}}) {
    if (!value->empty()) j[key] = *value;
  }
  j["aliases"] = device_aliases(*d);
  j["seen_by"] = d->seen_by;
  if (!d->missing_from.empty()) j["missing_from"] = d->missing_from;
}

json status(const CommandContext& c) {
  const Inventory& inventory = c.pipeline.inventory();
  json devices = json::array();
  for (const auto& d : visible_devices(c.pipeline.devices(), inventory)) {
    json j = to_json(d);
    add_inventory(j, inventory.find(d.device));
    devices.push_back(std::move(j));
  }
  json sources = json::array();
  for (const auto& s : c.sources()) {
    auto& st = s->stats();
    uint64_t errors = 0;
    for (int k = 0; k < kSourceErrorKindCount; ++k)
      errors += st.error_count(static_cast<SourceErrorKind>(k));
    sources.push_back({{"name", s->name()},
                       {"files", st.files.load()},
                       {"lines", st.lines.load()},
                       {"bytes", st.bytes.load()},
                       {"lag_bytes", st.lag_bytes.load()},
                       {"errors", errors}});
  }
  return {{"ok", true},
          {"node", c.config.node},
          {"version", FAULTD_VERSION},
          {"rules", c.config.rules->size()},
          {"ruleset_sha256", c.config.rules->sha256()},
          {"dry_run", c.config.policy.dry_run},
          {"actions_in_flight", c.actions.in_flight()},
          {"devices", devices},
          {"inventory",
           {{"known", inventory.known()},
            {"expected", inventory.expected()},
            {"present", inventory.present()}}},
          {"sources", sources}};
}

// A reply of `events`, `incidents` or `history` is one page of each journal it lists: at most
// kEventsPageRows rows and about kEventsPageBytes of JSON. A longer listing is read page by page
// (the cursors `before`, `actions_before`, `incidents_before`: the `next_*` of the previous
// reply), so neither the io thread's pause nor the reply grows with the journal. A fault's text
// (the log line) is left out unless `verbose` asks for it.
constexpr size_t kEventsPageRows = 1000;
constexpr size_t kEventsPageBytes = size_t{1} << 20;

// Appends rows until the page is full. `rows` holds one more than a page when there is more:
// then `next` is set to the last id sent.
template <typename Row, typename ToJson>
json page_of(const std::vector<Row>& rows, size_t limit, ToJson&& to_json_row, json& reply,
             const char* next) {
  json list = json::array();
  size_t bytes = 0;
  for (const Row& row : rows) {
    if (list.size() == limit || bytes >= kEventsPageBytes) break;
    json j = to_json_row(row);
    bytes += j.dump(-1, ' ', false, json::error_handler_t::replace).size();
    list.push_back(std::move(j));
  }
  if (!list.empty() && list.size() < rows.size()) reply[next] = list.back()["id"];
  return list;
}

// A request's page size: its `limit` (else `fallback`), at most a page.
size_t page_limit(const json& r, size_t fallback) {
  return std::min(r.value("limit", fallback), kEventsPageRows);
}

// A request's cursor (checked as a journal id by the control server).
std::optional<int64_t> cursor(const json& r, const char* name) {
  if (!r.contains(name)) return std::nullopt;
  return r[name].get<int64_t>();
}

json events(const CommandContext& c, const json& r) {
  FaultQuery q;
  q.device = r.value("device", "");
  q.job = r.value("job", "");
  if (!q.job.empty() && !is_valid_job_id(q.job)) return error("invalid job name");
  if (r.contains("since")) {
    auto d = parse_duration(r.value("since", ""));
    if (!d) return error("since must be a duration such as 30m or 24h");
    q.since = c.clock.now() - *d;
  }
  const size_t limit = page_limit(r, kEventsPageRows);
  const bool verbose = r.value("verbose", false);
  json reply = {{"ok", true}, {"faults", json::array()}, {"actions", json::array()}};
  if (r.value("faults", true) && limit > 0) {
    q.before_id = cursor(r, "before");
    if (q.before_id && !c.store.find_fault(*q.before_id)) {
      return error("fault " + std::to_string(*q.before_id) +
                   " is not in the journal (pruned by state.retention?)");
    }
    q.limit = limit + 1;
    reply["faults"] = page_of(
        c.store.query_faults(q), limit,
        [verbose](const Finding& f) {
          json j = faultd::to_json(f);
          if (!verbose) j.erase("text");
          return j;
        },
        reply, "next_before");
  }
  // Actions are journaled per device, not per job: a job's listing holds its findings only.
  if (r.value("actions", true) && q.job.empty() && limit > 0) {
    reply["actions"] = page_of(
        c.store.query_actions(q.device, limit + 1, q.since, cursor(r, "actions_before")), limit,
        [](const ActionRecord& a) { return to_json(a); }, reply, "next_actions_before");
  }
  return reply;
}

// A card's findings wherever it was (any device id, any slot): by the serial the inventory
// recorded with each finding. The journal is per node; Prometheus' faultd_device_info{serial}
// follows a card across nodes.
json history_of_serial(const CommandContext& c, const std::string& serial, const json& r) {
  if (!is_valid_device_id(serial)) return error("invalid serial");
  FaultQuery q;
  q.serial = serial;
  const size_t limit = page_limit(r, 100);
  q.limit = limit + 1;
  q.before_id = cursor(r, "before");
  if (q.before_id && !c.store.find_fault(*q.before_id)) {
    return error("fault " + std::to_string(*q.before_id) + " is not in the journal");
  }
  json reply = {{"ok", true}, {"serial", serial}, {"actions", json::array()}};
  reply["faults"] = page_of(
      c.store.query_faults(q), limit, [](const Finding& f) { return faultd::to_json(f); }, reply,
      "next_before");
  return reply;
}

// A device's transitions (cursor `before`) and incidents (cursor `incidents_before`), newest
// first, a page of each; `transitions` / `incidents` false leaves that journal out.
json history(const CommandContext& c, const json& r) {
  if (r.contains("serial")) return history_of_serial(c, r.value("serial", ""), r);
  const std::string named = r.value("device", "");
  if (!is_valid_device_id(named)) return error("invalid device id");
  const std::string device = c.pipeline.device_of(named).value_or(named);
  const size_t limit = page_limit(r, 100);
  json reply = {{"ok", true},
                {"device", device},
                {"transitions", json::array()},
                {"incidents", json::array()}};
  if (r.value("transitions", true) && limit > 0) {
    reply["transitions"] = page_of(
        c.store.query_transitions(device, limit + 1, cursor(r, "before")), limit,
        [](const Transition& t) {
          json j = faultd::to_json(t);
          j["id"] = t.id;
          return j;
        },
        reply, "next_before");
  }
  if (r.value("incidents", true) && limit > 0) {
    reply["incidents"] = page_of(
        c.store.query_incidents(device, false, limit + 1, cursor(r, "incidents_before")), limit,
        [](const Incident& i) { return to_json(i); }, reply, "next_incidents_before");
  }
  return reply;
}

json incidents(const CommandContext& c, const json& r) {
  const std::string device = r.value("device", "");
  if (!device.empty() && !is_valid_device_id(device)) return error("invalid device id");
  const size_t limit = page_limit(r, kEventsPageRows);
  json reply = {{"ok", true}, {"incidents", json::array()}};
  if (limit > 0) {
    reply["incidents"] = page_of(
        c.store.query_incidents(device, !r.value("all", false), limit + 1, cursor(r, "before")),
        limit, [](const Incident& i) { return to_json(i); }, reply, "next_before");
  }
  return reply;
}

// The budget counts the policy's (and the cluster's) isolations; the operator's are shown beside
// it and never spend it.
json budget(const CommandContext& c) {
  const int used = c.actions.isolations_in_window();
  const int max = c.config.policy.max_isolations;
  return {{"ok", true},
          {"max_isolations", max},
          {"window", format_duration(c.config.policy.isolation_window)},
          {"used", used},
          {"remaining", std::max(0, max - used)},
          {"exhausted", used >= max},
          {"operator_isolations", c.actions.operator_isolations_in_window()}};
}

// Hooks still under way for the device when an operator clears it: an isolate hook's result
// will be ignored (Pipeline::on_action_finished), which the operator should hear now.
void add_running_hooks(const CommandContext& c, const std::string& device, json& reply) {
  std::vector<ActionRecord> unfinished;
  try {
    unfinished = c.store.unfinished_actions();
  } catch (const StoreError& e) {
    spdlog::error("state store: {}", e.what());
    return;
  }
  json running = json::array();
  std::string note;
  for (const auto& a : unfinished) {
    if (a.device != device) continue;
    running.push_back({{"action", a.action},
                       {"fault_id", a.fault_id},
                       {"status", std::string(to_string(a.status))}});
    note += (note.empty() ? "" : "; ") + a.action + " hook for fault " +
            std::to_string(a.fault_id) + " is still " +
            (a.status == ActionStatus::Running ? "running" : "waiting to run");
    if (a.action == kIsolateAction) {
      note += ": its result will be ignored and what runs after it will not";
      if (c.config.actions.count(kClearAction) != 0) note += " (the clear hook runs then)";
    }
  }
  if (running.empty()) return;
  reply["running"] = std::move(running);
  reply["note"] = note;
}

// isolate, clear, ack: a device and a reason, then one pipeline step.
json operator_request(const CommandContext& c, const std::string& cmd, const json& r) {
  const std::string named = r.value("device", "");
  const std::string reason = r.value("reason", "");
  if (!is_valid_device_id(named)) return error("invalid device id");
  if (reason.empty()) return error("a reason is required");
  const auto resolved = c.pipeline.device_of(named);
  if (!resolved) return error("device " + named + " is not in this node's inventory");
  const std::string& device = *resolved;
  const std::string why = "operator: " + reason;
  const Step step = cmd == "isolate" ? c.pipeline.isolate(device, reason)
                    : cmd == "clear" ? c.pipeline.clear(device, why)
                                     : c.pipeline.acknowledge(device, why);
  c.apply(step);
  if (!step.refused.empty()) return error(step.refused);
  if (!step.store_error.empty()) return error("state store: " + step.store_error);
  if (cmd == "ack") {
    spdlog::info("device {}: incident {} acknowledged ({})", device, step.fault_id, reason);
    return {{"ok", true}, {"device", device}, {"fault_id", step.fault_id}};
  }
  const bool changed = !step.transitions.empty();
  if (cmd == "clear") {
    json reply = {{"ok", true}, {"changed", changed}, {"state", "healthy"}};
    add_running_hooks(c, device, reply);
    return reply;
  }
  if (!changed) return {{"ok", true}, {"changed", false}, {"state", "isolated"}};
  return {{"ok", true}, {"changed", true}, {"state", "isolated"}, {"fault_id", step.fault_id}};
}

// report: a fault an operator's tool measured (`faultctl compare --replicas --report`), checked
// and then recorded like a rule's finding, so the policy for its level decides what it does.
json report(const CommandContext& c, const json& r) {
  auto parsed = control::parse_report(r, c.clock.now());
  if (!parsed.finding) return error("report: " + parsed.error);
  Finding& f = *parsed.finding;
  const auto resolved = c.pipeline.device_of(f.device);
  if (!resolved) return error("device " + f.device + " is not in this node's inventory");
  f.device = *resolved;
  std::vector<Finding> findings{f};
  const Step step = c.pipeline.record(findings, nullptr);
  c.apply(step);
  if (!step.store_error.empty()) return error("state store: " + step.store_error);
  // Journaled as a new fault, counted into the device's open incident for the same code, or
  // journaled before (the same outcome reported again).
  std::string result = "duplicate";
  int64_t fault_id = 0;
  const DeviceRecord* d = c.pipeline.find(f.device);
  for (const auto& j : step.journaled) {
    if (j.rule == f.rule && j.device == f.device) {
      result = "recorded";
      fault_id = j.id;
    }
  }
  if (!step.grouped.empty()) {
    result = "grouped";
    fault_id = d != nullptr ? d->fault_id : 0;
  }
  spdlog::info("device {}: replica divergence reported by faultctl compare ({})", f.device, result);
  return {{"ok", true},
          {"result", result},
          {"rule", f.rule},
          {"device", f.device},
          {"fault_id", fault_id},
          {"state", std::string(to_string(d != nullptr ? d->state : DeviceState::Healthy))}};
}

}  // namespace

json handle_command(const CommandContext& c, const json& r) {
  const std::string cmd = r.value("cmd", "");
  if (cmd == "status") return status(c);
  if (cmd == "events") return events(c, r);
  if (cmd == "history") return history(c, r);
  if (cmd == "incidents") return incidents(c, r);
  if (cmd == "budget") return budget(c);
  if (cmd == "isolate" || cmd == "clear" || cmd == "ack") return operator_request(c, cmd, r);
  if (cmd == control::kReportCommand) return report(c, r);
  if (cmd == "reload") {
    const std::string errors = c.reload();
    if (errors.empty()) return {{"ok", true}, {"rules", c.config.rules->size()}};
    return error(errors);
  }
  return error("unknown command '" + cmd + "'");
}

}  // namespace faultd
