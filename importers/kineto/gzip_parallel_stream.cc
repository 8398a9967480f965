// The parallel gzip inflate (gzip_parallel.h) as an InputStream: the compressed file is mapped
// read-only and its pages dropped from this process's memory once decoded. Where the process
// enabled mapped reads (mapped_file.h: the CLI) the map is a MappedFile, so a file cut while
// inflated fails "the file changed size while read"; elsewhere a plain map, as before.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/gzip_parallel.h"
#include "importers/kineto/mapped_file.h"
#include "importers/kineto/stream_util.h"

namespace overlapscope::import {
namespace {

class ParallelGzipStream : public InputStream {
 public:
  ParallelGzipStream(std::string path, int fd, int64_t size, void* map, std::unique_ptr<MappedFile> mapped, int threads)
      : path_(std::move(path)),
        fd_(fd),
        size_(size),
        map_(map),
        mapped_(std::move(mapped)),
        gz_(static_cast<const uint8_t*>(map), static_cast<size_t>(size), threads) {
    gz_.SetTimed(std::getenv("OVERLAPSCOPE_WINDOWS") != nullptr);  // a measurement aid
  }
  ~ParallelGzipStream() override {
    if (const std::string r = gz_.TimesReport(); !r.empty()) std::fputs(r.c_str(), stderr);
    if (mapped_ == nullptr) ::munmap(map_, static_cast<size_t>(size_));
  }

  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    auto r = gz_.Read(dst, n);
    // A cut file reads zeros where its bytes were: that, not what the decoder made of them.
    if (mapped_ != nullptr) RETURN_IF_ERROR(mapped_->Changed(path_));
    if (!r.ok()) return StreamError(path_, gz_.error_pos(), absl::StrCat("gzip error: ", r.status().message()));
    if (auto s = CheckInflation(path_, gz_.out_pos(), gz_.delivered_in_pos()); !s.ok()) return s;
    DropDecoded();
    return r;
  }
  void SetSharedPool(TaskPool* pool, bool first) override { gz_.SetSharedPool(pool, first); }
  bool compressed() const override { return true; }
  int64_t file_size() const override { return size_; }
  int64_t file_position() const override { return gz_.delivered_in_pos(); }

 private:
  // Pages wholly before the decode point are not read again: out of the resident set (the page
  // cache keeps them). Bounded memory whatever the compressed size.
  void DropDecoded() {
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t upto = static_cast<size_t>(gz_.in_pos()) / page * page;
    if (upto > dropped_ + (size_t{1} << 20)) {
      ::madvise(static_cast<char*>(map_) + dropped_, upto - dropped_, MADV_DONTNEED);
      dropped_ = upto;
    }
  }

  std::string path_;
  FdHolder fd_;
  int64_t size_;
  void* map_;
  std::unique_ptr<MappedFile> mapped_;  // map_'s owner where it is one (destroyed after gz_)
  ParallelGunzip gz_;
  size_t dropped_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InputStream>> OpenParallelGzipStream(const std::string& path, int fd, int64_t size,
                                                                    int threads) {
  std::unique_ptr<MappedFile> mapped = MappedFile::Map(fd, size, 0);
  void* map = mapped != nullptr ? mapped->data()
              : size > 0        ? ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0)
                                : MAP_FAILED;
  if (map == MAP_FAILED) return std::unique_ptr<InputStream>();                       // the streaming path instead
  if (mapped == nullptr) ::madvise(map, static_cast<size_t>(size), MADV_SEQUENTIAL);  // MappedFile::Map did
  return std::unique_ptr<InputStream>(
      std::make_unique<ParallelGzipStream>(path, fd, size, map, std::move(mapped), threads));
}

}  // namespace overlapscope::import
