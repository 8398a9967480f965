// ProtoReader — a minimal protobuf wire-format decoder over a byte range (used by the tests to
// check what the Perfetto writer produced, and by anything that needs to read .pftrace back).
//
// Next() yields one field at a time. Malformed input (truncated varint, a length past the end,
// wire types 3/4 (groups) or 6/7) stops iteration and sets error(), which names the byte offset
// relative to the start of the outermost buffer and the reason; it never reads out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace overlapscope::exporters {

struct ProtoField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t int_value = 0;  // varint, fixed64 and fixed32 values
  std::string_view bytes;  // length-delimited payload
  size_t offset = 0;       // byte offset of the field's tag

  int64_t as_int64() const { return static_cast<int64_t>(int_value); }
  double as_double() const;
};

class ProtoReader {
 public:
  // `base_offset` is added to reported offsets (for nested messages).
  explicit ProtoReader(std::string_view data, size_t base_offset = 0) : data_(data), base_(base_offset) {}

  // Reads the next field into *f; false at the end of the buffer or on error.
  bool Next(ProtoField* f);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Offset of the start of `bytes` of a length-delimited field, for nested readers.
  size_t OffsetOf(std::string_view sub) const { return base_ + static_cast<size_t>(sub.data() - data_.data()); }

 private:
  bool ReadVarint(uint64_t* v);
  std::string_view data_;
  size_t pos_ = 0, base_ = 0;
  std::string error_;
};

}  // namespace overlapscope::exporters
