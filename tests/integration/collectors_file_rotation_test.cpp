// One scenario per failure mode of following files on a real file system: rotation by rename,
// copytruncate, new files (also in new directories under `**`), deletion, partial lines,
// permission denied, and the inotify wake-up including queue overflow.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collectors/file/file_source.hpp"
#include "collectors/file/rescan_pacer.hpp"
#include "tests/support/collectors_file_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::errors;
using faultd::testing::FakeClock;
using faultd::testing::RecordedLine;
using faultd::testing::RecordingSink;
using faultd::testing::TempDir;
using Lines = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

FileSourceConfig config_for(const std::string& glob) {
  FileSourceConfig c;
  c.name = "rot";
  c.paths = {glob};
  return c;
}

// Lines per path, in the order they arrived.
std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> by_path(
    const RecordingSink& sink) {
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> out;
  for (const auto& l : sink.lines()) out[l.path].emplace_back(l.line, l.text);
  return out;
}

bool readable_within(int fd, std::chrono::milliseconds deadline) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(deadline.count())) == 1 && (p.revents & POLLIN) != 0;
}

void truncate_to_zero(const std::string& path) { REQUIRE(::truncate(path.c_str(), 0) == 0); }

}  // namespace

TEST_CASE("rotation by rename and create: old file drained, new file from the start",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string live = dir.write("app.log", "a1\na2\n");
  const std::string rotated = dir.file("app.log.1");
  auto config = config_for(live);
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a1", "a2"});

  // The writer appends, logrotate renames and creates, and the writer (not reopened yet) still
  // writes to the old file, ending in a partial line.
  dir.write("app.log", "a3\n", true);
  fs::rename(live, rotated);
  dir.write("app.log", "b1\nb2\n");
  dir.write("app.log.1", "a4\na5-partial", true);
  clock.advance(10ms);
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().rotations_rename == 1);
  CHECK(source.stats().rotations_truncate == 0);
  CHECK(source.stats().files == 2);  // the old file stays open for a grace period

  // Still written after the rename: not lost.
  dir.write("app.log.1", "-done\n", true);
  source.poll_once(clock.now(), sink);
  dir.write("app.log.1", "a6-last-partial", true);
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().files == 2);

  clock.advance(config.scan_interval);
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().files == 1);
  CHECK(source.positions().at(0).path == live);

  dir.write("app.log", "b3\n", true);
  source.poll_once(clock.now(), sink);

  // Each path holds the lines read while the file was there: the old inode's lines carry the
  // path it had when they were read.
  const auto lines = sink.lines();
  std::vector<std::pair<uint64_t, std::string>> old_file;
  std::vector<std::pair<uint64_t, std::string>> new_file;
  for (const auto& l : lines) {
    (l.text[0] == 'a' ? old_file : new_file).emplace_back(l.line, l.text);
  }
  CHECK(old_file == std::vector<std::pair<uint64_t, std::string>>{{1, "a1"},
                                                                  {2, "a2"},
                                                                  {3, "a3"},
                                                                  {4, "a4"},
                                                                  {5, "a5-partial-done"},
                                                                  {6, "a6-last-partial"}});
  CHECK(new_file == std::vector<std::pair<uint64_t, std::string>>{{1, "b1"}, {2, "b2"}, {3, "b3"}});
  CHECK(source.stats().rotations_rename == 1);
  CHECK(source.stats().lines == 9);
  CHECK(source.stats().lag_bytes == 0);
  CHECK(sink.violations.empty());
}

