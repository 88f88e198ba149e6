// The kmsg source against real descriptors: a regular file and a FIFO standing in for
// /dev/kmsg, and the real /dev/kmsg (read-only) when this machine lets us read it.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "collectors/kmsg/kmsg_source.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::TempDir;

namespace {

struct Got {
  uint64_t start = 0, end = 0, first_line = 0, end_line = 0;
  FileIdentity identity;
  std::string path;
  std::string data;
};

class Sink final : public ChunkSink {
 public:
  bool on_chunk(const Chunk& c) override {
    if (refuse_next > 0) {
      --refuse_next;
      ++refused;
      return false;
    }
    got.push_back({c.start_offset, c.end_offset, c.first_line, c.end_line, c.identity,
                   std::string(c.path), std::string(c.data)});
    return true;
  }
  std::vector<uint64_t> seqs() const {
    std::vector<uint64_t> out;
    for (const auto& g : got) out.push_back(g.start);
    return out;
  }
  std::vector<Got> got;
  int refuse_next = 0;
  int refused = 0;
};

const TimePoint kNow = TimePoint{} + std::chrono::hours(1000);

KmsgSourceConfig config(const TempDir& dir, const std::string& boot = "boot-a") {
  KmsgSourceConfig c;
  c.name = "kernel";
  c.path = dir.file("kmsg");
  c.boot_id_path = dir.write("boot_id." + boot, boot + "\n");
  return c;
}

// A position store keyed like the real one: (source, dev, ino).
struct Positions {
  std::map<std::tuple<std::string, uint64_t, uint64_t>, ReadPosition> stored;
  void save(const std::vector<ReadPosition>& ps) {
    for (const auto& p : ps) stored[{p.source, p.identity.dev, p.identity.ino}] = p;
  }
  PositionLookup lookup() {
    return [this](const std::string& s, uint64_t dev, uint64_t ino) -> std::optional<ReadPosition> {
      auto it = stored.find({s, dev, ino});
      if (it == stored.end()) return std::nullopt;
      return it->second;
    };
  }
};

const std::string kRecords =
    "6,100,5000000,-;Linux version 6.1.0\n"
    "4,101,1126635824,-;NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU "
    "has fallen off the bus.\n"
    " SUBSYSTEM=pci\n"
    " DEVICE=+pci:0000:05:00.0\n"
    "garbage that is no record\n"
    "3,102,251681794072,-;[ascend] [ERROR] [drv_soft_fault] [heart_beat_judge 318] "
    "<kworker/5:1H:39365> Heartbeat lost! (device=2; old_count=77;\n";

}  // namespace

TEST_CASE("kmsg: one chunk per record, offsets are sequence numbers", "[collectors][kmsg]") {
  TempDir dir;
  auto cfg = config(dir);
  dir.write("kmsg", kRecords);
  KmsgSource source(cfg, nullptr);
  Sink sink;
  CHECK_FALSE(source.poll_once(kNow, sink));
  REQUIRE(sink.seqs() == std::vector<uint64_t>{100, 101, 102});
  CHECK(sink.got[0].data == "<6>[    5.000000] Linux version 6.1.0\n");
  CHECK(sink.got[1].data ==
        "<4>[ 1126.635824] NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU "
        "has fallen off the bus.\n");
  CHECK(sink.got[2].data.rfind("<3>[251681.794072] [ascend] [ERROR] [drv_soft_fault]", 0) == 0);
  for (const auto& g : sink.got) {
    CHECK(g.end == g.start + 1);
    CHECK(g.first_line == g.start + 1);
    CHECK(g.end_line == g.first_line);
    CHECK(g.identity.dev == 0);
    CHECK(g.identity.ino == boot_identity("boot-a"));
    CHECK(g.path == cfg.path);
  }
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1);  // the garbage line only
  CHECK(source.stats().lines == 3);
  auto pos = source.positions();
  REQUIRE(pos.size() == 1);
  CHECK(pos[0].offset == 103);
  CHECK(pos[0].identity.ino == boot_identity("boot-a"));
}

TEST_CASE("kmsg: resume in the same boot skips committed records, a new boot starts over",
          "[collectors][kmsg]") {
  TempDir dir;
  dir.write("kmsg", kRecords);
  Positions store;
  {
    KmsgSource first(config(dir), store.lookup());
    Sink sink;
    first.poll_once(kNow, sink);
    sink.got.pop_back();  // pretend the daemon died before committing the last record
    store.save({{"kernel", "", first.positions()[0].identity, 102, 102}});
  }
  SECTION("same boot id: only the uncommitted record again") {
    KmsgSource again(config(dir), store.lookup());
    Sink sink;
    again.poll_once(kNow, sink);
    CHECK(sink.seqs() == std::vector<uint64_t>{102});
  }
  SECTION("another boot id: everything in the buffer") {
    KmsgSource rebooted(config(dir, "boot-b"), store.lookup());
    Sink sink;
    rebooted.poll_once(kNow, sink);
    CHECK(sink.seqs() == std::vector<uint64_t>{100, 101, 102});
    CHECK(sink.got[0].identity.ino == boot_identity("boot-b"));
  }
}

