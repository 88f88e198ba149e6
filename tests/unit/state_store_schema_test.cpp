// Opening state.db in every condition an operator may leave it in: absent, empty, current,
// written by a newer faultd, not a database, damaged, read-only.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/state/store.hpp"
#include "tests/support/state_store_fixtures.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::at_ms;
using faultd::testing::RawDb;
using faultd::testing::sample_finding;
using faultd::testing::TempDir;

namespace {

bool has_table(RawDb& raw, const std::string& name) {
  return raw.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" + name +
                    "'") == "1";
}

// Opens the store, expecting a StoreError, and returns its message.
std::string open_error(const std::string& path) {
  try {
    Store store(path);
    store.query_faults({});
  } catch (const StoreError& e) {
    return e.what();
  }
  FAIL("opening " << path << " should have failed");
  return {};
}

void check_recovery_advice(const std::string& msg, const std::string& path) {
  CHECK_THAT(msg, Catch::Contains(path));
  CHECK_THAT(msg, Catch::Contains("move " + path));
  CHECK_THAT(msg, Catch::Contains("aside"));
  CHECK_THAT(msg, Catch::Contains("start_at"));
}

void write_bytes(const std::string& path, const std::string& bytes, std::streamoff at = 0) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  if (!f) f.open(path, std::ios::out | std::ios::binary);
  f.seekp(at);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string garbage(size_t n) {
  std::string out(n, '\0');
  uint32_t x = 2463534242u;  // xorshift: noisy bytes, no header magic
  for (auto& c : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x & 0xff);
  }
  return out;
}

// Turns a current file into the schema 5 layout: no inventory, no serial or job on faults.
void downgrade_to_v5(RawDb& raw) {
  raw.exec(R"sql(
    DROP TABLE inventory;
    DROP INDEX faults_by_serial;
    ALTER TABLE faults DROP COLUMN serial;
    DROP INDEX faults_by_job;
    ALTER TABLE faults DROP COLUMN job;
    PRAGMA user_version = 5;
  )sql");
}

// Turns a current file into the schema 3 layout: `faults` without the generation in its
// unique key, positions without generation and tail.
void downgrade_to_v4(RawDb& raw) {
  downgrade_to_v5(raw);
  raw.exec(R"sql(
    ALTER TABLE actions DROP COLUMN pid;
    ALTER TABLE actions DROP COLUMN pid_start;
    PRAGMA user_version = 4;
  )sql");
}

void downgrade_to_v3(RawDb& raw) {
  downgrade_to_v4(raw);
  raw.exec(R"sql(
    CREATE TABLE faults_v3 (
      id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, noticed_ms INTEGER NOT NULL,
      rule TEXT NOT NULL, source TEXT NOT NULL, device TEXT NOT NULL, level TEXT NOT NULL,
      code TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL,
      file_offset INTEGER NOT NULL, file_dev INTEGER, file_ino INTEGER,
      fingerprint INTEGER NOT NULL, fingerprint_len INTEGER NOT NULL, text TEXT NOT NULL,
      recovery INTEGER NOT NULL DEFAULT 0, annotations TEXT NOT NULL DEFAULT '{}',
      device_from TEXT NOT NULL DEFAULT '',
      UNIQUE (source, file_dev, file_ino, file_offset, rule));
    DROP TABLE faults;
    ALTER TABLE faults_v3 RENAME TO faults;
    CREATE INDEX faults_by_device_time ON faults (device, time_ms);
    CREATE INDEX faults_by_time ON faults (time_ms);
    ALTER TABLE positions DROP COLUMN generation;
    ALTER TABLE positions DROP COLUMN tail_end;
    ALTER TABLE positions DROP COLUMN tail_hash;
    ALTER TABLE positions DROP COLUMN tail_len;
    PRAGMA user_version = 3;
  )sql");
}

}  // namespace

TEST_CASE("a new database is created at the current schema", "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  {
    Store store(path);
    CHECK(store.schema_version() == Store::kSchemaVersion);
  }
  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA user_version") == std::to_string(Store::kSchemaVersion));
  for (const char* table : {"devices", "transitions", "faults", "actions", "positions"}) {
    CHECK(has_table(raw, table));
  }
}

TEST_CASE("an empty (version 0) file is migrated in place", "[state][schema]") {
  TempDir dir;
  const std::string path = dir.write("state.db", "");
  {
    RawDb raw(path);
    REQUIRE(raw.scalar("PRAGMA user_version") == "0");
  }
  {
    Store store(path);
    CHECK(store.schema_version() == Store::kSchemaVersion);
    Finding f = sample_finding(10);
    Store::Txn txn(store);
    CHECK(txn.insert_finding(f));
    txn.commit();
  }
  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA user_version") == std::to_string(Store::kSchemaVersion));
  CHECK(raw.scalar("SELECT count(*) FROM faults") == "1");
  // Reopening a current database runs no step again (its CREATE TABLEs would fail).
  Store again(path);
  CHECK(again.query_faults({}).size() == 1);
}

