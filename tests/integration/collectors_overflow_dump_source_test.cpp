// The overflow_dump source over real directory trees: both layouts, companions, inotify
// wake-ups, restarts with stored positions, refused commits and half-written JSON.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collectors/overflow_dump/overflow_dump_source.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::TempDir;

namespace {

class Sink final : public ChunkSink {
 public:
  bool on_chunk(const Chunk& c) override {
    if (refuse_next > 0) {
      --refuse_next;
      return false;
    }
    CHECK(c.start_offset == 0);
    CHECK(c.end_offset == 1);
    CHECK(c.first_line == 1);
    CHECK(c.end_line == 1);
    CHECK(c.identity.ino != 0);
    std::string text(c.data);
    CHECK(text.back() == '\n');
    text.pop_back();
    CHECK(text.find('\n') == std::string::npos);
    lines.push_back(text);
    return true;
  }
  std::vector<std::string> lines;
  int refuse_next = 0;
};

const TimePoint kStart = SystemClock::now();

const char* const kCannDump = "20200808163566/0/11/0/OpDebug.Node_Opdebug.59.1597922031178434";
const char* const kMsDump =
    "1/20240101120000/5/kernel_graph_0/2/7/Opdebug.Node_OpDebug.12.2.1700000000000001";
const char* const kAiCore272 =
    R"({"DHA Atomic Add": {"model_id": 0, "stream_id": 0, "task_id": 0, "task_type": 0,
        "status": 0}, "L2 Atomic Add": {"model_id": 0, "stream_id": 0, "task_id": 0,
        "task_type": 0, "status": 0}, "AI Core": {"model_id": 2, "stream_id": 2, "task_id": 12,
        "task_type": 0, "block_idx": 1, "status": 272}})";

OverflowDumpSourceConfig config(const TempDir& dir) {
  OverflowDumpSourceConfig c;
  c.name = "overflow";
  c.root = dir.path().string();
  return c;
}

struct Positions {
  std::map<std::pair<uint64_t, uint64_t>, ReadPosition> stored;
  void save(const std::vector<ReadPosition>& ps) {
    for (const auto& p : ps) stored[{p.identity.dev, p.identity.ino}] = p;
  }
  PositionLookup lookup() {
    return [this](const std::string&, uint64_t dev, uint64_t ino) -> std::optional<ReadPosition> {
      auto it = stored.find({dev, ino});
      if (it == stored.end()) return std::nullopt;
      return it->second;
    };
  }
};

bool wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 5000) == 1;
}

}  // namespace

TEST_CASE("overflow_dump: both layouts, companions, and what is not a dump",
          "[collectors][overflow]") {
  TempDir dir;
  const std::string root = dir.path().string();
  dir.write(kCannDump, "binary");
  dir.write(kMsDump, "binary");
  dir.write(std::string(kMsDump) + ".output.0.json", kAiCore272);  // companion: no record
  // A converted copy without its dump: itself the record, decoded.
  dir.write("9/20240101120000/1/net/3/4/Opdebug.Node_OpDebug.8.1.1700000000000009.output.0.json",
            R"({"DHA Atomic Add": {"status": 2546}})");
  dir.write("20200808163566/0/11/0/Conv2D.conv1.59.1597922031178434", "normal dump data");
  dir.write("stray/OpDebug.Node_Opdebug.1.2", "no layout");
  OverflowDumpSource source(config(dir), nullptr);
  Sink sink;
  CHECK_FALSE(source.poll_once(kStart, sink));
  std::sort(sink.lines.begin(), sink.lines.end());
  REQUIRE(sink.lines.size() == 3);
  CHECK(sink.lines[0] ==
        "overflow dump: device=0 model=11 iteration=0 task=59 timestamp=1597922031178434 file=" +
            root + "/" + kCannDump);
  CHECK(sink.lines[1] ==
        "overflow dump: device=1 model=3 model_name=net iteration=4 task=8 stream=1 "
        "timestamp=1700000000000009 overflow=dha status=2546 cause=0x9 file=" +
            root +
            "/9/20240101120000/1/net/3/4/Opdebug.Node_OpDebug.8.1.1700000000000009.output.0.json");
  CHECK(sink.lines[2] ==
        "overflow dump: device=5 model=2 model_name=kernel_graph_0 iteration=7 task=12 stream=2 "
        "timestamp=1700000000000001 overflow=aicore status=272 cause=0x00000010+0x00000100 "
        "file=" +
            root + "/" + kMsDump);
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1);  // the stray one
  CHECK(source.stats().lines == 3);
  // Nothing twice, and the stray file is counted once.
  CHECK_FALSE(source.poll_once(kStart + std::chrono::minutes(1), sink));
  CHECK(sink.lines.size() == 3);
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1);
  for (const auto& p : source.positions()) CHECK(p.offset == 1);
}

