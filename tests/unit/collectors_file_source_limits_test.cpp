// What a log writer's tree and files cost the file source, counted rather than timed: the
// directories it walks and watches (security audit F5), the memory its files hold (F8), the
// reads an idle file costs (F21) and a sparse file's "line" of gigabytes (F22).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collectors/file/file_source.hpp"
#include "tests/support/collectors_file_support.hpp"
#include "tests/support/fake_clock.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::config_for;
using faultd::testing::errors;
using faultd::testing::FakeClock;
using faultd::testing::inotify_watches;
using faultd::testing::RecordingSink;
using faultd::testing::TempDir;
using Lines = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

// A field of /proc/self/io (rchar: bytes read; syscr: read calls).
uint64_t io_counter(const std::string& name) {
  std::ifstream io("/proc/self/io");
  for (std::string key; io >> key;) {
    uint64_t value = 0;
    io >> value;
    if (key == name + ":") return value;
  }
  return 0;
}

// Polls until the source has nothing more to do right away.
void drain(FileSource& source, TimePoint now, ChunkSink& sink) {
  for (int i = 0; i < 100000 && source.poll_once(now, sink); ++i) {
  }
}

struct PositionMap {
  std::map<std::pair<uint64_t, uint64_t>, ReadPosition> stored;
  void save(const std::vector<ReadPosition>& positions) {
    for (const auto& p : positions) stored[{p.identity.dev, p.identity.ino}] = p;
  }
  PositionLookup lookup() {
    return [this](const std::string&, uint64_t dev, uint64_t ino) -> std::optional<ReadPosition> {
      auto it = stored.find({dev, ino});
      if (it == stored.end()) return std::nullopt;
      return it->second;
    };
  }
};

}  // namespace

// F5 (R5 of the audit): `ln -s / x` under a `**` source made faultd walk, watch and tail the
// target tree. The target here is a tree of 50 directories beside the log tree.
TEST_CASE("file source: a job's links to directories are not walked, watched or tailed",
          "[collectors][file]") {
  TempDir tree;
  TempDir outside;
  FakeClock clock;
  tree.write("job/a.log", "mine\n");
  tree.write("kept/k.log", "kept\n");
  for (int i = 0; i < 50; ++i) outside.write("d" + std::to_string(i) + "/x.log", "other's\n");
  fs::create_directory_symlink(outside.path(), tree.path() / "job" / "out");
  fs::create_directory_symlink(tree.path() / "kept", tree.path() / "job" / "in");
  auto config = config_for(tree.file("**/*.log"));

  SECTION("by default no directory link is followed") {
    FileSource source(config, nullptr);
    RecordingSink sink;
    source.poll_once(clock.now(), sink);
    std::vector<std::string> texts = sink.texts();
    std::sort(texts.begin(), texts.end());
    CHECK(texts == Lines{"kept", "mine"});
    CHECK(source.stats().files == 2);
    CHECK(inotify_watches() == 3);  // the tree, job/, kept/
    CHECK(errors(source, SourceErrorKind::Symlink) == 2);
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
    CHECK(errors(source, SourceErrorKind::Symlink) == 2);  // once per link and episode
  }
  SECTION("follow_symlinks follows a link below the prefix, not one out of it") {
    config.follow_symlinks = true;
    FileSource source(config, nullptr);
    RecordingSink sink;
    source.poll_once(clock.now(), sink);
    std::vector<std::string> paths;
    for (const auto& c : sink.chunks) paths.push_back(c.path);
    std::sort(paths.begin(), paths.end());
    // kept/k.log is one file under two names: followed once.
    CHECK(source.stats().files == 2);
    CHECK(inotify_watches() <= 4);
    CHECK(errors(source, SourceErrorKind::Symlink) == 1);  // job/out
    for (const auto& p : paths) CHECK(p.find(outside.path().string()) == std::string::npos);
  }
}

TEST_CASE("file source: the walk stops at max_directories, counted once per episode",
          "[collectors][file]") {
  TempDir tree;
  FakeClock clock;
  for (int i = 0; i < 40; ++i) tree.write("job" + std::to_string(i) + "/x.log", "line\n");
  auto config = config_for(tree.file("**/*.log"));
  config.max_directories = 10;
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(inotify_watches() <= 10);
  CHECK(source.stats().files < 10);
  CHECK(errors(source, SourceErrorKind::WalkLimit) == 1);
  clock.advance(config.scan_interval * kFullScanEvery);
  source.poll_once(clock.now(), sink);
  CHECK(source.scan_counts().walks == 2);
  CHECK(errors(source, SourceErrorKind::WalkLimit) == 1);
}

