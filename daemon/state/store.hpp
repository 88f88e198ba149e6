// The store is the truth: device states, the fault journal, the action journal and read
// positions live in one SQLite database (WAL mode) under state_dir. State is loaded from here at
// start and never reset by a restart.
//
// Atomicity: a finding and the read position that produced it are written in one transaction
// (`Store::Txn`), so a kill -9 at any moment neither loses nor repeats a finding. The fault
// journal also refuses a second row for the same (source, file identity, offset, rule), which
// makes a replayed chunk harmless even if a position was lost.
//
// A finding whose identity is {dev 0, ino 0} (not read from a file: a command's output, ...)
// has no stable origin to deduplicate on, so it is always recorded. A source that can replay
// such input should give its findings a stable pseudo identity and offset.
//
// Schema: versioned (PRAGMA user_version); `migrate()` runs each step in order inside a
// transaction, so an older database is upgraded in place and a newer one is refused. Enum values
// are stored as their text names, times as Unix milliseconds, unsigned 64-bit values as the int64
// with the same bits.
//
// Errors: every SQLite failure is a StoreError naming the path, the operation and the cause; a
// damaged file's error says how to recover (move state.db aside).
//
// Lifecycle: open at start-up (creating and migrating as needed), close at exit. At most one
// Txn is open at a time, and it must not outlive the Store.
//
// Threading: one Store per process, used from the app's io thread only (the connection is opened
// with SQLITE_OPEN_NOMUTEX). Other processes may read the file concurrently (WAL).
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/core/types.hpp"
#include "daemon/state/inventory.hpp"
#include "daemon/state/lifecycle.hpp"
#include "daemon/state/records.hpp"

struct sqlite3;

namespace faultd {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FaultQuery {
  std::string device;              // empty: all devices
  std::string serial;              // empty: any; else only findings on the card with this serial
  std::string job;                 // empty: any; else only findings of this job
  std::optional<TimePoint> since;  // only faults at or after
  // Only faults after this one in the newest-first order (the next page); the fault must exist.
  std::optional<int64_t> before_id;
  size_t limit = 1000;  // newest first
};

class Store {
 public:
  static constexpr int kSchemaVersion = 6;

  // Opens or creates the database at `path` (the directory must exist), sets WAL mode and
  // migrates. Throws StoreError with a message naming the path and the cause (corrupt file,
  // read-only, newer schema, ...).
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version() const;

  // A write transaction (BEGIN IMMEDIATE). Destroyed without commit() → rolled back. Once a
  // method has thrown, the transaction is only good for rolling back: further calls and
  // commit() throw StoreError.
  class Txn {
   public:
    explicit Txn(Store& store);
    ~Txn();
    Txn(const Txn&) = delete;
    Txn& operator=(const Txn&) = delete;
    // Records the finding and sets f.id. Returns false (and sets f.id to the existing row) when
    // the same (source, identity.dev, identity.ino, identity.generation, offset, rule) was
    // recorded before.
    bool insert_finding(Finding& f);
    // Updates the device row to t.to (reason, fault, level, rule, code, since=t.time) and
    // appends t to the transition journal.
    void apply_transition(const Transition& t);
    void save_position(const ReadPosition& p);
    void save_incident(const Incident& i);  // insert or update by id
    // Diagnosis verdict and acknowledgement of a device row (no transition).
    void mark_device(const DeviceRecord& d);
    // Journals `action` as Pending for the fault (see ensure_action) in this transaction, so a
    // crash between the commit and the hook's start leaves it for resume_journal to run.
    // Returns the row (an existing one as it is).
    ActionRecord journal_action(const std::string& action, const std::string& device,
                                int64_t fault_id, TimePoint now);
    void update_action(const ActionRecord& a);  // as Store::update_action, in this transaction
    // The node's inventory: a device's record (insert or replace), a forgotten device.
    void save_inventory_device(const InventoryDevice& d);
    void remove_inventory_device(const std::string& device);
    void commit();  // throws StoreError; the transaction is rolled back then

