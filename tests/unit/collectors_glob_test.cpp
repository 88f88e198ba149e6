#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "collectors/file/file_source.hpp"
#include "collectors/file/glob.hpp"
#include "tests/support/collectors_file_support.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::TempDir;
namespace fs = std::filesystem;

TEST_CASE("glob_match: table of patterns and paths", "[collectors][glob]") {
  struct Case {
    const char* pattern;
    const char* path;
    bool match;
  };
  const Case cases[] = {
      // `**` spans any number of components, including none.
      {"/var/log/training/**/*.log", "/var/log/training/a.log", true},
      {"/var/log/training/**/*.log", "/var/log/training/x/b.log", true},
      {"/var/log/training/**/*.log", "/var/log/training/x/y/b.log", true},
      {"/var/log/training/**/*.log", "/var/log/training/x/y/b.txt", false},
      {"/var/log/training/**/*.log", "/var/log/other/a.log", false},
      {"/var/log/training/**/*.log", "/var/log/training", false},
      {"/a/**/b/**/c.log", "/a/b/c.log", true},
      {"/a/**/b/**/c.log", "/a/x/b/y/z/c.log", true},
      {"/a/**/b/**/c.log", "/a/x/y/z/c.log", false},
      {"/a/**", "/a/b/c", true},
      {"/a/**/**/x", "/a/x", true},
      // `*` and `?` stay within one component.
      {"/a/*.log", "/a/b.log", true},
      {"/a/*.log", "/a/.log", true},
      {"/a/*.log", "/a/b/c.log", false},
      {"/a/*", "/a", false},
      {"/a/?.log", "/a/b.log", true},
      {"/a/?.log", "/a/bc.log", false},
      {"/a/?.log", "/a/.log", false},
      {"/a/*x*y*", "/a/aaxbbycc", true},
      {"/a/*x*y*", "/a/aaybbxcc", false},
      {"/a/*a*a*a*a*a*b", "/a/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
      // Classes.
      {"/a/[abc].log", "/a/b.log", true},
      {"/a/[abc].log", "/a/d.log", false},
      {"/a/[!abc].log", "/a/b.log", false},
      {"/a/[!abc].log", "/a/d.log", true},
      {"/a/[^a-c]x", "/a/dx", true},
      {"/a/[a-c]x", "/a/bx", true},
      {"/a/[0-9][0-9]", "/a/42", true},
      {"/a/[0-9][0-9]", "/a/4x", false},
      {"/a/[]]x", "/a/]x", true},
      {"/a/[.log", "/a/[.log", true},  // unterminated class: a literal '['
      // Escapes.
      {"/a/\\*.log", "/a/*.log", true},
      {"/a/\\*.log", "/a/x.log", false},
      // Real layouts from the design.
      {"/root/ascend/log/debug/plog/plog-*.log",
       "/root/ascend/log/debug/plog/plog-59420_20250124110314898.log", true},
      {"/root/ascend/log/debug/device-*/device-*.log",
       "/root/ascend/log/debug/device-3/device-3_20250124110314898.log", true},
      {"/root/ascend/log/debug/device-*/device-*.log",
       "/root/ascend/log/debug/device-3/sub/device-3.log", false},
      // Absolute and relative never mix; redundant separators do not matter.
      {"a/*.log", "/a/x.log", false},
      {"/a/*.log", "a/x.log", false},
      {"a/*.log", "a/x.log", true},
      {"/a//b.log", "/a/b.log", true},
      {"/a/./b.log", "/a/b.log", true},
  };
  for (const Case& c : cases) {
    INFO(c.pattern << " vs " << c.path);
    CHECK(glob_match(c.pattern, c.path) == c.match);
  }
}

TEST_CASE("glob fixed prefix is the directory to watch", "[collectors][glob]") {
  CHECK(glob::fixed_prefix("/var/log/training/**/*.log") == "/var/log/training");
  CHECK(glob::fixed_prefix("/var/log/syslog") == "/var/log");
  CHECK(glob::fixed_prefix("/root/ascend/log/debug/device-*/device-*.log") ==
        "/root/ascend/log/debug");
  CHECK(glob::fixed_prefix("/*.log") == "/");
  CHECK(glob::fixed_prefix("*.log") == "");
  CHECK(glob::fixed_prefix("logs/*.log") == "logs");
}

TEST_CASE("glob_expand walks **, follows symlinks to files and survives symlink loops",
          "[collectors][glob]") {
  TempDir dir;
  const std::string root = dir.path().string();
  dir.write("a.log", "a\n");
  dir.write("x/y/b.log", "b\n");
  dir.write("x/c.txt", "c\n");
  fs::create_directories(dir.path() / "z.log");  // a directory is never a match
  fs::create_symlink(dir.path() / "x" / "y" / "b.log", dir.path() / "link.log");
  fs::create_symlink(dir.path() / "missing", dir.path() / "broken.log");
  fs::create_directory_symlink(dir.path(), dir.path() / "x" / "loop");  // back to the root
  REQUIRE(::mkfifo((root + "/fifo.log").c_str(), 0644) == 0);

  int errors = 0;
  const auto found = glob_expand(root + "/**/*.log", [&](int) { ++errors; });
  CHECK(found ==
        std::vector<std::string>{root + "/a.log", root + "/link.log", root + "/x/y/b.log"});
  CHECK(errors == 0);

  CHECK(glob_expand(root + "/*.log", nullptr) ==
        std::vector<std::string>{root + "/a.log", root + "/link.log"});
  CHECK(glob_expand(root + "/x/*/b.log", nullptr) == std::vector<std::string>{root + "/x/y/b.log"});
  CHECK(glob_expand(root + "/a.log", nullptr) == std::vector<std::string>{root + "/a.log"});
  // From x/ the loop leads to the root once (not yet visited by this walk), then stops at x/.
  CHECK(glob_expand(root + "/x/**", nullptr) ==
        std::vector<std::string>{root + "/x/c.txt", root + "/x/loop/a.log",
                                 root + "/x/loop/link.log", root + "/x/y/b.log"});
}

// Security audit F5: `ln -s / x` in a job's directory made the walk enter, watch and tail the
// whole target tree.
TEST_CASE("glob walk enters directory links only as told, and reports those it refuses",
          "[collectors][glob]") {
  TempDir tree;
  TempDir outside;
  const std::string root = tree.path().string();
  tree.write("job/a.log", "a\n");
  tree.write("kept/k.log", "k\n");
  outside.write("secret/s.log", "s\n");
  fs::create_directory_symlink(outside.path() / "secret", tree.path() / "job" / "out");
  fs::create_directory_symlink(tree.path() / "kept", tree.path() / "job" / "in");
  fs::create_symlink(tree.path() / "kept" / "k.log", tree.path() / "job" / "file.log");

  std::vector<std::string> refused;
  std::vector<std::string> dirs;
  glob::WalkCallbacks callbacks;
  callbacks.on_dir = [&](const std::string& d) {
    dirs.push_back(d);
    return true;
  };
  callbacks.on_link_refused = [&](const std::string& link) { refused.push_back(link); };

  // By default no directory link below the prefix is entered (a link to a file still is).
  CHECK(
      glob::expand(root + "/**/*.log", callbacks) ==
      std::vector<std::string>{root + "/job/a.log", root + "/job/file.log", root + "/kept/k.log"});
  std::sort(refused.begin(), refused.end());
  CHECK(refused == std::vector<std::string>{root + "/job/in", root + "/job/out"});
  for (const auto& d : dirs) CHECK(d.find(outside.path().string()) == std::string::npos);
  // Nor by `*` or a literal component.
  refused.clear();
  CHECK(glob::expand(root + "/job/*/s.log", callbacks).empty());
  CHECK(glob::expand(root + "/*/out/s.log", callbacks).empty());
  CHECK(refused.size() == 3);  // job/out and job/in, then job/out again

  // WithinPrefix: a link whose target is below the prefix is entered, one outside is not.
  // (kept/ is entered once, through whichever name the walk meets first.)
  refused.clear();
  auto found = glob::expand(root + "/**/*.log", callbacks, glob::DirLinks::WithinPrefix);
  REQUIRE(found.size() == 3);
  CHECK(found[0] == root + "/job/a.log");
  CHECK(found[1] == root + "/job/file.log");
  CHECK((found[2] == root + "/job/in/k.log" || found[2] == root + "/kept/k.log"));
  CHECK(refused == std::vector<std::string>{root + "/job/out"});
  // The prefix itself may be reached through a link: its real path is what links are held to.
  const std::string via_link = outside.path().string() + "/tree";
  fs::create_directory_symlink(tree.path(), via_link);
  refused.clear();
  CHECK(glob::expand(via_link + "/**/*.log", callbacks, glob::DirLinks::WithinPrefix).size() == 3);
  CHECK(refused == std::vector<std::string>{via_link + "/job/out"});
}

TEST_CASE("glob walk stays out of a directory its caller refuses", "[collectors][glob]") {
  TempDir dir;
  dir.write("a/x.log", "x\n");
  dir.write("b/y.log", "y\n");
  glob::WalkCallbacks callbacks;
  callbacks.on_dir = [&](const std::string& d) { return d != dir.file("b"); };
  CHECK(glob::expand(dir.file("**/*.log"), callbacks) ==
        std::vector<std::string>{dir.file("a/x.log")});
}

TEST_CASE("glob_expand of a missing directory is empty and not an error", "[collectors][glob]") {
  TempDir dir;
  int errors = 0;
  CHECK(glob_expand(dir.file("nope/**/*.log"), [&](int) { ++errors; }).empty());
  CHECK(glob_expand(dir.file("nope/*.log"), [&](int) { ++errors; }).empty());
  CHECK(errors == 0);
}

TEST_CASE("glob walk reports every directory it looks into", "[collectors][glob]") {
  TempDir dir;
  dir.write("x/y/b.log", "b\n");
  std::vector<std::string> dirs;
  glob::WalkCallbacks callbacks;
  callbacks.on_dir = [&](const std::string& d) {
    dirs.push_back(d);
    return true;
  };
  glob::expand(dir.file("**/*.log"), callbacks);
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  CHECK(dirs == std::vector<std::string>{dir.path().string(), dir.file("x"), dir.file("x/y")});
}

TEST_CASE("glob_expand reports an unreadable directory through the callback",
          "[collectors][glob]") {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  dir.write("locked/a.log", "a\n");
  ::chmod(dir.file("locked").c_str(), 0);
  {
    faultd::testing::Unprivileged guard;
    if (faultd::testing::can_open(dir.file("locked"))) {
      WARN(
          "cannot drop file-system privileges here (no CAP_SETUID?): unreadable-dir check skipped");
      return;
    }
    std::vector<int> errs;
    CHECK(glob_expand(dir.file("*/*.log"), [&](int err) { errs.push_back(err); }).empty());
    CHECK(errs == std::vector<int>{EACCES});
  }
}
