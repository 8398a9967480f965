// ProtoWriter — a minimal protobuf wire-format encoder that appends to a std::string.
//
// Only what the Perfetto writer needs: varint / zigzag-free int64 (as two's complement varint),
// fixed64, double, length-delimited bytes and nested messages. Nested messages reserve one
// length byte and are fixed up in EndNested(); when the body turns out longer than 127 bytes the
// body is shifted right (rare for trace packets, which are mostly < 128 bytes). The writer never
// fails; field numbers and wire types are the caller's responsibility.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace overlapscope::exporters {

class ProtoWriter {
 public:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

  explicit ProtoWriter(std::string* out) : out_(out) {}

  void Varint(uint32_t field, uint64_t v) {
    Tag(field, kVarint);
    RawVarint(v);
  }
  // int64/int32 fields: negative values take ten bytes, as the protobuf spec says.
  void Int(uint32_t field, int64_t v) { Varint(field, static_cast<uint64_t>(v)); }
  void Bool(uint32_t field, bool v) { Varint(field, v ? 1 : 0); }
  void Fixed64(uint32_t field, uint64_t v) {
    Tag(field, kFixed64);
    char b[8];
    std::memcpy(b, &v, 8);  // little-endian host (x86-64, aarch64)
    out_->append(b, 8);
  }
  void Double(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    Fixed64(field, bits);
  }
  void Bytes(uint32_t field, std::string_view s) {
    Tag(field, kLengthDelimited);
    RawVarint(s.size());
    out_->append(s.data(), s.size());
  }

  // Opens a nested message; returns a token for EndNested(). Nesting must be properly bracketed.
  size_t BeginNested(uint32_t field) {
    Tag(field, kLengthDelimited);
    out_->push_back('\0');  // placeholder for a one-byte length
    return out_->size();
  }
  void EndNested(size_t body_start) {
    const size_t len = out_->size() - body_start;
    if (len < 0x80) {
      (*out_)[body_start - 1] = static_cast<char>(len);
      return;
    }
    char buf[10];
    const size_t n = EncodeVarint(len, buf);
    out_->insert(body_start - 1, n - 1, '\0');  // grow the length slot from 1 to n bytes
    std::memcpy(out_->data() + body_start - 1, buf, n);
  }

  void RawVarint(uint64_t v) {
    char buf[10];
    out_->append(buf, EncodeVarint(v, buf));
  }

  static size_t EncodeVarint(uint64_t v, char* buf) {
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    return n;
  }

  std::string* out() { return out_; }

 private:
  void Tag(uint32_t field, WireType type) { RawVarint((static_cast<uint64_t>(field) << 3) | type); }
  std::string* out_;
};

}  // namespace overlapscope::exporters
