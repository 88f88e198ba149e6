// Private to the store: a thin RAII layer over the sqlite3 C API so store.cpp reads as SQL plus
// bindings. Every SQLite failure becomes a StoreError that names the database, the operation and
// SQLite's own message; a damaged file additionally says how to recover.
//
// Lifecycle: a Statement is prepared once and finalized in its destructor; it must not outlive
// the connection. A statement that was stepped holds a read snapshot until it is reset, so every
// use goes through a StatementScope, which resets (and clears bindings) on every exit path.
//
// Threading: none; the owning Store's thread only.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace faultd::sqlite {

// What an operator should do when state.db is damaged: the store is a cache of progress, not
// the only copy of anything, so moving it aside is always safe.
std::string recovery_hint(const std::string& path);

// Throws StoreError("<path>: <op>: <sqlite message>"), plus the recovery hint when the primary
// result code says the file is corrupt or not a database, or a permissions hint when it says
// the file or directory cannot be written.
[[noreturn]] void fail(sqlite3* db, int rc, const std::string& path, std::string_view op);

// Runs SQL without parameters (schema, BEGIN/COMMIT, pragmas with literal values).
void exec(sqlite3* db, const char* sql, const std::string& path, std::string_view op);

class Statement {
 public:
  // `persistent`: a hint to SQLite that the statement is cached and reused many times.
  Statement(sqlite3* db, std::string_view sql, const std::string& path, std::string_view op,
            bool persistent = false);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite. Unsigned 64-bit values (offsets, inode numbers,
  // fingerprints) are stored as the int64 with the same bit pattern: lossless both ways.
  void bind_int(int index, int64_t value);
  void bind_u64(int index, uint64_t value) { bind_int(index, static_cast<int64_t>(value)); }
  void bind_text(int index, std::string_view value);  // bytes kept as they are (any encoding)
  void bind_null(int index);

  bool step();  // true: a row is available; false: done
  void run();   // steps to completion, ignoring rows

  bool is_null(int column) const;
  int64_t int64(int column) const;
  uint64_t u64(int column) const { return static_cast<uint64_t>(int64(column)); }
  std::string text(int column) const;

  void reset() noexcept;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string& path_;  // the owning Store's, which outlives its statements
  std::string op_;
};

// Resets the statement when the scope ends, whether by return or by exception.
class StatementScope {
 public:
  explicit StatementScope(Statement& s) : s_(s) { s_.reset(); }
  ~StatementScope() { s_.reset(); }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;
  Statement* operator->() { return &s_; }
  Statement& operator*() { return s_; }

 private:
  Statement& s_;
};

}  // namespace faultd::sqlite
