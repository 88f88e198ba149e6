#include "daemon/state/store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "daemon/state/sqlite_statement.hpp"

namespace faultd {

using sqlite::Statement;
using sqlite::StatementScope;

namespace {

// ---------------------------------------------------------------------------------------------
// Migrations. kMigrations[v] upgrades a database at user_version v to v + 1. To add version 2:
// write migrate_to_v2, append it here and bump Store::kSchemaVersion.

void migrate_to_v1(sqlite3* db, const std::string& path) {
  sqlite::exec(db, R"sql(
    CREATE TABLE devices (
      device   TEXT PRIMARY KEY NOT NULL,
      state    TEXT NOT NULL,
      reason   TEXT NOT NULL,
      fault_id INTEGER NOT NULL,
      level    TEXT NOT NULL,
      rule     TEXT NOT NULL,
      code     TEXT NOT NULL,
      since_ms INTEGER NOT NULL
    );
    CREATE TABLE transitions (
      id         INTEGER PRIMARY KEY,
      device     TEXT NOT NULL,
      from_state TEXT NOT NULL,
      to_state   TEXT NOT NULL,
      reason     TEXT NOT NULL,
      fault_id   INTEGER NOT NULL,
      level      TEXT NOT NULL,
      rule       TEXT NOT NULL,
      code       TEXT NOT NULL,
      time_ms    INTEGER NOT NULL
    );
    CREATE INDEX transitions_by_device ON transitions (device, id);
    -- file_dev/file_ino are NULL for findings not read from a file: NULLs never collide in a
    -- UNIQUE constraint, so such findings are never taken for replays.
    CREATE TABLE faults (
      id              INTEGER PRIMARY KEY,
      time_ms         INTEGER NOT NULL,
      noticed_ms      INTEGER NOT NULL,
      rule            TEXT NOT NULL,
      source          TEXT NOT NULL,
      device          TEXT NOT NULL,
      level           TEXT NOT NULL,
      code            TEXT NOT NULL,
      file            TEXT NOT NULL,
      line            INTEGER NOT NULL,
      file_offset     INTEGER NOT NULL,
      file_dev        INTEGER,
      file_ino        INTEGER,
      fingerprint     INTEGER NOT NULL,
      fingerprint_len INTEGER NOT NULL,
      text            TEXT NOT NULL,
      UNIQUE (source, file_dev, file_ino, file_offset, rule)
    );
    CREATE INDEX faults_by_device_time ON faults (device, time_ms);
    CREATE INDEX faults_by_time ON faults (time_ms);
    CREATE TABLE actions (
      id          INTEGER PRIMARY KEY,
      action      TEXT NOT NULL,
      device      TEXT NOT NULL,
      fault_id    INTEGER NOT NULL,
      status      TEXT NOT NULL,
      attempts    INTEGER NOT NULL,
      exit_code   INTEGER NOT NULL,
      output      TEXT NOT NULL,
      detail      TEXT NOT NULL,
      created_ms  INTEGER NOT NULL,
      started_ms  INTEGER NOT NULL,
      finished_ms INTEGER NOT NULL,
      UNIQUE (action, device, fault_id)
    );
    CREATE INDEX actions_by_status ON actions (status, id);
    CREATE INDEX actions_by_device ON actions (device, id);
    CREATE TABLE positions (
      source          TEXT NOT NULL,
      file_dev        INTEGER NOT NULL,
      file_ino        INTEGER NOT NULL,
      fingerprint     INTEGER NOT NULL,
      fingerprint_len INTEGER NOT NULL,
      file_offset     INTEGER NOT NULL,
      line            INTEGER NOT NULL,
      path            TEXT NOT NULL,
      updated_ms      INTEGER NOT NULL,
      PRIMARY KEY (source, file_dev, file_ino)
    );
    -- Sources that completed their first scan: for them `start_at: end` no longer applies, so a
    -- file created while faultd was down is read from its beginning.
    CREATE TABLE sources (
      name          TEXT PRIMARY KEY NOT NULL,
      first_seen_ms INTEGER NOT NULL
    );
  )sql",
               path, "migrate to schema 1");
}

// Version 2: incidents (grouped findings, escalations, storms); what a diagnosis or an operator
// said of a device; findings carry a recovery flag and the rule's annotations (operator knowledge
// such as a FaultDiag cause and suggestion) as a JSON object in the rule's order. Rows journaled
// before keep their meaning: not a recovery, no annotations.
void migrate_to_v2(sqlite3* db, const std::string& path) {
  sqlite::exec(db, R"sql(
    CREATE TABLE incidents (
      id         INTEGER PRIMARY KEY,  -- the fault journal id of its first finding
      device     TEXT NOT NULL,        -- empty for a node-level incident
      rule       TEXT NOT NULL,
      code       TEXT NOT NULL,
      level      TEXT NOT NULL,
      base_level TEXT NOT NULL,
      first_ms   INTEGER NOT NULL,
      last_ms    INTEGER NOT NULL,
      count      INTEGER NOT NULL,
      open       INTEGER NOT NULL,
      node_level INTEGER NOT NULL,
      escalation TEXT NOT NULL,
      note       TEXT NOT NULL
    );
    CREATE INDEX incidents_by_last ON incidents (last_ms);
    CREATE INDEX incidents_by_device ON incidents (device, id);
    ALTER TABLE devices ADD COLUMN verdict TEXT NOT NULL DEFAULT '';
    ALTER TABLE devices ADD COLUMN acked INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE devices ADD COLUMN ack_reason TEXT NOT NULL DEFAULT '';
    ALTER TABLE faults ADD COLUMN recovery INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE faults ADD COLUMN annotations TEXT NOT NULL DEFAULT '{}';
  )sql",
               path, "migrate to schema 2");
}

// Version 3: how a finding's device was found (line, path, context). Rows journaled before say
// nothing ('').
void migrate_to_v3(sqlite3* db, const std::string& path) {
  sqlite::exec(db, R"sql(
    ALTER TABLE faults ADD COLUMN device_from TEXT NOT NULL DEFAULT '';
  )sql",
               path, "migrate to schema 3");
}

