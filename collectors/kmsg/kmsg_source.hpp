// The `kmsg` source: the kernel log read from /dev/kmsg, where the host driver reports a lost
// device heartbeat and the NVIDIA driver its Xid events.
//
// Specification (tests: tests/unit/collectors_kmsg_record_test.cpp,
// tests/integration/collectors_kmsg_source_test.cpp):
// - Input: records "prio,seq,usec,flags[,...];message\n", each followed by zero or more
//   continuation lines " KEY=value\n" (the device dictionary), which are skipped. /dev/kmsg
//   returns one record per read(2); a regular file or FIFO standing in for it (tests, a captured
//   buffer) is split into lines, a partial last line held until its newline arrives.
// - Output: one Chunk per record, whose single line is the message behind the prefix a kmsg or
//   pstore dump shows, "<prio>[ seconds.micros] message" (docs/log-formats.md §10), so rules that
//   match dmesg, journald and syslog forms match it too. The chunk's offsets are sequence
//   numbers: start_offset = seq, end_offset = seq + 1 (and line = seq + 1), so a finding's
//   offset is its record's seq and the fault journal's (source, file, offset, rule) key makes a
//   re-read after a crash idempotent.
// - Identity: dev 0, ino = a stable hash of the boot id (/proc/sys/kernel/random/boot_id). The
//   sequence restarts at every boot; the boot id tells the boots apart.
// - Resume: with a stored position for this boot's identity, records with seq below it are
//   skipped (they were committed before the restart). No stored position (first start, or a
//   reboot) starts at the beginning of the ring buffer.
// - Overwritten records: read(2) fails with EPIPE when the ring buffer overwrote records before
//   they were read; counted as errors{kind=overrun}, then reading continues with the oldest
//   record left. A record that does not parse is counted as errors{kind=parse} and skipped.
// - Commit: a record the sink refuses is kept and offered again first at the next poll
//   (errors{kind=commit}); nothing after it is handed out before it.
// - Open failures (permission denied, no such device) are counted once per episode and retried
//   at every poll.
// - Fairness: at most `max_records_per_poll` records per poll; poll_once then returns true.
//
// Driving it: poll_once(now, sink) whenever wake_fd() (the kmsg descriptor, readable when a new
// record is there) is readable, and at poll_interval() (to retry a failed open).
//
// Threading: single-threaded (the app's io thread); stats are atomics read by the exporter.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "collectors/collector.hpp"

namespace faultd {

struct KmsgSourceConfig {
  std::string name;
  std::string path = "/dev/kmsg";
  std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
  size_t max_records_per_poll = 1024;
  Duration poll_interval = std::chrono::seconds(5);  // retry of a failed open
  friend bool operator==(const KmsgSourceConfig&, const KmsgSourceConfig&) = default;
};

// One record header and its message, as parsed from "prio,seq,usec,flags;message".
struct KmsgRecord {
  unsigned prio = 0;  // syslog priority: facility * 8 + level
  uint64_t seq = 0;
  uint64_t usec = 0;  // monotonic time since boot
  std::string_view message;
};

// Nullopt if the line is not a record header (a continuation line starts with a space and is
// not one either). The line has no trailing '\n'.
std::optional<KmsgRecord> parse_kmsg_record(std::string_view line);

// "<prio>[ seconds.micros] message", the seconds right-aligned in 5 columns as the kernel
// prints them ("<4>[ 1126.635824] NVRM: Xid ...").
std::string format_kmsg_line(const KmsgRecord& record);

// The identity's inode for a boot id (FNV-1a of the trimmed text; never 0).
uint64_t boot_identity(std::string_view boot_id);

class KmsgSource final : public Source {
 public:
  KmsgSource(KmsgSourceConfig config, PositionLookup lookup);
  ~KmsgSource() override;
  KmsgSource(const KmsgSource&) = delete;
  KmsgSource& operator=(const KmsgSource&) = delete;

  const std::string& name() const override;
  bool poll_once(TimePoint now, ChunkSink& sink) override;
  Duration poll_interval() const override;
  int wake_fd() const override;  // the kmsg descriptor, -1 while it cannot be opened
  std::vector<ReadPosition> positions() const override;
  SourceStats& stats() override;

  // The sequence number the next record handed out must have at least.
  uint64_t next_seq() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultd
