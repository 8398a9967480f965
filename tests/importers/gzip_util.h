// zlib's gzip of a string, for the inflate tests: `level` 0-9, `strategy` (Z_FIXED,
// Z_HUFFMAN_ONLY, Z_RLE ... to get each block kind), `mem_level` 1-9. A zlib failure fails the
// calling test (EXPECT) and returns what was written.
#pragma once

#include <zlib.h>

#include <string>

#include "gtest/gtest.h"

namespace overlapscope::import::testing {

inline std::string GzipOf(const std::string& in, int level, int strategy = Z_DEFAULT_STRATEGY, int mem_level = 8) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, mem_level, strategy), Z_OK);
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(::deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace overlapscope::import::testing
