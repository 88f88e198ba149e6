// An inotify descriptor watching the directories where a file source's globs can match. It is a
// wake-up only: the stat scan decides what changed. Any create/move/delete in a watched
// directory, or a queue overflow (events were lost), asks for a rescan; modifications need no
// rescan because every poll reads every followed file anyway.
//
// Lifecycle: created with the source. Each rescan calls begin_generation(), watch() for every
// directory the glob walk visits, then end_generation(), which drops watches no longer renewed.
// If inotify is unavailable (EMFILE, ENOSYS, ...) fd() is -1 and the periodic scan carries on.
// Threading: one thread (the source's).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace faultd {

class InotifyWatch {
 public:
  InotifyWatch();
  ~InotifyWatch();
  InotifyWatch(const InotifyWatch&) = delete;
  InotifyWatch& operator=(const InotifyWatch&) = delete;

  int fd() const { return fd_; }
  int init_error() const { return init_errno_; }  // errno of inotify_init1, 0 if it worked

  // Adds or renews a watch on `dir`. Returns 0 or errno (ENOENT/ENOTDIR if the directory is gone).
  int watch(const std::string& dir);
  void begin_generation() { ++generation_; }
  void end_generation();
  size_t watch_count() const { return watches_.size(); }

  // Reads every pending event without blocking. Returns true if one of them calls for a rescan.
  bool drain();

 private:
  int fd_ = -1;
  int init_errno_ = 0;
  uint64_t generation_ = 0;
  std::unordered_map<int, uint64_t> watches_;  // wd -> generation that last renewed it
};

}  // namespace faultd