TEST_CASE("a rotated file renamed to a name the glob still matches is not read twice",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string live = dir.write("plog.log", "p1\np2\n");
  FileSource source(config_for(dir.file("plog.log*")), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);

  fs::rename(live, dir.file("plog.log.1"));
  dir.write("plog.log", "q1\n");
  dir.write("plog.log.1", "p3\n", true);
  source.poll_once(clock.now(), sink);
  clock.advance(5s);  // well past any grace period: both files still match, both followed
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().files == 2);
  CHECK(source.stats().rotations_rename == 1);

  auto paths = by_path(sink);
  CHECK(paths[live] ==
        std::vector<std::pair<uint64_t, std::string>>{{1, "p1"}, {2, "p2"}, {1, "q1"}});
  CHECK(paths[dir.file("plog.log.1")] == std::vector<std::pair<uint64_t, std::string>>{{3, "p3"}});

  // logrotate finally deletes the oldest: nothing more to read, it is closed.
  fs::remove(dir.file("plog.log.1"));
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().files == 1);
  auto texts = sink.texts();
  std::sort(texts.begin(), texts.end());
  CHECK(texts == Lines{"p1", "p2", "p3", "q1"});
  CHECK(sink.violations.empty());
}

TEST_CASE("copytruncate: reading restarts at 0 and the partial line is flushed",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "c1\nc2\n");
  FileSource source(config_for(path), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  dir.write("app.log", "c3-part", true);
  source.poll_once(clock.now(), sink);

  fs::copy_file(path, dir.file("app.log.1"));
  truncate_to_zero(path);
  dir.write("app.log", "n1\n", true);
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().rotations_truncate == 1);
  CHECK(source.stats().rotations_rename == 0);
  CHECK(sink.lines() ==
        std::vector<RecordedLine>{
            {path, 1, 0, "c1"}, {path, 2, 3, "c2"}, {path, 3, 6, "c3-part"}, {path, 1, 0, "n1"}});
  CHECK(source.positions().at(0).offset == 3);
  CHECK(source.positions().at(0).line == 1);
  CHECK(sink.violations.empty());
}

TEST_CASE("copytruncate followed by regrowth past the old offset is still detected",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  auto lines_of = [](char tag, int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
      s += std::string(1, tag) + std::string(60, '-') + std::to_string(i) + "\n";
    return s;
  };
  SECTION("small file: the growing fingerprint notices") {
    const std::string path = dir.write("app.log", "old-1\nold-2\n");
    FileSource source(config_for(path), nullptr);
    RecordingSink sink;
    source.poll_once(clock.now(), sink);
    truncate_to_zero(path);
    dir.write("app.log", "NEW-1\nNEW-2\nNEW-3\n", true);
    source.poll_once(clock.now(), sink);
    CHECK(source.stats().rotations_truncate == 1);
    CHECK(sink.texts() == Lines{"old-1", "old-2", "NEW-1", "NEW-2", "NEW-3"});
    CHECK(sink.lines().back().line == 3);
  }
  SECTION("large file: the rescan's fingerprint check notices") {
    const std::string old_text = lines_of('o', 40);
    const std::string new_text = lines_of('n', 60);
    const std::string path = dir.write("app.log", old_text);
    auto config = config_for(path);
    FileSource source(config, nullptr);
    RecordingSink sink;
    source.poll_once(clock.now(), sink);
    truncate_to_zero(path);
    dir.write("app.log", new_text, true);
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(source.stats().rotations_truncate == 1);
    const auto texts = sink.texts();
    REQUIRE(texts.size() == 100);
    CHECK(texts[40] == new_text.substr(0, new_text.find('\n')));
    CHECK(sink.lines().back().line == 60);
    CHECK(sink.violations.empty());
  }
}

