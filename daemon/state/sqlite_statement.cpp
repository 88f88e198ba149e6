#include "daemon/state/sqlite_statement.hpp"

#include <limits>

#include "daemon/state/store.hpp"

namespace faultd::sqlite {

std::string recovery_hint(const std::string& path) {
  return "to recover, stop faultd and move " + path + " (with " + path + "-wal and " + path +
         "-shm, if present) aside; faultd then starts with empty state and re-reads logs from "
         "their start_at positions";
}

void fail(sqlite3* db, int rc, const std::string& path, std::string_view op) {
  std::string message = path + ": " + std::string(op) + ": ";
  // sqlite3_errmsg describes the most recent failure on the connection; when that is not the
  // failure we are reporting (e.g. no connection), fall back to the text of the code itself.
  const bool current = db != nullptr && (sqlite3_errcode(db) & 0xff) == (rc & 0xff);
  message += current ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    message +=
        " (the state database is damaged or is not a faultd database; " + recovery_hint(path) + ")";
  } else if (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN || primary == SQLITE_PERM) {
    message += " (faultd must be able to write " + path +
               " and its directory, where SQLite keeps the -wal and -shm files)";
  }
  throw StoreError(message);
}

void exec(sqlite3* db, const char* sql, const std::string& path, std::string_view op) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  sqlite3_free(err);  // the same text as sqlite3_errmsg, which fail() reads
  if (rc != SQLITE_OK) fail(db, rc, path, op);
}

Statement::Statement(sqlite3* db, std::string_view sql, const std::string& path,
                     std::string_view op, bool persistent)
    : db_(db), path_(path), op_(op) {
  if (sql.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw StoreError(path_ + ": " + op_ + ": statement too long");
  }
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt_, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    fail(db_, rc, path_, op_);
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind_int(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) fail(db_, rc, path_, op_);
}

void Statement::bind_text(int index, std::string_view value) {
  // A null data pointer would bind SQL NULL, not an empty string.
  const char* data = value.data() != nullptr ? value.data() : "";
  const int rc =
      sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) fail(db_, rc, path_, op_);
}

void Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) fail(db_, rc, path_, op_);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, rc, path_, op_);
}

void Statement::run() {
  while (step()) {
  }
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::text(int column) const {
  // Text first, then its size: the order SQLite documents as safe.
  const auto* data = sqlite3_column_text(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || size <= 0) return {};
  return std::string(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_);  // returns the last step's error, already reported by step()
  sqlite3_clear_bindings(stmt_);
}

}  // namespace faultd::sqlite
