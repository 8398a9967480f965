// Streaming gzip inflate with zlib (stream_util.h): the fallback where ISA-L is not built in.
#include <zlib.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "importers/kineto/stream_util.h"

namespace overlapscope::import {
namespace {

class ZlibStream : public InputStream {
 public:
  ZlibStream(std::string path, int fd, int64_t size, const std::string& head)
      : path_(std::move(path)), fd_(fd), size_(size), in_(kCompressedBuffer) {
    std::memcpy(in_.data(), head.data(), head.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(head.size());
    compressed_pos_ = static_cast<int64_t>(head.size());
  }
  ~ZlibStream() override {
    if (inited_) inflateEnd(&zs_);
  }
  absl::Status Init() {
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return StreamError(path_, 0, "gzip error: inflateInit failed");
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
        if (member_started_) return StreamError(path_, out_pos_, "gzip error: truncated gzip stream");
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
      if (auto s = CheckInflation(path_, out_pos_, file_position()); !s.ok()) return s;
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members are one stream (gzip -c a b > c); look for another.
        member_started_ = false;
        if (inflateReset(&zs_) != Z_OK) return StreamError(path_, out_pos_, "gzip error: inflateReset failed");
        continue;
      }
      if (rc == Z_BUF_ERROR && produced == 0 && zs_.avail_in == 0) continue;  // needs more input
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        return StreamError(path_, out_pos_, absl::StrCat("gzip error: ", zs_.msg ? zs_.msg : "corrupt data"));
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

absl::StatusOr<std::unique_ptr<InputStream>> OpenZlibStream(const std::string& path, int fd, int64_t size,
                                                            const std::string& head) {
  auto gz = std::make_unique<ZlibStream>(path, fd, size, head);
  if (auto s = gz->Init(); !s.ok()) return s;
  return std::unique_ptr<InputStream>(std::move(gz));
}

}  // namespace overlapscope::import
