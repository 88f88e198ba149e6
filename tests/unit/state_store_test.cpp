// The SQLite store against a real database file: every field round-trips, transactions are
// atomic, replays are refused, the action journal is idempotent, state survives a reopen.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <sys/stat.h>
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

void check_same(const Finding& got, const Finding& want) {
  CHECK(got.id == want.id);
  CHECK(got.rule == want.rule);
  CHECK(got.source == want.source);
  CHECK(got.device == want.device);
  CHECK(got.level == want.level);
  CHECK(got.code == want.code);
  CHECK(got.file == want.file);
  CHECK(got.line == want.line);
  CHECK(got.offset == want.offset);
  CHECK(got.identity == want.identity);
  CHECK(got.text == want.text);
  CHECK(got.time == want.time);
  CHECK(got.noticed == want.noticed);
  CHECK(got.job == want.job);
}

void check_same(const Transition& got, const Transition& want) {
  CHECK(got.device == want.device);
  CHECK(got.from == want.from);
  CHECK(got.to == want.to);
  CHECK(got.reason == want.reason);
  CHECK(got.fault_id == want.fault_id);
  CHECK(got.level == want.level);
  CHECK(got.rule == want.rule);
  CHECK(got.code == want.code);
  CHECK(got.time == want.time);
}

void check_same(const ReadPosition& got, const ReadPosition& want) {
  CHECK(got.source == want.source);
  CHECK(got.path == want.path);
  CHECK(got.identity == want.identity);
  CHECK(got.offset == want.offset);
  CHECK(got.line == want.line);
}

Transition transition(const std::string& device, DeviceState from, DeviceState to, int64_t fault_id,
                      int64_t time_ms) {
  Transition t;
  t.device = device;
  t.from = from;
  t.to = to;
  t.reason = "rule hccl-timeout";
  t.fault_id = fault_id;
  t.level = FaultLevel::SeparateNPU;
  t.rule = "hccl-timeout";
  t.code = "80818C00";
  t.time = at_ms(time_ms);
  return t;
}

int64_t commit_finding(Store& store, Finding& f) {
  Store::Txn txn(store);
  txn.insert_finding(f);
  txn.commit();
  return f.id;
}

std::vector<uint64_t> offsets(const std::vector<Finding>& fs) {
  std::vector<uint64_t> out;
  for (const auto& f : fs) out.push_back(f.offset);
  return out;
}

}  // namespace

TEST_CASE("a finding round-trips every field, its text bytes untouched", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));

  Finding f = sample_finding(100);
  // Invalid UTF-8, a NUL, a CJK string, a lone continuation byte: evidence is bytes, not text.
  f.text = std::string("bad \xff\xfe utf8 \xc3\x28 nul[") + '\0' + "] 设备故障 \x80 end";
  f.identity = FileIdentity{0xfedc'ba98'7654'3210ULL, 0x8000'0000'0000'0001ULL,
                            0xffff'ffff'ffff'fff1ULL, 0xffff'ffffU};
  f.offset = 0xffff'ffff'ffff'fffeULL;
  f.line = 0x8000'0000'0000'0000ULL;
  f.level = FaultLevel::ManuallySeparateNPU;
  f.time = at_ms(1'760'000'000'123);
  f.noticed = at_ms(1'760'000'000'456);
  f.device = "";  // unknown device
  f.code = "";
  f.job = "kubeflow/llama-70b-pretrain";

  {
    Store::Txn txn(store);
    CHECK(txn.insert_finding(f));
    txn.commit();
  }
  REQUIRE(f.id > 0);

  auto got = store.find_fault(f.id);
  REQUIRE(got);
  check_same(*got, f);

  auto listed = store.query_faults({});
  REQUIRE(listed.size() == 1);
  check_same(listed[0], f);

  CHECK_FALSE(store.find_fault(f.id + 1));
}

