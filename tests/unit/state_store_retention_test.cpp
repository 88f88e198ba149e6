// Paging and retention of the journals against a real database file: pages of a long journal
// join into the whole listing; pruning deletes old rows and rows beyond the cap in batches,
// keeps every row the present still refers to, and gives the space back to the file system.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "daemon/state/store.hpp"
#include "tests/support/state_store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::at_ms;
using faultd::testing::RawDb;
using faultd::testing::sample_finding;
using faultd::testing::sample_position;
using faultd::testing::TempDir;

namespace {

constexpr int64_t kDay = 86'400'000;
constexpr int64_t kNow = 1'760'000'000'000;

// `n` findings noticed at `time_ms` (offsets from `first_offset` up), committed together.
std::vector<int64_t> add_faults(Store& store, int n, int64_t time_ms, uint64_t first_offset,
                                const std::string& text = "") {
  std::vector<int64_t> ids;
  Store::Txn txn(store);
  for (int i = 0; i < n; ++i) {
    Finding f = sample_finding(first_offset + static_cast<uint64_t>(i), "npu-1", time_ms);
    if (!text.empty()) f.text = text;
    REQUIRE(txn.insert_finding(f));
    ids.push_back(f.id);
  }
  txn.commit();
  return ids;
}

// Prunes until nothing is left to prune; returns the total per journal.
PruneReport prune_all(Store& store, const Retention& r, int64_t batch) {
  PruneReport total;
  for (int round = 0; round < 10'000; ++round) {
    const PruneReport one = store.prune(r, at_ms(kNow), batch);
    for (size_t i = 0; i < total.deleted.size(); ++i) {
      CHECK(one.deleted[i] <= batch);
      total.deleted[i] += one.deleted[i];
    }
    if (!one.more) return total;
  }
  FAIL("prune never finished");
  return total;
}

int64_t count(RawDb& db, const std::string& table) {
  return std::stoll(db.scalar("SELECT count(*) FROM " + table));
}

bool has_fault(RawDb& db, int64_t id) {
  return db.scalar("SELECT count(*) FROM faults WHERE id = " + std::to_string(id)) == "1";
}

}  // namespace

TEST_CASE("fault and action pages join into the whole listing", "[state][store][retention]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  {
    // Times out of id order, several equal: the page key is (time, id), not the id alone.
    Store::Txn txn(store);
    for (uint64_t i = 0; i < 23; ++i) {
      Finding f = sample_finding(i, "npu-1", kNow + static_cast<int64_t>((i * 7) % 5) * 1000);
      REQUIRE(txn.insert_finding(f));
      txn.journal_action("notify", "npu-1", f.id, at_ms(kNow));
    }
    txn.commit();
  }
  std::vector<int64_t> whole;
  for (const auto& f : store.query_faults({})) whole.push_back(f.id);
  REQUIRE(whole.size() == 23);

  std::vector<int64_t> paged;
  FaultQuery q;
  q.limit = 4;
  for (;;) {
    const auto page = store.query_faults(q);
    for (const auto& f : page) paged.push_back(f.id);
    if (page.size() < q.limit) break;
    q.before_id = page.back().id;
  }
  CHECK(paged == whole);

  std::vector<int64_t> actions;
  std::optional<int64_t> before;
  for (;;) {
    const auto page = store.query_actions("", 5, std::nullopt, before);
    for (const auto& a : page) actions.push_back(a.id);
    if (page.size() < 5) break;
    before = page.back().id;
  }
  std::vector<int64_t> all_actions;
  for (const auto& a : store.query_actions("", 100)) all_actions.push_back(a.id);
  CHECK(actions == all_actions);
  CHECK(actions.size() == 23);
  CHECK(store.query_actions("", 100, at_ms(kNow + 1)).empty());
}

