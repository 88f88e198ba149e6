// open_regular_file: what a job's symlinks and special files can make root open (security audit
// F3, F4, F7). A FIFO is the observable case: opening it for reading would release a writer
// blocked in open(O_WRONLY), and a non-blocking writer's open would then find a reader.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>

#include "collectors/safe_open.hpp"
#include "tests/support/temp_dir.hpp"

using namespace faultd;
using faultd::testing::TempDir;

namespace {

constexpr uid_t kNobody = 65534;

std::string read_all(int fd) {
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

TEST_CASE("open_regular_file opens a regular file, directly or through a link",
          "[collectors][safe_open]") {
  TempDir dir;
  const std::string path = dir.write("a.log", "line\n");
  REQUIRE(::symlink(path.c_str(), dir.file("link.log").c_str()) == 0);
  for (const std::string& p : {path, dir.file("link.log")}) {
    OpenedFile f = open_regular_file(p);
    REQUIRE(f.fd >= 0);
    CHECK(f.refused == OpenedFile::Refused::No);
    CHECK(read_all(f.fd) == "line\n");
    CHECK((::fcntl(f.fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
    ::close(f.fd);
  }
  const OpenedFile missing = open_regular_file(dir.file("missing.log"));
  CHECK(missing.fd < 0);
  CHECK(missing.error == ENOENT);
}

TEST_CASE("open_regular_file never opens a FIFO or a device, named or linked",
          "[collectors][safe_open]") {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE(::symlink(fifo.c_str(), dir.file("to-fifo.log").c_str()) == 0);
  REQUIRE(::symlink("/dev/null", dir.file("to-dev.log").c_str()) == 0);
  REQUIRE(::mkdir(dir.file("sub").c_str(), 0700) == 0);
  for (const char* name : {"fifo", "to-fifo.log", "to-dev.log", "sub"}) {
    INFO(name);
    const OpenedFile f = open_regular_file(dir.file(name));
    CHECK(f.fd < 0);
    CHECK(f.refused == OpenedFile::Refused::NotRegular);
  }
  // Had the FIFO been opened for reading (and kept), a writer would find a reader; it finds
  // none, and it never did in between: O_PATH is not an open for reading.
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  CHECK(writer < 0);
  CHECK(errno == ENXIO);
}

TEST_CASE("a link is followed only when root or the target's owner made it",
          "[collectors][safe_open]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to give links and files other owners");
    return;
  }
  TempDir dir;
  const std::string secret = dir.write("secret.log", "root only\n");
  REQUIRE(::chmod(secret.c_str(), 0600) == 0);
  const std::string own = dir.write("own.log", "the job's\n");
  REQUIRE(::chown(own.c_str(), kNobody, kNobody) == 0);
  auto link_as = [&](const std::string& target, const std::string& name, uid_t owner) {
    const std::string link = dir.file(name);
    REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
    REQUIRE(::lchown(link.c_str(), owner, owner) == 0);
    return link;
  };
  // A job's link to a root-only file: refused (the audit read /etc/shadow this way).
  const OpenedFile stolen = open_regular_file(link_as(secret, "steal.log", kNobody));
  CHECK(stolen.fd < 0);
  CHECK(stolen.refused == OpenedFile::Refused::LinkOwner);
  // A job's link to its own file, and root's link to anything: followed.
  for (const auto& link : {link_as(own, "mine.log", kNobody), link_as(secret, "root.log", 0)}) {
    OpenedFile f = open_regular_file(link);
    CHECK(f.fd >= 0);
    CHECK(f.refused == OpenedFile::Refused::No);
    if (f.fd >= 0) ::close(f.fd);
  }
}