TEST_CASE("every fault level and device state survives the store", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  for (int i = 0; i < kFaultLevelCount; ++i) {
    Finding f = sample_finding(static_cast<uint64_t>(i) * 10);
    f.level = static_cast<FaultLevel>(i);
    commit_finding(store, f);
    CHECK(store.find_fault(f.id)->level == f.level);
  }
  for (int i = 0; i < kDeviceStateCount; ++i) {
    Store::Txn txn(store);
    txn.apply_transition(transition("npu-" + std::to_string(i), DeviceState::Healthy,
                                    static_cast<DeviceState>(i), 1, 1000));
    txn.commit();
  }
  auto devices = store.load_devices();
  REQUIRE(devices.size() == kDeviceStateCount);
  for (int i = 0; i < kDeviceStateCount; ++i) {
    CHECK(devices[static_cast<size_t>(i)].state == static_cast<DeviceState>(i));
  }
}

TEST_CASE("device rows follow their transitions, which are journaled", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));

  const auto t1 = transition("npu-1", DeviceState::Healthy, DeviceState::Warning, 11, 1000);
  auto t2 = transition("npu-1", DeviceState::Warning, DeviceState::Isolated, 12, 2000);
  t2.reason = "action isolate succeeded";
  t2.level = FaultLevel::PreSeparateNPU;
  t2.rule = "ecc-uncorrectable";
  t2.code = "80E01801";
  auto t3 = transition("npu-2", DeviceState::Healthy, DeviceState::Warning, 13, 1500);
  t3.reason = "operator: drain for maintenance";
  t3.fault_id = 0;
  {
    Store::Txn txn(store);
    txn.apply_transition(t1);
    txn.apply_transition(t2);
    txn.apply_transition(t3);
    txn.commit();
  }

  auto devices = store.load_devices();
  REQUIRE(devices.size() == 2);
  const DeviceRecord& d1 = devices[0];
  CHECK(d1.device == "npu-1");
  CHECK(d1.state == DeviceState::Isolated);
  CHECK(d1.reason == "action isolate succeeded");
  CHECK(d1.fault_id == 12);
  CHECK(d1.level == FaultLevel::PreSeparateNPU);
  CHECK(d1.rule == "ecc-uncorrectable");
  CHECK(d1.code == "80E01801");
  CHECK(d1.since == at_ms(2000));
  CHECK(devices[1].device == "npu-2");
  CHECK(devices[1].reason == "operator: drain for maintenance");
  CHECK(devices[1].fault_id == 0);

  // Newest first in journal order, whatever the transition times say.
  auto all = store.query_transitions("", 10);
  REQUIRE(all.size() == 3);
  check_same(all[0], t3);
  check_same(all[1], t2);
  check_same(all[2], t1);

  auto npu1 = store.query_transitions("npu-1", 10);
  REQUIRE(npu1.size() == 2);
  check_same(npu1[0], t2);
  check_same(npu1[1], t1);

  auto newest = store.query_transitions("npu-1", 1);
  REQUIRE(newest.size() == 1);
  check_same(newest[0], t2);

  CHECK(store.query_transitions("npu-9", 10).empty());
}