// Version 4: the content generation of a file joins the journal key (the same offset of a
// truncated and rewritten file is a new line, not a replay), and a position keeps the
// generation and the hash of the last bytes read (a rewrite that grew past the offset while
// faultd was down is noticed). SQLite cannot change a UNIQUE constraint in place, so `faults`
// is rebuilt; rows journaled before are generation 0, as are positions saved before.
void migrate_to_v4(sqlite3* db, const std::string& path) {
  sqlite::exec(db, R"sql(
    CREATE TABLE faults_v4 (
      id              INTEGER PRIMARY KEY,
      time_ms         INTEGER NOT NULL,
      noticed_ms      INTEGER NOT NULL,
      rule            TEXT NOT NULL,
      source          TEXT NOT NULL,
      device          TEXT NOT NULL,
      level           TEXT NOT NULL,
      code            TEXT NOT NULL,
      file            TEXT NOT NULL,
      line            INTEGER NOT NULL,
      file_offset     INTEGER NOT NULL,
      file_dev        INTEGER,
      file_ino        INTEGER,
      fingerprint     INTEGER NOT NULL,
      fingerprint_len INTEGER NOT NULL,
      text            TEXT NOT NULL,
      recovery        INTEGER NOT NULL DEFAULT 0,
      annotations     TEXT NOT NULL DEFAULT '{}',
      device_from     TEXT NOT NULL DEFAULT '',
      file_generation INTEGER NOT NULL DEFAULT 0,
      UNIQUE (source, file_dev, file_ino, file_generation, file_offset, rule)
    );
    INSERT INTO faults_v4 (id, time_ms, noticed_ms, rule, source, device, level, code, file,
        line, file_offset, file_dev, file_ino, fingerprint, fingerprint_len, text, recovery,
        annotations, device_from)
      SELECT id, time_ms, noticed_ms, rule, source, device, level, code, file, line,
        file_offset, file_dev, file_ino, fingerprint, fingerprint_len, text, recovery,
        annotations, device_from
      FROM faults;
    DROP TABLE faults;
    ALTER TABLE faults_v4 RENAME TO faults;
    CREATE INDEX faults_by_device_time ON faults (device, time_ms);
    CREATE INDEX faults_by_time ON faults (time_ms);
    ALTER TABLE positions ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE positions ADD COLUMN tail_end INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE positions ADD COLUMN tail_hash INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE positions ADD COLUMN tail_len INTEGER NOT NULL DEFAULT 0;
  )sql",
               path, "migrate to schema 4");
}

// Version 5: the process of a running action (pid and start time), so that a faultd started
// after a kill -9 can tell whether the hook it would re-run is still running. 0: none known.
void migrate_to_v5(sqlite3* db, const std::string& path) {
  sqlite::exec(db, R"sql(
    ALTER TABLE actions ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE actions ADD COLUMN pid_start INTEGER NOT NULL DEFAULT 0;
  )sql",
               path, "migrate to schema 5");
}

// Version 6: the node's inventory (daemon/state/inventory.hpp), the serial of the device a
// finding names, so a card is followed across slots and nodes, and the job a finding belongs
// to. Lists are space-separated.
void migrate_to_v6(sqlite3* db, const std::string& path) {
  sqlite::exec(db, R"sql(
    CREATE TABLE inventory (
      device        TEXT PRIMARY KEY NOT NULL,
      vendor        TEXT NOT NULL,
      model         TEXT NOT NULL,
      serial        TEXT NOT NULL,
      bus_id        TEXT NOT NULL,
      uuid          TEXT NOT NULL,
      physical_id   TEXT NOT NULL,
      card          TEXT NOT NULL,
      chip          TEXT NOT NULL,
      seen_by       TEXT NOT NULL,
      missing_from  TEXT NOT NULL,
      first_seen_ms INTEGER NOT NULL,
      last_seen_ms  INTEGER NOT NULL
    );
    ALTER TABLE faults ADD COLUMN serial TEXT NOT NULL DEFAULT '';
    CREATE INDEX faults_by_serial ON faults (serial, time_ms) WHERE serial != '';
    ALTER TABLE faults ADD COLUMN job TEXT NOT NULL DEFAULT '';
    CREATE INDEX faults_by_job ON faults (job, time_ms) WHERE job != '';
  )sql",
               path, "migrate to schema 6");
}

using MigrationStep = void (*)(sqlite3*, const std::string&);
constexpr std::array<MigrationStep, 6> kMigrations = {
    &migrate_to_v1, &migrate_to_v2, &migrate_to_v3, &migrate_to_v4, &migrate_to_v5, &migrate_to_v6};
static_assert(kMigrations.size() == Store::kSchemaVersion,
              "every schema version needs exactly one migration step");

// ---------------------------------------------------------------------------------------------
// Row mapping.

constexpr const char* kFaultColumns =
    "id, time_ms, noticed_ms, rule, source, device, level, code, file, line, file_offset, "
    "file_dev, file_ino, fingerprint, fingerprint_len, text, recovery, annotations, device_from, "
    "file_generation, serial, job";
constexpr const char* kTransitionColumns =
    "device, from_state, to_state, reason, fault_id, level, rule, code, time_ms, id";
constexpr const char* kActionColumns =
    "id, action, device, fault_id, status, attempts, exit_code, output, detail, created_ms, "
    "started_ms, finished_ms, pid, pid_start";

// A value SQLite cannot hold as a positive LIMIT is no limit at all.
int64_t sql_limit(size_t limit) {
  constexpr auto kMax = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  return limit > kMax ? -1 : static_cast<int64_t>(limit);
}

// Stored enum names are read back strictly: an unknown name means the file was edited or
// damaged, which the operator must hear about rather than get a silently "healthy" device.
template <typename T>
T parse_or_throw(std::optional<T> v, const std::string& path, const char* what,
                 const std::string& text) {
  if (!v) throw StoreError(path + ": unknown " + what + " '" + text + "' in the state database");
  return *v;
}

FaultLevel read_level(const Statement& s, int col, const std::string& path) {
  const std::string t = s.text(col);
  return parse_or_throw(parse_fault_level(t), path, "fault level", t);
}

DeviceState read_state(const Statement& s, int col, const std::string& path) {
  const std::string t = s.text(col);
  return parse_or_throw(parse_device_state(t), path, "device state", t);
}

