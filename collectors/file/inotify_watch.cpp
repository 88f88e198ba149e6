#include "collectors/file/inotify_watch.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace faultd {
namespace {

// Events that may change which files match: the scan has to look again. IN_ATTRIB: a file
// that could not be opened may have become readable.
constexpr uint32_t kRescanMask = IN_Q_OVERFLOW | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM |
                                 IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB;
constexpr uint32_t kModifyMask = IN_MODIFY | IN_CLOSE_WRITE;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool add_to(int epoll_fd, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  return ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

std::string join(const std::string& dir, const char* name) {
  if (dir == ".") return name;
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace

InotifyWatch::InotifyWatch(Report report)
    : mask_((kRescanMask & ~IN_Q_OVERFLOW) | (report == Report::AlsoModify ? kModifyMask : 0)) {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  wake_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (inotify_fd_ < 0 || timer_fd_ < 0 || wake_fd_ < 0 ||
      ::fcntl(wake_fd_, F_SETFL, O_NONBLOCK) != 0 || !add_to(wake_fd_, inotify_fd_) ||
      !add_to(wake_fd_, timer_fd_)) {
    init_errno_ = errno;
    close_fd(wake_fd_);
    close_fd(timer_fd_);
    close_fd(inotify_fd_);
  }
}

InotifyWatch::~InotifyWatch() {
  close_fd(wake_fd_);
  close_fd(timer_fd_);
  close_fd(inotify_fd_);
}

int InotifyWatch::watch(const std::string& dir) {
  if (inotify_fd_ < 0) return init_errno_;
  const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), mask_ | IN_ONLYDIR);
  if (wd < 0) return errno;
  Watched& w = watches_[wd];
  w.generation = generation_;
  if (w.dir != dir) w.dir = dir;
  return 0;
}

void InotifyWatch::end_generation() {
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.generation != generation_) {
      ::inotify_rm_watch(inotify_fd_, it->first);
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
}

void InotifyWatch::wake_after(Duration delay) {
  if (timer_fd_ < 0) return;
  const auto ns = std::max<int64_t>(delay.count(), 1);  // 0 would disarm the timer
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  ::timerfd_settime(timer_fd_, 0, &spec, nullptr);
}

InotifyWatch::Events InotifyWatch::drain() {
  Events out;
  if (inotify_fd_ < 0) return out;
  uint64_t expirations = 0;
  while (::read(timer_fd_, &expirations, sizeof expirations) < 0 && errno == EINTR) {
  }
  alignas(inotify_event) char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // EAGAIN: nothing more pending
    }
    if (n == 0) break;
    for (ssize_t pos = 0; pos + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      inotify_event ev;
      std::memcpy(&ev, buf + pos, sizeof ev);
      const char* name = buf + pos + sizeof(inotify_event);
      pos += static_cast<ssize_t>(sizeof(inotify_event) + ev.len);
      if ((ev.mask & kRescanMask) != 0) out.rescan = true;
      if ((ev.mask & IN_Q_OVERFLOW) != 0) out.overflow = true;
      if ((ev.mask & kModifyMask) != 0 && ev.len > 0 && !out.overflow) {
        const auto it = watches_.find(ev.wd);
        if (it != watches_.end()) out.modified.insert(join(it->second.dir, name));
        if (out.modified.size() > kMaxModifiedNames) out.overflow = true;
      }
      // The kernel dropped the watch (directory gone or we removed it).
      if ((ev.mask & IN_IGNORED) != 0) watches_.erase(ev.wd);
    }
  }
  if (out.overflow) {
    out.rescan = true;
    out.modified.clear();
  }
  return out;
}

}  // namespace faultd