TEST_CASE("a schema 2 file gains how each device was found; old rows say nothing",
          "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  { Store store(path); }
  {
    RawDb raw(path);
    downgrade_to_v3(raw);
    raw.exec("ALTER TABLE faults DROP COLUMN device_from");
    raw.exec("PRAGMA user_version = 2");
    raw.exec(
        "INSERT INTO faults (time_ms, noticed_ms, rule, source, device, level, code, file, line, "
        "file_offset, file_dev, file_ino, fingerprint, fingerprint_len, text) VALUES (1, 1, "
        "'old.rule', 'plog', '3', 'SeparateNPU', '80818C00', '/f', 1, 0, 7, 8, 0, 0, 'x')");
  }
  Store store(path);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  const auto old = store.query_faults({});
  REQUIRE(old.size() == 1);
  CHECK(old[0].device == "3");
  CHECK(old[0].device_from.empty());
  Finding f = sample_finding(21);
  f.device_from = "context";
  {
    Store::Txn txn(store);
    REQUIRE(txn.insert_finding(f));
    txn.commit();
  }
  CHECK(store.find_fault(f.id)->device_from == "context");
}

TEST_CASE(
    "a schema 3 file gains file generations: old rows are generation 0, a new generation at the "
    "same offset is a new row",
    "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  { Store store(path); }
  {
    RawDb raw(path);
    downgrade_to_v3(raw);
    raw.exec(
        "INSERT INTO faults (time_ms, noticed_ms, rule, source, device, level, code, file, line, "
        "file_offset, file_dev, file_ino, fingerprint, fingerprint_len, text) VALUES (1, 1, "
        "'old.rule', 'plog', '3', 'SeparateNPU', '80818C00', '/f', 1, 40, 7, 8, 0, 0, 'x')");
    raw.exec(
        "INSERT INTO positions (source, file_dev, file_ino, fingerprint, fingerprint_len, "
        "file_offset, line, path, updated_ms) VALUES ('plog', 7, 8, 99, 10, 80, 2, '/f', 1)");
  }
  Store store(path);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  const auto pos = store.find_position("plog", 7, 8);
  REQUIRE(pos);
  CHECK(pos->offset == 80);
  CHECK(pos->identity.generation == 0);
  CHECK(pos->identity.tail_len == 0);  // nothing to check: resumes as before

  Finding again = sample_finding(1);
  again.rule = "old.rule";
  again.source = "plog";
  again.offset = 40;
  again.identity = {7, 8, 0, 0};
  Finding rewritten = again;
  rewritten.identity.generation = 1;
  Store::Txn txn(store);
  CHECK_FALSE(txn.insert_finding(again));  // the old row, re-read
  CHECK(txn.insert_finding(rewritten));    // the same offset of new content
  txn.commit();
  CHECK(store.query_faults({}).size() == 2);
}

TEST_CASE(
    "a schema 1 file gains incidents, device marks, recovery and annotations; old rows keep their "
    "meaning",
    "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  { Store store(path); }
  {
    // A schema-1 file: the faults table as version 1 created it, with one journaled row.
    RawDb raw(path);
    downgrade_to_v3(raw);
    raw.exec("ALTER TABLE faults DROP COLUMN device_from");
    raw.exec("ALTER TABLE faults DROP COLUMN recovery");
    raw.exec("ALTER TABLE faults DROP COLUMN annotations");
    raw.exec("DROP TABLE incidents");
    raw.exec("ALTER TABLE devices DROP COLUMN verdict");
    raw.exec("ALTER TABLE devices DROP COLUMN acked");
    raw.exec("ALTER TABLE devices DROP COLUMN ack_reason");
    raw.exec("PRAGMA user_version = 1");
    raw.exec(
        "INSERT INTO devices (device, state, reason, fault_id, level, rule, code, since_ms) "
        "VALUES ('3', 'isolated', 'old', 1, 'SeparateNPU', 'old.rule', '80818C00', 1)");
    raw.exec(
        "INSERT INTO faults (time_ms, noticed_ms, rule, source, device, level, code, file, line, "
        "file_offset, file_dev, file_ino, fingerprint, fingerprint_len, text) VALUES (1, 1, "
        "'old.rule', 'plog', '3', 'SeparateNPU', '80818C00', '/f', 1, 0, 7, 8, 0, 0, 'x')");
  }
  Store store(path);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  // Devices keep their state and gain no verdict; the incident table starts empty.
  const auto devices = store.load_devices();
  REQUIRE(devices.size() == 1);
  CHECK(devices[0].state == DeviceState::Isolated);
  CHECK(devices[0].verdict.empty());
  CHECK_FALSE(devices[0].acked);
  CHECK(store.query_incidents("", false, 10).empty());
  auto old = store.query_faults({});
  REQUIRE(old.size() == 1);
  CHECK(old[0].rule == "old.rule");
  CHECK_FALSE(old[0].recovery);
  CHECK(old[0].annotations.empty());

  Finding f = sample_finding(20);
  f.recovery = true;
  // Kept in the rule's order, not sorted; text that is not UTF-8 does not fail the insert.
  f.annotations = {{"faultdiag_id", "0x80818C00"}, {"cause", "AI CPU check"}, {"b", "\xff"}};
  {
    Store::Txn txn(store);
    REQUIRE(txn.insert_finding(f));
    txn.commit();
  }
  const auto back = store.find_fault(f.id);
  REQUIRE(back);
  CHECK(back->recovery);
  REQUIRE(back->annotations.size() == 3);
  CHECK(back->annotations[0] == std::pair<std::string, std::string>{"faultdiag_id", "0x80818C00"});
  CHECK(back->annotations[1] == std::pair<std::string, std::string>{"cause", "AI CPU check"});
  CHECK(back->annotations[2].first == "b");
}