// Annotations as a JSON object that keeps the rule's order (ordered_json), e.g.
// {"faultdiag_id":"0x80818C00","cause":"..."}. Text that is not such an object reads as none:
// annotations are for operators, never worth failing a query over.
std::string annotations_to_json(const Fields& annotations) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : annotations) j[name] = value;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Fields annotations_from_json(const std::string& text) {
  Fields out;
  const auto j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& [name, value] : j.items()) {
    if (value.is_string()) out.emplace_back(name, value.get<std::string>());
  }
  return out;
}

Finding read_finding(const Statement& s, const std::string& path) {
  Finding f;
  f.id = s.int64(0);
  f.time = from_unix_ms(s.int64(1));
  f.noticed = from_unix_ms(s.int64(2));
  f.rule = s.text(3);
  f.source = s.text(4);
  f.device = s.text(5);
  f.level = read_level(s, 6, path);
  f.code = s.text(7);
  f.file = s.text(8);
  f.line = s.u64(9);
  f.offset = s.u64(10);
  f.identity.dev = s.u64(11);  // NULL reads as 0
  f.identity.ino = s.u64(12);
  f.identity.fingerprint = s.u64(13);
  f.identity.fingerprint_len = static_cast<uint32_t>(s.int64(14));
  f.text = s.text(15);
  f.recovery = s.int64(16) != 0;
  f.annotations = annotations_from_json(s.text(17));
  f.device_from = s.text(18);
  f.serial = s.text(20);
  f.job = s.text(21);
  f.identity.generation = s.u64(19);
  return f;
}

Transition read_transition(const Statement& s, const std::string& path) {
  Transition t;
  t.device = s.text(0);
  t.from = read_state(s, 1, path);
  t.to = read_state(s, 2, path);
  t.reason = s.text(3);
  t.fault_id = s.int64(4);
  t.level = read_level(s, 5, path);
  t.rule = s.text(6);
  t.code = s.text(7);
  t.time = from_unix_ms(s.int64(8));
  t.id = s.int64(9);
  return t;
}

ActionRecord read_action(const Statement& s, const std::string& path) {
  ActionRecord a;
  a.id = s.int64(0);
  a.action = s.text(1);
  a.device = s.text(2);
  a.fault_id = s.int64(3);
  const std::string status = s.text(4);
  a.status = parse_or_throw(parse_action_status(status), path, "action status", status);
  a.attempts = static_cast<int>(s.int64(5));
  a.exit_code = static_cast<int>(s.int64(6));
  a.output = s.text(7);
  a.detail = s.text(8);
  a.created = from_unix_ms(s.int64(9));
  a.started = from_unix_ms(s.int64(10));
  a.finished = from_unix_ms(s.int64(11));
  a.process = {static_cast<pid_t>(s.int64(12)), s.u64(13)};
  return a;
}

