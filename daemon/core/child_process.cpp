#include "daemon/core/child_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#if __has_include(<linux/close_range.h>)
#include <linux/close_range.h>
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace faultd {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

namespace {

// ---- child side: everything below runs between fork() and execve(), so it may only use
// async-signal-safe calls (no allocation, no locks, no exceptions).

enum ChildStep : int { kStepSetpgid = 1, kStepFds = 2, kStepExec = 3 };
struct ChildError {
  int step;
  int err;
};

[[noreturn]] void child_fail(int error_fd, int step, int err) {
  const ChildError report{step, err};
  ssize_t n;
  do {
    n = ::write(error_fd, &report, sizeof report);
  } while (n < 0 && errno == EINTR);
  ::_exit(127);
}

void child_reset_signals() {
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  // An ignored SIGPIPE (common in daemons) would otherwise survive execve and break
  // `producer | head` pipelines inside the hook.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // EINVAL is fine
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Parses a /proc/self/fd entry name; -1 for "." and "..".
int parse_fd_name(const char* name) {
  if (*name == '\0') return -1;
  int value = 0;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9') return -1;
    value = value * 10 + (*name - '0');
  }
  return value;
}

// Marks every fd >= 3 close-on-exec, so only 0/1/2 reach the hook while the error pipe stays
// usable until execve succeeds. close_range(CLOEXEC) needs Linux 5.11; older kernels (still
// common on NPU servers) get a raw getdents64 walk of /proc/self/fd, and a loop up to
// RLIMIT_NOFILE if /proc is missing.
void child_cloexec_from_3() {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    alignas(8) char buf[4096];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        // struct linux_dirent64: u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]
        unsigned short reclen;
        std::memcpy(&reclen, buf + off + 16, sizeof reclen);
        const int fd = parse_fd_name(buf + off + 19);
        if (fd >= 3 && fd != dir) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        off += reclen;
      }
    }
    ::close(dir);
    return;
  }
  struct rlimit lim;
  const rlim_t max_fd = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 65536;
  for (rlim_t fd = 3; fd < max_fd; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

// Moves fd out of 0..2 so the dup2 onto 0..2 below cannot clobber another pipe end (a daemon
// started with closed std fds gets pipes numbered 0..2) and so dup2 never sees old == new
// (which would leave CLOEXEC set on the std fd).
int child_move_above_std(int fd, int error_fd) {
  if (fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0) child_fail(error_fd, kStepFds, errno);
  return moved;
}

[[noreturn]] void child_exec(const char* path, char* const* argv, char* const* envp, int stdin_fd,
                             int output_fd, int error_fd) {
  child_reset_signals();
  if (::setpgid(0, 0) != 0) child_fail(error_fd, kStepSetpgid, errno);
  error_fd = child_move_above_std(error_fd, error_fd);
  stdin_fd = child_move_above_std(stdin_fd, error_fd);
  output_fd = child_move_above_std(output_fd, error_fd);
  if (::dup2(stdin_fd, 0) < 0 || ::dup2(output_fd, 1) < 0 || ::dup2(output_fd, 2) < 0) {
    child_fail(error_fd, kStepFds, errno);
  }
  child_cloexec_from_3();
  ::execve(path, argv, envp);
  child_fail(error_fd, kStepExec, errno);
}

// ---- parent side

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read.reset(fds[0]);
  p.write.reset(fds[1]);
  return true;
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

std::string errno_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

// Refuses what execve cannot express faithfully instead of silently truncating it.
std::string validate(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) return "empty argv";
  for (const auto& arg : argv) {
    if (has_nul(arg)) return "argv entry contains a NUL byte";
  }
  for (const auto& [key, value] : env) {
    if (key.empty() || key.find('=') != std::string::npos || has_nul(key)) {
      return "invalid environment variable name \"" + key + "\"";
    }
    if (has_nul(value)) return "environment variable " + key + " contains a NUL byte";
  }
  return {};
}

// Waits for the child's verdict on execve: EOF means the CLOEXEC error pipe was closed by a
// successful exec, a ChildError means the child is about to _exit(127).
std::optional<ChildError> read_child_error(int fd) {
  ChildError report{};
  size_t got = 0;
  while (got < sizeof report) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(&report) + got, sizeof report - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  if (got < sizeof report) return std::nullopt;
  return report;
}

std::string describe_child_error(const ChildError& report, const std::string& path) {
  switch (report.step) {
    case kStepSetpgid:
      return errno_text("setpgid", report.err);
    case kStepFds:
      return errno_text("setting up stdin/stdout", report.err);
    default:
      return errno_text("execve " + path, report.err);
  }
}

}  // namespace

std::optional<std::string> resolve_executable(std::string_view name, std::string_view path_var) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) return std::string(name);
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t end = path_var.find(':', start);
    if (end == std::string_view::npos) end = path_var.size();
    const std::string_view dir = path_var.substr(start, end - start);
    start = end + 1;
    if (dir.empty()) continue;
    std::string candidate(dir);
    if (candidate.back() != '/') candidate += '/';
    candidate += name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

