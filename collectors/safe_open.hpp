// Opening a file a less trusted user names (a log path, a dump's companion file) without ever
// opening anything else. Root calling open(2) on a FIFO blocks or releases a writer; on a device
// node it runs the driver's open (`/dev/watchdog` then reboots the node). A check by path before
// the open loses a race against a symlink flipped in between. So the path is first resolved to
// an O_PATH descriptor, which no driver sees; that inode is checked; and only that inode is then
// opened for reading, through /proc/self/fd.
//
// Symbolic links are followed only as the kernel's protected_symlinks does in sticky
// directories: when the link's owner is root or owns what it points to. A job cannot link its
// log to /etc/shadow or another user's file and have root read it.
#pragma once

#include <string>

namespace faultd {

struct OpenedFile {
  enum class Refused {
    No,
    NotRegular,  // a FIFO, a device, a directory...: never opened for I/O
    LinkOwner,   // a symlink whose owner is neither root nor the target's owner
  };
  int fd = -1;    // O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC; the caller closes it
  int error = 0;  // errno of a failed open, 0 otherwise
  Refused refused = Refused::No;
};

OpenedFile open_regular_file(const std::string& path);

}  // namespace faultd
