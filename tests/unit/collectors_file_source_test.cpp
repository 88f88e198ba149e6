#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "collectors/file/file_source.hpp"
#include "tests/support/collectors_file_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using namespace std::chrono_literals;
using faultd::testing::config_for;
using faultd::testing::errors;
using faultd::testing::FakeClock;
using faultd::testing::RecordedLine;
using faultd::testing::RecordingSink;
using faultd::testing::TempDir;
using Lines = std::vector<std::string>;

namespace {

uint64_t inode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

std::optional<uint64_t> fingerprint_of(const std::string& path, uint32_t len) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto fp = file_fingerprint(fd, len);
  ::close(fd);
  return fp;
}

// A position store in a map, as the app's store would be.
struct PositionMap {
  std::map<std::pair<uint64_t, uint64_t>, ReadPosition> stored;
  int lookups = 0;
  void save(const std::vector<ReadPosition>& positions) {
    for (const auto& p : positions) stored[{p.identity.dev, p.identity.ino}] = p;
  }
  PositionLookup lookup() {
    return [this](const std::string& source, uint64_t dev,
                  uint64_t ino) -> std::optional<ReadPosition> {
      ++lookups;
      auto it = stored.find({dev, ino});
      if (it == stored.end() || it->second.source != source) return std::nullopt;
      return it->second;
    };
  }
};

}  // namespace

TEST_CASE("source error kinds have their metric label names", "[collectors]") {
  CHECK(to_string(SourceErrorKind::Read) == "read");
  CHECK(to_string(SourceErrorKind::Permission) == "permission");
  CHECK(to_string(SourceErrorKind::LongLine) == "long_line");
  CHECK(to_string(SourceErrorKind::Glob) == "glob");
  CHECK(to_string(SourceErrorKind::Device) == "device");
  CHECK(to_string(SourceErrorKind::Parse) == "parse");
  CHECK(to_string(SourceErrorKind::Command) == "command");
  CHECK(to_string(SourceErrorKind::Commit) == "commit");
  CHECK(to_string(SourceErrorKind::Overrun) == "overrun");
  CHECK(to_string(SourceErrorKind::Symlink) == "symlink");
  CHECK(to_string(SourceErrorKind::WalkLimit) == "walk_limit");
  CHECK(to_string(SourceErrorKind::PartialLimit) == "partial_limit");
  CHECK(to_string(SourceErrorKind::Sparse) == "sparse");
}

TEST_CASE("file source reads complete lines with line numbers and offsets", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "alpha\nbeta\ngamma\n");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  CHECK(source.name() == "test");
  RecordingSink sink;
  CHECK_FALSE(source.poll_once(clock.now(), sink));
  CHECK(sink.lines() == std::vector<RecordedLine>{
                            {path, 1, 0, "alpha"}, {path, 2, 6, "beta"}, {path, 3, 11, "gamma"}});
  REQUIRE(sink.chunks.size() == 1);
  const auto& c = sink.chunks[0];
  CHECK(c.source == "test");
  CHECK(c.start_offset == 0);
  CHECK(c.end_offset == 17);
  CHECK(c.first_line == 1);
  CHECK(c.end_line == 3);
  CHECK(c.identity.ino == inode_of(path));
  CHECK(c.noticed == clock.now());
  CHECK(source.stats().lines == 3);
  CHECK(source.stats().bytes == 17);
  CHECK(source.stats().files == 1);
  CHECK(source.stats().lag_bytes == 0);

  dir.write("app.log", "delta\n", true);
  clock.advance(10ms);
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"alpha", "beta", "gamma", "delta"});
  CHECK(sink.lines().back() == RecordedLine{path, 4, 17, "delta"});
  CHECK(sink.chunks.back().noticed == clock.now());
  CHECK(sink.violations.empty());
}

TEST_CASE("file source holds a partial line until its newline arrives", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "hel");
  FileSource source(config_for(path), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.chunks.empty());
  CHECK(source.stats().lag_bytes == 3);
  CHECK(source.positions().at(0).offset == 0);

  dir.write("app.log", "lo\nwor", true);
  source.poll_once(clock.now(), sink);
  CHECK(sink.lines() == std::vector<RecordedLine>{{path, 1, 0, "hello"}});

  dir.write("app.log", "ld\n", true);
  source.poll_once(clock.now(), sink);
  CHECK(sink.lines() == std::vector<RecordedLine>{{path, 1, 0, "hello"}, {path, 2, 6, "world"}});
  CHECK(source.positions().at(0).offset == 12);
  CHECK(source.positions().at(0).line == 2);
  CHECK(sink.violations.empty());
}

