#include "collectors/file/glob.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <tuple>

namespace faultd {
namespace glob {
namespace {

struct Parsed {
  bool absolute = false;
  std::vector<std::string_view> components;  // no empty and no "." components
};

Parsed split(std::string_view text) {
  Parsed out;
  out.absolute = !text.empty() && text.front() == '/';
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t slash = text.find('/', pos);
    if (slash == std::string_view::npos) slash = text.size();
    std::string_view part = text.substr(pos, slash - pos);
    if (!part.empty() && part != ".") out.components.push_back(part);
    pos = slash + 1;
  }
  return out;
}

// Matches one `[...]` class starting at pattern[p] == '['. Returns the class's length, or 0 if
// it is unterminated (the '[' is then an ordinary character).
size_t match_class(std::string_view pattern, size_t p, unsigned char ch, bool& matched) {
  size_t q = p + 1;
  bool negate = false;
  if (q < pattern.size() && (pattern[q] == '!' || pattern[q] == '^')) {
    negate = true;
    ++q;
  }
  bool found = false;
  bool first = true;
  while (q < pattern.size()) {
    unsigned char lo = static_cast<unsigned char>(pattern[q]);
    if (lo == ']' && !first) {
      matched = found != negate;
      return q + 1 - p;
    }
    first = false;
    if (lo == '\\' && q + 1 < pattern.size()) lo = static_cast<unsigned char>(pattern[++q]);
    unsigned char hi = lo;
    if (q + 2 < pattern.size() && pattern[q + 1] == '-' && pattern[q + 2] != ']') {
      hi = static_cast<unsigned char>(pattern[q + 2]);
      q += 2;
    }
    if (lo <= ch && ch <= hi) found = true;
    ++q;
  }
  return 0;
}

// Matches the single-character token at pattern[p] against `ch`; sets `advance` to the token's
// length in the pattern.
bool match_token(std::string_view pattern, size_t p, char ch, size_t& advance) {
  const char c = pattern[p];
  if (c == '?') {
    advance = 1;
    return true;
  }
  if (c == '[') {
    bool matched = false;
    const size_t len = match_class(pattern, p, static_cast<unsigned char>(ch), matched);
    if (len > 0) {
      advance = len;
      return matched;
    }
  }
  if (c == '\\' && p + 1 < pattern.size()) {
    advance = 2;
    return pattern[p + 1] == ch;
  }
  advance = 1;
  return c == ch;
}

// `**` is the component-level star: the same greedy match with backtracking to the last star
// that component_match uses for characters, so neither is exponential.
bool match_components(const std::vector<std::string_view>& pattern,
                      const std::vector<std::string_view>& path) {
  size_t p = 0;
  size_t i = 0;
  size_t star_p = std::string_view::npos;
  size_t star_i = 0;
  while (i < path.size()) {
    if (p < pattern.size() && pattern[p] == "**") {
      star_p = ++p;
      star_i = i;
      continue;
    }
    if (p < pattern.size() && component_match(pattern[p], path[i])) {
      ++p;
      ++i;
      continue;
    }
    if (star_p != std::string_view::npos) {
      p = star_p;
      i = ++star_i;
      continue;
    }
    return false;
  }
  while (p < pattern.size() && pattern[p] == "**") ++p;
  return p == pattern.size();
}

std::string unescape(std::string_view component) {
  std::string out;
  out.reserve(component.size());
  for (size_t i = 0; i < component.size(); ++i) {
    if (component[i] == '\\' && i + 1 < component.size()) ++i;
    out.push_back(component[i]);
  }
  return out;
}

std::string join(const std::string& dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir == "/") return "/" + std::string(name);
  std::string out = dir;
  out.push_back('/');
  out.append(name);
  return out;
}

// The walk works on paths as the user spelled them; "" is the working directory.
const char* os_path(const std::string& path) { return path.empty() ? "." : path.c_str(); }

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(os_path(path), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_below(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

struct Entry {
  std::string name;
  unsigned char type;
};

class Walker {
 public:
  Walker(const std::vector<std::string_view>& components, const WalkCallbacks& callbacks,
         DirLinks dir_links)
      : components_(components), callbacks_(callbacks), dir_links_(dir_links) {}

  void start(const std::string& prefix, size_t index) {
    if (dir_links_ == DirLinks::WithinPrefix) {
      char* real = ::realpath(os_path(prefix), nullptr);
      struct stat st {};
      if (real == nullptr || ::stat(real, &st) != 0) {
        ::free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
        return;        // no prefix, nothing to match
      }
      prefix_real_ = real;
      ::free(real);  // NOLINT(cppcoreguidelines-no-malloc)
      prefix_dev_ = st.st_dev;
    }
    walk(prefix, index);
  }

  void walk(const std::string& path, size_t index) {
    if (index == components_.size()) {
      struct stat st {};
      if (::stat(os_path(path), &st) == 0 && S_ISREG(st.st_mode)) results_.push_back(path);
      return;
    }
    const std::string_view component = components_[index];
    if (component == "**") {
      walk_globstar(path, index);
    } else if (!has_magic(component)) {
      walk_literal(path, index);
    } else {
      walk_magic(path, index);
    }
  }

  std::vector<std::string> take_results() {
    std::sort(results_.begin(), results_.end());
    results_.erase(std::unique(results_.begin(), results_.end()), results_.end());
    return std::move(results_);
  }

 private:
  void walk_literal(const std::string& path, size_t index) {
    if (!enter(path)) return;
    std::string child = join(path, unescape(components_[index]));
    if (index + 1 < components_.size() && !is_walkable_directory(child, DT_UNKNOWN)) return;
    walk(child, index + 1);
  }

  void walk_magic(const std::string& path, size_t index) {
    if (!enter(path)) return;
    std::vector<Entry> entries;
    if (!list(path, entries)) return;
    for (const Entry& e : entries) {
      if (!component_match(components_[index], e.name)) continue;
      std::string child = join(path, e.name);
      if (index + 1 < components_.size() && !is_walkable_directory(child, e.type)) continue;
      walk(child, index + 1);
    }
  }

  void walk_globstar(const std::string& path, size_t index) {
    struct stat st {};
    if (::stat(os_path(path), &st) != 0 || !S_ISDIR(st.st_mode)) return;
    // A symlink back to an ancestor would otherwise be walked forever.
    if (!visited_.emplace(st.st_dev, st.st_ino, index).second) return;
    if (!enter(path)) return;
    walk(path, index + 1);  // `**` matching no component at all
    std::vector<Entry> entries;
    if (!list(path, entries)) return;
    for (const Entry& e : entries) {
      std::string child = join(path, e.name);
      if (is_walkable_directory(child, e.type)) {
        walk_globstar(child, index);
      } else if (index + 1 == components_.size()) {
        walk(child, index + 1);  // a trailing `**` also matches the files themselves
      }
    }
  }

  // A directory the walk may go into: a real one, or a symlink to one that dir_links allows.
  bool is_walkable_directory(const std::string& path, unsigned char type) {
    if (type == DT_DIR) return true;
    if (type != DT_LNK && type != DT_UNKNOWN) return false;
    struct stat st {};
    if (::lstat(os_path(path), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) return true;
    if (!S_ISLNK(st.st_mode) || !is_directory(path)) return false;
    if (link_allowed(path)) return true;
    if (callbacks_.on_link_refused) callbacks_.on_link_refused(path);
    return false;
  }

  bool link_allowed(const std::string& path) const {
    switch (dir_links_) {
      case DirLinks::Refuse:
        return false;
      case DirLinks::Follow:
        return true;
      case DirLinks::WithinPrefix:
        break;
    }
    char* real = ::realpath(path.c_str(), nullptr);
    if (real == nullptr) return false;
    const std::string target = real;
    ::free(real);  // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
    struct stat st {};
    return is_below(target, prefix_real_) && ::stat(target.c_str(), &st) == 0 &&
           st.st_dev == prefix_dev_;
  }

  bool list(const std::string& path, std::vector<Entry>& out) {
    DIR* dir = ::opendir(os_path(path));
    if (dir == nullptr) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) report(path, err);
      return false;
    }
    for (;;) {
      errno = 0;
      const dirent* d = ::readdir(dir);
      if (d == nullptr) {
        if (errno != 0) report(path, errno);
        break;
      }
      const std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      out.push_back(Entry{std::string(name), d->d_type});
    }
    ::closedir(dir);
    return true;
  }

  bool enter(const std::string& path) {
    return !callbacks_.on_dir || callbacks_.on_dir(path.empty() ? std::string(".") : path);
  }
  void report(const std::string& path, int err) {
    if (callbacks_.on_error) callbacks_.on_error(path, err);
  }

  const std::vector<std::string_view>& components_;
  const WalkCallbacks& callbacks_;
  DirLinks dir_links_;
  std::string prefix_real_;  // WithinPrefix: the prefix, resolved
  dev_t prefix_dev_ = 0;
  std::set<std::tuple<dev_t, ino_t, size_t>> visited_;
  std::vector<std::string> results_;
};

size_t first_magic(const std::vector<std::string_view>& components) {
  for (size_t i = 0; i < components.size(); ++i) {
    if (components[i] == "**" || has_magic(components[i])) return i;
  }
  return components.size();
}

std::string prefix_of(const Parsed& parsed, size_t count) {
  std::string out = parsed.absolute ? "/" : "";
  for (size_t i = 0; i < count; ++i) out = join(out, unescape(parsed.components[i]));
  return out;
}

}  // namespace

bool has_magic(std::string_view component) {
  for (size_t i = 0; i < component.size(); ++i) {
    const char c = component[i];
    if (c == '\\') {
      ++i;
    } else if (c == '*' || c == '?' || c == '[') {
      return true;
    }
  }
  return false;
}

bool component_match(std::string_view pattern, std::string_view name) {
  size_t p = 0;
  size_t i = 0;
  size_t star_p = std::string_view::npos;
  size_t star_i = 0;
  while (i < name.size()) {
    if (p < pattern.size()) {
      if (pattern[p] == '*') {
        star_p = ++p;
        star_i = i;
        continue;
      }
      size_t advance = 1;
      if (match_token(pattern, p, name[i], advance)) {
        p += advance;
        ++i;
        continue;
      }
    }
    if (star_p != std::string_view::npos) {
      p = star_p;
      i = ++star_i;
      continue;
    }
    return false;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string fixed_prefix(std::string_view pattern) {
  const Parsed parsed = split(pattern);
  if (parsed.components.empty()) return parsed.absolute ? "/" : "";
  size_t k = first_magic(parsed.components);
  if (k == parsed.components.size()) k = parsed.components.size() - 1;
  return prefix_of(parsed, k);
}

std::vector<std::string> expand(const std::string& pattern, const WalkCallbacks& callbacks,
                                DirLinks dir_links) {
  const Parsed parsed = split(pattern);
  if (parsed.components.empty()) return {};
  size_t k = first_magic(parsed.components);
  if (k == parsed.components.size()) k = parsed.components.size() - 1;
  Walker walker(parsed.components, callbacks, dir_links);
  walker.start(prefix_of(parsed, k), k);
  return walker.take_results();
}

}  // namespace glob

bool glob_match(std::string_view pattern, std::string_view path) {
  const glob::Parsed p = glob::split(pattern);
  const glob::Parsed s = glob::split(path);
  if (p.absolute != s.absolute) return false;
  return glob::match_components(p.components, s.components);
}

std::vector<std::string> glob_expand(const std::string& pattern,
                                     const std::function<void(int err)>& on_error) {
  glob::WalkCallbacks callbacks;
  if (on_error) callbacks.on_error = [&](const std::string&, int err) { on_error(err); };
  return glob::expand(pattern, callbacks, glob::DirLinks::Follow);
}

}  // namespace faultd
