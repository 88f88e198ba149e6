// An inotify descriptor watching the directories where a source's files can appear. It is a
// wake-up only: the stat scan decides what changed. Any create/move/delete/attribute change in
// a watched directory, or a queue overflow (events were lost), asks for a rescan; a
// modification names the file, so the source reads only the files that changed.
//
// The descriptor the app waits on (fd()) is an epoll set holding the inotify descriptor and a
// timer: a source that holds a rescan back (RescanPacer) sets the timer with wake_after(), so
// the held-back rescan runs on time without the app knowing about it.
//
// Lifecycle: created with the source. Each rescan calls begin_generation(), watch() for every
// directory the walk visits, then end_generation(), which drops watches no longer renewed.
// If inotify is unavailable (EMFILE, ENOSYS, ...) fd() is -1 and the periodic scan carries on.
// Threading: one thread (the source's).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>

#include "daemon/core/types.hpp"

namespace faultd {

class InotifyWatch {
 public:
  enum class Report { CreateDelete, AlsoModify };

  // AlsoModify: modifications of files in watched directories wake the source and are named by
  // drain(); CreateDelete: only what changes the set of files does.
  explicit InotifyWatch(Report report = Report::AlsoModify);
  ~InotifyWatch();
  InotifyWatch(const InotifyWatch&) = delete;
  InotifyWatch& operator=(const InotifyWatch&) = delete;

  int fd() const { return wake_fd_; }
  int init_error() const { return init_errno_; }  // errno of the set-up, 0 if it worked

  // Adds or renews a watch on `dir`. Returns 0 or errno (ENOENT/ENOTDIR if the directory is gone).
  int watch(const std::string& dir);
  void begin_generation() { ++generation_; }
  void end_generation();
  size_t watch_count() const { return watches_.size(); }

  // Makes fd() readable after `delay` (once; a later call replaces an earlier one).
  void wake_after(Duration delay);

  struct Events {
    bool rescan = false;             // the set of files may have changed (or events were lost)
    bool overflow = false;           // events were lost: modifications too
    std::set<std::string> modified;  // paths (watched directory + name) written to
  };
  // Reads every pending event (and the timer) without blocking.
  Events drain();

  // More distinct modified names than this in one drain are reported as an overflow.
  static constexpr size_t kMaxModifiedNames = 16384;

 private:
  struct Watched {
    uint64_t generation = 0;
    std::string dir;
  };
  uint32_t mask_;
  int inotify_fd_ = -1;
  int timer_fd_ = -1;
  int wake_fd_ = -1;  // epoll set of the two
  int init_errno_ = 0;
  uint64_t generation_ = 0;
  std::unordered_map<int, Watched> watches_;  // wd -> the directory and its last renewal
};

}  // namespace faultd