TEST_CASE("file source splits reads into chunks no bigger than read_chunk_bytes",
          "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  std::string text;
  Lines expected;
  for (int i = 0; i < 200; ++i) {
    expected.push_back("line-" + std::to_string(i));
    text += expected.back() + "\n";
  }
  dir.write("app.log", text);
  auto config = config_for(dir.file("app.log"));
  config.read_chunk_bytes = 64;
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == expected);
  CHECK(sink.chunks.size() > 10);
  for (const auto& c : sink.chunks) CHECK(c.data.size() <= 64);
  CHECK(sink.violations.empty());
}

TEST_CASE("file source truncates over-long lines and counts them", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string long_line(30, 'x');
  const std::string path = dir.write("app.log", "short\n" + long_line + "\nafter\n");
  auto config = config_for(path);
  config.max_line_bytes = 8;
  config.read_chunk_bytes = 4;  // the long line spans many reads
  FileSource source(config, nullptr);
  RecordingSink sink;
  int polls = 1;
  while (source.poll_once(clock.now(), sink)) ++polls;
  // The rest of the line is read one read per poll: the poll says there is more meanwhile.
  CHECK(polls > 4);
  CHECK(sink.lines() == std::vector<RecordedLine>{{path, 1, 0, "short"},
                                                  {path, 2, 6, "xxxxxxxx"},
                                                  {path, 3, 37, "after"}});
  const auto truncated = std::find_if(sink.chunks.begin(), sink.chunks.end(),
                                      [](const auto& c) { return c.first_line == 2; });
  REQUIRE(truncated != sink.chunks.end());
  // Out before its newline was read: the kept bytes, without a newline.
  CHECK(truncated->data == "xxxxxxxx");
  CHECK(truncated->end_offset == 16);  // the bytes read when it was found too long
  CHECK(errors(source, SourceErrorKind::LongLine) == 1);
  CHECK(source.stats().lines == 3);
  CHECK(source.stats().bytes == 43);
  CHECK(sink.violations.empty());
}

TEST_CASE("a hostile multi-megabyte line is skipped in bounded reads", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "before\n" + std::string(3 << 20, '\x01'));
  auto config = config_for(path);
  config.max_line_bytes = 1024;
  config.read_chunk_bytes = size_t{64} * 1024;
  config.max_bytes_per_poll = 1 << 30;
  FileSource source(config, nullptr);
  RecordingSink sink;
  int polls = 1;
  while (source.poll_once(clock.now(), sink)) ++polls;
  CHECK(polls >= (3 << 20) / (64 << 10));  // one 64 KiB read per poll while skipping
  CHECK(sink.texts() == Lines{"before", std::string(1024, '\x01')});
  // Security audit F22: the skipped bytes are committed as they are dropped: no lag stays
  // behind, and the saved position is past them.
  CHECK(source.stats().lag_bytes == 0);
  CHECK(source.positions().at(0).offset == 7 + (3u << 20));
  CHECK(source.stats().bytes == 7 + (3u << 20));
  dir.write("app.log", "\nafter\n", true);
  source.poll_once(clock.now(), sink);
  const auto lines = sink.lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[2] == RecordedLine{path, 3, 7 + (3u << 20) + 1, "after"});
  CHECK(errors(source, SourceErrorKind::LongLine) == 1);
  CHECK(sink.violations.empty());
}

TEST_CASE("a refused chunk is offered again and the position does not move", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  dir.write("app.log", "one\ntwo\n");
  FileSource source(config_for(dir.file("app.log")), nullptr);
  RecordingSink sink;
  sink.refuse_next = 1;
  CHECK_FALSE(source.poll_once(clock.now(), sink));
  CHECK(sink.chunks.empty());
  REQUIRE(sink.refused.size() == 1);
  CHECK(errors(source, SourceErrorKind::Commit) == 1);
  CHECK(source.positions().at(0).offset == 0);
  CHECK(source.positions().at(0).line == 0);
  CHECK(source.stats().lines == 0);
  CHECK(source.stats().lag_bytes == 8);

  source.poll_once(clock.now(), sink);
  REQUIRE(sink.chunks.size() == 1);
  CHECK(sink.chunks[0].data == sink.refused[0].data);
  CHECK(sink.chunks[0].start_offset == sink.refused[0].start_offset);
  CHECK(sink.chunks[0].first_line == sink.refused[0].first_line);
  CHECK(sink.texts() == Lines{"one", "two"});
  CHECK(source.positions().at(0).offset == 8);
  CHECK(source.stats().lines == 2);
  CHECK(source.stats().lag_bytes == 0);
  CHECK(errors(source, SourceErrorKind::Commit) == 1);
}