// The file identity of a finding not read from a file is NULL (see the faults table).
void bind_identity(Statement& s, int dev_index, int ino_index, const FileIdentity& id) {
  if (id.dev == 0 && id.ino == 0) {
    s.bind_null(dev_index);
    s.bind_null(ino_index);
  } else {
    s.bind_u64(dev_index, id.dev);
    s.bind_u64(ino_index, id.ino);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

// Prepared once, on first use, for the statements every committed finding runs.
struct Store::Cache {
  std::optional<Statement> insert_fault;
  std::optional<Statement> find_fault_id;
  std::optional<Statement> upsert_device;
  std::optional<Statement> insert_transition;
  std::optional<Statement> upsert_position;
  std::optional<Statement> upsert_incident;

  static Statement& get(std::optional<Statement>& slot, sqlite3* db, const char* sql,
                        const std::string& path, const char* op) {
    if (!slot) slot.emplace(db, sql, path, op, /*persistent=*/true);
    return *slot;
  }
};

Store::Store(const std::string& path) : path_(path), cache_(std::make_unique<Cache>()) {
  try {
    open();
    migrate();
  } catch (...) {
    cache_.reset();
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

Store::~Store() {
  cache_.reset();  // statements first: a connection with live statements does not close
  sqlite3_close_v2(db_);
}

namespace {

// The journal holds evidence lines, which may be sensitive: the database, and its -wal and -shm
// (SQLite creates them with the database's own mode), are for the owner only, whatever the
// umask of whoever started faultd (a container's is often 022). Files left 0644 by an older
// version are tightened too. A link is not followed (SQLite's open would follow it; a link
// here is refused by that open's own checks or kept as the operator made it).
void restrict_to_owner(const std::string& path) {
  if (path.empty() || path == ":memory:") return;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string file = path + suffix;
    const int flags =
        O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (*suffix == '\0' ? O_CREAT : 0);
    const int fd = ::open(file.c_str(), flags, 0600);
    if (fd < 0) continue;  // absent (-wal, -shm), a link, or not ours: SQLite says why
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) != 0) {
      ::fchmod(fd, st.st_mode & 0700);
    }
    ::close(fd);
  }
}

}  // namespace

void Store::open() {
  restrict_to_owner(path_);
  const int rc =
      sqlite3_open_v2(path_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string cause = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    throw StoreError(path_ + ": cannot open the state database (" + cause +
                     "); the directory must exist and be writable by faultd");
  }
  // SQLite quietly falls back to read-only when the file is write-protected; faultd cannot run
  // like that, so say so now rather than at the first write.
  if (sqlite3_db_readonly(db_, "main") == 1) {
    throw StoreError(path_ +
                     ": the state database is read-only; faultd needs to write it "
                     "(check the permissions of the file and of its directory)");
  }
  sqlite3_busy_timeout(db_, 5000);

  // The first statement reads the file header: a non-database fails here, with the hint.
  std::string mode;
  {
    Statement s(db_, "PRAGMA journal_mode=WAL", path_, "set journal_mode=WAL");
    if (s.step()) mode = s.text(0);
  }
  if (mode != "wal") {
    throw StoreError(path_ +
                     ": could not switch the state database to WAL mode (journal_mode is '" + mode +
                     "'); the directory must be writable so SQLite can create " + path_ +
                     "-wal and " + path_ + "-shm");
  }
  // NORMAL in WAL mode: a commit is in the WAL (the OS's page cache) when it returns, so a
  // crash of the process (kill -9) loses nothing; only an OS crash or power loss can take back
  // the last commits, whole (a finding never without its read position). FULL would add one
  // fsync per commit, most of the delay from a log line to /metrics (docs/operations.md).
  exec("PRAGMA synchronous=NORMAL", "set synchronous=NORMAL");
  exec("PRAGMA foreign_keys=ON", "set foreign_keys=ON");
}

void Store::exec(const char* sql, const char* op) const { sqlite::exec(db_, sql, path_, op); }

void Store::rollback_quietly() noexcept {
  // Some errors (I/O, full disk) make SQLite roll back by itself; then there is nothing to do.
  if (db_ != nullptr && sqlite3_get_autocommit(db_) == 0) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

int Store::read_user_version() const {
  Statement s(db_, "PRAGMA user_version", path_, "read schema version");
  return s.step() ? static_cast<int>(s.int64(0)) : 0;
}

int Store::schema_version() const { return read_user_version(); }

void Store::migrate() {
  // One step per transaction, the version read inside it: a second faultd racing on the same
  // file waits (BEGIN IMMEDIATE) and then sees the upgraded version instead of re-running it.
  for (;;) {
    exec("BEGIN IMMEDIATE", "migrate: begin");
    try {
      const int version = read_user_version();
      if (version > kSchemaVersion) {
        throw StoreError(path_ + " was written by a newer faultd (schema " +
                         std::to_string(version) + ", this build knows " +
                         std::to_string(kSchemaVersion) + "); run that newer faultd, or " +
                         sqlite::recovery_hint(path_));
      }
      if (version < 0) {
        throw StoreError(path_ + ": invalid schema version " + std::to_string(version) + "; " +
                         sqlite::recovery_hint(path_));
      }
      if (version == kSchemaVersion) {
        exec("COMMIT", "migrate: commit");
        return;
      }
      kMigrations[static_cast<size_t>(version)](db_, path_);
      // PRAGMA takes no parameters; the value is our own constant, not input.
      const std::string set_version = "PRAGMA user_version=" + std::to_string(version + 1);
      exec(set_version.c_str(), "migrate: set schema version");
      exec("COMMIT", "migrate: commit");
    } catch (...) {
      rollback_quietly();
      throw;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Transactions.

Store::Txn::Txn(Store& store) : store_(store) {
  if (store_.txn_open_) throw StoreError(store_.path_ + ": a transaction is already open");
  store_.exec("BEGIN IMMEDIATE", "begin transaction");
  store_.txn_open_ = true;
}

Store::Txn::~Txn() {
  if (!done_) {
    store_.rollback_quietly();
    store_.txn_open_ = false;
  }
}

template <typename F>
auto Store::Txn::guarded(const char* op, F&& f) {
  if (done_) throw StoreError(store_.path_ + ": " + op + ": the transaction is already finished");
  if (failed_) {
    throw StoreError(store_.path_ + ": " + op +
                     ": an earlier statement of this transaction failed; it can only roll back");
  }
  try {
    return f();
  } catch (...) {
    failed_ = true;
    throw;
  }
}

bool Store::Txn::insert_finding(Finding& f) {
  return guarded("insert finding", [&] {
    Store& s = store_;
    {
      StatementScope ins(Cache::get(s.cache_->insert_fault, s.db_, R"sql(
        INSERT OR IGNORE INTO faults (time_ms, noticed_ms, rule, source, device, level, code,
          file, line, file_offset, file_dev, file_ino, fingerprint, fingerprint_len, text,
          recovery, annotations, device_from, file_generation, serial, job)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
          ?19, ?20, ?21)
      )sql",
                                    s.path_, "insert finding"));
      ins->bind_int(1, to_unix_ms(f.time));
      ins->bind_int(2, to_unix_ms(f.noticed));
      ins->bind_text(3, f.rule);
      ins->bind_text(4, f.source);
      ins->bind_text(5, f.device);
      ins->bind_text(6, to_string(f.level));
      ins->bind_text(7, f.code);
      ins->bind_text(8, f.file);
      ins->bind_u64(9, f.line);
      ins->bind_u64(10, f.offset);
      bind_identity(*ins, 11, 12, f.identity);
      ins->bind_u64(13, f.identity.fingerprint);
      ins->bind_int(14, f.identity.fingerprint_len);
      ins->bind_text(15, f.text);
      ins->bind_int(16, f.recovery ? 1 : 0);
      ins->bind_text(17, annotations_to_json(f.annotations));
      ins->bind_text(18, f.device_from);
      ins->bind_u64(19, f.identity.generation);
      ins->bind_text(20, f.serial);
      ins->bind_text(21, f.job);
      ins->run();
      if (sqlite3_changes(s.db_) == 1) {
        f.id = sqlite3_last_insert_rowid(s.db_);
        return true;
      }
    }
    // Ignored: the same line of the same file was journaled before (a replayed chunk).
    StatementScope find(Cache::get(s.cache_->find_fault_id, s.db_, R"sql(
      SELECT id FROM faults
      WHERE source = ?1 AND file_dev IS ?2 AND file_ino IS ?3 AND file_generation = ?4
        AND file_offset = ?5 AND rule = ?6
    )sql",
                                   s.path_, "find duplicate finding"));
    find->bind_text(1, f.source);
    bind_identity(*find, 2, 3, f.identity);
    find->bind_u64(4, f.identity.generation);
    find->bind_u64(5, f.offset);
    find->bind_text(6, f.rule);
    if (!find->step()) {
      throw StoreError(s.path_ +
                       ": insert finding: the row was refused but no earlier row "
                       "matches it");
    }
    f.id = find->int64(0);
    return false;
  });
}

void Store::Txn::apply_transition(const Transition& t) {
  guarded("apply transition", [&] {
    Store& s = store_;
    {
      StatementScope dev(Cache::get(s.cache_->upsert_device, s.db_, R"sql(
        INSERT INTO devices (device, state, reason, fault_id, level, rule, code, since_ms)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        ON CONFLICT (device) DO UPDATE SET state = excluded.state, reason = excluded.reason,
          fault_id = excluded.fault_id, level = excluded.level, rule = excluded.rule,
          code = excluded.code, since_ms = excluded.since_ms,
          verdict = CASE WHEN excluded.state = 'healthy' THEN '' ELSE verdict END,
          acked = CASE WHEN excluded.fault_id = fault_id THEN acked ELSE 0 END,
          ack_reason = CASE WHEN excluded.fault_id = fault_id THEN ack_reason ELSE '' END
      )sql",
                                    s.path_, "update device"));
      dev->bind_text(1, t.device);
      dev->bind_text(2, to_string(t.to));
      dev->bind_text(3, t.reason);
      dev->bind_int(4, t.fault_id);
      dev->bind_text(5, to_string(t.level));
      dev->bind_text(6, t.rule);
      dev->bind_text(7, t.code);
      dev->bind_int(8, to_unix_ms(t.time));
      dev->run();
    }
    StatementScope tr(Cache::get(s.cache_->insert_transition, s.db_, R"sql(
      INSERT INTO transitions (device, from_state, to_state, reason, fault_id, level, rule, code,
        time_ms)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
    )sql",
                                 s.path_, "append transition"));
    tr->bind_text(1, t.device);
    tr->bind_text(2, to_string(t.from));
    tr->bind_text(3, to_string(t.to));
    tr->bind_text(4, t.reason);
    tr->bind_int(5, t.fault_id);
    tr->bind_text(6, to_string(t.level));
    tr->bind_text(7, t.rule);
    tr->bind_text(8, t.code);
    tr->bind_int(9, to_unix_ms(t.time));
    tr->run();
  });
}

