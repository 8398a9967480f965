// Pieces shared by the byte sources of input_stream.cc (internal to importers/kineto): errors
// that name the path and offset, full reads, an owned descriptor, and the gzip streams (zlib
// always; Intel ISA-L's igzip where it was found at build time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "importers/kineto/input_stream.h"

namespace overlapscope::import {

// InvalidArgument "<path>: offset <offset>: <reason>".
absl::Status StreamError(const std::string& path, int64_t offset, const std::string& reason);

// read(2) until n bytes or the end of the file; EINTR retried. A read error names `offset` plus
// the bytes already read.
absl::StatusOr<size_t> ReadFull(int fd, char* dst, size_t n, const std::string& path, int64_t offset);

// pread(2) of n bytes at file offset `offset`, until n or the end of the file; EINTR retried. A
// read error names the offset reached. Safe on one descriptor from several threads at once.
absl::StatusOr<size_t> PreadFull(int fd, char* dst, size_t n, const std::string& path, int64_t offset);

// Closes its descriptor when destroyed.
class FdHolder {
 public:
  explicit FdHolder(int fd) : fd_(fd) {}
  ~FdHolder();
  FdHolder(const FdHolder&) = delete;
  FdHolder& operator=(const FdHolder&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Inflation budget of the gzip streams: past kInflateFloor bytes of output, at most
// kMaxInflation bytes of JSON per compressed byte (trace JSON compresses 5-50x; far more is a
// gzip bomb, whose reading would take hours; memory stays bounded by the window either way).
inline constexpr int64_t kInflateFloor = int64_t{1} << 30;
inline constexpr int64_t kMaxInflation = 1000;
// The error past the budget (offset `out_pos`), or OK.
absl::Status CheckInflation(const std::string& path, int64_t out_pos, int64_t compressed_pos);

// Size of the compressed-input buffer of the gzip streams.
inline constexpr size_t kCompressedBuffer = size_t{1} << 20;

// Streaming gzip inflate of `fd` (owned from now on; closed on every path), `head` being the
// bytes already read from its start (the magic-byte probe). Concatenated members are one stream;
// truncated, corrupt or trailing non-gzip data is an error "gzip error: ..." at the uncompressed
// offset reached.
absl::StatusOr<std::unique_ptr<InputStream>> OpenZlibStream(const std::string& path, int fd, int64_t size,
                                                            const std::string& head);
// The same with ISA-L's igzip (several times zlib's speed); nullptr when ISA-L was not built in.
absl::StatusOr<std::unique_ptr<InputStream>> OpenIsalStream(const std::string& path, int fd, int64_t size,
                                                            const std::string& head);

// The parallel inflate (gzip_parallel.h) on `threads` threads over the file mapped into memory;
// nullptr (fd not taken) where the file cannot be mapped.
absl::StatusOr<std::unique_ptr<InputStream>> OpenParallelGzipStream(const std::string& path, int fd, int64_t size,
                                                                    int threads);

}  // namespace overlapscope::import