TEST_CASE("a refusal stops only the refused file for this poll", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  dir.write("a.log", "a1\n");
  dir.write("b.log", "b1\n");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  RecordingSink sink;
  sink.refuse_next = 1;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts().size() == 1);
  source.poll_once(clock.now(), sink);
  auto texts = sink.texts();
  std::sort(texts.begin(), texts.end());
  CHECK(texts == Lines{"a1", "b1"});
}

TEST_CASE("max_bytes_per_poll bounds one poll and asks to be called again", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  Lines expected;
  std::string a;
  std::string b;
  for (int i = 0; i < 100; ++i) {
    a += "a-" + std::to_string(i) + "\n";
    b += "b-" + std::to_string(i) + "\n";
  }
  dir.write("a.log", a);
  dir.write("b.log", b);
  auto config = config_for(dir.file("*.log"));
  config.max_bytes_per_poll = 100;
  config.read_chunk_bytes = 64;
  FileSource source(config, nullptr);
  RecordingSink sink;
  int polls = 0;
  while (source.poll_once(clock.now(), sink)) {
    ++polls;
    REQUIRE(polls < 100);
  }
  CHECK(polls >= static_cast<int>((a.size() + b.size()) / 100) - 1);
  Lines got_a;
  Lines got_b;
  for (const auto& l : sink.lines()) (l.text[0] == 'a' ? got_a : got_b).push_back(l.text);
  Lines want_a;
  Lines want_b;
  for (int i = 0; i < 100; ++i) {
    want_a.push_back("a-" + std::to_string(i));
    want_b.push_back("b-" + std::to_string(i));
  }
  CHECK(got_a == want_a);
  CHECK(got_b == want_b);
  CHECK(source.stats().lag_bytes == 0);
  CHECK(sink.violations.empty());
}

TEST_CASE("file_fingerprint hashes the first bytes without moving the offset",
          "[collectors][file]") {
  TempDir dir;
  const std::string a = dir.write("a", "hello world");
  const std::string b = dir.write("b", "hello there");
  CHECK(fingerprint_of(a, 5) == fingerprint_of(b, 5));
  CHECK(fingerprint_of(a, 11) != fingerprint_of(b, 11));
  CHECK(fingerprint_of(a, 12) == std::nullopt);  // shorter than asked
  CHECK(fingerprint_of(a, 0).has_value());
  const int fd = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(file_fingerprint(fd, 11).has_value());
  char c = 0;
  CHECK(::read(fd, &c, 1) == 1);
  CHECK(c == 'h');
  ::close(fd);
}

TEST_CASE("positions carry the identity; a short fingerprint is upgraded as the file grows",
          "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "tiny\n");
  FileSource source(config_for(path), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  auto positions = source.positions();
  REQUIRE(positions.size() == 1);
  CHECK(positions[0].source == "test");
  CHECK(positions[0].path == path);
  CHECK(positions[0].identity.ino == inode_of(path));
  CHECK(positions[0].identity.fingerprint_len == 5);
  CHECK(positions[0].identity.fingerprint == fingerprint_of(path, 5));
  CHECK(positions[0].offset == 5);
  CHECK(positions[0].line == 1);

  dir.write("app.log", std::string(2000, 'y') + "\n", true);
  source.poll_once(clock.now(), sink);
  positions = source.positions();
  CHECK(positions[0].identity.fingerprint_len == kFingerprintBytes);
  CHECK(positions[0].identity.fingerprint == fingerprint_of(path, kFingerprintBytes));
  CHECK(positions[0].offset == 2006);
  CHECK(sink.lines().back().line == 2);
}

TEST_CASE("a stored position resumes the same file where it stopped", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "one\ntwo\n");
  PositionMap store;
  {
    FileSource first(config_for(path), store.lookup());
    RecordingSink sink;
    first.poll_once(clock.now(), sink);
    CHECK(sink.texts() == Lines{"one", "two"});
    store.save(first.positions());
  }
  dir.write("app.log", "three\n", true);
  FileSource second(config_for(path), store.lookup());
  RecordingSink sink;
  second.poll_once(clock.now(), sink);
  CHECK(store.lookups >= 1);
  CHECK(sink.lines() == std::vector<RecordedLine>{{path, 3, 8, "three"}});
}

