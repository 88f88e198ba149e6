#include "collectors/flight_recorder/flight_recorder.hpp"

#include <algorithm>
#include <map>

namespace faultd::flight_recorder {

using pickle::Kind;
using pickle::PickleDoc;
using pickle::Value;

namespace {

// "[0, 1, 2]" (ranks_str) or a list of ints.
std::vector<int64_t> rank_list(const PickleDoc& doc, const Value* v) {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  if (v->kind == Kind::List || v->kind == Kind::Tuple) {
    for (const uint32_t i : v->items) {
      if (auto r = doc.as_int(&doc.at(i))) out.push_back(*r);
    }
    return out;
  }
  if (v->kind != Kind::Str) return out;
  int64_t cur = -1;
  for (const char c : v->text) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      if (cur > (int64_t{1} << 40)) return {};
    } else if (cur >= 0) {
      out.push_back(cur);
      cur = -1;
    }
  }
  if (cur >= 0) out.push_back(cur);
  return out;
}

GroupProgress& group(std::vector<GroupProgress>& groups, const std::string& pg_id) {
  for (auto& g : groups) {
    if (g.pg_id == pg_id) return g;
  }
  groups.push_back({});
  groups.back().pg_id = pg_id;
  groups.back().pg_name = pg_id;
  return groups.back();
}

std::string key_text(const PickleDoc& doc, const Value& v) {
  if (v.kind == Kind::Str) return v.text;
  if (v.kind == Kind::Int) return std::to_string(v.integer);
  (void)doc;
  return {};
}

}  // namespace

std::string GroupProgress::state() const {
  if (last_enqueued == 0) return "none";
  if (last_completed >= last_enqueued) return "completed";
  if (last_started >= last_enqueued) return "started";
  return "scheduled";
}

Dump parse_dump(std::string_view bytes, const pickle::PickleLimits& limits) {
  const PickleDoc doc = pickle::parse_pickle(bytes, limits);
  const Value& root = doc.root();
  if (root.kind != Kind::Dict) throw FormatError("not a Flight Recorder dump: not a dict");
  const std::string* version = doc.as_str(doc.find(root, "version"));
  if (version == nullptr) throw FormatError("not a Flight Recorder dump: no version");
  Dump dump;
  dump.version = *version;

  // Entries first: they join a group's id to its name and give the newest op.
  const Value* entries = doc.find(root, "entries");
  if (entries != nullptr && entries->kind != Kind::List) {
    throw FormatError("Flight Recorder dump: entries is not a list");
  }
  const bool has_status = doc.find(root, "pg_status") != nullptr;
  std::map<std::string, int64_t> newest;  // per group: the sequence id of last_op
  if (entries != nullptr) {
    for (const uint32_t i : entries->items) {
      const Value& e = doc.at(i);
      if (e.kind != Kind::Dict) continue;
      const Value* p2p = doc.find(e, "is_p2p");
      if (p2p != nullptr && p2p->kind == Kind::Bool && p2p->integer != 0) continue;
      const auto pg_id = doc.as_int(doc.find(e, "pg_id"));
      const auto seq = doc.as_int(doc.find(e, "collective_seq_id"));
      if (!pg_id || !seq) continue;
      GroupProgress& g = group(dump.groups, std::to_string(*pg_id));
      const Value* pg = doc.find(e, "process_group");
      if (pg != nullptr && pg->kind == Kind::Tuple && pg->items.size() == 2) {
        if (const auto* n = doc.as_str(&doc.at(pg->items[0]))) g.pg_name = *n;
        if (const auto* d = doc.as_str(&doc.at(pg->items[1]))) g.pg_desc = *d;
      } else if (const auto* n = doc.as_str(pg)) {
        g.pg_name = *n;
      }
      if (*seq >= newest[g.pg_id]) {
        newest[g.pg_id] = *seq;
        if (const auto* op = doc.as_str(doc.find(e, "profiling_name"))) g.last_op = *op;
      }
      if (has_status) continue;  // pg_status is the recorder's own account
      const std::string* state = doc.as_str(doc.find(e, "state"));
      g.last_enqueued = std::max(g.last_enqueued, *seq);
      if (state != nullptr && (*state == "started" || *state == "completed")) {
        g.last_started = std::max(g.last_started, *seq);
      }
      if (state != nullptr && *state == "completed") {
        g.last_completed = std::max(g.last_completed, *seq);
      }
    }
  }
  if (const Value* status = doc.find(root, "pg_status"); status != nullptr) {
    if (status->kind != Kind::Dict)
      throw FormatError("Flight Recorder dump: pg_status is not a dict");
    for (size_t k = 0; k + 1 < status->items.size(); k += 2) {
      const std::string id = key_text(doc, doc.at(status->items[k]));
      const Value& s = doc.at(status->items[k + 1]);
      if (id.empty() || s.kind != Kind::Dict) continue;
      GroupProgress& g = group(dump.groups, id);
      g.last_enqueued = doc.as_int(doc.find(s, "last_enqueued_collective")).value_or(0);
      g.last_started = doc.as_int(doc.find(s, "last_started_collective")).value_or(0);
      g.last_completed = doc.as_int(doc.find(s, "last_completed_collective")).value_or(0);
    }
  }
  if (const Value* config = doc.find(root, "pg_config");
      config != nullptr && config->kind == Kind::Dict) {
    for (size_t k = 0; k + 1 < config->items.size(); k += 2) {
      const std::string name = key_text(doc, doc.at(config->items[k]));
      const Value& info = doc.at(config->items[k + 1]);
      for (auto& g : dump.groups) {
        if (g.pg_name != name) continue;
        g.ranks = rank_list(doc, info.kind == Kind::Dict ? doc.find(info, "ranks") : &info);
        if (const auto* d = doc.as_str(doc.find(info, "desc")); d != nullptr && g.pg_desc.empty()) {
          g.pg_desc = *d;
        }
      }
    }
  }
  return dump;
}

