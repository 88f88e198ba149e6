// The directory walk of a source that watches its tree: glob::expand over the source's
// patterns, with an inotify watch on every directory it looks into, at most `max_directories`
// of them (so at most that many watches). Past the cap the walk stops descending: a job that
// makes 200,000 directories gets a walk of max_directories, not one of 200,000. The walk's
// duration is measured for the RescanPacer.
//
// Lifecycle: one call per rescan. Threading: the caller's (the source's io thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectors/file/glob.hpp"
#include "collectors/file/inotify_watch.hpp"
#include "daemon/core/types.hpp"

namespace faultd {

struct WatchedWalkErrors {
  std::function<void(const std::string& dir, int err)> on_watch_error;  // not ENOENT/ENOTDIR
  std::function<void(const std::string& dir, int err)> on_glob_error;
  std::function<void(const std::string& link)> on_link_refused;
};

struct WatchedWalk {
  std::vector<std::string> paths;  // matching regular files, sorted, no duplicates
  size_t directories = 0;          // looked into (and watched)
  bool capped = false;             // stopped at max_directories
  // A directory looked into is not watched (gone, not there yet, or the watch failed): what
  // happens in it is seen only by walking again.
  bool unwatched = false;
  Duration cost{};  // how long the walk took
};

WatchedWalk walk_and_watch(InotifyWatch& inotify, const std::vector<std::string>& patterns,
                           size_t max_directories, glob::DirLinks dir_links,
                           const WatchedWalkErrors& errors);

// What a source's discovery cost, counted by the source (tests hold its cost to these).
struct ScanCounts {
  uint64_t walks = 0;            // walks of the tree
  uint64_t requested_walks = 0;  // of them, walks an inotify event asked for
  uint64_t file_checks = 0;      // stat/fstat of single files outside the walk
};

// The warning for a walk that stopped at the cap (one wording for every source).
std::string walk_limit_warning(size_t max_directories);

}  // namespace faultd
