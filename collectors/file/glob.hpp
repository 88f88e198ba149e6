// The project's one glob dialect, for file sources, `include:` and --replay's routing: pure
// matching (`glob_match`) and a directory walk that also reports every directory it looked into, so
// the source can put an inotify watch on exactly the directories where a matching file could
// appear.
//
// Below the fixed prefix, the directories a walk enters are written by less trusted users (jobs
// write the log tree), so a symlink to a directory is not followed unless the caller says so:
// `ln -s / x` in a job's directory must not make root walk, watch and tail the whole system.
//
// Lifecycle: stateless functions; one walk per rescan. Threading: no shared state.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace faultd::glob {

// One `/`-separated component of a pattern (no `**`) against one name: `*`, `?`, `[...]`
// (with `!`/`^` negation and ranges), `\` escapes the next character.
bool component_match(std::string_view pattern, std::string_view name);

// True if the component contains an unescaped glob metacharacter.
bool has_magic(std::string_view component);

// The directory below which every match of `pattern` lives: its leading literal components
// ("/var/log/training" for "/var/log/training/**/*.log"; "/var/log" for "/var/log/syslog";
// "" for a relative pattern whose first component is magic, meaning the working directory).
std::string fixed_prefix(std::string_view pattern);

struct WalkCallbacks {
  // A directory the walk is about to evaluate a component in (it may have vanished since); may
  // repeat. Returning false keeps the walk out of it (a cap on directories).
  std::function<bool(const std::string& dir)> on_dir;
  // A directory that exists but could not be read (errno); ENOENT/ENOTDIR are not errors.
  std::function<void(const std::string& dir, int err)> on_error;
  // A symlink to a directory below the fixed prefix that DirLinks did not let the walk enter.
  std::function<void(const std::string& link)> on_link_refused;
};

// Which symlinks to directories below the fixed prefix the walk enters (the prefix itself is
// the operator's and is always resolved).
enum class DirLinks {
  Refuse,        // none
  WithinPrefix,  // those whose target (realpath) is below the prefix, on the prefix's filesystem
  Follow,        // all (trusted trees only: the configuration's own includes)
};

// Regular files (or symlinks to them) matching `pattern`, sorted and without duplicates.
// `**` never enters the same directory twice, so symlink loops terminate.
std::vector<std::string> expand(const std::string& pattern, const WalkCallbacks& callbacks,
                                DirLinks dir_links = DirLinks::Refuse);

}  // namespace faultd::glob

namespace faultd {

// Glob matching with `**` (any number of path components, including none), `*` and `?` within a
// component, and `[...]` classes.
bool glob_match(std::string_view pattern, std::string_view path);
// Expands a glob against the file system: regular files (and symlinks to them) that match, in
// sorted order, following every directory link (for the operator's own files: `include:`).
// Errors opening directories are reported through `on_error` (errno), never thrown.
std::vector<std::string> glob_expand(const std::string& pattern,
                                     const std::function<void(int err)>& on_error);

}  // namespace faultd