// F8 (R8): each file kept the capacity of its last read. Here the partial lines themselves are
// bounded: 10 files hold 600 bytes each without a newline, the bound is 2000.
TEST_CASE("file source: partial lines held past max_partial_bytes go out as lines",
          "[collectors][file]") {
  TempDir tree;
  FakeClock clock;
  for (int i = 0; i < 10; ++i) tree.write(std::to_string(i) + ".log", std::string(600, 'p'));
  auto config = config_for(tree.file("*.log"));
  config.max_line_bytes = 1000;
  config.max_partial_bytes = 2000;
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  CHECK(errors(source, SourceErrorKind::PartialLimit) == 7);  // 10 x 600 down to 1800
  CHECK(sink.texts() == Lines(7, std::string(600, 'p')));
  CHECK(source.stats().lag_bytes == uint64_t{3} * 600);
  for (int i = 0; i < 10; ++i) tree.write(std::to_string(i) + ".log", "rest\nnext\n", true);
  source.poll_once(clock.now(), sink);
  const Lines texts = sink.texts();
  // The cut lines' rests are skipped; the three held in full are completed.
  CHECK(std::count(texts.begin(), texts.end(), "next") == 10);
  CHECK(std::count(texts.begin(), texts.end(), std::string(600, 'p') + "rest") == 3);
  CHECK(std::count(texts.begin(), texts.end(), "rest") == 0);
  CHECK(source.stats().lag_bytes == 0);
  CHECK(sink.violations.empty());
}

// F21 (R20): every rescan re-read each idle file's first KiB and last bytes read.
TEST_CASE("file source: an idle file is not read again at every rescan", "[collectors][file]") {
  TempDir tree;
  FakeClock clock;
  constexpr int kFiles = 200;
  constexpr int kRescans = 10;
  for (int i = 0; i < kFiles; ++i) tree.write(std::to_string(i) + ".log", "one line\n");
  auto config = config_for(tree.file("*.log"));
  FileSource source(config, nullptr);
  RecordingSink sink;
  source.poll_once(clock.now(), sink);
  REQUIRE(sink.texts().size() == kFiles);
  const uint64_t before = io_counter("syscr");
  for (int i = 0; i < kRescans; ++i) {
    clock.advance(config.scan_interval);
    source.poll_once(clock.now(), sink);
  }
  const uint64_t reads = io_counter("syscr") - before;
  INFO("read calls in " << kRescans << " rescans of " << kFiles << " idle files: " << reads);
  // Verifying every file at every rescan takes two reads each (first bytes, last bytes read).
  CHECK(reads < kFiles * kRescans / 4);
  CHECK(sink.texts().size() == kFiles);
}

// F22 (R21): `truncate -s 4G` cost about 9 s of CPU, kept the lag at 4 GiB and was read again
// after every restart. Here 1 GiB: it is skipped without being read.
TEST_CASE("file source: a sparse file's endless line is skipped, committed and not read again",
          "[collectors][file]") {
  TempDir tree;
  FakeClock clock;
  const std::string path = tree.write("sparse.log", "before\n");
  constexpr uint64_t kSize = uint64_t{1} << 30;
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(kSize)) == 0);
  auto config = config_for(tree.file("*.log"));
  PositionMap store;
  RecordingSink sink;
  {
    FileSource source(config, store.lookup());
    const uint64_t before = io_counter("rchar");
    drain(source, clock.now(), sink);
    const uint64_t read = io_counter("rchar") - before;
    INFO("bytes read: " << read);
    CHECK(read < 4 * config.read_chunk_bytes);
    CHECK(sink.texts() == Lines{"before", std::string(config.max_line_bytes, '\0')});
    CHECK(source.stats().lag_bytes == 0);
    CHECK(source.stats().bytes == kSize);
    CHECK(source.positions().at(0).offset == kSize);
    CHECK(errors(source, SourceErrorKind::Sparse) == 1);
    CHECK(errors(source, SourceErrorKind::LongLine) == 1);
    store.save(source.positions());
  }
  // A restart resumes inside the line and goes on skipping it: nothing is read again, and the
  // newline that ends it does not make an empty line.
  tree.write("sparse.log", "\nafter\n", true);
  FileSource source(config, store.lookup());
  RecordingSink again;
  const uint64_t before = io_counter("rchar");
  drain(source, clock.now(), again);
  CHECK(io_counter("rchar") - before < config.read_chunk_bytes);
  CHECK(again.texts() == Lines{"after"});
  CHECK(source.stats().lag_bytes == 0);
}
