// What discovery costs the file and overflow_dump sources on real trees, counted by the sources
// themselves (ScanCounts: walks of the tree and looks at single files), never timed:
// - F5 (security audit): every inotify event under a `**` tree was a full walk; a job creating
//   a file every 50 ms kept faultd at 89 % of a core.
// - F21: every idle file was stat'ed twice and fstat'ed once per second.
// - N7: the overflow_dump walk had no directory cap, and walked on every event too.
// The clock is a fake one stepped as the events would come; the events are real.
#include <poll.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collectors/file/file_source.hpp"
#include "collectors/file/rescan_pacer.hpp"
#include "collectors/overflow_dump/overflow_dump_source.hpp"
#include "tests/support/collectors_file_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::config_for;
using faultd::testing::errors;
using faultd::testing::FakeClock;
using faultd::testing::inotify_watches;
using faultd::testing::RecordingSink;
using faultd::testing::TempDir;
namespace fs = std::filesystem;

namespace {

bool readable_within(int fd, std::chrono::milliseconds deadline) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(deadline.count())) == 1 && (p.revents & POLLIN) != 0;
}

class CountingSink final : public ChunkSink {
 public:
  bool on_chunk(const Chunk& c) override {
    lines += std::count(c.data.begin(), c.data.end(), '\n');
    return true;
  }
  int64_t lines = 0;
};

// Upper bound on the walks inotify can ask for in `span`: one per pacing gap, and the first.
uint64_t paced_walks(Duration span) {
  return static_cast<uint64_t>(span / RescanPacer::kMinGap) + 1;
}

}  // namespace

TEST_CASE("file source: a file created every 50 ms does not make a walk per event (F5)",
          "[collectors][file][integration]") {
  TempDir tree;
  for (int i = 0; i < 100; ++i) fs::create_directories(tree.path() / ("d" + std::to_string(i)));
  FakeClock clock;
  const auto config = config_for(tree.file("**/*.log"));
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(source.scan_counts().walks == 1);

  // The first file after a quiet spell is found by the poll its event wakes: no added latency.
  tree.write("d7/first.log", "first\n");
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == std::vector<std::string>{"first"});

  // Then 400 more, one every 50 ms, each event followed by a poll as the app would run it.
  constexpr int kFiles = 400;
  const Duration span = 50ms * kFiles;
  const ScanCounts before = source.scan_counts();
  for (int i = 0; i < kFiles; ++i) {
    clock.advance(50ms);
    tree.write("d" + std::to_string(i % 100) + "/f" + std::to_string(i) + ".log", "x\n");
    source.poll_once(clock.now(), sink);
  }
  const ScanCounts after = source.scan_counts();
  INFO("walks for " << kFiles << " files created 50 ms apart: " << after.walks - before.walks);
  // Before pacing: one walk per event, 400.
  CHECK(after.walks - before.walks <= paced_walks(span));
  CHECK(after.walks - before.walks >= 1);
  // Nothing is lost: the walk held back at the end runs when its gap has passed.
  clock.advance(RescanPacer::kMinGap * RescanPacer::kCostFactor);
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts().size() == kFiles + 1);
  CHECK(sink.violations.empty());
}

TEST_CASE("file source: a held-back walk wakes the source itself when its gap has passed",
          "[collectors][file][integration]") {
  TempDir tree;
  FileSource source(config_for(tree.file("**/*.log")), nullptr);
  RecordingSink sink;
  TimePoint now = SystemClock::now();
  source.poll_once(now, sink);
  tree.write("a/one.log", "one\n");  // answered at once
  source.poll_once(now, sink);
  tree.write("a/two.log", "two\n");  // within the gap: held back
  source.poll_once(now, sink);
  CHECK(sink.texts() == std::vector<std::string>{"one"});
  source.drain_wake_fd();
  // No event is pending: only the source's own timer can make its descriptor readable.
  REQUIRE(readable_within(source.wake_fd(), 10s));
  source.drain_wake_fd();
  source.poll_once(SystemClock::now(), sink);
  CHECK(sink.texts() == std::vector<std::string>{"one", "two"});
}

TEST_CASE("file source: idle files are not looked at between full scans (F21)",
          "[collectors][file][integration]") {
  TempDir tree;
  constexpr uint64_t kFiles = 1000;
  for (uint64_t i = 0; i < kFiles; ++i) tree.write(std::to_string(i) + ".log", "one line\n");
  FakeClock clock;
  const auto config = config_for(tree.file("*.log"));
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(sink.texts().size() == kFiles);
  const ScanCounts start = source.scan_counts();

  // 20 s of polls at scan_interval (1 s), as the app's timer runs them.
  for (int i = 0; i < 20; ++i) {
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
  }
  const ScanCounts idle = source.scan_counts();
  INFO("in 20 s: " << idle.walks - start.walks << " walks, " << idle.file_checks - start.file_checks
                   << " file checks");
  // Before: a walk and a look at every file every second (20 walks, 20,000 looks).
  CHECK(idle.walks == start.walks);
  CHECK(idle.file_checks == start.file_checks);

  // A write is still read at the next poll, and costs a look at that file alone.
  tree.write("421.log", "appended\n", true);
  clock.advance(config.scan_interval);
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts().back() == "appended");
  CHECK(source.scan_counts().file_checks - idle.file_checks == 1);
  CHECK(source.scan_counts().walks == idle.walks);

  // The full scan stays the truth, on the longer interval.
  clock.advance(config.scan_interval * kFullScanEvery);
  source.poll_once(clock.now(), sink);
  CHECK(source.scan_counts().walks == idle.walks + 1);
  CHECK(source.scan_counts().file_checks - idle.file_checks == 1 + kFiles);
  CHECK(sink.violations.empty());
}