TEST_CASE("a stored position resumes even with start_at end", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "one\n");
  PositionMap store;
  {
    FileSource first(config_for(path), store.lookup());
    RecordingSink sink;
    first.poll_once(clock.now(), sink);
    store.save(first.positions());
  }
  dir.write("app.log", "two\nthree\n", true);
  auto config = config_for(path);
  config.start_at = FileSourceConfig::StartAt::End;
  FileSource second(config, store.lookup());
  RecordingSink sink;
  second.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"two", "three"});
  CHECK(sink.lines().front().line == 2);
}

TEST_CASE("a reused inode with other content is not resumed", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "new file, new content\nsecond\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  // What the store remembers for this (dev, inode): another file that once had it.
  ReadPosition old;
  old.source = "test";
  old.path = path;
  old.identity.dev = st.st_dev;
  old.identity.ino = st.st_ino;
  old.identity.fingerprint_len = 10;
  old.identity.fingerprint = 0x1234;  // not the hash of this file's first 10 bytes
  old.offset = 22;
  old.line = 1;
  REQUIRE(fingerprint_of(path, 10) != old.identity.fingerprint);
  PositionLookup lookup = [&](const std::string&, uint64_t dev,
                              uint64_t ino) -> std::optional<ReadPosition> {
    if (dev == old.identity.dev && ino == old.identity.ino) return old;
    return std::nullopt;
  };
  FileSource source(config_for(path), lookup);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"new file, new content", "second"});
  CHECK(sink.lines().front().line == 1);
}

TEST_CASE("a stored offset beyond the end of the file is not resumed", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string path = dir.write("app.log", "abc\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  ReadPosition old;
  old.source = "test";
  old.identity = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                  *fingerprint_of(path, 4), 4};
  old.offset = 100;
  old.line = 7;
  FileSource source(
      config_for(path),
      [&](const std::string&, uint64_t, uint64_t) -> std::optional<ReadPosition> { return old; });
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.lines() == std::vector<RecordedLine>{{path, 1, 0, "abc"}});
}

TEST_CASE("start_at end skips what is there at the first scan, not later files",
          "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  const std::string old_path = dir.write("old.log", "o1\no2\npar");
  auto config = config_for(dir.file("*.log"));
  config.start_at = FileSourceConfig::StartAt::End;
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.chunks.empty());
  CHECK(source.positions().at(0).offset == 6);  // after the last complete line
  CHECK(source.positions().at(0).line == 2);

  dir.write("old.log", "tial\nn1\n", true);
  const std::string new_path = dir.write("new.log", "fresh1\nfresh2\n");
  clock.advance(config.scan_interval);
  source.poll_once(clock.now(), sink);
  auto lines = sink.lines();
  std::sort(lines.begin(), lines.end(), [](const auto& x, const auto& y) {
    return std::tie(x.path, x.line) < std::tie(y.path, y.line);
  });
  CHECK(lines == std::vector<RecordedLine>{{new_path, 1, 0, "fresh1"},
                                           {new_path, 2, 7, "fresh2"},
                                           {old_path, 3, 6, "partial"},
                                           {old_path, 4, 14, "n1"}});
}

TEST_CASE("start_at beginning reads files present at the first scan whole", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  dir.write("a.log", "a1\na2\n");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"a1", "a2"});
}

TEST_CASE("path_fields captures named groups from the path once per file", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  dir.write("device-3/device-3_1.log", "x\n");
  dir.write("device-12/device-12_1.log", "y\n");
  auto config = config_for(dir.file("device-*/device-*.log"));
  config.path_fields = R"(device-(?P<device>\d+)/device-\d+_(?P<seq>\d+)(?P<never>zzz)?)";
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(sink.chunks.size() == 2);
  std::map<std::string, Fields> by_text;
  for (const auto& c : sink.chunks) by_text[c.data] = c.fields;
  CHECK(by_text["x\n"] == Fields{{"device", "3"}, {"seq", "1"}});
  CHECK(by_text["y\n"] == Fields{{"device", "12"}, {"seq", "1"}});
}