ssize_t write_no_sigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set;
  sigset_t old_mask;
  ::sigemptyset(&pipe_set);
  ::sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigset_t pending;
  ::sigpending(&pending);
  const bool was_pending = ::sigismember(&pending, SIGPIPE) == 1;

  ssize_t n;
  do {
    n = ::write(fd, data, size);
  } while (n < 0 && errno == EINTR);
  const int saved_errno = errno;

  if (n < 0 && saved_errno == EPIPE && !was_pending) {
    const struct timespec no_wait {};
    while (::sigtimedwait(&pipe_set, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved_errno;
  return n;
}

namespace {

// The children spawn_process started and nobody reaped yet: the PID-1 reaper leaves them to
// their owners. Spawning may happen on any thread.
std::mutex g_spawned_mutex;
std::set<pid_t> g_spawned;

void remember_child(pid_t pid) {
  const std::lock_guard lock(g_spawned_mutex);
  g_spawned.insert(pid);
}

void forget_child(pid_t pid) {
  const std::lock_guard lock(g_spawned_mutex);
  g_spawned.erase(pid);
}

bool spawned_here(pid_t pid) {
  const std::lock_guard lock(g_spawned_mutex);
  return g_spawned.count(pid) != 0;
}

// Fields of /proc/PID/stat after the command name (which may hold spaces and ')'): state is
// the first, the start time the twentieth.
std::optional<std::pair<char, uint64_t>> read_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  char state = 0;
  fields >> state;
  std::string skip;
  for (int i = 0; i < 18 && fields >> skip; ++i) {
  }
  uint64_t start = 0;
  if (!(fields >> start)) return std::nullopt;
  return std::make_pair(state, start);
}

}  // namespace

pid_t reap_child(pid_t pid, int* status, bool block) {
  pid_t got;
  do {
    got = ::waitpid(pid, status, block ? 0 : WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == pid || (got < 0 && errno == ECHILD)) forget_child(pid);
  return got;
}

size_t reap_adopted_children() {
  if (::getpid() != 1) return 0;
  size_t reaped = 0;
  // Each round peeks at one exited child. One that an owner will reap stops the sweep; the
  // owner's own SIGCHLD handling comes first, so that is rare and lasts until the next sweep.
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    if (spawned_here(info.si_pid)) break;
    if (::waitpid(info.si_pid, nullptr, WNOHANG) == info.si_pid) ++reaped;
  }
  return reaped;
}

std::optional<ProcessIdentity> identify_process(pid_t pid) {
  const auto stat = read_stat(pid);
  if (!stat || stat->first == 'Z') return std::nullopt;
  return ProcessIdentity{pid, stat->second};
}

bool is_running(const ProcessIdentity& process) {
  if (process.pid <= 0) return false;
  const auto now = identify_process(process.pid);
  return now && now->start_ticks == process.start_ticks;
}

void signal_process_group(pid_t pgid, int sig) {
  if (::kill(-pgid, sig) != 0 && errno == ESRCH) ::kill(pgid, sig);
}

SpawnedProcess spawn_process(const std::string& path, const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& env) {
  SpawnedProcess result;
  if (std::string invalid = validate(argv, env); !invalid.empty()) {
    result.error = std::move(invalid);
    return result;
  }

  // Everything the child needs is built here: after fork it may not allocate.
  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [key, value] : env) {
    std::string entry = key;
    entry += '=';
    entry += value;
    env_strings.push_back(std::move(entry));
  }
  std::vector<char*> argv_ptrs;
  argv_ptrs.reserve(argv.size() + 1);
  for (const auto& arg : argv) argv_ptrs.push_back(const_cast<char*>(arg.c_str()));
  argv_ptrs.push_back(nullptr);
  std::vector<char*> env_ptrs;
  env_ptrs.reserve(env_strings.size() + 1);
  for (const auto& entry : env_strings) env_ptrs.push_back(const_cast<char*>(entry.c_str()));
  env_ptrs.push_back(nullptr);

  Pipe in;
  Pipe out;
  Pipe err;
  if (!make_pipe(in) || !make_pipe(out) || !make_pipe(err)) {
    result.error = errno_text("pipe2", errno);
    return result;
  }

  sigset_t all;
  sigset_t old_mask;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  const pid_t pid = ::fork();
  if (pid == 0) {
    child_exec(path.c_str(), argv_ptrs.data(), env_ptrs.data(), in.read.get(), out.write.get(),
               err.write.get());
  }
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) {
    result.error = errno_text("fork", fork_errno);
    return result;
  }

  in.read.reset();
  out.write.reset();
  err.write.reset();
  if (const auto report = read_child_error(err.read.get())) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {  // never remembered as ours
    }
    result.error = describe_child_error(*report, path);
    return result;
  }

  // Non-blocking only on our ends: the child's ends are separate open file descriptions and
  // stay blocking, as programs expect.
  set_nonblocking(in.write.get());
  set_nonblocking(out.read.get());
  remember_child(pid);
  result.pid = pid;
  result.stdin_fd = std::move(in.write);
  result.output_fd = std::move(out.read);
  return result;
}

}  // namespace faultd