TEST_CASE("read positions round-trip, including a fingerprint with the top bit set",
          "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));

  ReadPosition p = sample_position(4096);
  p.identity = FileIdentity{0x8000'0000'0000'0803ULL, 0xffff'ffff'ffff'ffffULL,
                            0x8000'0000'0000'0000ULL | 0x0123'4567'89ab'cdefULL, 1024};
  p.offset = 0xffff'ffff'ffff'ff00ULL;
  p.line = 1ULL << 63;
  p.path = "/var/log/npu/slog/设备-0.log";
  store.save_positions({p});

  auto got = store.find_position(p.source, p.identity.dev, p.identity.ino);
  REQUIRE(got);
  check_same(*got, p);

  // Saving again moves the same row on.
  ReadPosition later = p;
  later.offset = 8192;
  later.line = 80;
  later.path = "/var/log/npu/slog/device-0.log.1";  // renamed by rotation: same identity
  later.identity.fingerprint = 42;
  store.save_positions({later});
  got = store.find_position(p.source, p.identity.dev, p.identity.ino);
  REQUIRE(got);
  check_same(*got, later);

  // Another source reading the same file has its own position; other files have none.
  CHECK_FALSE(store.find_position("other-source", p.identity.dev, p.identity.ino));
  CHECK_FALSE(store.find_position(p.source, p.identity.dev, p.identity.ino - 1));
  store.save_positions({sample_position(7, "other-source")});
  CHECK(store.find_position("other-source", 2049, 131'075)->offset == 7);
  CHECK(store.find_position(p.source, p.identity.dev, p.identity.ino)->offset == 8192);
}

TEST_CASE("a Txn destroyed without commit leaves nothing behind", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  store.save_positions({sample_position(10)});

  {
    Store::Txn txn(store);
    Finding f = sample_finding(100);
    CHECK(txn.insert_finding(f));
    txn.apply_transition(
        transition("npu-3", DeviceState::Healthy, DeviceState::Warning, f.id, 1000));
    txn.save_position(sample_position(200));
  }

  CHECK(store.query_faults({}).empty());
  CHECK(store.load_devices().empty());
  CHECK(store.query_transitions("", 10).empty());
  CHECK(store.find_position("device-plugin", 2049, 131'075)->offset == 10);

  // The store is usable afterwards, and the same finding is new to it.
  Finding again = sample_finding(100);
  Store::Txn txn(store);
  CHECK(txn.insert_finding(again));
  txn.commit();
  CHECK(store.query_faults({}).size() == 1);
}

TEST_CASE("a finding, its transition and its position commit together", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  Finding f = sample_finding(100);
  {
    Store::Txn txn(store);
    REQUIRE(txn.insert_finding(f));
    txn.apply_transition(
        transition("npu-3", DeviceState::Healthy, DeviceState::Warning, f.id, 1000));
    txn.save_position(sample_position(150));
    txn.commit();
  }
  CHECK(store.query_faults({}).size() == 1);
  REQUIRE(store.load_devices().size() == 1);
  CHECK(store.load_devices()[0].fault_id == f.id);
  CHECK(store.query_transitions("npu-3", 5).at(0).fault_id == f.id);
  CHECK(store.find_position("device-plugin", 2049, 131'075)->offset == 150);
}

TEST_CASE("a replayed finding is refused and answers with the original id", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));

  Finding first = sample_finding(100);
  const int64_t id = commit_finding(store, first);

  SECTION("in a later transaction") {
    Finding replay = sample_finding(100);
    replay.text = "the same line, read again";
    Store::Txn txn(store);
    CHECK_FALSE(txn.insert_finding(replay));
    CHECK(replay.id == id);
    txn.commit();
    REQUIRE(store.query_faults({}).size() == 1);
    CHECK(store.find_fault(id)->text == first.text);
  }
  SECTION("twice in one transaction") {
    Store::Txn txn(store);
    Finding a = sample_finding(300);
    Finding b = sample_finding(300);
    CHECK(txn.insert_finding(a));
    CHECK_FALSE(txn.insert_finding(b));
    CHECK(b.id == a.id);
    txn.commit();
    CHECK(store.query_faults({}).size() == 2);
  }
  SECTION("any part of the key differing makes a new finding") {
    std::vector<Finding> variants(5, sample_finding(100));
    variants[0].rule = "other-rule";
    variants[1].source = "other-source";
    variants[2].identity.dev += 1;
    variants[3].identity.ino += 1;
    variants[4].offset += 1;
    Store::Txn txn(store);
    for (auto& v : variants) {
      CHECK(txn.insert_finding(v));
      CHECK(v.id != id);
    }
    txn.commit();
    CHECK(store.query_faults({}).size() == 6);
  }
  SECTION("findings not read from a file are never taken for replays") {
    Finding a = sample_finding(0);
    a.source = "npu-smi";
    a.identity = {};
    Finding b = a;
    Store::Txn txn(store);
    CHECK(txn.insert_finding(a));
    CHECK(txn.insert_finding(b));
    CHECK(a.id != b.id);
    txn.commit();
    CHECK(store.find_fault(a.id)->identity == FileIdentity{});
  }
}

TEST_CASE("the action journal is idempotent per (action, device, fault)", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));

  ActionRecord a = store.ensure_action("isolate", "npu-3", 17, at_ms(5000));
  CHECK(a.id > 0);
  CHECK(a.action == "isolate");
  CHECK(a.device == "npu-3");
  CHECK(a.fault_id == 17);
  CHECK(a.status == ActionStatus::Pending);
  CHECK(a.attempts == 0);
  CHECK(a.exit_code == -1);
  CHECK(a.output.empty());
  CHECK(a.detail.empty());
  CHECK(a.created == at_ms(5000));
  CHECK(a.started == TimePoint{});
  CHECK(a.finished == TimePoint{});

  ActionRecord again = store.ensure_action("isolate", "npu-3", 17, at_ms(9000));
  CHECK(again.id == a.id);
  CHECK(again.created == at_ms(5000));  // the first call's row, untouched

  CHECK(store.ensure_action("notify", "npu-3", 17, at_ms(1)).id != a.id);
  CHECK(store.ensure_action("isolate", "npu-4", 17, at_ms(1)).id != a.id);
  CHECK(store.ensure_action("isolate", "npu-3", 18, at_ms(1)).id != a.id);
  CHECK(store.query_actions("", 100).size() == 4);

  // update_action writes back every mutable field.
  a.status = ActionStatus::Timeout;
  a.attempts = 3;
  a.exit_code = 137;
  a.output = std::string("partial \xff output\n") + '\0' + "tail";
  a.detail = "timeout after 60s";
  a.started = at_ms(6000);
  a.finished = at_ms(66000);
  store.update_action(a);
  ActionRecord stored = store.ensure_action("isolate", "npu-3", 17, at_ms(1));
  CHECK(stored.id == a.id);
  CHECK(stored.status == ActionStatus::Timeout);
  CHECK(stored.attempts == 3);
  CHECK(stored.exit_code == 137);
  CHECK(stored.output == a.output);
  CHECK(stored.detail == "timeout after 60s");
  CHECK(stored.created == at_ms(5000));
  CHECK(stored.started == at_ms(6000));
  CHECK(stored.finished == at_ms(66000));

  ActionRecord missing = a;
  missing.id = 9999;
  CHECK_THROWS_AS(store.update_action(missing), StoreError);
}

TEST_CASE("unfinished and listed actions come in the documented order", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));

  const ActionStatus statuses[] = {
      ActionStatus::Pending, ActionStatus::Running, ActionStatus::Success, ActionStatus::Failure,
      ActionStatus::Timeout, ActionStatus::Skipped, ActionStatus::Running, ActionStatus::Pending};
  std::vector<int64_t> ids;
  int i = 0;
  for (ActionStatus st : statuses) {
    const std::string device = i % 2 == 0 ? "npu-0" : "npu-1";
    ActionRecord a = store.ensure_action("hook", device, i, at_ms(1000 + i));
    a.status = st;
    store.update_action(a);
    ids.push_back(a.id);
    ++i;
  }

  auto unfinished = store.unfinished_actions();
  REQUIRE(unfinished.size() == 4);
  CHECK(unfinished[0].id == ids[0]);
  CHECK(unfinished[1].id == ids[1]);
  CHECK(unfinished[2].id == ids[6]);
  CHECK(unfinished[3].id == ids[7]);
  CHECK(unfinished[1].status == ActionStatus::Running);

  auto all = store.query_actions("", 100);
  REQUIRE(all.size() == 8);
  CHECK(all.front().id == ids[7]);
  CHECK(all.back().id == ids[0]);
  for (size_t k = 0; k < all.size(); ++k) CHECK(all[k].status == statuses[7 - k]);

  auto npu1 = store.query_actions("npu-1", 2);
  REQUIRE(npu1.size() == 2);
  CHECK(npu1[0].id == ids[7]);
  CHECK(npu1[1].id == ids[5]);
}

