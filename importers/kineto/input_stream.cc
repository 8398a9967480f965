#include "importers/kineto/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/run_all.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/json_scan.h"
#include "importers/kineto/mapped_file.h"
#include "importers/kineto/stream_util.h"
#include "importers/open_file.h"

namespace overlapscope::import {
namespace {

class PlainStream : public InputStream {
 public:
  PlainStream(std::string path, int fd, int64_t size, std::string head, std::unique_ptr<MappedFile> map)
      : path_(std::move(path)), fd_(fd), size_(size), head_(std::move(head)), map_(std::move(map)) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    if (map_ != nullptr) return ReadMapped(dst, n);
    size_t got = 0;
    if (head_pos_ < head_.size()) {  // the magic-byte probe already read these
      got = std::min(n, head_.size() - head_pos_);
      std::memcpy(dst, head_.data() + head_pos_, got);
      head_pos_ += got;
    }
    // pread at the offset delivered so far: the descriptor's own position is never used.
    auto r = ReadSlices(dst + got, n - got, pos_ + static_cast<int64_t>(got));
    if (!r.ok()) return r.status();
    got += *r;
    pos_ += static_cast<int64_t>(got);
    return got;
  }
  void SetReadThreads(int threads) override { threads_ = std::max(threads, 1); }
  bool compressed() const override { return false; }
  int64_t file_size() const override { return size_; }
  int64_t file_position() const override { return pos_; }
  const MappedFile* mapped() const override { return map_.get(); }

 private:
  // A copy from the map, for callers that read rather than view (the file as opened: bytes
  // past the size at open are not read; a cut while read is an error, never zeros).
  absl::StatusOr<size_t> ReadMapped(char* dst, size_t n) {
    const size_t got = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(n), map_->size() - pos_));
    std::memcpy(dst, map_->data() + pos_, got);
    if (absl::Status changed = map_->Changed(path_); !changed.ok()) return changed;
    pos_ += static_cast<int64_t>(got);
    return got;
  }

  // n bytes at `offset` in up to threads_ slices of at least kMinSlice bytes read at once; the
  // bytes delivered are the slices' contiguous prefix (a short slice is the end of the file),
  // an error the first one in file order, as one sequential read would give.
  absl::StatusOr<size_t> ReadSlices(char* dst, size_t n, int64_t offset) {
    constexpr size_t kMinSlice = size_t{4} << 20;
    const size_t k = std::min<size_t>(static_cast<size_t>(threads_), n / kMinSlice);
    if (k <= 1) return PreadFull(fd_.fd(), dst, n, path_, offset);
    std::vector<absl::StatusOr<size_t>> got(k, size_t{0});
    auto slice = [&](size_t i) {
      const size_t lo = n * i / k, hi = n * (i + 1) / k;
      got[i] = PreadFull(fd_.fd(), dst + lo, hi - lo, path_, offset + static_cast<int64_t>(lo));
    };
    std::vector<std::function<void()>> tasks;
    for (size_t i = 0; i < k; ++i) tasks.emplace_back([&slice, i] { slice(i); });
    base::RunAll(static_cast<int>(k), tasks);
    size_t total = 0;
    for (size_t i = 0; i < k; ++i) {
      if (!got[i].ok()) return got[i].status();
      total += *got[i];
      if (*got[i] < n * (i + 1) / k - n * i / k) break;  // the end of the file
    }
    return total;
  }

  std::string path_;
  FdHolder fd_;
  int threads_ = 1;
  int64_t size_, pos_ = 0;
  std::string head_;
  size_t head_pos_ = 0;
  std::unique_ptr<MappedFile> map_;  // declared after fd_: unmapped before the file is closed
};

// OVERLAPSCOPE_READ=pread: plain files read with pread(2) even where mapping is enabled (paired
// benchmarks, checks that both paths read a file alike).
bool MapPlainFiles() {
  const char* v = std::getenv("OVERLAPSCOPE_READ");
  return MappedReadsEnabled() && (v == nullptr || std::strcmp(v, "pread") != 0);
}

// OVERLAPSCOPE_INFLATE=zlib: zlib even where ISA-L is built in (paired benchmarks, checks that
// both inflaters read a file alike); =serial: the streaming inflate at any thread count;
// =parallel: the parallel inflate at any thread count.
bool InflateIs(const char* what) {
  const char* v = std::getenv("OVERLAPSCOPE_INFLATE");
  return v != nullptr && std::strcmp(v, what) == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path, int inflate_threads,
                                                               bool may_map) {
  auto opened = OpenRegularFile(path);  // FIFOs and devices are errors, never a hang
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return StreamError(path, 0, "cannot open: cannot be examined");
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::string head(2, '\0');
  auto r = ReadFull(fd, head.data(), 2, path, 0);
  if (!r.ok()) {
    ::close(fd);
    return r.status();
  }
  head.resize(*r);
  if (head.size() == 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) {
    const bool parallel = InflateIs("parallel") ||
                          (inflate_threads >= kParallelInflateThreads && !InflateIs("serial") && !InflateIs("zlib"));
    if (parallel) {
      // At most 16 chunks a batch: more add memory (each holds its tables, window and a block
      // past its end) faster than speed. OVERLAPSCOPE_INFLATE_THREADS=N: N chunks a batch on N
      // threads instead of the parsers' count (a measurement aid: the inflate's threads run
      // beside the parsers'; the bytes are the same at any N).
      const int n = PositiveEnv("OVERLAPSCOPE_INFLATE_THREADS");
      auto par =
          OpenParallelGzipStream(path, fd, st.st_size, std::clamp(n > 0 ? n : inflate_threads, 1, kMaxInflateThreads));
      if (!par.ok() || *par != nullptr) return par;
    }
    if (!InflateIs("zlib")) {
      auto isal = OpenIsalStream(path, fd, st.st_size, head);
      if (!isal.ok() || *isal != nullptr) return isal;
    }
    return OpenZlibStream(path, fd, st.st_size, head);
  }
  std::unique_ptr<MappedFile> map;
  if (may_map && MapPlainFiles()) map = MappedFile::Map(fd, st.st_size, scan::kPad);
  return std::unique_ptr<InputStream>(std::make_unique<PlainStream>(path, fd, st.st_size, head, std::move(map)));
}

}  // namespace overlapscope::import