void Store::Txn::save_incident(const Incident& i) {
  guarded("save incident", [&] {
    Store& s = store_;
    StatementScope st(Cache::get(s.cache_->upsert_incident, s.db_, R"sql(
      INSERT INTO incidents (id, device, rule, code, level, base_level, first_ms, last_ms, count,
        open, node_level, escalation, note)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
      ON CONFLICT (id) DO UPDATE SET level = excluded.level, last_ms = excluded.last_ms,
        count = excluded.count, open = excluded.open, escalation = excluded.escalation,
        note = excluded.note
    )sql",
                                 s.path_, "save incident"));
    st->bind_int(1, i.id);
    st->bind_text(2, i.device);
    st->bind_text(3, i.rule);
    st->bind_text(4, i.code);
    st->bind_text(5, to_string(i.level));
    st->bind_text(6, to_string(i.base_level));
    st->bind_int(7, to_unix_ms(i.first));
    st->bind_int(8, to_unix_ms(i.last));
    st->bind_u64(9, i.count);
    st->bind_int(10, i.open ? 1 : 0);
    st->bind_int(11, i.node_level ? 1 : 0);
    st->bind_text(12, i.escalation);
    st->bind_text(13, i.note);
    st->run();
  });
}

void Store::Txn::mark_device(const DeviceRecord& d) {
  guarded("mark device", [&] {
    Statement st(store_.db_,
                 "UPDATE devices SET verdict = ?2, acked = ?3, ack_reason = ?4 WHERE device = ?1",
                 store_.path_, "mark device");
    st.bind_text(1, d.device);
    st.bind_text(2, d.verdict);
    st.bind_int(3, d.acked ? 1 : 0);
    st.bind_text(4, d.ack_reason);
    st.step();
  });
}

namespace {

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    if (space != 0) out.emplace_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace

void Store::Txn::save_inventory_device(const InventoryDevice& d) {
  guarded("save inventory", [&] {
    Statement st(store_.db_, R"sql(
      INSERT OR REPLACE INTO inventory (device, vendor, model, serial, bus_id, uuid, physical_id,
        card, chip, seen_by, missing_from, first_seen_ms, last_seen_ms)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
    )sql",
                 store_.path_, "save inventory");
    int i = 1;
    for (const std::string* text : {&d.id, &d.vendor, &d.model, &d.serial, &d.bus_id, &d.uuid,
                                    &d.physical_id, &d.card, &d.chip}) {
      st.bind_text(i++, *text);
    }
    st.bind_text(10, join_words(d.seen_by));
    st.bind_text(11, join_words(d.missing_from));
    st.bind_int(12, to_unix_ms(d.first_seen));
    st.bind_int(13, to_unix_ms(d.last_seen));
    st.step();
  });
}

void Store::Txn::remove_inventory_device(const std::string& device) {
  guarded("remove inventory device", [&] {
    Statement st(store_.db_, "DELETE FROM inventory WHERE device = ?1", store_.path_,
                 "remove inventory device");
    st.bind_text(1, device);
    st.step();
  });
}

std::vector<InventoryDevice> Store::load_inventory() const {
  Statement s(db_, R"sql(
    SELECT device, vendor, model, serial, bus_id, uuid, physical_id, card, chip, seen_by,
      missing_from, first_seen_ms, last_seen_ms
    FROM inventory ORDER BY device
  )sql",
              path_, "load inventory");
  std::vector<InventoryDevice> out;
  while (s.step()) {
    InventoryDevice d;
    int i = 0;
    for (std::string* text : {&d.id, &d.vendor, &d.model, &d.serial, &d.bus_id, &d.uuid,
                              &d.physical_id, &d.card, &d.chip}) {
      *text = s.text(i++);
    }
    d.seen_by = split_words(s.text(9));
    d.missing_from = split_words(s.text(10));
    d.first_seen = from_unix_ms(s.int64(11));
    d.last_seen = from_unix_ms(s.int64(12));
    out.push_back(std::move(d));
  }
  return out;
}

void Store::Txn::save_position(const ReadPosition& p) {
  guarded("save position", [&] {
    Store& s = store_;
    // updated_ms is for operators reading the file; SQLite's clock is good enough for that.
    StatementScope st(Cache::get(s.cache_->upsert_position, s.db_, R"sql(
      INSERT INTO positions (source, file_dev, file_ino, fingerprint, fingerprint_len,
        file_offset, line, path, updated_ms, generation, tail_end, tail_hash, tail_len)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,
        CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), ?9, ?10, ?11, ?12)
      ON CONFLICT (source, file_dev, file_ino) DO UPDATE SET
        fingerprint = excluded.fingerprint, fingerprint_len = excluded.fingerprint_len,
        file_offset = excluded.file_offset, line = excluded.line, path = excluded.path,
        updated_ms = excluded.updated_ms, generation = excluded.generation,
        tail_end = excluded.tail_end, tail_hash = excluded.tail_hash,
        tail_len = excluded.tail_len
    )sql",
                                 s.path_, "save position"));
    st->bind_text(1, p.source);
    st->bind_u64(2, p.identity.dev);
    st->bind_u64(3, p.identity.ino);
    st->bind_u64(4, p.identity.fingerprint);
    st->bind_int(5, p.identity.fingerprint_len);
    st->bind_u64(6, p.offset);
    st->bind_u64(7, p.line);
    st->bind_text(8, p.path);
    st->bind_u64(9, p.identity.generation);
    st->bind_u64(10, p.identity.tail_end);
    st->bind_u64(11, p.identity.tail_hash);
    st->bind_int(12, p.identity.tail_len);
    st->run();
  });
}