TEST_CASE("fault queries filter by device and time, newest first, limited", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  {
    // Inserted out of time order, as findings from several sources arrive.
    Store::Txn txn(store);
    const struct {
      uint64_t offset;
      const char* device;
      int64_t time_ms;
    } rows[] = {{10, "npu-0", 3000}, {20, "npu-1", 1000}, {30, "npu-0", 5000},
                {40, "npu-1", 4000}, {50, "npu-0", 1000}, {60, "npu-0", 3000}};
    for (const auto& r : rows) {
      Finding f = sample_finding(r.offset, r.device, r.time_ms);
      REQUIRE(txn.insert_finding(f));
    }
    txn.commit();
  }

  // Equal times: the later-recorded one first.
  CHECK(offsets(store.query_faults({})) == std::vector<uint64_t>{30, 40, 60, 10, 50, 20});

  FaultQuery by_device;
  by_device.device = "npu-0";
  CHECK(offsets(store.query_faults(by_device)) == std::vector<uint64_t>{30, 60, 10, 50});

  FaultQuery since;
  since.since = at_ms(3000);  // inclusive
  CHECK(offsets(store.query_faults(since)) == std::vector<uint64_t>{30, 40, 60, 10});

  FaultQuery both;
  both.device = "npu-1";
  both.since = at_ms(1001);
  CHECK(offsets(store.query_faults(both)) == std::vector<uint64_t>{40});

  FaultQuery limited;
  limited.limit = 2;
  CHECK(offsets(store.query_faults(limited)) == std::vector<uint64_t>{30, 40});
  limited.device = "npu-0";
  limited.since = at_ms(2000);
  limited.limit = 1;
  CHECK(offsets(store.query_faults(limited)) == std::vector<uint64_t>{30});

  FaultQuery nobody;
  nobody.device = "npu-7";
  CHECK(store.query_faults(nobody).empty());
}

