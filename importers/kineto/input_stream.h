// Sequential byte source for the importer: a plain file read with read(2), or a gzip file
// (detected by its magic bytes, not its name) inflated as it is read, by Intel ISA-L's igzip
// where the build found it (libisal-dev), else by zlib; OVERLAPSCOPE_INFLATE=zlib forces zlib.
// Given inflate_threads >= kParallelInflateThreads, a gzip file is inflated on that many threads
// instead (gzip_parallel.h: about 4x ISA-L's CPU a byte, so it pays only where enough cores
// share it with the parse: the break-even estimated in docs/PERFORMANCE.md; OVERLAPSCOPE_INFLATE=serial keeps the
// streaming path, =parallel takes the parallel one at any thread count). The streaming paths never hold more than the
// caller's buffer plus a 1 MiB compressed-input buffer; the parallel one about 32 MiB of output a batch.
//
// Failure modes: open/read errors and corrupt or truncated gzip data return an error whose
// message is "<path>: offset <N>: <reason>", N being the uncompressed bytes delivered so far (the
// parallel inflate, which holds back the chunk where the data broke: those plus what that chunk
// decoded up to the break, at most a few symbols more than the streaming paths name).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace overlapscope::import {

class MappedFile;
class TaskPool;  // task_pool.h

class InputStream {
 public:
  static constexpr int kParallelInflateThreads = 6;
  static constexpr int kMaxInflateThreads = 16;  // the parallel inflate's threads at most
  // may_map: a plain file is mapped into memory (mapped_file.h) where the process enabled it and
  // OVERLAPSCOPE_READ is not "pread"; its reader may then take the bytes from mapped() instead
  // of Read().
  static absl::StatusOr<std::unique_ptr<InputStream>> Open(const std::string& path, int inflate_threads = 1,
                                                           bool may_map = false);
  virtual ~InputStream() = default;

  // Fills dst with up to n bytes; returns the count, 0 only at the end of the data.
  virtual absl::StatusOr<size_t> Read(char* dst, size_t n) = 0;
  virtual bool compressed() const = 0;
  // Threads a large Read() of a plain file may use (slices read at once with pread(2): on many
  // cores one thread copying from the page cache limits the parse); gzip streams ignore it.
  virtual void SetReadThreads(int threads) {}
  // Threads the parallel inflate takes its tasks' turns on instead of starting its own (the
  // parse's, shared; `first`: its batches' tasks before the parse's), before the first Read;
  // the pool outlives the stream's reads. Other streams ignore it.
  virtual void SetSharedPool(TaskPool* pool, bool first) {}
  // The plain file mapped into memory, or nullptr (gzip, or not mapped). Owned by the stream.
  virtual const MappedFile* mapped() const { return nullptr; }
  // Size of the file on disk (compressed size for gzip), for progress reports.
  virtual int64_t file_size() const = 0;
  // Compressed bytes consumed so far (== uncompressed for plain files), for progress reports.
  virtual int64_t file_position() const = 0;
};

}  // namespace overlapscope::import