ActionRecord Store::Txn::journal_action(const std::string& action, const std::string& device,
                                        int64_t fault_id, TimePoint now) {
  return guarded("journal action",
                 [&] { return store_.ensure_action(action, device, fault_id, now); });
}

void Store::Txn::update_action(const ActionRecord& a) {
  guarded("update action", [&] { store_.update_action(a); });
}

void Store::Txn::commit() {
  if (done_) throw StoreError(store_.path_ + ": commit: the transaction is already finished");
  done_ = true;
  store_.txn_open_ = false;
  if (failed_) {
    store_.rollback_quietly();
    throw StoreError(store_.path_ +
                     ": commit: an earlier statement of this transaction "
                     "failed; rolled back");
  }
  char* err = nullptr;
  const int rc = sqlite3_exec(store_.db_, "COMMIT", nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc == SQLITE_OK) return;
  // Read the message before ROLLBACK replaces it.
  try {
    sqlite::fail(store_.db_, rc, store_.path_, "commit");
  } catch (const StoreError& e) {
    store_.rollback_quietly();
    throw StoreError(std::string(e.what()) + "; the transaction was rolled back");
  }
}

void Store::save_positions(const std::vector<ReadPosition>& positions) {
  Txn txn(*this);
  for (const auto& p : positions) txn.save_position(p);
  txn.commit();
}

// ---------------------------------------------------------------------------------------------
// Queries.

std::optional<ReadPosition> Store::find_position(const std::string& source, uint64_t dev,
                                                 uint64_t ino) const {
  Statement s(db_, R"sql(
    SELECT fingerprint, fingerprint_len, file_offset, line, path, generation, tail_end,
      tail_hash, tail_len FROM positions
    WHERE source = ?1 AND file_dev = ?2 AND file_ino = ?3
  )sql",
              path_, "find position");
  s.bind_text(1, source);
  s.bind_u64(2, dev);
  s.bind_u64(3, ino);
  if (!s.step()) return std::nullopt;
  ReadPosition p;
  p.source = source;
  p.identity.dev = dev;
  p.identity.ino = ino;
  p.identity.fingerprint = s.u64(0);
  p.identity.fingerprint_len = static_cast<uint32_t>(s.int64(1));
  p.offset = s.u64(2);
  p.line = s.u64(3);
  p.path = s.text(4);
  p.identity.generation = s.u64(5);
  p.identity.tail_end = s.u64(6);
  p.identity.tail_hash = s.u64(7);
  p.identity.tail_len = static_cast<uint32_t>(s.int64(8));
  return p;
}

bool Store::source_seen(const std::string& source) const {
  Statement s(db_, "SELECT 1 FROM sources WHERE name = ?1", path_, "find source");
  s.bind_text(1, source);
  return s.step();
}

void Store::mark_source_seen(const std::string& source, TimePoint now) {
  Statement s(db_, "INSERT OR IGNORE INTO sources (name, first_seen_ms) VALUES (?1, ?2)", path_,
              "mark source seen");
  s.bind_text(1, source);
  s.bind_int(2, to_unix_ms(now));
  s.step();
}

std::vector<DeviceRecord> Store::load_devices() const {
  // The incident's start is the time of the finding that took the device out of healthy (its
  // last transition from healthy); when retention pruned that transition, the time of the
  // finding that holds the device now.
  Statement s(db_, R"sql(
    SELECT device, state, reason, fault_id, level, rule, code, since_ms, verdict, acked,
      ack_reason, (SELECT source FROM faults WHERE faults.id = devices.fault_id),
      COALESCE((SELECT faults.time_ms FROM transitions JOIN faults ON faults.id = transitions.fault_id
                WHERE transitions.device = devices.device AND transitions.from_state = 'healthy'
                ORDER BY transitions.id DESC LIMIT 1),
               (SELECT time_ms FROM faults WHERE faults.id = devices.fault_id), since_ms)
    FROM devices
    ORDER BY device
  )sql",
              path_, "load devices");
  std::vector<DeviceRecord> out;
  while (s.step()) {
    DeviceRecord d;
    d.device = s.text(0);
    d.state = read_state(s, 1, path_);
    d.reason = s.text(2);
    d.fault_id = s.int64(3);
    d.level = read_level(s, 4, path_);
    d.rule = s.text(5);
    d.code = s.text(6);
    d.since = from_unix_ms(s.int64(7));
    d.verdict = s.text(8);
    d.acked = s.int64(9) != 0;
    d.ack_reason = s.text(10);
    d.source = s.text(11);  // NULL (no such finding) reads as empty
    if (d.state != DeviceState::Healthy) d.incident_start = from_unix_ms(s.int64(12));
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Finding> Store::query_faults(const FaultQuery& q) const {
  // Only fixed fragments are appended, so each filter combination can use its index; every
  // value is bound.
  std::string sql = std::string("SELECT ") + kFaultColumns + " FROM faults WHERE 1";
  if (!q.device.empty()) sql += " AND device = ?1";
  if (!q.serial.empty()) sql += " AND serial = ?5";
  if (!q.job.empty()) sql += " AND job = ?6";
  if (q.since) sql += " AND time_ms >= ?2";
  // The page after a fault: the same order, keyed by (time, id) so that equal times page too.
  if (q.before_id) sql += " AND (time_ms, id) < ((SELECT time_ms FROM faults WHERE id = ?4), ?4)";
  sql += " ORDER BY time_ms DESC, id DESC LIMIT ?3";
  Statement s(db_, sql, path_, "query faults");
  if (!q.device.empty()) s.bind_text(1, q.device);
  if (q.since) s.bind_int(2, to_unix_ms(*q.since));
  s.bind_int(3, sql_limit(q.limit));
  if (q.before_id) s.bind_int(4, *q.before_id);
  if (!q.serial.empty()) s.bind_text(5, q.serial);
  if (!q.job.empty()) s.bind_text(6, q.job);
  std::vector<Finding> out;
  while (s.step()) out.push_back(read_finding(s, path_));
  return out;
}

std::optional<Finding> Store::find_fault(int64_t id) const {
  Statement s(db_, std::string("SELECT ") + kFaultColumns + " FROM faults WHERE id = ?1", path_,
              "find fault");
  s.bind_int(1, id);
  if (!s.step()) return std::nullopt;
  return read_finding(s, path_);
}

std::vector<Transition> Store::query_transitions(const std::string& device, size_t limit,
                                                 std::optional<int64_t> before_id) const {
  std::string sql = std::string("SELECT ") + kTransitionColumns + " FROM transitions WHERE 1";
  if (!device.empty()) sql += " AND device = ?1";
  if (before_id) sql += " AND id < ?3";
  sql += " ORDER BY id DESC LIMIT ?2";
  Statement s(db_, sql, path_, "query transitions");
  if (!device.empty()) s.bind_text(1, device);
  s.bind_int(2, sql_limit(limit));
  if (before_id) s.bind_int(3, *before_id);
  std::vector<Transition> out;
  while (s.step()) out.push_back(read_transition(s, path_));
  return out;
}

ActionRecord Store::ensure_action(const std::string& action, const std::string& device,
                                  int64_t fault_id, TimePoint now) {
  {
    Statement ins(db_, R"sql(
      INSERT OR IGNORE INTO actions (action, device, fault_id, status, attempts, exit_code,
        output, detail, created_ms, started_ms, finished_ms)
      VALUES (?1, ?2, ?3, ?4, 0, -1, '', '', ?5, 0, 0)
    )sql",
                  path_, "ensure action");
    ins.bind_text(1, action);
    ins.bind_text(2, device);
    ins.bind_int(3, fault_id);
    ins.bind_text(4, to_string(ActionStatus::Pending));
    ins.bind_int(5, to_unix_ms(now));
    ins.run();
  }
  Statement s(db_,
              std::string("SELECT ") + kActionColumns +
                  " FROM actions WHERE action = ?1 AND device = ?2 AND fault_id = ?3",
              path_, "ensure action");
  s.bind_text(1, action);
  s.bind_text(2, device);
  s.bind_int(3, fault_id);
  if (!s.step()) {
    throw StoreError(path_ + ": ensure action: the row was refused but no existing row matches");
  }
  return read_action(s, path_);
}

