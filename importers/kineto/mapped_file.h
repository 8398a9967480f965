// A plain input file mapped into memory instead of read(2) into a buffer (no copy from the page
// cache), for the processes that own their signals. Internal to importers; the CLI's main()
// opts in with EnableMappedReads(), every other user of the library (the Python module, tests,
// programs linking it) keeps reading with pread(2) and its signals untouched.
//
// A file cut while mapped makes a read past its new end raise SIGBUS. The handler installed by
// EnableMappedReads() answers a fault inside a live mapping by mapping a page of zeros over the
// faulting page and recording it; the reader then reports the file as changed
// (MappedFile::Changed()) instead of a crash or a number from zeros. A fault anywhere else goes to
// the handler installed before (or the default action: the process dies of SIGBUS as before).
// The file is what it was at the open: bytes appended later are not read. The handler calls
// mmap(2), which Linux runs as a plain system call (safe in a handler in practice, though POSIX
// does not list it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace overlapscope::import {

// Installs the SIGBUS handler (once; later calls return the first call's answer). false when the
// handler could not be installed: files are then read with pread(2). Call it before any thread
// of the process maps a file, from a program that owns its signal handling.
bool EnableMappedReads();
bool MappedReadsEnabled();

class MappedFile {
 public:
  // `size` bytes of the open file `fd` (not taken) at data()[0..size), followed by at least
  // `pad` writable zero bytes; the file's bytes are writable too (private copy-on-write pages:
  // the file never changes). nullptr where reads are not mapped (EnableMappedReads() not called
  // or failed, size <= 0, too many files mapped at once, mmap failed): read the file instead.
  static std::unique_ptr<MappedFile> Map(int fd, int64_t size, size_t pad);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  char* data() const { return base_; }
  int64_t size() const { return size_; }
  // OK while every byte read so far was the file's: no read faulted past the file's end and the
  // file is not shorter now than when mapped (a cut inside the last page mapped reads zeros
  // without a fault: fstat(2) tells it). Else Aborted (not a fault of the file's bytes: a
  // reading again would see other bytes) "<path>: offset <N>: the file
  // changed size while read (<size> bytes when opened, <now> now)", N the first byte found
  // missing.
  absl::Status Changed(const std::string& path) const;
  // Gives back the pages wholly inside [from, to) (file offsets): their bytes are read again
  // from the file if touched. For bytes the reader is done with, so the resident set stays
  // about the window, not the file. Returns the offset released up to (`to` rounded down to a
  // page, or `from`): the next call's `from`.
  int64_t Release(int64_t from, int64_t to) const;

 private:
  MappedFile(int fd, char* base, int64_t size, size_t mapped, int slot)
      : fd_(fd), base_(base), size_(size), mapped_(mapped), slot_(slot) {}
  int fd_;
  char* base_;
  int64_t size_;
  size_t mapped_;  // bytes mapped in all (the file's pages and the zero pad)
  int slot_;       // in the fault handler's table
};

}  // namespace overlapscope::import