// Security audit F20: the names that fit no layout were remembered for the life of the
// process, even after deletion (R19: +21 MB over 90,000 names created and deleted).
TEST_CASE("overflow_dump: names that fit no layout are forgotten once deleted",
          "[collectors][overflow]") {
  TempDir dir;
  OverflowDumpSource source(config(dir), nullptr);
  Sink sink;
  TimePoint now = kStart;
  for (int round = 0; round < 5; ++round) {
    std::vector<std::string> names;
    names.reserve(200);
    for (int i = 0; i < 200; ++i) {
      names.push_back(
          dir.write("stray/OpDebug.Node_Opdebug." + std::to_string(round) + "." + std::to_string(i),
                    "no layout"));
    }
    now += std::chrono::minutes(1);
    source.poll_once(now, sink);
    CHECK(source.refused_path_count() == 200);
    for (const auto& n : names) std::filesystem::remove(n);
  }
  now += std::chrono::minutes(1);
  source.poll_once(now, sink);
  CHECK(source.refused_path_count() == 0);
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1000);  // each name once
  CHECK(sink.lines.empty());
}

// Security audit F19 and F4: the job writes the dump tree, so it chooses the directory names
// and may plant a companion that is a FIFO or a link to a device.
TEST_CASE("overflow_dump: a job's names cannot forge a record, nor make it open a FIFO",
          "[collectors][overflow]") {
  TempDir dir;
  const std::string root = dir.path().string();
  const std::string model_dir = "1/20240101120000/3/net\noverflow dump: device=7 forged/2/7/";
  const std::string dump = model_dir + "Opdebug.Node_OpDebug.12.2.1700000000000001";
  dir.write(dump, "binary");
  const std::string fifo = dir.file(model_dir + "fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE(::symlink(fifo.c_str(), dir.file(dump + ".output.0.json").c_str()) == 0);
  OverflowDumpSource source(config(dir), nullptr);
  Sink sink;
  source.poll_once(kStart, sink);  // the companion is not readable: it may still be written
  source.poll_once(SystemClock::now() + std::chrono::minutes(1), sink);
  REQUIRE(sink.lines.size() == 1);  // one record, its newline written as '?'
  CHECK(sink.lines[0].rfind("overflow dump: device=3 model=2 model_name=net?overflow dump: "
                            "device=7 forged iteration=7",
                            0) == 0);
  CHECK(sink.lines[0].find("overflow=undecoded") != std::string::npos);  // the FIFO: not read
  // The FIFO was never opened for reading: a writer still finds no reader.
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  CHECK(writer < 0);
  CHECK(errno == ENXIO);
}

TEST_CASE("overflow_dump: inotify wakes the source for a new dump in a new directory",
          "[collectors][overflow]") {
  TempDir dir;
  OverflowDumpSource source(config(dir), nullptr);
  Sink sink;
  source.poll_once(kStart, sink);
  CHECK(sink.lines.empty());
  REQUIRE(source.wake_fd() >= 0);
  // The runtime creates the directories level by level; each level is a wake-up and a rescan
  // that watches the new directory. `now` moves by a second a level, past the pacing gap
  // between requested walks and short of scan_interval: only the wake-up can trigger the scan.
  std::filesystem::path p = dir.path();
  TimePoint now = kStart;
  for (const char* level : {"20200808163566", "3", "1", "5"}) {
    p /= level;
    std::filesystem::create_directory(p);
    REQUIRE(wait_readable(source.wake_fd()));
    now += std::chrono::seconds(1);
    source.poll_once(now, sink);
  }
  dir.write("20200808163566/3/1/5/OpDebug.Node_Opdebug.7.1597922031178499", "x");
  REQUIRE(wait_readable(source.wake_fd()));
  now += std::chrono::seconds(1);
  source.poll_once(now, sink);
  REQUIRE(sink.lines.size() == 1);
  CHECK(sink.lines[0].rfind("overflow dump: device=3 model=1 iteration=5 task=7 ", 0) == 0);
}

TEST_CASE("overflow_dump: a restart does not hand out known dumps again",
          "[collectors][overflow]") {
  TempDir dir;
  dir.write(kCannDump, "binary");
  Positions store;
  {
    OverflowDumpSource first(config(dir), store.lookup());
    Sink sink;
    first.poll_once(kStart, sink);
    REQUIRE(sink.lines.size() == 1);
    store.save(first.positions());
  }
  dir.write("20200808163566/0/11/1/OpDebug.Node_Opdebug.60.1597922031178999", "binary");
  OverflowDumpSource again(config(dir), store.lookup());
  Sink sink;
  again.poll_once(kStart, sink);
  REQUIRE(sink.lines.size() == 1);
  CHECK(sink.lines[0].find("task=60") != std::string::npos);
  CHECK(again.positions().size() == 2);
  // A deleted dump is forgotten.
  std::filesystem::remove(dir.file(kCannDump));
  again.poll_once(kStart + std::chrono::minutes(1), sink);
  CHECK(again.positions().size() == 1);
}

TEST_CASE("overflow_dump: a refused record is offered again", "[collectors][overflow]") {
  TempDir dir;
  dir.write(kCannDump, "binary");
  OverflowDumpSource source(config(dir), nullptr);
  Sink sink;
  sink.refuse_next = 1;
  source.poll_once(kStart, sink);
  CHECK(sink.lines.empty());
  CHECK(source.stats().error_count(SourceErrorKind::Commit) == 1);
  CHECK(source.positions().empty());
  source.poll_once(kStart, sink);  // the refusal asked for a rescan
  CHECK(sink.lines.size() == 1);
}

TEST_CASE("overflow_dump: a JSON still being written waits until it settles",
          "[collectors][overflow]") {
  TempDir dir;
  const std::string json =
      "1/20240101120000/5/net/2/7/Opdebug.Node_OpDebug.12.2.1700000000000001.output.0.json";
  dir.write(json, R"({"AI Core": {"sta)");
  auto cfg = config(dir);
  OverflowDumpSource source(cfg, nullptr);
  Sink sink;
  const TimePoint now = SystemClock::now();
  source.poll_once(now, sink);
  CHECK(sink.lines.empty());
  CHECK(source.stats().error_count(SourceErrorKind::Parse) == 0);
  SECTION("completed: decoded") {
    dir.write(json, R"({"AI Core": {"status": 1024}})");
    source.poll_once(now + cfg.scan_interval, sink);
    REQUIRE(sink.lines.size() == 1);
    CHECK(sink.lines[0].find(" overflow=aicore status=1024 cause=0x00000400 ") !=
          std::string::npos);
  }
  SECTION("never completed: handed out undecoded once settled") {
    source.poll_once(now + cfg.scan_interval + cfg.settle, sink);
    REQUIRE(sink.lines.size() == 1);
    CHECK(sink.lines[0].find(" overflow=undecoded ") != std::string::npos);
    CHECK(source.stats().error_count(SourceErrorKind::Parse) == 1);
  }
}