TEST_CASE("a migration step that fails leaves the file as it was", "[state][schema]") {
  TempDir dir;
  const std::string path = dir.write("state.db", "");
  {
    // A version-0 file that already holds a table the step creates last: the step's earlier
    // CREATE TABLEs succeed, then it fails.
    RawDb raw(path);
    raw.exec("CREATE TABLE positions (x)");
  }
  const std::string msg = open_error(path);
  CHECK_THAT(msg, Catch::Contains("migrate to schema 1"));
  CHECK_THAT(msg, Catch::Contains("positions"));
  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA user_version") == "0");
  CHECK_FALSE(has_table(raw, "devices"));
  CHECK_FALSE(has_table(raw, "faults"));
}

TEST_CASE("a database from a newer faultd is refused and left alone", "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  { Store store(path); }
  {
    RawDb raw(path);
    raw.exec("PRAGMA user_version = 99");
  }
  const std::string msg = open_error(path);
  CHECK_THAT(msg, Catch::Contains(path +
                                  " was written by a newer faultd (schema 99, this build "
                                  "knows " +
                                  std::to_string(Store::kSchemaVersion) + ")"));
  RawDb raw(path);
  CHECK(raw.scalar("PRAGMA user_version") == "99");
}

TEST_CASE("a file that is not a database is refused with recovery advice", "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  const size_t size = GENERATE(as<size_t>{}, 100, 4096, 65536);
  write_bytes(path, garbage(size));
  const std::string msg = open_error(path);
  CHECK_THAT(msg, Catch::Contains("not a database"));
  check_recovery_advice(msg, path);
}

TEST_CASE("damage inside a database is reported with recovery advice", "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  {
    Store store(path);
    Store::Txn txn(store);
    for (uint64_t i = 0; i < 200; ++i) {
      Finding f = sample_finding(i * 100);
      f.text = std::string(300, 'x');
      txn.insert_finding(f);
    }
    txn.commit();
  }  // the last close checkpoints the WAL into the main file
  REQUIRE_FALSE(std::filesystem::exists(path + "-wal"));
  const auto size = static_cast<std::streamoff>(std::filesystem::file_size(path));
  REQUIRE(size > 8 * 4096);
  // Keep the header page, wreck everything after it.
  write_bytes(path, garbage(static_cast<size_t>(size) - 4096), 4096);
  const std::string msg = open_error(path);
  CHECK_THAT(msg, Catch::Contains("malformed") || Catch::Contains("not a database"));
  check_recovery_advice(msg, path);
}

namespace {

// Runs `body` in a child process that cannot write where root could: root ignores file modes,
// so as root the child drops to nobody first. Returns the StoreError text, or "" when skipped.
template <typename Body>
std::string child_open_error(Body&& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(77);
    int code = 1;
    try {
      body();
    } catch (const StoreError& e) {
      const std::string msg = e.what();
      (void)!write(fds[1], msg.data(), msg.size());
      code = 0;
    } catch (...) {
      code = 2;
    }
    _exit(code);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    WARN("cannot drop root privileges here; read-only case not tested");
    return {};
  }
  INFO("child exit code (1: opened without error, 2: other exception)");
  REQUIRE(WEXITSTATUS(status) == 0);
  return msg;
}

void set_mode(const std::filesystem::path& p, std::filesystem::perms mode) {
  std::filesystem::permissions(p, mode, std::filesystem::perm_options::replace);
}

}  // namespace

