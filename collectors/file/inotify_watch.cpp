#include "collectors/file/inotify_watch.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace faultd {
namespace {

constexpr uint32_t kWatchMask = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_MODIFY |
                                IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF;
// Events that may change which files match: the scan has to look again.
constexpr uint32_t kRescanMask = IN_Q_OVERFLOW | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM |
                                 IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;

}  // namespace

InotifyWatch::InotifyWatch() {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) init_errno_ = errno;
}

InotifyWatch::~InotifyWatch() {
  if (fd_ >= 0) ::close(fd_);
}

int InotifyWatch::watch(const std::string& dir) {
  if (fd_ < 0) return init_errno_;
  const int wd = ::inotify_add_watch(fd_, dir.c_str(), kWatchMask | IN_ONLYDIR);
  if (wd < 0) return errno;
  watches_[wd] = generation_;
  return 0;
}

void InotifyWatch::end_generation() {
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second != generation_) {
      ::inotify_rm_watch(fd_, it->first);
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
}

bool InotifyWatch::drain() {
  if (fd_ < 0) return false;
  bool rescan = false;
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // EAGAIN: nothing more pending
    }
    if (n == 0) break;
    for (ssize_t pos = 0; pos + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      inotify_event ev;
      std::memcpy(&ev, buf + pos, sizeof ev);
      if ((ev.mask & kRescanMask) != 0) rescan = true;
      // The kernel dropped the watch (directory gone or we removed it).
      if ((ev.mask & IN_IGNORED) != 0) watches_.erase(ev.wd);
      pos += static_cast<ssize_t>(sizeof(inotify_event) + ev.len);
    }
  }
  return rescan;
}

}  // namespace faultd