// The restarted job of security audit F1/F16: it rewrites its log with the same banner (longer
// than the fingerprint) and grows past the old offset before faultd looks again.
TEST_CASE("a rewrite that keeps the first bytes and grows past the offset is a new generation",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string banner = std::string(kFingerprintBytes + 200, '=') + "\n";
  const std::string path = dir.write("app.log", banner + "FAULT dev=<1>\n");
  auto config = config_for(path);
  config.scan_interval = 1h;  // no rescan: only the size change can prompt the check
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(sink.texts().back() == "FAULT dev=<1>");
  CHECK(sink.chunks.back().identity.generation == 0);

  // Rewritten in place (O_TRUNC), same banner, a fault at the old offset, then more.
  { std::ofstream(path, std::ios::trunc) << banner << "FAULT dev=<2>\nafter the fault\n"; }
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().rotations_truncate == 1);
  const auto lines = sink.lines();
  REQUIRE(lines.size() == 5);
  CHECK(lines[2] == RecordedLine{path, 1, 0, banner.substr(0, banner.size() - 1)});
  CHECK(lines[3] == RecordedLine{path, 2, banner.size(), "FAULT dev=<2>"});
  CHECK(lines[4].text == "after the fault");
  // The same offset as dev 1's line, in the next generation: the journal keeps both.
  CHECK(sink.chunks.back().identity.generation == 1);
  CHECK(source.positions().at(0).identity.generation == 1);

  SECTION("an append is no rewrite") {
    dir.write("app.log", "appended\n", true);
    source.poll_once(clock.now(), sink);
    CHECK(source.stats().rotations_truncate == 1);
    CHECK(sink.texts().back() == "appended");
    CHECK(sink.chunks.back().identity.generation == 1);
  }
  SECTION("a rewrite to the same size is caught by its timestamps, or a later rescan") {
    const std::string before = banner + "FAULT dev=<2>\nafter the fault\n";
    { std::ofstream(path, std::ios::trunc) << banner << "FAULT dev=<3>\nafter the fault\n"; }
    REQUIRE(fs::file_size(path) == before.size());
    // The size did not change; mtime and ctime did, unless both writes fell in one tick of the
    // file system's clock: then the rescans verify it within kVerifyEveryScans.
    source.poll_once(clock.now(), sink);
    for (uint32_t i = 0; i < kVerifyEveryScans && source.stats().rotations_truncate < 2; ++i) {
      clock.advance(config.scan_interval);
      source.poll_once(clock.now(), sink);
    }
    CHECK(source.stats().rotations_truncate == 2);
    CHECK(sink.lines()[sink.lines().size() - 2].text == "FAULT dev=<3>");
    CHECK(sink.chunks.back().identity.generation == 2);
  }
  CHECK(sink.violations.empty());
}

TEST_CASE("a file rewritten past its saved offset while faultd was down is read from the start",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string banner = std::string(kFingerprintBytes + 200, '=') + "\n";
  const std::string path = dir.write("app.log", banner + "old fault\n");
  std::vector<ReadPosition> saved;
  {
    FileSource first(config_for(path), nullptr);
    RecordingSink sink;
    first.poll_once(clock.now(), sink);
    saved = first.positions();
  }
  REQUIRE(saved.size() == 1);
  CHECK(saved[0].identity.tail_len == kTailBytes);
  CHECK(saved[0].identity.tail_end == saved[0].offset);
  PositionLookup lookup = [&](const std::string&, uint64_t dev,
                              uint64_t ino) -> std::optional<ReadPosition> {
    if (dev == saved[0].identity.dev && ino == saved[0].identity.ino) return saved[0];
    return std::nullopt;
  };

  SECTION("rewritten: every line again, in the next generation") {
    { std::ofstream(path, std::ios::trunc) << banner << "new fault\nmore\n"; }
    FileSource second(config_for(path), lookup);
    RecordingSink sink;
    second.poll_once(clock.now(), sink);
    CHECK(sink.texts().size() == 3);
    CHECK(sink.texts()[1] == "new fault");
    CHECK(sink.chunks.front().identity.generation == 1);
  }
  SECTION("appended: resumed where it stopped, in the same generation") {
    dir.write("app.log", "next\n", true);
    FileSource second(config_for(path), lookup);
    RecordingSink sink;
    second.poll_once(clock.now(), sink);
    CHECK(sink.texts() == Lines{"next"});
    CHECK(sink.chunks.front().identity.generation == 0);
  }
}

