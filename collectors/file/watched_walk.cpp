#include "collectors/file/watched_walk.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <set>
#include <utility>

namespace faultd {

WatchedWalk walk_and_watch(InotifyWatch& inotify, const std::vector<std::string>& patterns,
                           size_t max_directories, glob::DirLinks dir_links,
                           const WatchedWalkErrors& errors) {
  const auto started = std::chrono::steady_clock::now();
  WatchedWalk out;
  std::set<std::string> entered;
  glob::WalkCallbacks callbacks;
  callbacks.on_dir = [&](const std::string& dir) {
    if (entered.count(dir) > 0) return true;
    if (entered.size() >= max_directories) {
      out.capped = true;
      return false;
    }
    entered.insert(dir);
    const int err = inotify.watch(dir);
    if (err == 0) return true;
    out.unwatched = true;
    if (err != ENOENT && err != ENOTDIR && inotify.fd() >= 0 && errors.on_watch_error) {
      errors.on_watch_error(dir, err);
    }
    return true;
  };
  callbacks.on_error = errors.on_glob_error;
  callbacks.on_link_refused = errors.on_link_refused;
  inotify.begin_generation();
  std::set<std::string> paths;
  for (const std::string& pattern : patterns) {
    for (std::string& p : glob::expand(pattern, callbacks, dir_links)) paths.insert(std::move(p));
  }
  inotify.end_generation();
  out.paths.assign(std::make_move_iterator(paths.begin()), std::make_move_iterator(paths.end()));
  out.directories = entered.size();
  out.cost = std::chrono::steady_clock::now() - started;
  return out;
}

std::string walk_limit_warning(size_t max_directories) {
  return fmt::format(
      "stopped the directory walk at max_directories ({}): files below the directories left "
      "out are not followed",
      max_directories);
}

}  // namespace faultd