std::vector<Wavefront> find_wavefronts(const std::vector<RankDump>& ranks) {
  // Per group name: each rank's progress in it.
  std::map<std::string, std::vector<std::pair<int64_t, const GroupProgress*>>> by_group;
  for (const auto& r : ranks) {
    for (const auto& g : r.dump.groups) {
      // A rank counts once per group name: of two groups of one dump under one name (a
      // malformed dump), its furthest progress, so that it is never blamed for the other.
      auto& members = by_group[g.pg_name];
      auto same = std::find_if(members.begin(), members.end(),
                               [&r](const auto& m) { return m.first == r.rank; });
      if (same == members.end()) {
        members.emplace_back(r.rank, &g);
      } else if (g.last_enqueued > same->second->last_enqueued) {
        same->second = &g;
      }
    }
  }
  std::vector<Wavefront> out;
  for (const auto& [name, members] : by_group) {
    Wavefront w;
    w.pg_name = name;
    for (const auto& [rank, g] : members) w.waited_seq = std::max(w.waited_seq, g->last_enqueued);
    for (const auto& [rank, g] : members) {
      if (g->last_enqueued < w.waited_seq) {
        w.behind.push_back(rank);
        w.behind_last.push_back(g->last_enqueued);
      } else if (g->last_completed < w.waited_seq) {
        w.waiting.push_back(rank);
      }
    }
    if (w.waiting.empty()) continue;  // nobody waits: no hang in this group
    std::vector<int64_t> listed;
    for (const auto& [rank, g] : members) {
      if (g->ranks.size() > listed.size()) listed = g->ranks;
    }
    for (const int64_t r : listed) {
      const bool here =
          std::any_of(members.begin(), members.end(), [r](const auto& m) { return m.first == r; });
      if (!here) w.absent.push_back(r);
    }
    w.complete = !listed.empty() && w.absent.empty();
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace faultd::flight_recorder
