#include "compare/job_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "compare/dump.hpp"

namespace faultd::compare {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

namespace {

int retry_openat(int dir_fd, const char* name, int flags, mode_t mode = 0) {
  int fd = -1;
  do {
    fd = ::openat(dir_fd, name, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

std::string errno_text(int e) { return std::strerror(e); }

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// "dir/name" as (dir, name): a trailing '/' is dropped, an empty directory is ".".
std::pair<std::string, std::string> split(const std::filesystem::path& path) {
  std::string s = path.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  if (s == "/") return {"/", "."};
  const size_t slash = s.rfind('/');
  if (slash == std::string::npos) return {".", s};
  return {slash == 0 ? "/" : s.substr(0, slash), s.substr(slash + 1)};
}

UniqueFd open_parent(const std::string& dir, const std::string& shown) {
  UniqueFd fd(retry_openat(AT_FDCWD, dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) throw InputError(shown + ": cannot open " + dir + ": " + errno_text(errno));
  return fd;
}

// The reason an O_NOFOLLOW open of `name` in `dir_fd` failed: a link gets its own words.
std::string open_failure(int dir_fd, const std::string& name, int error) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    return "a symbolic link: not followed (a job's dump tree is read without links)";
  }
  return errno_text(error);
}

}  // namespace

UniqueFd open_job_dir(const std::filesystem::path& dir) {
  const auto [parent, last] = split(dir);
  const UniqueFd parent_fd = open_parent(parent, dir.string());
  UniqueFd fd(
      retry_openat(parent_fd.get(), last.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    throw InputError(dir.string() + ": " + open_failure(parent_fd.get(), last, errno));
  }
  return fd;
}

UniqueFd open_job_file_at(int dir_fd, const std::string& name, const std::string& shown) {
  // The name's own inode, which no driver sees and no link leads away from.
  const UniqueFd path_fd(retry_openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (path_fd.get() < 0 || ::fstat(path_fd.get(), &st) != 0) {
    throw InputError(shown + ": cannot open: " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw InputError(shown + ": " + kind_of(st.st_mode) + ", not a regular file: not opened");
  }
  // That inode, not whatever the name points to by now. Without /proc there is no way to open
  // it without a second lookup by name, which a job could race: refused rather than raced.
  const std::string self = "/proc/self/fd/" + std::to_string(path_fd.get());
  UniqueFd fd(retry_openat(AT_FDCWD, self.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    throw InputError(shown + ": cannot open: " + errno_text(errno) +
                     (errno == ENOENT ? " (/proc is not mounted)" : ""));
  }
  return fd;
}

UniqueFd open_job_file(const std::filesystem::path& path) {
  const auto [parent, last] = split(path);
  const UniqueFd parent_fd = open_parent(parent, path.string());
  return open_job_file_at(parent_fd.get(), last, path.string());
}

std::string read_capped(int fd, const std::string& shown, uint64_t cap, bool gzip) {
  auto too_big = [&]() {
    return InputError(shown + ": more than " + std::to_string(cap >> 20) + " MiB" +
                      (gzip ? " once decompressed" : "") + ": not read (the limit on one file)");
  };
  std::string out;
  char buf[1 << 16];
  if (gzip) {
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    gzFile f = own >= 0 ? gzdopen(own, "rb") : nullptr;
    if (f == nullptr) {
      if (own >= 0) ::close(own);
      throw InputError(shown + ": cannot open");
    }
    int n = 0;
    while ((n = gzread(f, buf, sizeof buf)) > 0) {
      if (out.size() + static_cast<size_t>(n) > cap) {
        gzclose(f);
        throw too_big();
      }
      out.append(buf, static_cast<size_t>(n));
    }
    int err = 0;
    const char* msg = gzerror(f, &err);
    const std::string why = n < 0 ? std::string(msg != nullptr ? msg : "read error") : "";
    gzclose(f);
    if (n < 0) throw InputError(shown + ": " + why);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) > cap) throw too_big();
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(shown + ": read error: " + errno_text(errno));
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > cap) throw too_big();
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::optional<std::string> bad_data_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return "a tensor's data_name must be a file name in its data directory (no '/', '.' or "
           "'..'): refused";
  }
  return std::nullopt;
}

void write_new_file(int dir_fd, const std::string& name, std::string_view content, bool replace,
                    const std::string& shown) {
  constexpr int kCreate = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  // Replacing: a fresh file beside it, renamed over the name at the end.
  const std::string temp = replace ? "." + name + ".tmp-" + std::to_string(::getpid()) : name;
  UniqueFd fd(retry_openat(dir_fd, temp.c_str(), kCreate, 0644));
  if (fd.get() < 0 && errno == EEXIST && !replace) {
    throw InputError(shown +
                     ": already exists (or is a link): faultctl never writes over a file; "
                     "remove it, choose another --output, or give --overwrite to replace it");
  }
  if (fd.get() < 0) throw InputError(shown + ": cannot create: " + errno_text(errno));
  auto fail = [&](const std::string& why) {
    fd = UniqueFd();
    ::unlinkat(dir_fd, temp.c_str(), 0);
    throw InputError(shown + ": cannot write: " + why);
  };
  for (size_t at = 0; at < content.size();) {
    const ssize_t n = ::write(fd.get(), content.data() + at, content.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno_text(errno));
    at += static_cast<size_t>(n);
  }
  if (::close(fd.release()) != 0) fail(errno_text(errno));
  // rename replaces a link planted under the name; it never writes through it.
  if (replace && ::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) {
    fail(errno_text(errno));
  }
}

UniqueFd open_output_dir(const std::filesystem::path& dir) {
  const auto [parent, last] = split(dir);
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);  // the operator's own path
  const UniqueFd parent_fd = open_parent(parent, dir.string());
  if (::mkdirat(parent_fd.get(), last.c_str(), 0755) != 0 && errno != EEXIST) {
    throw InputError(dir.string() + ": cannot create: " + errno_text(errno));
  }
  UniqueFd fd(
      retry_openat(parent_fd.get(), last.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    throw InputError(dir.string() + ": " + open_failure(parent_fd.get(), last, errno) +
                     ": results are written only into a real directory");
  }
  return fd;
}

}  // namespace faultd::compare
