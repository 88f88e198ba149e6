#include "collectors/safe_open.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace faultd {
namespace {

int open_retry(const char* path, int flags) {
  int fd = -1;
  do {
    fd = ::open(path, flags);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// Closes the descriptor it holds when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

OpenedFile open_regular_file(const std::string& path) {
  OpenedFile out;
  // The path's own inode first (the link itself if it is one): its owner is read from the
  // descriptor, not from a second look at the path.
  Fd link{open_retry(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC)};
  struct stat link_st {};
  if (link.fd < 0 || ::fstat(link.fd, &link_st) != 0) {
    out.error = errno;
    return out;
  }
  Fd target;
  struct stat target_st = link_st;
  if (S_ISLNK(link_st.st_mode)) {
    target.fd = open_retry(path.c_str(), O_PATH | O_CLOEXEC);
    if (target.fd < 0 || ::fstat(target.fd, &target_st) != 0) {
      out.error = errno;
      return out;
    }
  }
  if (!S_ISREG(target_st.st_mode)) {
    out.refused = OpenedFile::Refused::NotRegular;
    return out;
  }
  if (S_ISLNK(link_st.st_mode) && link_st.st_uid != 0 && link_st.st_uid != target_st.st_uid) {
    out.refused = OpenedFile::Refused::LinkOwner;
    return out;
  }
  // The inode checked above, not whatever the path names by now.
  const int checked = target.fd >= 0 ? target.fd : link.fd;
  const std::string self = "/proc/self/fd/" + std::to_string(checked);
  constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  out.fd = open_retry(self.c_str(), kReadFlags);
  if (out.fd < 0 && errno == ENOENT && ::access("/proc/self/fd", F_OK) != 0) {
    // No /proc (a bare chroot): a plain file is opened by its path without following links,
    // then checked to be the same inode; a link is refused rather than raced.
    out.fd = open_retry(path.c_str(), kReadFlags | O_NOFOLLOW);
    struct stat opened {};
    if (out.fd >= 0 && (::fstat(out.fd, &opened) != 0 || opened.st_dev != target_st.st_dev ||
                        opened.st_ino != target_st.st_ino)) {
      ::close(out.fd);
      out.fd = -1;
      errno = ENOENT;  // replaced meanwhile: looked at again at the next scan
    }
  }
  if (out.fd < 0) {
    out.error = errno;
    return out;
  }
  // Renumbered to the lowest free descriptor once the O_PATH ones are closed, so that a caller
  // judging how many descriptors are left by the number it got (fd_reserve) is not misled.
  ::close(link.fd);
  link.fd = -1;
  if (target.fd >= 0) ::close(target.fd);
  target.fd = -1;
  const int low = ::fcntl(out.fd, F_DUPFD_CLOEXEC, 0);
  if (low >= 0 && low < out.fd) {
    ::close(out.fd);
    out.fd = low;
  } else if (low >= 0) {
    ::close(low);
  }
  return out;
}

}  // namespace faultd