void Store::update_action(const ActionRecord& a) {
  Statement s(db_, R"sql(
    UPDATE actions SET status = ?2, attempts = ?3, exit_code = ?4, output = ?5, detail = ?6,
      started_ms = ?7, finished_ms = ?8, pid = ?9, pid_start = ?10
    WHERE id = ?1
  )sql",
              path_, "update action");
  s.bind_int(1, a.id);
  s.bind_text(2, to_string(a.status));
  s.bind_int(3, a.attempts);
  s.bind_int(4, a.exit_code);
  s.bind_text(5, a.output);
  s.bind_text(6, a.detail);
  s.bind_int(7, to_unix_ms(a.started));
  s.bind_int(8, to_unix_ms(a.finished));
  s.bind_int(9, a.process.pid);
  s.bind_u64(10, a.process.start_ticks);
  s.run();
  if (sqlite3_changes(db_) == 0) {
    throw StoreError(path_ + ": update action: no action with id " + std::to_string(a.id));
  }
}

std::vector<ActionRecord> Store::unfinished_actions() const {
  Statement s(db_,
              std::string("SELECT ") + kActionColumns +
                  " FROM actions WHERE status IN (?1, ?2) ORDER BY id",
              path_, "unfinished actions");
  s.bind_text(1, to_string(ActionStatus::Pending));
  s.bind_text(2, to_string(ActionStatus::Running));
  std::vector<ActionRecord> out;
  while (s.step()) out.push_back(read_action(s, path_));
  return out;
}

std::vector<ActionRecord> Store::query_actions(const std::string& device, size_t limit,
                                               std::optional<TimePoint> since,
                                               std::optional<int64_t> before_id) const {
  std::string sql = std::string("SELECT ") + kActionColumns + " FROM actions WHERE 1";
  if (!device.empty()) sql += " AND device = ?1";
  if (since) sql += " AND created_ms >= ?3";
  if (before_id) sql += " AND id < ?4";
  sql += " ORDER BY id DESC LIMIT ?2";
  Statement s(db_, sql, path_, "query actions");
  if (!device.empty()) s.bind_text(1, device);
  s.bind_int(2, sql_limit(limit));
  if (since) s.bind_int(3, to_unix_ms(*since));
  if (before_id) s.bind_int(4, *before_id);
  std::vector<ActionRecord> out;
  while (s.step()) out.push_back(read_action(s, path_));
  return out;
}

namespace {

constexpr const char* kIncidentColumns =
    "id, device, rule, code, level, base_level, first_ms, last_ms, count, open, node_level, "
    "escalation, note, (SELECT source FROM faults WHERE faults.id = incidents.id)";

Incident read_incident(const Statement& s, const std::string& path) {
  Incident i;
  i.id = s.int64(0);
  i.device = s.text(1);
  i.rule = s.text(2);
  i.code = s.text(3);
  i.level = read_level(s, 4, path);
  i.base_level = read_level(s, 5, path);
  i.first = from_unix_ms(s.int64(6));
  i.last = from_unix_ms(s.int64(7));
  i.count = s.u64(8);
  i.open = s.int64(9) != 0;
  i.node_level = s.int64(10) != 0;
  i.escalation = s.text(11);
  i.note = s.text(12);
  i.source = s.text(13);  // NULL (no such finding) reads as empty
  return i;
}

}  // namespace

std::vector<Incident> Store::load_incidents(TimePoint since, size_t max_open, size_t max_closed) {
  std::vector<Incident> out;
  {
    Statement s(db_,
                std::string("SELECT ") + kIncidentColumns +
                    " FROM incidents WHERE open = 1 ORDER BY id LIMIT ?1",
                path_, "load incidents");
    s.bind_int(1, sql_limit(max_open));
    while (s.step()) out.push_back(read_incident(s, path_));
  }
  if (out.size() == max_open && !out.empty()) {
    Statement close(db_, "UPDATE incidents SET open = 0, note = ?1 WHERE open = 1 AND id > ?2",
                    path_, "close incidents over the limit");
    close.bind_text(1, "closed at start: more open incidents than faultd keeps (" +
                           std::to_string(max_open) + ")");
    close.bind_int(2, out.back().id);
    close.run();
  }
  Statement s(db_,
              std::string("SELECT ") + kIncidentColumns +
                  " FROM incidents WHERE open = 0 AND last_ms >= ?1 ORDER BY id DESC LIMIT ?2",
              path_, "load incidents");
  s.bind_int(1, to_unix_ms(since));
  s.bind_int(2, sql_limit(max_closed));
  while (s.step()) out.push_back(read_incident(s, path_));
  std::sort(out.begin(), out.end(),
            [](const Incident& a, const Incident& b) { return a.id < b.id; });
  return out;
}