TEST_CASE("path_fields that do not match give no fields", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  dir.write("plain.log", "x\n");
  auto config = config_for(dir.file("*.log"));
  config.path_fields = R"(device-(?P<device>\d+)/)";
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(sink.chunks.size() == 1);
  CHECK(sink.chunks[0].fields.empty());
}

TEST_CASE("invalid configuration is refused at construction", "[collectors][file]") {
  auto config = config_for("/tmp/*.log");
  config.path_fields = "device-(?P<device>";
  CHECK_THROWS_AS(FileSource(config, nullptr), std::invalid_argument);
  config = config_for("/tmp/*.log");
  config.max_line_bytes = 0;
  CHECK_THROWS_AS(FileSource(config, nullptr), std::invalid_argument);
}

TEST_CASE("FIFOs and directories matching the glob are skipped without blocking",
          "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  REQUIRE(::mkfifo(dir.file("pipe.log").c_str(), 0644) == 0);
  std::filesystem::create_directory(dir.path() / "dir.log");
  dir.write("real.log", "r\n");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"r"});
  CHECK(source.stats().files == 1);
}

TEST_CASE("a symlink and its target are one file", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  dir.write("target.log", "t\n");
  std::filesystem::create_symlink(dir.path() / "target.log", dir.path() / "alias.log");
  FileSource source(config_for(dir.file("*.log")), nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"t"});
  CHECK(source.stats().files == 1);
}

TEST_CASE("the periodic scan runs on the given clock, not the system clock", "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  auto config = config_for(dir.file("*.log"));
  config.scan_interval = 1h;
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  // In a watched directory the create event asks for a rescan: found without the clock moving
  // (whether the app drains the wake fd before polling or not).
  dir.write("late.log", "late\n");
  source.drain_wake_fd();
  source.poll_once(clock.now(), sink);
  CHECK(sink.texts() == Lines{"late"});

  // Where nothing is watched, only the scan interval finds a new file.

  FileSourceConfig no_watch = config_for(dir.file("sub/*.log"));
  no_watch.scan_interval = 1h;
  FileSource quiet(no_watch, nullptr);
  RecordingSink quiet_sink;
  quiet.poll_once(clock.now(), quiet_sink);  // sub/ does not exist: nothing is watched there
  dir.write("sub/x.log", "x\n");
  quiet.poll_once(clock.now() + 59min, quiet_sink);
  CHECK(quiet_sink.chunks.empty());
  quiet.poll_once(clock.now() + 1h, quiet_sink);
  CHECK(quiet_sink.texts() == Lines{"x"});
}

TEST_CASE("file source leaves fd_reserve descriptors to the rest of the process",
          "[collectors][file]") {
  TempDir dir;
  FakeClock clock;
  for (int i = 0; i < 40; ++i) dir.write("f" + std::to_string(100 + i) + ".log", "line\n");
  // The lowest free descriptor tells how many are in use; the soft limit is set 30 above it
  // for the duration of the test, so a reserve of 20 leaves room for about 10 files.
  const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(probe >= 0);
  ::close(probe);
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(probe) + 30;
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  FileSourceConfig cfg = config_for(dir.file("*.log"));
  cfg.fd_reserve = 20;
  RecordingSink sink;
  {
    FileSource source(cfg, nullptr);
    source.poll_once(clock.now(), sink);
    const uint64_t followed = source.stats().files;
    const int next = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ::close(next);
    ::setrlimit(RLIMIT_NOFILE, &saved);
    CHECK(followed > 0);
    CHECK(followed < 40);
    CHECK(static_cast<rlim_t>(next) + cfg.fd_reserve >= low.rlim_cur);  // stopped at the reserve
    CHECK(static_cast<rlim_t>(next) + cfg.fd_reserve <= low.rlim_cur + 1);
    CHECK(errors(source, SourceErrorKind::Read) == 40 - followed);  // each refusal counted
    CHECK(sink.lines().size() == followed);

    // Once the limit allows it, the next scan follows the rest.
    clock.advance(cfg.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(source.stats().files == 40);
    CHECK(sink.lines().size() == 40);
  }
  ::setrlimit(RLIMIT_NOFILE, &saved);
}
