// Files a training job wrote, read (and results written beside them) by an operator who is
// usually root. The job chose every name in its dump tree, so a name may be a FIFO (an open
// blocks, or releases a writer), a device node (its driver's open runs: /dev/watchdog arms the
// watchdog), a symbolic link to anything root can read or write, or a sparse or compressed file
// far larger than its disk blocks. The approach is collectors/safe_open.hpp's: a name is first
// opened O_PATH | O_NOFOLLOW, which no driver sees; that inode is checked to be a regular file;
// and only that inode is then opened for reading, through /proc/self/fd. Here no link is ever
// followed at all: dump files are regular files in their rank folder, and a tensor's data_name
// is a flat file name in its data directory.
//
// Output goes through openat(O_CREAT | O_EXCL | O_NOFOLLOW) in a directory opened without
// following a link: an existing file, or a link a job planted under the name, is never written
// through; replacing a file (asked for) writes a fresh one and renames it over the name, which
// replaces a link instead of following it.
//
// Every limit below is documented in docs/compare.md and docs/security.md.
// Lifecycle: plain functions and a descriptor owner. Threading: any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace faultd::compare {

// The most bytes read into memory from one text file (dump.json, stack.json, a .pkl, a mapping
// file), counted after decompression for a .gz: an honest dump.json of a large model is a few
// hundred MB.
inline constexpr uint64_t kMaxTextBytes = uint64_t{1} << 30;
// A tensor file whose disk blocks hold less than 1/kMaxSparseRatio of its size (and that is
// larger than kSparseFloorBytes) is refused: its holes read as zeros for free, so a job could
// make every row cost minutes of CPU with no disk.
inline constexpr uint64_t kMaxSparseRatio = 8;
inline constexpr uint64_t kSparseFloorBytes = uint64_t{1} << 20;

// Owns a descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// A directory of the dump tree, to open files in: the path up to its last component is taken
// as given (the operator named it, or a walk found it), the last component is never a link.
// Throws InputError.
UniqueFd open_job_dir(const std::filesystem::path& dir);

// `name`, one path component in the directory `dir_fd`, opened O_RDONLY | O_NONBLOCK only when
// it is a regular file; a link, FIFO, device, socket or directory is refused without being
// opened. `shown` names it in the error. Throws InputError.
UniqueFd open_job_file_at(int dir_fd, const std::string& name, const std::string& shown);
// The same for a path: its directory as open_job_dir takes it, the file itself as above.
UniqueFd open_job_file(const std::filesystem::path& path);

// The whole file behind `fd` (decompressed when `gzip`), refused with an InputError naming
// `shown` and the limit when it holds more than `cap` bytes.
std::string read_capped(int fd, const std::string& shown, uint64_t cap, bool gzip = false);

// Why a tensor's data_name (from the job's dump.json or .pkl) is refused, or nothing when it
// is a flat file name: msprobe and ptdbg write `Tensor.add.0.forward.output.0.pt`, never a path.
std::optional<std::string> bad_data_name(std::string_view name);

// Writes `content` as the new file `name` in `dir_fd`. Without `replace`, an existing name (a
// file, or a link a job planted) is an InputError saying what to do; with it, the content is
// written to a fresh file and renamed over the name. `shown` names the file in errors.
void write_new_file(int dir_fd, const std::string& name, std::string_view content, bool replace,
                    const std::string& shown);

// The directory results are written to: made (0755) when it does not exist, refused when its
// last component is a link. Throws InputError.
UniqueFd open_output_dir(const std::filesystem::path& dir);

}  // namespace faultd::compare