TEST_CASE("fault queries filter by job", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  {
    Store::Txn txn(store);
    const struct {
      uint64_t offset;
      const char* job;
    } rows[] = {{10, "job-a"}, {20, ""}, {30, "job-b"}, {40, "job-a"}};
    for (const auto& r : rows) {
      Finding f = sample_finding(r.offset, "npu-0", 1000 + static_cast<int64_t>(r.offset));
      f.job = r.job;
      REQUIRE(txn.insert_finding(f));
    }
    txn.commit();
  }
  FaultQuery a;
  a.job = "job-a";
  CHECK(offsets(store.query_faults(a)) == std::vector<uint64_t>{40, 10});
  a.device = "npu-1";
  CHECK(store.query_faults(a).empty());
  FaultQuery none;
  none.job = "job-c";
  CHECK(store.query_faults(none).empty());
  CHECK(offsets(store.query_faults({})) == std::vector<uint64_t>{40, 30, 20, 10});
}

TEST_CASE("state survives closing and reopening the store", "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  Finding f = sample_finding(100);
  int64_t action_id = 0;
  {
    Store store(path);
    Store::Txn txn(store);
    txn.insert_finding(f);
    txn.apply_transition(
        transition("npu-3", DeviceState::Healthy, DeviceState::Warning, f.id, 1000));
    txn.save_position(sample_position(150));
    txn.commit();
    action_id = store.ensure_action("isolate", "npu-3", f.id, at_ms(2000)).id;
  }

  Store store(path);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  auto got = store.find_fault(f.id);
  REQUIRE(got);
  check_same(*got, f);
  REQUIRE(store.load_devices().size() == 1);
  CHECK(store.load_devices()[0].state == DeviceState::Warning);
  CHECK(store.query_transitions("", 10).size() == 1);
  CHECK(store.find_position("device-plugin", 2049, 131'075)->offset == 150);
  auto unfinished = store.unfinished_actions();
  REQUIRE(unfinished.size() == 1);
  CHECK(unfinished[0].id == action_id);

  // The journal keys still hold across the reopen.
  Finding replay = sample_finding(100);
  Store::Txn txn(store);
  CHECK_FALSE(txn.insert_finding(replay));
  CHECK(replay.id == f.id);
}

TEST_CASE("the database is in WAL mode, as another connection sees it", "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  Store store(path);
  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA journal_mode") == "wal");
  CHECK(raw.scalar("PRAGMA user_version") == std::to_string(Store::kSchemaVersion));
}

TEST_CASE("a failing statement leaves the Txn good only for rollback", "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  Store store(path);
  RawDb raw(path);
  raw.exec(
      "CREATE TRIGGER refuse_boom BEFORE INSERT ON faults WHEN NEW.source = 'boom' "
      "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END");

  {
    Store::Txn txn(store);
    Finding good = sample_finding(100);
    CHECK(txn.insert_finding(good));
    Finding bad = sample_finding(200);
    bad.source = "boom";
    try {
      txn.insert_finding(bad);
      FAIL("the trigger should have refused the row");
    } catch (const StoreError& e) {
      const std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains(path));
      CHECK_THAT(msg, Catch::Contains("insert finding"));
      CHECK_THAT(msg, Catch::Contains("refused by the test trigger"));
    }
    Finding later = sample_finding(300);
    CHECK_THROWS_WITH(txn.insert_finding(later), Catch::Contains("can only roll back"));
    CHECK_THROWS_AS(txn.save_position(sample_position(1)), StoreError);
    CHECK_THROWS_WITH(txn.commit(), Catch::Contains("rolled back"));
  }
  CHECK(store.query_faults({}).empty());

  // The store itself carries on.
  Finding next = sample_finding(400);
  commit_finding(store, next);
  CHECK(store.query_faults({}).size() == 1);
}

TEST_CASE("save_positions writes all positions in one transaction", "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  Store store(path);

  std::vector<ReadPosition> positions;
  for (uint64_t i = 0; i < 1000; ++i) {
    ReadPosition p = sample_position(i * 100);
    p.identity.ino = 1000 + i;
    positions.push_back(p);
  }

  SECTION("a failure on the last one keeps none of them") {
    RawDb raw(path);
    raw.exec(
        "CREATE TRIGGER refuse_boom BEFORE INSERT ON positions WHEN NEW.source = 'boom' "
        "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END");
    positions.back().source = "boom";
    CHECK_THROWS_AS(store.save_positions(positions), StoreError);
    CHECK(raw.scalar("SELECT count(*) FROM positions") == "0");
  }
  SECTION("all of them land") {
    store.save_positions(positions);
    RawDb raw(path);
    CHECK(raw.scalar("SELECT count(*) FROM positions") == "1000");
    CHECK(store.find_position("device-plugin", 2049, 1999)->offset == 99'900);
  }
}

TEST_CASE("only one transaction is open at a time", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  Store::Txn txn(store);
  CHECK_THROWS_AS(Store::Txn(store), StoreError);
  CHECK_THROWS_AS(store.save_positions({sample_position(1)}), StoreError);
  txn.save_position(sample_position(5));
  txn.commit();
  CHECK_THROWS_AS(txn.commit(), StoreError);
  CHECK(store.find_position("device-plugin", 2049, 131'075)->offset == 5);
  Store::Txn next(store);  // the finished one no longer counts
  next.commit();
}

TEST_CASE("action statuses have stable text names", "[state][store]") {
  for (auto s : {ActionStatus::Pending, ActionStatus::Running, ActionStatus::Success,
                 ActionStatus::Failure, ActionStatus::Timeout, ActionStatus::Skipped}) {
    CHECK(parse_action_status(to_string(s)) == s);
  }
  CHECK(to_string(ActionStatus::Timeout) == "timeout");
  CHECK_FALSE(parse_action_status("Pending"));
  CHECK_FALSE(parse_action_status(""));
}

TEST_CASE("an unknown enum name in the file is reported, not guessed", "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  Store store(path);
  {
    Store::Txn txn(store);
    txn.apply_transition(transition("npu-3", DeviceState::Healthy, DeviceState::Warning, 1, 1));
    txn.commit();
  }
  RawDb raw(path);
  raw.exec("UPDATE devices SET state = 'broken'");
  CHECK_THROWS_WITH(store.load_devices(), Catch::Contains("unknown device state 'broken'"));
}

TEST_CASE("a source's first scan is remembered across reopening", "[state]") {
  faultd::testing::TempDir dir;
  const std::string path = dir.file("state.db");
  {
    Store store(path);
    CHECK_FALSE(store.source_seen("plog"));
    store.mark_source_seen("plog", TimePoint{std::chrono::seconds(5)});
    store.mark_source_seen("plog", TimePoint{std::chrono::seconds(6)});  // idempotent
    CHECK(store.source_seen("plog"));
    CHECK_FALSE(store.source_seen("device-log"));
  }
  Store again(path);
  CHECK(again.source_seen("plog"));
}

TEST_CASE("the database, its -wal and -shm are for the owner only, whatever the umask",
          "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  auto mode_of = [](const std::string& file) {
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    return st.st_mode & 0777;
  };
  const mode_t before = ::umask(022);
  {
    Store store(path);
    Finding f;
    f.rule = "r";
    f.source = "plog";
    f.text = "db_password=s3cr3t";
    commit_finding(store, f);
    CHECK(mode_of(path) == 0600);
    CHECK(mode_of(path + "-wal") == 0600);
    CHECK(mode_of(path + "-shm") == 0600);
  }
  // A database an older version left readable by everyone is tightened at the next open.
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  { Store store(path); }
  CHECK(mode_of(path) == 0600);
  ::umask(before);
}

TEST_CASE("a device's incident start is read back from the finding that took it out of healthy",
          "[state][store]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  {
    Store store(path);
    Finding first = sample_finding(100, "npu-1", 1'000);
    Finding worse = sample_finding(200, "npu-1", 5'000);
    Finding other = sample_finding(300, "npu-2", 2'000);
    Store::Txn txn(store);
    txn.insert_finding(first);
    txn.insert_finding(worse);
    txn.insert_finding(other);
    txn.apply_transition(
        transition("npu-1", DeviceState::Healthy, DeviceState::Warning, first.id, 1'000));
    // A more severe incident, then isolation: the incident still started with the first.
    txn.apply_transition(
        transition("npu-1", DeviceState::Warning, DeviceState::Warning, worse.id, 5'000));
    txn.apply_transition(
        transition("npu-1", DeviceState::Warning, DeviceState::Isolated, worse.id, 6'000));
    txn.apply_transition(
        transition("npu-2", DeviceState::Healthy, DeviceState::Warning, other.id, 2'500));
    txn.apply_transition(
        transition("npu-2", DeviceState::Warning, DeviceState::Healthy, other.id, 3'000));
    txn.commit();
  }
  Store store(path);
  const auto devices = store.load_devices();
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].device == "npu-1");
  CHECK(devices[0].since == at_ms(6'000));
  CHECK(devices[0].incident_start == at_ms(1'000));
  CHECK(devices[1].state == DeviceState::Healthy);
  CHECK(devices[1].incident_start == TimePoint{});
}

// Security audit N2: a database written before the lifecycle's caps (or by a flood) may hold
// any number of open incidents; a start loads a bounded number and closes the rest.
TEST_CASE("loading incidents is bounded; open ones past the bound are closed in the store",
          "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  {
    Store::Txn txn(store);
    for (int64_t id = 1; id <= 60; ++id) {
      Incident i;
      i.id = id;
      i.device = "3";
      i.rule = "ascend.test";
      i.code = "C" + std::to_string(id);
      i.first = i.last = at_ms(1000 * id);
      i.open = id <= 50;  // 50 open, 10 recently closed
      txn.save_incident(i);
    }
    txn.commit();
  }
  const auto loaded = store.load_incidents(at_ms(0), 20, 4);
  REQUIRE(loaded.size() == 24);
  CHECK(loaded.front().id == 1);  // the oldest open ones, then the newest closed ones
  CHECK(loaded[19].id == 20);
  CHECK(loaded[20].id == 57);
  CHECK(std::is_sorted(loaded.begin(), loaded.end(),
                       [](const Incident& a, const Incident& b) { return a.id < b.id; }));
  const auto open = store.query_incidents("", true, 100);
  CHECK(open.size() == 20);
  const auto kept = store.query_incidents("3", false, 1, 21);  // the page before id 21
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].id == 20);
  CHECK(kept[0].open);
  const auto beyond = store.query_incidents("3", false, 1, 22);
  REQUIRE(beyond.size() == 1);
  CHECK_FALSE(beyond[0].open);
  CHECK_THAT(beyond[0].note, Catch::Contains("more open incidents than faultd keeps"));
  // Below the bound nothing is closed.
  CHECK(store.load_incidents(at_ms(0), 100, 100).size() == 60);
  CHECK(store.query_incidents("", true, 100).size() == 20);
}

TEST_CASE("transitions and incidents are read a page at a time by id", "[state][store]") {
  TempDir dir;
  Store store(dir.file("state.db"));
  {
    Store::Txn txn(store);
    for (int i = 0; i < 5; ++i) {
      txn.apply_transition(transition(
          "npu-1", i % 2 == 0 ? DeviceState::Healthy : DeviceState::Warning,
          i % 2 == 0 ? DeviceState::Warning : DeviceState::Healthy, 10 + i, int64_t{1000} * i));
    }
    txn.commit();
  }
  const auto first = store.query_transitions("npu-1", 2);
  REQUIRE(first.size() == 2);
  CHECK(first[0].id > first[1].id);
  const auto next = store.query_transitions("npu-1", 2, first[1].id);
  REQUIRE(next.size() == 2);
  CHECK(next[0].id == first[1].id - 1);
  CHECK(next[0].fault_id == 12);
  CHECK(store.query_transitions("npu-1", 10, next[1].id).size() == 1);
}
