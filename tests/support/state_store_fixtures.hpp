// Shared by the state_store_* tests: sample records and a second, raw SQLite connection for
// looking at (or tampering with) the file behind the Store's back.
#pragma once

#include <sqlite3.h>

#include <stdexcept>
#include <string>

#include "daemon/core/types.hpp"

namespace faultd::testing {

// A plain sqlite3 connection, as an operator's `sqlite3 state.db` would be.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      std::string msg = sqlite3_errmsg(db_);
      sqlite3_close(db_);
      throw std::runtime_error("RawDb: " + msg);
    }
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err != nullptr ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error("RawDb: " + sql + ": " + msg);
    }
  }

  // The first column of the first row as text ("" when there is no row).
  std::string scalar(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      throw std::runtime_error("RawDb: " + sql + ": " + sqlite3_errmsg(db_));
    }
    std::string out;
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      const auto* text = sqlite3_column_text(st, 0);
      if (text != nullptr) out = reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw std::runtime_error("RawDb: step failed");
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Times with whole milliseconds: the store's resolution.
inline TimePoint at_ms(int64_t ms) { return from_unix_ms(ms); }

inline Finding sample_finding(uint64_t offset, const std::string& device = "npu-3",
                              int64_t time_ms = 1'760'000'000'000) {
  Finding f;
  f.rule = "hccl-timeout";
  f.source = "device-plugin";
  f.device = device;
  f.level = FaultLevel::RestartNPU;
  f.code = "80818C00";
  f.file = "/var/log/mindx-dl/devicePlugin/devicePlugin.log";
  f.line = offset / 10 + 1;
  f.offset = offset;
  f.identity = FileIdentity{2049, 131'075, 0x1234'5678'9abc'def0ULL, 1024};
  f.text = "[ERROR] hccl timeout on device " + device;
  f.time = at_ms(time_ms);
  f.noticed = at_ms(time_ms + 7);
  return f;
}

inline ReadPosition sample_position(uint64_t offset, const std::string& source = "device-plugin") {
  ReadPosition p;
  p.source = source;
  p.path = "/var/log/mindx-dl/devicePlugin/devicePlugin.log";
  p.identity = FileIdentity{2049, 131'075, 0x1234'5678'9abc'def0ULL, 1024};
  p.offset = offset;
  p.line = offset / 10;
  return p;
}

}  // namespace faultd::testing
