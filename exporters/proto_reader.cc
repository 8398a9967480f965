#include "exporters/proto_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace overlapscope::exporters {

double ProtoField::as_double() const {
  double d;
  std::memcpy(&d, &int_value, 8);
  return d;
}

bool ProtoReader::ReadVarint(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) {
      error_ = absl::StrCat("offset ", base_ + pos_, ": truncated varint");
      return false;
    }
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = result;
      return true;
    }
  }
  error_ = absl::StrCat("offset ", base_ + pos_, ": varint longer than 10 bytes");
  return false;
}

bool ProtoReader::Next(ProtoField* f) {
  if (!error_.empty() || pos_ >= data_.size()) return false;
  f->offset = base_ + pos_;
  uint64_t tag;
  if (!ReadVarint(&tag)) return false;
  f->number = static_cast<uint32_t>(tag >> 3);
  f->wire_type = static_cast<uint32_t>(tag & 7);
  f->bytes = {};
  f->int_value = 0;
  if (f->number == 0) {
    error_ = absl::StrCat("offset ", f->offset, ": field number 0");
    return false;
  }
  switch (f->wire_type) {
    case 0: return ReadVarint(&f->int_value);
    case 1:
    case 5: {
      const size_t n = f->wire_type == 1 ? 8 : 4;
      if (data_.size() - pos_ < n) {
        error_ = absl::StrCat("offset ", f->offset, ": truncated fixed", n * 8);
        return false;
      }
      std::memcpy(&f->int_value, data_.data() + pos_, n);
      pos_ += n;
      return true;
    }
    case 2: {
      uint64_t len;
      if (!ReadVarint(&len)) return false;
      if (len > data_.size() - pos_) {
        error_ = absl::StrCat("offset ", f->offset, ": length ", len, " past the end of the message");
        return false;
      }
      f->bytes = data_.substr(pos_, len);
      pos_ += len;
      return true;
    }
    default: error_ = absl::StrCat("offset ", f->offset, ": unsupported wire type ", f->wire_type); return false;
  }
}

}  // namespace overlapscope::exporters