TEST_CASE("file source: an idle file's truncation, rotation and deletion are still seen",
          "[collectors][file][integration]") {
  TempDir tree;
  FakeClock clock;
  const auto config = config_for(tree.file("*.log"));
  for (int i = 0; i < 50; ++i) tree.write("idle" + std::to_string(i) + ".log", "idle\n");
  const std::string app = tree.write("app.log", "a1\na2\n");
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  for (int i = 0; i < 5; ++i) {
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
  }
  const ScanCounts idle = source.scan_counts();

  SECTION("truncation in place") {
    fs::resize_file(app, 0);
    tree.write("app.log", "b1\n", true);
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(source.stats().rotations_truncate == 1);
    CHECK(sink.texts().back() == "b1");
    CHECK(source.scan_counts().walks == idle.walks);  // a modification: no walk needed
  }
  SECTION("rename and create") {
    fs::rename(app, tree.file("app.log.1"));
    tree.write("app.log", "c1\n");
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(source.stats().rotations_rename == 1);
    CHECK(sink.texts().back() == "c1");
  }
  SECTION("deletion after a last write") {
    tree.write("app.log", "last\n", true);
    fs::remove(app);
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(sink.texts().back() == "last");
    CHECK(source.stats().files == 50);
  }
  CHECK(sink.violations.empty());
}

TEST_CASE("file source: a file written under another of its names or through a link is read",
          "[collectors][file][integration]") {
  TempDir tree;
  TempDir elsewhere;  // not watched: its writes are named to no one
  FakeClock clock;
  const std::string real = elsewhere.write("real.txt", "r1\n");
  fs::create_symlink(real, tree.file("linked.log"));
  const std::string a = tree.write("a.log", "h1\n");
  fs::create_hard_link(a, tree.file("b.log"));
  const auto config = config_for(tree.file("*.log"));
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(source.stats().files == 2);

  elsewhere.write("real.txt", "r2\n", true);
  tree.write("b.log", "h2\n", true);  // the file is followed as a.log
  clock.advance(config.scan_interval);
  source.poll_once(clock.now(), sink);
  std::vector<std::string> texts = sink.texts();
  std::sort(texts.begin(), texts.end());
  CHECK(texts == std::vector<std::string>{"h1", "h2", "r1", "r2"});
  CHECK(source.scan_counts().walks == 1);
  CHECK(sink.violations.empty());
}

TEST_CASE("overflow_dump: the walk stops at max_directories, counted once per episode (N7)",
          "[collectors][overflow][integration]") {
  TempDir tree;
  for (int i = 0; i < 60; ++i) fs::create_directories(tree.path() / "many" / std::to_string(i));
  OverflowDumpSourceConfig config;
  config.name = "overflow";
  config.root = tree.path().string();
  config.max_directories = 20;
  OverflowDumpSource source(config, nullptr);
  CountingSink sink;
  const TimePoint t0 = SystemClock::now();
  source.poll_once(t0, sink);
  CHECK(inotify_watches() <= 20);
  CHECK(source.stats().error_count(SourceErrorKind::WalkLimit) == 1);
  source.poll_once(t0 + config.scan_interval, sink);
  CHECK(source.scan_counts().walks == 2);
  CHECK(source.stats().error_count(SourceErrorKind::WalkLimit) == 1);  // the same episode
}

TEST_CASE("overflow_dump: a dump every 50 ms does not make a walk per event (N7)",
          "[collectors][overflow][integration]") {
  TempDir tree;
  const std::string dir = "20200808163566/0/11/0/";
  fs::create_directories(tree.path() / dir);
  for (int i = 0; i < 100; ++i) fs::create_directories(tree.path() / "many" / std::to_string(i));
  OverflowDumpSourceConfig config;
  config.name = "overflow";
  config.root = tree.path().string();
  OverflowDumpSource source(config, nullptr);
  CountingSink sink;
  TimePoint now = SystemClock::now();
  source.poll_once(now, sink);
  const ScanCounts before = source.scan_counts();
  constexpr int kDumps = 200;
  for (int i = 0; i < kDumps; ++i) {
    now += 50ms;
    tree.write(dir + "OpDebug.Node_Opdebug." + std::to_string(i) + ".1597922031178434", "x");
    source.poll_once(now, sink);
  }
  const uint64_t walks = source.scan_counts().walks - before.walks;
  INFO("walks for " << kDumps << " dumps 50 ms apart: " << walks);
  CHECK(walks <= paced_walks(50ms * kDumps));  // before: one per event, 200
  CHECK(sink.lines < kDumps);                  // some are still held back
  now += RescanPacer::kMinGap * RescanPacer::kCostFactor;
  source.poll_once(now, sink);
  CHECK(sink.lines == kDumps);  // and none is lost
}
