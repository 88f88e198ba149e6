// Child processes for everything faultd runs: turn an argv and an environment into a running
// child in its own process group, with a pipe on its stdin and one pipe carrying both its stdout
// and stderr. Hooks (daemon/actions) and command sources (collectors/command) share it, so the
// fork/exec rules (async-signal-safe child code, error pipe, fd hygiene) live in one small file
// and the callers deal only with their own event loops.
//
// Lifecycle: spawn_process() returns once the child has called execve (or failed to); the
// caller owns the returned pid (it must reap it, with reap_child) and the two parent-side pipe
// ends.
//
// Threading: callable from any thread; it blocks all signals of the calling thread for the
// duration of fork() so no handler runs in the child before it resets them.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultd {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct SpawnedProcess {
  pid_t pid = -1;      // leader of a new process group whose id is `pid`
  UniqueFd stdin_fd;   // write end of the child's stdin, O_NONBLOCK
  UniqueFd output_fd;  // read end of the child's stdout+stderr, O_NONBLOCK
  std::string error;   // set (and pid == -1) when the child could not be started
};

// Starts `path` with exactly `argv` and `env` (no shell, nothing inherited from the daemon's
// environment, signal dispositions and mask reset to default, every fd other than 0/1/2
// closed at exec). An execve failure in the child is carried back through a CLOEXEC pipe and
// reported as "execve <path>: <strerror>", never as an exit status.
SpawnedProcess spawn_process(const std::string& path, const std::vector<std::string>& argv,
                             const std::vector<std::pair<std::string, std::string>>& env);

// The PATH of what faultd runs for the operator with a clean environment (hooks, inventory
// discoverers): the system's directories, never faultd's own PATH, which a unit file or the
// shell that started faultd may have changed.
inline constexpr std::string_view kChildPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Where `name` would be executed from: itself if it contains a '/', else the first executable
// regular file in `path_var` (empty PATH entries, which would mean the working directory, are
// skipped on purpose). nullopt when not found.
std::optional<std::string> resolve_executable(std::string_view name, std::string_view path_var);

// Writes without letting a reader that went away kill the daemon with SIGPIPE, whatever the
// process disposition is: SIGPIPE is blocked on this thread for the write and a SIGPIPE the
// write raised is consumed before unblocking. Returns what write(2) returned (errno preserved).
ssize_t write_no_sigpipe(int fd, const char* data, size_t size);

// Waits for a child that spawn_process started, by its pid (faultd never waits for "any
// child": the owner of a child reads its exit status). `block`: wait until it exits. Returns
// the pid once reaped (its status in `status`, if not null), 0 while it runs, -1 with errno
// (ECHILD: it was reaped elsewhere). Retries on EINTR.
pid_t reap_child(pid_t pid, int* status, bool block);

// When faultd is PID 1 (a container started with `exec faultd`), the orphans of its hooks (a
// daemonised helper, a `sleep &`) are re-parented to it, and nobody else can reap them. Reaps
// every exited child that spawn_process did not start; returns how many. Does nothing (0) in
// any other process.
size_t reap_adopted_children();

// A process named by its pid and its start time (field 22 of /proc/PID/stat, in clock ticks
// since boot), so that a reused pid is never taken for it.
struct ProcessIdentity {
  pid_t pid = 0;
  uint64_t start_ticks = 0;
};
std::optional<ProcessIdentity> identify_process(pid_t pid);
// True while that very process exists and has not exited (a zombie has).
bool is_running(const ProcessIdentity& process);

// Signals the child's process group (its grandchildren too), or the leader alone if it left its
// group (setsid).
void signal_process_group(pid_t pgid, int sig);

}  // namespace faultd
