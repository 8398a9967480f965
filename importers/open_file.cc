#include "importers/open_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace overlapscope::import {

absl::StatusOr<int> OpenRegularFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": offset 0: cannot open: ", std::strerror(errno)));
  struct stat st {};
  const char* kind = nullptr;
  if (::fstat(fd, &st) != 0) {
    kind = "cannot be examined";
  } else if (S_ISFIFO(st.st_mode)) {
    kind = "a FIFO";
  } else if (S_ISDIR(st.st_mode)) {
    kind = "a directory";
  } else if (S_ISSOCK(st.st_mode)) {
    kind = "a socket";
  } else if (!S_ISREG(st.st_mode)) {
    kind = "a device";
  }
  if (kind != nullptr) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": offset 0: cannot open: not a regular file (", kind, ")"));
  }
  // A regular file: blocking reads again (O_NONBLOCK has no effect on them, but leave no doubt).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace overlapscope::import