TEST_CASE("a new file matching the glob is picked up, also in a new subdirectory under **",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  dir.write("a.log", "a\n");
  auto config = config_for(dir.file("**/*.log"));
  config.scan_interval = 1h;  // only inotify can make these rescans happen in time
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a"});

  dir.write("b.log", "b\n");
  dir.write("ignored.txt", "no\n");
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a", "b"});

  // A new directory tree: its creation in a watched directory triggers the rescan that walks it
  // (once the pacing gap after the last requested walk has passed: rescan_pacer.hpp).
  clock.advance(RescanPacer::kMinGap);
  dir.write("x/y/c.log", "c\n");
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a", "b", "c"});

  // The new subdirectory is watched now: a file created in it is found at once too.
  clock.advance(RescanPacer::kMinGap);
  dir.write("x/y/d.log", "d\n");
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a", "b", "c", "d"});
  CHECK(source.stats().files == 4);
  for (const auto& l : sink.lines()) CHECK(l.line == 1);
}

TEST_CASE("a new file is found by the periodic scan alone", "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  auto config = config_for(dir.file("**/*.log"));
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  dir.write("x/y/late.log", "late\n");
  // Even if the wake-up is consumed elsewhere, the scan interval is the backstop.
  source.drain_wake_fd();
  clock.advance(config.scan_interval);
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"late"});
}

TEST_CASE("deletion: data written before deletion is read and the partial line flushed",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "d1\n");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().files == 1);

  dir.write("app.log", "d2\nd3-partial", true);
  fs::remove(path);
  source.poll_once(clock.now(), sink);
  CHECK(sink.lines() == std::vector<RecordedLine>{
                            {path, 1, 0, "d1"}, {path, 2, 3, "d2"}, {path, 3, 6, "d3-partial"}});
  CHECK(source.stats().files == 0);
  CHECK(source.positions().empty());
  CHECK(source.stats().rotations_rename == 0);
  CHECK(source.stats().lag_bytes == 0);
  CHECK(sink.violations.empty());
}

TEST_CASE("deletion while the sink refuses: nothing is lost once it accepts again",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "x1\nx2-partial");
  FileSource source(config_for(path), nullptr);
  RecordingSink sink;
  sink.refuse_next = 2;
  source.poll_once(clock.now(), sink);
  fs::remove(path);
  source.poll_once(clock.now(), sink);
  CHECK(source.stats().files == 1);  // still holding the deleted file's data
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"x1", "x2-partial"});
  CHECK(source.stats().files == 0);
  CHECK(errors(source, SourceErrorKind::Commit) == 2);
}

TEST_CASE("a line written in pieces across polls arrives once, whole",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "");
  FileSource source(config_for(path), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  const std::string line = "[ERROR] RUNTIME(160186,python):2023-01-10-09:25:45.322.063 device_id=0";
  for (char ch : line) {
    dir.write("app.log", std::string(1, ch), true);
    source.poll_once(clock.now(), sink);
    CHECK(sink.chunks.empty());
  }
  dir.write("app.log", "\nnext", true);
  source.poll_once(clock.now(), sink);
  CHECK(sink.lines() == std::vector<RecordedLine>{{path, 1, 0, line}});
  dir.write("app.log", "\n", true);
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{line, "next"});
  CHECK(sink.lines().back().line == 2);
}

TEST_CASE("permission denied is counted once per episode and retried at the next scan",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);  // reachable for the unprivileged fsuid
  const std::string path = dir.write("secret.log", "s1\ns2\n");
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  auto config = config_for(dir.file("*.log"));
  const bool at_end = GENERATE(false, true);
  config.start_at = at_end ? FileSourceConfig::StartAt::End : FileSourceConfig::StartAt::Beginning;
  FileSource source(config, nullptr);
  RecordingSink sink;
  {
    faultd::testing::Unprivileged guard;
    if (faultd::testing::can_open(path)) {
      WARN(
          "running as root without CAP_SETUID: permission checks cannot be made to fail, "
          "permission-denied scenario skipped");
      return;
    }
    source.poll_once(clock.now(), sink);
    CHECK(errors(source, SourceErrorKind::Permission) == 1);
    CHECK(source.stats().files == 0);
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(errors(source, SourceErrorKind::Permission) == 1);  // same episode: not counted again
  }
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  clock.advance(config.scan_interval);
  {
    faultd::testing::Unprivileged guard;
    source.poll_once(clock.now(), sink);
  }
  dir.write("secret.log", "s3\n", true);  // as root again: nobody may not write it
  {
    faultd::testing::Unprivileged guard;
    source.poll_once(clock.now(), sink);
  }
  CHECK(source.stats().files == 1);
  // The file was there at the first scan, so start_at applies even though it opened late.
  if (at_end) {
    CHECK(sink.lines() == std::vector<RecordedLine>{{path, 3, 6, "s3"}});
  } else {
    CHECK(sink.texts() == Lines{"s1", "s2", "s3"});
  }
  CHECK(errors(source, SourceErrorKind::Permission) == 1);
  CHECK(sink.violations.empty());
}

TEST_CASE("an unreadable directory is a glob error, and the rest is still read",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  dir.write("open/a.log", "a\n");
  dir.write("locked/b.log", "b\n");
  REQUIRE(::chmod(dir.file("locked").c_str(), 0) == 0);
  FileSource source(config_for(dir.file("*/*.log")), nullptr);
  RecordingSink sink;
  faultd::testing::Unprivileged guard;
  if (faultd::testing::can_open(dir.file("locked"))) {
    WARN("running as root without CAP_SETUID: unreadable-directory scenario skipped");
    return;
  }
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a"});
  CHECK(errors(source, SourceErrorKind::Glob) == 1);
}

