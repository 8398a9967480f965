#include "importers/kineto/stream_util.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace overlapscope::import {

absl::Status StreamError(const std::string& path, int64_t offset, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": offset ", offset, ": ", reason));
}

namespace {

// Reads until n bytes or end of file, retrying EINTR; `positional`: pread(2) at offset (the file
// position is left alone), else read(2) from the current position. `offset` names the failing
// byte in the error either way.
absl::StatusOr<size_t> ReadLoop(int fd, char* dst, size_t n, const std::string& path, int64_t offset, bool positional) {
  size_t got = 0;
  while (got < n) {
    const int64_t at = offset + static_cast<int64_t>(got);
    ssize_t r = positional ? ::pread(fd, dst + got, n - got, static_cast<off_t>(at)) : ::read(fd, dst + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return StreamError(path, at, absl::StrCat("read error: ", std::strerror(errno)));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

}  // namespace

absl::StatusOr<size_t> ReadFull(int fd, char* dst, size_t n, const std::string& path, int64_t offset) {
  return ReadLoop(fd, dst, n, path, offset, /*positional=*/false);
}

absl::StatusOr<size_t> PreadFull(int fd, char* dst, size_t n, const std::string& path, int64_t offset) {
  return ReadLoop(fd, dst, n, path, offset, /*positional=*/true);
}

FdHolder::~FdHolder() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status CheckInflation(const std::string& path, int64_t out_pos, int64_t compressed_pos) {
  if (out_pos > kInflateFloor && out_pos / kMaxInflation > compressed_pos)
    return StreamError(path, out_pos,
                       absl::StrCat("gzip data inflates more than ", kMaxInflation,
                                    " times its compressed size (a gzip bomb?); not read further"));
  return absl::OkStatus();
}

}  // namespace overlapscope::import