TEST_CASE("kmsg: a refused record is offered again first", "[collectors][kmsg]") {
  TempDir dir;
  dir.write("kmsg", kRecords);
  KmsgSource source(config(dir), nullptr);
  Sink sink;
  sink.refuse_next = 1;
  source.poll_once(kNow, sink);
  CHECK(sink.got.empty());  // nothing after the refused record either
  CHECK(source.stats().error_count(SourceErrorKind::Commit) == 1);
  CHECK(source.positions()[0].offset == 0);
  source.poll_once(kNow, sink);
  CHECK(sink.seqs() == std::vector<uint64_t>{100, 101, 102});
}

TEST_CASE("kmsg: a partial record waits for its newline; fairness cap", "[collectors][kmsg]") {
  TempDir dir;
  auto cfg = config(dir);
  cfg.max_records_per_poll = 2;
  dir.write("kmsg", "6,1,1,-;one\n6,2,2,-;two\n6,3,3,-;thr");
  KmsgSource source(cfg, nullptr);
  Sink sink;
  CHECK(source.poll_once(kNow, sink));  // cap reached: more may be there
  CHECK(sink.seqs() == std::vector<uint64_t>{1, 2});
  CHECK_FALSE(source.poll_once(kNow, sink));
  CHECK(sink.seqs() == std::vector<uint64_t>{1, 2});
  dir.write("kmsg", "ee\n", /*append=*/true);
  source.poll_once(kNow, sink);
  REQUIRE(sink.seqs() == std::vector<uint64_t>{1, 2, 3});
  CHECK(sink.got[2].data == "<6>[    0.000003] three\n");
  // A stand-in file that repeats old records (rewritten in place) does not repeat findings.
  dir.write("kmsg", "6,2,2,-;two again\n6,4,4,-;four\n", /*append=*/true);
  source.poll_once(kNow, sink);
  CHECK(sink.seqs() == std::vector<uint64_t>{1, 2, 3, 4});
}

TEST_CASE("kmsg: a FIFO wakes the source; a missing device is counted once and retried",
          "[collectors][kmsg]") {
  TempDir dir;
  auto cfg = config(dir);
  SECTION("missing") {
    KmsgSource source(cfg, nullptr);
    Sink sink;
    CHECK(source.wake_fd() == -1);
    source.poll_once(kNow, sink);
    source.poll_once(kNow, sink);
    CHECK(source.stats().error_count(SourceErrorKind::Read) == 1);
    CHECK(source.stats().files == 0);
    dir.write("kmsg", "6,7,1,-;late\n");
    source.poll_once(kNow, sink);
    CHECK(sink.seqs() == std::vector<uint64_t>{7});
    CHECK(source.wake_fd() >= 0);
    CHECK(source.stats().files == 1);
  }
  SECTION("fifo") {
    REQUIRE(::mkfifo(cfg.path.c_str(), 0600) == 0);
    KmsgSource source(cfg, nullptr);
    REQUIRE(source.wake_fd() >= 0);
    const int writer = ::open(cfg.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(writer >= 0);
    Sink sink;
    CHECK_FALSE(source.poll_once(kNow, sink));  // EAGAIN: nothing yet
    pollfd p{source.wake_fd(), POLLIN, 0};
    CHECK(::poll(&p, 1, 0) == 0);
    const std::string rec = "4,9,2000000,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE\n";
    REQUIRE(::write(writer, rec.data(), rec.size()) == static_cast<ssize_t>(rec.size()));
    CHECK(::poll(&p, 1, 5000) == 1);  // readable: the app would poll now
    source.poll_once(kNow, sink);
    CHECK(sink.seqs() == std::vector<uint64_t>{9});
    ::close(writer);
  }
}

TEST_CASE("kmsg: the real /dev/kmsg, read-only", "[collectors][kmsg]") {
  const int probe = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (probe < 0) {
    WARN("/dev/kmsg is not readable here; skipped");
    return;
  }
  ::close(probe);
  KmsgSourceConfig cfg;
  cfg.name = "kernel";
  cfg.max_records_per_poll = 1u << 20;
  Positions store;
  KmsgSource source(cfg, store.lookup());
  Sink sink;
  source.poll_once(kNow, sink);
  REQUIRE_FALSE(sink.got.empty());
  const auto seqs = sink.seqs();
  for (size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i] > seqs[i - 1]);
  for (const auto& g : sink.got) {
    CHECK(g.data.front() == '<');
    CHECK(g.data.back() == '\n');
  }
  const auto pos = source.positions();
  REQUIRE(pos.size() == 1);
  CHECK(pos[0].offset == seqs.back() + 1);
  // A restart in the same boot hands out nothing already committed.
  store.save(pos);
  KmsgSource again(cfg, store.lookup());
  Sink after;
  again.poll_once(kNow, after);
  for (uint64_t s : after.seqs()) CHECK(s > seqs.back());
}