TEST_CASE("the inotify fd becomes readable after an append and is drained",
          "[collectors][file][integration]") {
  TempDir dir;
  FakeClock clock;
  dir.write("app.log", "first\n");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  const int fd = source.wake_fd();
  REQUIRE(fd >= 0);
  CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK((::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  source.drain_wake_fd();
  CHECK_FALSE(readable_within(fd, 0ms));

  dir.write("app.log", "second\n", true);
  REQUIRE(readable_within(fd, 5000ms));
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"first", "second"});
  source.drain_wake_fd();
  CHECK_FALSE(readable_within(fd, 0ms));
}

TEST_CASE("an inotify queue overflow makes the next poll rescan",
          "[collectors][file][integration]") {
  long max_queued = 0;
  {
    std::ifstream in("/proc/sys/fs/inotify/max_queued_events");
    in >> max_queued;
  }
  if (max_queued <= 0 || max_queued > 100'000) {
    WARN("max_queued_events is " << max_queued << ": overflow scenario skipped");
    return;
  }
  TempDir dir;
  FakeClock clock;
  auto config = config_for(dir.file("*.log"));
  config.scan_interval = 1h;  // the clock will not trigger the rescan
  // The noise files exist before the source looks, so the flood below holds no event that
  // asks for a rescan by itself: only the overflow can.
  const int a = ::open(dir.file("noise-a.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  const int b = ::open(dir.file("noise-b.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  source.poll_once(clock.now(), sink);
  CHECK(sink.chunks.empty());

  // A second watcher proves the kernel really dropped events.
  const int witness = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  REQUIRE(witness >= 0);
  REQUIRE(::inotify_add_watch(witness, dir.path().c_str(), IN_MODIFY | IN_CREATE) >= 0);

  // Alternating writes to two files are never coalesced: fill the queue with noise.
  for (long i = 0; i < max_queued / 2 + 16; ++i) {
    REQUIRE(::write(a, "x", 1) == 1);
    REQUIRE(::write(b, "x", 1) == 1);
  }
  ::close(a);
  ::close(b);
  dir.write("new.log", "after overflow\n");  // its create event is lost

  bool overflowed = false;
  alignas(inotify_event) char buf[64 * 1024];
  for (ssize_t n; (n = ::read(witness, buf, sizeof buf)) > 0;) {
    for (ssize_t pos = 0; pos < n;) {
      auto* ev = reinterpret_cast<inotify_event*>(buf + pos);
      overflowed = overflowed || (ev->mask & IN_Q_OVERFLOW) != 0;
      pos += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  ::close(witness);
  REQUIRE(overflowed);

  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"after overflow"});
}
