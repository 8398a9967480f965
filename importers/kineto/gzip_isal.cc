// Streaming gzip inflate with Intel ISA-L's igzip (stream_util.h); compiled to a stub returning
// nullptr where the build found no ISA-L (OVERLAPSCOPE_HAVE_ISAL unset).
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "importers/kineto/stream_util.h"

#ifdef OVERLAPSCOPE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace overlapscope::import {

#ifdef OVERLAPSCOPE_HAVE_ISAL
namespace {

const char* IsalReason(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "corrupt data";
  }
}

constexpr size_t kOutSlice = size_t{128} << 10;

class IsalStream : public InputStream {
 public:
  IsalStream(std::string path, int fd, int64_t size, const std::string& head)
      : path_(std::move(path)), fd_(fd), size_(size), in_(kCompressedBuffer) {
    // inflate_state is about 20 KiB of tables: on the heap with the stream, never on a stack.
    isal_inflate_init(&st_);
    st_.crc_flag = ISAL_GZIP;  // parse each member's header, verify its CRC-32 and length
    std::memcpy(in_.data(), head.data(), head.size());
    st_.next_in = reinterpret_cast<uint8_t*>(in_.data());
    st_.avail_in = static_cast<uint32_t>(head.size());
    compressed_pos_ = static_cast<int64_t>(head.size());
  }
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    size_t got = 0;
    while (got < n && !done_) {
      if (st_.avail_in == 0 && !eof_in_) {
        auto r = ReadFull(fd_.fd(), in_.data(), in_.size(), path_, out_pos_);
        if (!r.ok()) return r.status();
        if (*r == 0) eof_in_ = true;
        compressed_pos_ += static_cast<int64_t>(*r);
        st_.next_in = reinterpret_cast<uint8_t*>(in_.data());
        st_.avail_in = static_cast<uint32_t>(*r);
      }
      if (st_.avail_in == 0 && eof_in_) {
        if (member_started_) return StreamError(path_, out_pos_, "gzip error: truncated gzip stream");
        done_ = true;
        break;
      }
      // At most kOutSlice bytes a call: igzip computes the CRC-32 of a call's output when the call
      // ends, so a slice still in the cache is read again there, not 16 MiB from memory (500 MB
      // trace: the CRC's samples 3.7 % -> 0.8 % of `analyze`'s, docs/PERFORMANCE.md).
      const size_t want = std::min<size_t>(n - got, kOutSlice);
      st_.next_out = reinterpret_cast<uint8_t*>(dst + got);
      st_.avail_out = static_cast<uint32_t>(want);
      member_started_ = true;
      const uint32_t avail_before = st_.avail_in;
      const int rc = isal_inflate(&st_);
      const size_t produced = want - st_.avail_out;
      got += produced;
      out_pos_ += static_cast<int64_t>(produced);
      // The budget is checked where a call without slices returned (not at a slice's end), so a
      // bomb's error names the offset it did before.
      const bool slice_end = st_.avail_out == 0 && got < n && rc >= 0 && st_.block_state != ISAL_BLOCK_FINISH;
      if (!slice_end) {
        if (auto s = CheckInflation(path_, out_pos_, file_position()); !s.ok()) return s;
      }
      if (rc < 0) return StreamError(path_, out_pos_, absl::StrCat("gzip error: ", IsalReason(rc)));
      if (st_.block_state == ISAL_BLOCK_FINISH) {
        // Concatenated gzip members are one stream (gzip -c a b > c); look for another. The
        // reset keeps the unread input (next_in / avail_in).
        member_started_ = false;
        isal_inflate_reset(&st_);
        st_.crc_flag = ISAL_GZIP;
      } else if (produced == 0 && st_.avail_in == avail_before && avail_before > 0) {
        return StreamError(path_, out_pos_, "gzip error: corrupt data");  // no progress: never loop
      }
    }
    return got;
  }
  bool compressed() const override { return true; }
  int64_t file_size() const override { return size_; }
  int64_t file_position() const override { return compressed_pos_ - st_.avail_in; }

 private:
  std::string path_;
  FdHolder fd_;
  int64_t size_;
  std::vector<char> in_;
  inflate_state st_{};
  bool eof_in_ = false, done_ = false, member_started_ = false;
  int64_t out_pos_ = 0, compressed_pos_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InputStream>> OpenIsalStream(const std::string& path, int fd, int64_t size,
                                                            const std::string& head) {
  return std::unique_ptr<InputStream>(std::make_unique<IsalStream>(path, fd, size, head));
}
#else
absl::StatusOr<std::unique_ptr<InputStream>> OpenIsalStream(const std::string&, int, int64_t, const std::string&) {
  return std::unique_ptr<InputStream>();
}
#endif

}  // namespace overlapscope::import