   private:
    template <typename F>
    auto guarded(const char* op, F&& f);
    Store& store_;
    bool done_ = false;
    bool failed_ = false;
  };

  void save_positions(const std::vector<ReadPosition>& positions);  // one transaction
  // The saved position of a file, or nothing. The caller compares the stored fingerprint with
  // the file's to tell a rotated-in file that reused the inode from the one it read.
  std::optional<ReadPosition> find_position(const std::string& source, uint64_t dev,
                                            uint64_t ino) const;

  // Whether `source` completed a first scan in an earlier run (see FileSourceConfig::start_at).
  bool source_seen(const std::string& source) const;
  void mark_source_seen(const std::string& source, TimePoint now);

  std::vector<DeviceRecord> load_devices() const;
  std::vector<InventoryDevice> load_inventory() const;
  // The oldest `max_open` open incidents and the newest `max_closed` closed ones whose last
  // finding is at or after `since` (for escalation windows), in id order: what the lifecycle
  // holds, bounded whatever the database holds. Open incidents past `max_open` (a database
  // written before the lifecycle's caps) are closed here with a note, so that the store and the
  // lifecycle agree on what is open.
  std::vector<Incident> load_incidents(TimePoint since, size_t max_open, size_t max_closed);
  // Newest first; `device` empty: all; `open_only`: only open ones; `before_id`: only older
  // ones (the next page).
  std::vector<Incident> query_incidents(const std::string& device, bool open_only, size_t limit,
                                        std::optional<int64_t> before_id = std::nullopt) const;
  std::vector<Finding> query_faults(const FaultQuery& q) const;  // newest (by time) first
  std::optional<Finding> find_fault(int64_t id) const;
  // Newest (by journal order) first; `device` empty: all devices; `before_id`: only older ones
  // (the next page).
  std::vector<Transition> query_transitions(const std::string& device, size_t limit,
                                            std::optional<int64_t> before_id = std::nullopt) const;

  // Action journal. `ensure_action` returns the existing row for (action, device, fault_id) or
  // inserts a Pending one: the key that makes hooks idempotent across restarts.
  ActionRecord ensure_action(const std::string& action, const std::string& device, int64_t fault_id,
                             TimePoint now);
  // Writes status, attempts, exit code, output, detail, times and process of the row `a.id`; throws
  // StoreError when there is no such row. (action, device, fault_id, created) never change.
  void update_action(const ActionRecord& a);
  std::vector<ActionRecord> unfinished_actions() const;  // Pending or Running, oldest first
  // Newest first; `device` empty: all devices; `since`: created at or after; `before_id`: only
  // older rows (the next page).
  std::vector<ActionRecord> query_actions(const std::string& device, size_t limit,
                                          std::optional<TimePoint> since = std::nullopt,
                                          std::optional<int64_t> before_id = std::nullopt) const;

  // Retention: deletes up to `batch` rows per journal that are older than `r.max_age` (by
  // faultd's clock when it journaled them) or beyond the newest `r.max_rows`, oldest first, and
  // gives the freed pages back to the file system. Rows a device, an open incident or an
  // unfinished action still refers to are kept. Read positions are pruned by age only; the
  // caller saves the positions of the files it follows first (see oldest_position_update).
  PruneReport prune(const Retention& r, TimePoint now, int64_t batch);
  // The oldest `updated` time of a saved read position, if there is any.
  std::optional<TimePoint> oldest_position_update() const;
  // Turns on incremental auto-vacuum (so that pruning shrinks the file). A database created
  // before needs a one-time VACUUM, which this runs; throws StoreError when it fails (a full
  // disk: pruned pages are then still reused, the file just does not shrink).
  void enable_incremental_vacuum();

 private:
  struct Cache;  // prepared statements reused by the hot paths

  void open();
  void exec(const char* sql, const char* op) const;
  void rollback_quietly() noexcept;
  void migrate();
  int read_user_version() const;

  sqlite3* db_ = nullptr;
  std::string path_;
  std::unique_ptr<Cache> cache_;
  bool txn_open_ = false;
};

}  // namespace faultd
