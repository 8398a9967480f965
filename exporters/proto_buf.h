// ProtoBuf — a growable byte buffer with unchecked protobuf primitives for hot loops.
//
// The caller reserves room before a burst of writes (Reserve), then writes tags, varints and
// fixed64s without per-byte capacity checks. Nested messages use a one-byte length slot
// (OpenLen/CloseLen); a body of 128 bytes or more is shifted right to make room for a longer
// varint, which CloseLen reserves itself. Never fails (allocation failure aborts, as std::string).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace overlapscope::exporters {

class ProtoBuf {
 public:
  void Reserve(size_t n) {
    if (size_ + n > cap_) Grow(size_ + n);
  }
  void Byte(uint8_t b) { p_[size_++] = static_cast<char>(b); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      p_[size_++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    p_[size_++] = static_cast<char>(v);
  }
  void Fixed64(uint64_t v) {
    std::memcpy(p_.get() + size_, &v, 8);  // little-endian host
    size_ += 8;
  }
  void Append(std::string_view s) {
    Reserve(s.size());
    std::memcpy(p_.get() + size_, s.data(), s.size());
    size_ += s.size();
  }
  // Writes a one-byte length placeholder; returns its position for CloseLen().
  size_t OpenLen() {
    p_[size_] = 0;
    return size_++;
  }
  void CloseLen(size_t slot) {
    const size_t len = size_ - slot - 1;
    if (len < 0x80) {
      p_[slot] = static_cast<char>(len);
      return;
    }
    size_t n = 1;
    for (uint64_t v = len; v >= 0x80; v >>= 7) ++n;
    Reserve(n - 1);
    std::memmove(p_.get() + slot + n, p_.get() + slot + 1, len);
    size_t w = slot;
    uint64_t v = len;
    while (v >= 0x80) {
      p_[w++] = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    p_[w] = static_cast<char>(v);
    size_ += n - 1;
  }
  static constexpr size_t VarintSize(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
      v >>= 7;
      ++n;
    }
    return n;
  }

  std::string_view view() const { return std::string_view(p_.get(), size_); }
  size_t size() const { return size_; }
  void clear() { size_ = 0; }

 private:
  void Grow(size_t need) {
    size_t cap = cap_ ? cap_ : 4096;
    while (cap < need) cap *= 2;
    std::unique_ptr<char[]> q(new char[cap]);
    if (size_) std::memcpy(q.get(), p_.get(), size_);
    p_ = std::move(q);
    cap_ = cap;
  }
  std::unique_ptr<char[]> p_;
  size_t size_ = 0, cap_ = 0;
};

}  // namespace overlapscope::exporters