std::vector<Incident> Store::query_incidents(const std::string& device, bool open_only,
                                             size_t limit, std::optional<int64_t> before_id) const {
  std::string sql = std::string("SELECT ") + kIncidentColumns + " FROM incidents WHERE 1";
  if (!device.empty()) sql += " AND device = ?1";
  if (open_only) sql += " AND open = 1";
  if (before_id) sql += " AND id < ?3";
  sql += " ORDER BY id DESC LIMIT ?2";
  Statement s(db_, sql, path_, "query incidents");
  if (!device.empty()) s.bind_text(1, device);
  s.bind_int(2, sql_limit(limit));
  if (before_id) s.bind_int(3, *before_id);
  std::vector<Incident> out;
  while (s.step()) out.push_back(read_incident(s, path_));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Retention.

namespace {

// A journal as retention sees it. Every fragment is a constant of ours, never input.
struct JournalTable {
  const char* table;
  // faultd's time of the row. `ordered`: it grows with the id (rows are appended as they
  // happen), so the rows older than a cutoff are the ids below the first young row's id, found
  // without reading the rest of the table.
  const char* time_column;
  bool ordered;
  const char* keep;  // rows that still explain the present (a device's state and how it got there)
};

// In kJournalNames' order (positions are pruned apart: they have no id).
constexpr std::array<JournalTable, 4> kJournalTables = {{
    {"faults", "noticed_ms", true,
     "id NOT IN (SELECT fault_id FROM devices)"
     " AND id NOT IN (SELECT id FROM incidents WHERE open = 1)"
     " AND id NOT IN (SELECT fault_id FROM actions WHERE status IN ('pending', 'running'))"},
    {"transitions", "time_ms", true, "id NOT IN (SELECT max(id) FROM transitions GROUP BY device)"},
    {"actions", "created_ms", true,
     "status NOT IN ('pending', 'running') AND fault_id NOT IN (SELECT fault_id FROM devices)"},
    {"incidents", "last_ms", false, "open = 0 AND id NOT IN (SELECT fault_id FROM devices)"},
}};

// Pages given back per prune: enough to follow a busy node, small enough to keep the io
// thread's pause short.
constexpr int kVacuumPages = 2048;

}  // namespace

PruneReport Store::prune(const Retention& r, TimePoint now, int64_t batch) {
  const int64_t cutoff = to_unix_ms(now - r.max_age);
  PruneReport report;
  // The first column of the first row, if any; `bound` is ?1.
  auto scalar = [&](const std::string& sql, std::optional<int64_t> bound) {
    Statement s(db_, sql, path_, "retention: find the oldest row kept");
    if (bound) s.bind_int(1, *bound);
    return s.step() && !s.is_null(0) ? std::optional<int64_t>(s.int64(0)) : std::nullopt;
  };
  for (size_t i = 0; i < kJournalTables.size(); ++i) {
    const JournalTable& j = kJournalTables[i];
    const std::string table = j.table;
    // Rows below `floor` are beyond the newest max_rows (or, when ordered, too old).
    int64_t floor = scalar("SELECT id FROM " + table + " ORDER BY id DESC LIMIT 1 OFFSET ?1",
                           std::max<int64_t>(r.max_rows - 1, 0))
                        .value_or(0);
    std::string old = "0";
    if (j.ordered) {
      const auto young = scalar(
          "SELECT id FROM " + table + " WHERE " + j.time_column + " >= ?1 ORDER BY id LIMIT 1",
          cutoff);
      const auto end = scalar("SELECT max(id) + 1 FROM " + table, std::nullopt);
      floor = std::max(floor, young.value_or(end.value_or(0)));
    } else {
      old = std::string(j.time_column) + " < ?3";
    }
    Statement del(db_,
                  "DELETE FROM " + table + " WHERE id IN (SELECT id FROM " + table +
                      " WHERE (id < ?1 OR " + old + ") AND " + j.keep + " ORDER BY id LIMIT ?2)",
                  path_, "retention: delete old rows");
    del.bind_int(1, floor);
    del.bind_int(2, batch);
    if (!j.ordered) del.bind_int(3, cutoff);
    del.run();
    report.deleted[i] = sqlite3_changes(db_);
  }
  {
    Statement del(db_, R"sql(
      DELETE FROM positions WHERE rowid IN
        (SELECT rowid FROM positions WHERE updated_ms < ?1 LIMIT ?2)
    )sql",
                  path_, "retention: delete old read positions");
    del.bind_int(1, cutoff);
    del.bind_int(2, batch);
    del.run();
    report.deleted.back() = sqlite3_changes(db_);
  }
  for (const int64_t n : report.deleted) report.more = report.more || n >= batch;
  if (std::any_of(report.deleted.begin(), report.deleted.end(), [](int64_t n) { return n > 0; })) {
    Statement vacuum(db_, "PRAGMA incremental_vacuum(" + std::to_string(kVacuumPages) + ")", path_,
                     "retention: give free pages back");
    vacuum.run();
  }
  return report;
}

std::optional<TimePoint> Store::oldest_position_update() const {
  Statement s(db_, "SELECT min(updated_ms) FROM positions", path_, "oldest read position");
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return from_unix_ms(s.int64(0));
}

void Store::enable_incremental_vacuum() {
  constexpr int64_t kIncremental = 2;
  {
    Statement s(db_, "PRAGMA auto_vacuum", path_, "read auto_vacuum");
    if (s.step() && s.int64(0) == kIncremental) return;
  }
  exec("PRAGMA auto_vacuum=INCREMENTAL", "set auto_vacuum=INCREMENTAL");
  exec("VACUUM", "vacuum (once, to turn on incremental auto-vacuum)");
}

}  // namespace faultd
