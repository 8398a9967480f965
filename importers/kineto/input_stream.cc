#include "importers/kineto/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "importers/open_file.h"

namespace overlapscope::import {
namespace {

absl::Status Err(const std::string& path, int64_t offset, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": offset ", offset, ": ", reason));
}

// read(2) until n bytes or the end of the file.
absl::StatusOr<size_t> ReadFull(int fd, char* dst, size_t n, const std::string& path, int64_t offset) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, dst + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Err(path, offset + static_cast<int64_t>(got), absl::StrCat("read error: ", std::strerror(errno)));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

class FdHolder {
 public:
  explicit FdHolder(int fd) : fd_(fd) {}
  ~FdHolder() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdHolder(const FdHolder&) = delete;
  FdHolder& operator=(const FdHolder&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

class PlainStream : public InputStream {
 public:
  PlainStream(std::string path, int fd, int64_t size, std::string head)
      : path_(std::move(path)), fd_(fd), size_(size), head_(std::move(head)) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    size_t got = 0;
    if (head_pos_ < head_.size()) {  // the magic-byte probe already read these
      got = std::min(n, head_.size() - head_pos_);
      std::memcpy(dst, head_.data() + head_pos_, got);
      head_pos_ += got;
    }
    auto r = ReadFull(fd_.fd(), dst + got, n - got, path_, pos_ + static_cast<int64_t>(got));
    if (!r.ok()) return r.status();
    got += *r;
    pos_ += static_cast<int64_t>(got);
    return got;
  }
  bool compressed() const override { return false; }
  int64_t file_size() const override { return size_; }
  int64_t file_position() const override { return pos_; }

 private:
  std::string path_;
  FdHolder fd_;
  int64_t size_, pos_ = 0;
  std::string head_;
  size_t head_pos_ = 0;
};

// Inflation budget (see GzipStream::Read): past kInflateFloor bytes, at most kMaxInflation
// bytes of JSON per compressed byte.
constexpr int64_t kInflateFloor = int64_t{1} << 30;
constexpr int64_t kMaxInflation = 1000;

class GzipStream : public InputStream {
 public:
  GzipStream(std::string path, int fd, int64_t size, std::string head)
      : path_(std::move(path)), fd_(fd), size_(size), in_(1 << 20) {
    std::memcpy(in_.data(), head.data(), head.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(head.size());
    compressed_pos_ = static_cast<int64_t>(head.size());
  }
  ~GzipStream() override {
    if (inited_) inflateEnd(&zs_);
  }
  absl::Status Init() {
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return Err(path_, 0, "gzip error: inflateInit failed");
    inited_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    size_t got = 0;
    while (got < n && !done_) {
      if (zs_.avail_in == 0 && !eof_in_) {
        auto r = ReadFull(fd_.fd(), in_.data(), in_.size(), path_, out_pos_);
        if (!r.ok()) return r.status();
        if (*r == 0) eof_in_ = true;
        compressed_pos_ += static_cast<int64_t>(*r);
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(*r);
      }
      if (zs_.avail_in == 0 && eof_in_) {
        if (member_started_) return Err(path_, out_pos_, "gzip error: truncated gzip stream");
        done_ = true;
        break;
      }
      size_t want = std::min<size_t>(n - got, 1u << 30);
      zs_.next_out = reinterpret_cast<Bytef*>(dst + got);
      zs_.avail_out = static_cast<uInt>(want);
      member_started_ = true;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      size_t produced = want - zs_.avail_out;
      got += produced;
      out_pos_ += static_cast<int64_t>(produced);
      // A budget on inflation: trace JSON compresses 5-50x; far more is a gzip bomb, whose
      // reading would take hours (memory stays bounded by the window either way).
      if (out_pos_ > kInflateFloor && out_pos_ / kMaxInflation > file_position())
        return Err(path_, out_pos_,
                   absl::StrCat("gzip data inflates more than ", kMaxInflation,
                                " times its compressed size (a gzip bomb?); not read further"));
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members are one stream (gzip -c a b > c); look for another.
        member_started_ = false;
        if (inflateReset(&zs_) != Z_OK) return Err(path_, out_pos_, "gzip error: inflateReset failed");
        continue;
      }
      if (rc == Z_BUF_ERROR && produced == 0 && zs_.avail_in == 0) continue;  // needs more input
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        return Err(path_, out_pos_, absl::StrCat("gzip error: ", zs_.msg ? zs_.msg : "corrupt data"));
    }
    return got;
  }
  bool compressed() const override { return true; }
  int64_t file_size() const override { return size_; }
  int64_t file_position() const override { return compressed_pos_ - zs_.avail_in; }

 private:
  std::string path_;
  FdHolder fd_;
  int64_t size_;
  std::vector<char> in_;
  z_stream zs_{};
  bool inited_ = false, eof_in_ = false, done_ = false, member_started_ = false;
  int64_t out_pos_ = 0, compressed_pos_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& path) {
  auto opened = OpenRegularFile(path);  // FIFOs and devices are errors, never a hang
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Err(path, 0, "cannot open: cannot be examined");
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
    auto gz = std::make_unique<GzipStream>(path, fd, st.st_size, head);
    if (auto s = gz->Init(); !s.ok()) return s;
    return std::unique_ptr<InputStream>(std::move(gz));
  }
  return std::unique_ptr<InputStream>(std::make_unique<PlainStream>(path, fd, st.st_size, head));
}

}  // namespace overlapscope::import