TEST_CASE("retention deletes old rows in batches and keeps what the present refers to",
          "[state][store][retention]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  const auto old_ids = add_faults(store, 57, kNow - 100 * kDay, 0);
  const auto young_ids = add_faults(store, 13, kNow - kDay, 1000);

  // Old rows the present still refers to: a device held by a fault, an open incident's first
  // finding, the fault of an unfinished action.
  const int64_t holds_device = old_ids[3];
  const int64_t opens_incident = old_ids[9];
  const int64_t pending_action = old_ids[20];
  {
    Store::Txn txn(store);
    // Two old transitions of one device: the last still explains its state.
    for (const int64_t fault : {old_ids[2], holds_device}) {
      Transition t;
      t.device = "npu-1";
      t.from = DeviceState::Healthy;
      t.to = DeviceState::Warning;
      t.reason = "rule hccl-timeout";
      t.fault_id = fault;
      t.level = FaultLevel::RestartNPU;
      t.rule = "hccl-timeout";
      t.code = "80818C00";
      t.time = at_ms(kNow - 100 * kDay);
      txn.apply_transition(t);
    }
    Incident open;
    open.id = opens_incident;
    open.device = "npu-2";
    open.first = open.last = at_ms(kNow - 100 * kDay);
    txn.save_incident(open);
    Incident closed = open;
    closed.id = old_ids[10];
    closed.open = false;
    txn.save_incident(closed);
    txn.journal_action("isolate", "npu-3", pending_action, at_ms(kNow - 100 * kDay));
    txn.journal_action("notify", "npu-4", old_ids[30], at_ms(kNow - 100 * kDay));
    auto done = store.ensure_action("notify", "npu-5", old_ids[31], at_ms(kNow - 100 * kDay));
    txn.commit();
    done.status = ActionStatus::Success;
    store.update_action(done);
  }
  store.save_positions({sample_position(10, "gone"), sample_position(20, "kept")});
  RawDb raw(dir.file("state.db"));
  raw.exec("UPDATE positions SET updated_ms = " + std::to_string(kNow - 100 * kDay) +
           " WHERE source = 'gone'");
  raw.exec("UPDATE positions SET updated_ms = " + std::to_string(kNow) + " WHERE source = 'kept'");
  REQUIRE(store.oldest_position_update() == at_ms(kNow - 100 * kDay));

  Retention r;
  r.max_age = std::chrono::hours(24 * 90);
  const PruneReport total = prune_all(store, r, 10);

  // Faults: all old ones but the four referred to (two pending actions).
  CHECK(total.deleted[0] == 57 - 4);
  CHECK(count(raw, "faults") == 13 + 4);
  CHECK(has_fault(raw, old_ids[30]));
  CHECK_FALSE(has_fault(raw, old_ids[31]));
  for (const int64_t id : young_ids) CHECK(has_fault(raw, id));
  CHECK(has_fault(raw, holds_device));
  CHECK(has_fault(raw, opens_incident));
  CHECK(has_fault(raw, pending_action));
  CHECK(total.deleted[1] == 1);  // the device's last transition stays
  CHECK(raw.scalar("SELECT fault_id FROM transitions") == std::to_string(holds_device));
  CHECK(total.deleted[2] == 1);  // the finished action; the pending one stays
  CHECK(raw.scalar("SELECT count(*) FROM actions WHERE status = 'pending'") == "2");
  CHECK(total.deleted[3] == 1);  // the closed incident; the open one stays
  CHECK(raw.scalar("SELECT open FROM incidents") == "1");
  CHECK(total.deleted[4] == 1);  // the position nobody saved for 100 days
  CHECK(raw.scalar("SELECT source FROM positions") == "kept");
  CHECK(store.load_devices().at(0).fault_id == holds_device);

  // Nothing left: a second pass deletes nothing.
  const PruneReport again = store.prune(r, at_ms(kNow), 10);
  for (const int64_t n : again.deleted) CHECK(n == 0);
  CHECK_FALSE(again.more);
}

TEST_CASE("retention keeps the newest max_rows of each journal", "[state][store][retention]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  const auto ids = add_faults(store, 2500, kNow - kDay, 0);
  Retention r;
  r.max_rows = 1000;
  const PruneReport total = prune_all(store, r, 300);
  CHECK(total.deleted[0] == 1500);
  RawDb raw(dir.file("state.db"));
  CHECK(count(raw, "faults") == 1000);
  CHECK(raw.scalar("SELECT min(id) FROM faults") == std::to_string(ids[1500]));
  CHECK(raw.scalar("SELECT max(id) FROM faults") == std::to_string(ids.back()));
}

TEST_CASE("pruned pages go back to the file system", "[state][store][retention]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  Store store(path);
  // A database created before retention existed has no incremental auto-vacuum: turned on once.
  // (A connection reads the mode when it opens: each check uses a new one.)
  REQUIRE(RawDb(path).scalar("PRAGMA auto_vacuum") == "0");
  store.enable_incremental_vacuum();
  CHECK(RawDb(path).scalar("PRAGMA auto_vacuum") == "2");
  store.enable_incremental_vacuum();  // idempotent
  RawDb raw(path);

  add_faults(store, 3000, kNow - 100 * kDay, 0, std::string(2000, 'x'));
  const int64_t full = std::stoll(raw.scalar("PRAGMA page_count"));
  Retention r;
  r.max_age = std::chrono::hours(24 * 90);
  prune_all(store, r, 1000);
  const int64_t after = std::stoll(raw.scalar("PRAGMA page_count"));
  CHECK(after * 4 < full);
  CHECK(std::stoll(raw.scalar("PRAGMA freelist_count")) < 64);
}