TEST_CASE("a read-only state directory or file gives a clear error", "[state][schema]") {
  using std::filesystem::perms;
  TempDir dir;
  set_mode(dir.path(), perms::owner_all | perms::group_exec | perms::others_exec);
  const auto state_dir = dir.path() / "state";
  std::filesystem::create_directory(state_dir);
  const std::string path = (state_dir / "state.db").string();

  SECTION("directory not writable, no database yet") {
    set_mode(state_dir, perms::owner_read | perms::owner_exec | perms::group_read |
                            perms::group_exec | perms::others_read | perms::others_exec);
    const std::string msg = child_open_error([&] { Store store(path); });
    if (msg.empty()) return;
    CHECK_THAT(msg, Catch::Contains(path));
    CHECK_THAT(msg, Catch::Contains("cannot open"));
    CHECK_FALSE(std::filesystem::exists(path));
  }
  SECTION("database file not writable") {
    { Store store(path); }
    set_mode(state_dir, perms::all);
    set_mode(path, perms::owner_read | perms::group_read | perms::others_read);
    const std::string msg = child_open_error([&] { Store store(path); });
    if (msg.empty()) return;
    CHECK_THAT(msg, Catch::Contains(path));
    CHECK_THAT(msg, Catch::Contains("read-only"));
  }
  SECTION("database file writable, directory not (no room for -wal and -shm)") {
    { Store store(path); }
    set_mode(path, perms::all);
    set_mode(state_dir, perms::owner_read | perms::owner_exec | perms::group_read |
                            perms::group_exec | perms::others_read | perms::others_exec);
    const std::string msg = child_open_error([&] { Store store(path); });
    if (msg.empty()) return;
    CHECK_THAT(msg, Catch::Contains(path));
    CHECK_THAT(msg, Catch::Contains("readonly") || Catch::Contains("read-only"));
    CHECK_THAT(msg, Catch::Contains("its directory"));
  }
}

TEST_CASE("a schema 4 file gains the process of a running action, none known for old rows",
          "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  {
    Store store(path);
    auto a = store.ensure_action("isolate", "3", 7, at_ms(1000));
    a.status = ActionStatus::Running;
    store.update_action(a);
    RawDb raw(path);
    downgrade_to_v4(raw);
  }
  Store store(path);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  auto running = store.unfinished_actions();
  REQUIRE(running.size() == 1);
  CHECK(running[0].process.pid == 0);
  CHECK_FALSE(is_running(running[0].process));
  running[0].process = {4242, 987654321};
  store.update_action(running[0]);
  const auto again = store.unfinished_actions();
  CHECK(again.at(0).process.pid == 4242);
  CHECK(again.at(0).process.start_ticks == 987654321);
}

TEST_CASE("a schema 5 file gains an empty inventory and findings without a serial",
          "[state][schema]") {
  TempDir dir;
  const std::string path = dir.file("state.db");
  {
    Store store(path);
    Store::Txn txn(store);
    Finding f;
    f.rule = "r";
    f.source = "s";
    f.device = "3";
    f.time = at_ms(1000);
    txn.insert_finding(f);
    txn.commit();
    RawDb raw(path);
    downgrade_to_v5(raw);
  }
  Store store(path);
  CHECK(store.schema_version() == Store::kSchemaVersion);
  CHECK(store.load_inventory().empty());
  FaultQuery all;
  const auto old_rows = store.query_faults(all);
  REQUIRE(old_rows.size() == 1);
  CHECK(old_rows[0].serial.empty());

  InventoryDevice d;
  d.id = "5";
  d.vendor = "nvidia";
  d.bus_id = "00000000:3B:00.0";
  d.uuid = "GPU-fd189414-e0f6-58a0-7031-fefe0ce43b1d";
  d.serial = "1321923001828";
  d.seen_by = {"dev", "nvidia-smi"};
  d.missing_from = {"nvidia-smi"};
  d.first_seen = at_ms(1000);
  d.last_seen = at_ms(2000);
  {
    Store::Txn txn(store);
    txn.save_inventory_device(d);
    Finding f;
    f.rule = "r";
    f.source = "s";
    f.device = "5";
    f.serial = d.serial;
    f.time = at_ms(3000);
    txn.insert_finding(f);
    txn.commit();
  }
  const auto loaded = store.load_inventory();
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0] == d);
  FaultQuery by_serial;
  by_serial.serial = d.serial;
  const auto card = store.query_faults(by_serial);
  REQUIRE(card.size() == 1);
  CHECK(card[0].device == "5");
  {
    Store::Txn txn(store);
    txn.remove_inventory_device("5");
    txn.commit();
  }
  CHECK(store.load_inventory().empty());
}
