// FindBlockStart of deflate_decode.h: where a dynamic-Huffman block may begin.
#include <algorithm>
#include <cstdint>

#include "importers/kineto/deflate_decode.h"

namespace overlapscope::import::deflate {
namespace {

// Whether the code-length code lengths (ncode fields of 3 bits at the bottom of v) form a
// complete code, as a dynamic block's must: sum of 2^(7 - len) == 128. Four fields a lookup.
bool CompleteCodeLengths(uint64_t v, int ncode) {
  static const auto* const kraft4 = [] {
    auto* t = new uint16_t[4096];
    for (int x = 0; x < 4096; ++x) {
      int sum = 0;
      for (int f = 0; f < 4; ++f) {
        const int len = (x >> (3 * f)) & 7;
        if (len != 0) sum += 128 >> len;
      }
      t[x] = static_cast<uint16_t>(sum);
    }
    return t;
  }();
  v &= (uint64_t{1} << (3 * ncode)) - 1;
  const int kraft = kraft4[v & 4095] + kraft4[(v >> 12) & 4095] + kraft4[(v >> 24) & 4095] + kraft4[(v >> 36) & 4095] +
                    kraft4[(v >> 48) & 4095];
  return kraft == 128;
}

}  // namespace

uint64_t FindBlockStart(const uint8_t* data, size_t size, uint64_t from_bit, uint64_t to_bit, BlockTables& scratch) {
  to_bit = std::min<uint64_t>(to_bit, uint64_t{size} * 8);
  // 32 bit offsets a 64-bit load: a mask of those where the first 13 bits can start a dynamic
  // block (not final, type 2: bits 0, 0, 1; at most 29 + 257 literal/length codes, i.e. not
  // bits 4-7 all set; at most 29 + 1 distance codes: not bits 9-12 all set), then the few left
  // one by one.
  for (uint64_t base = from_bit & ~uint64_t{7}; base < to_bit; base += 32) {
    const uint64_t v = Load64(data, size, static_cast<size_t>(base / 8));
    uint64_t m = ~v & ~(v >> 1) & (v >> 2);
    m &= ~((v >> 4) & (v >> 5) & (v >> 6) & (v >> 7));
    m &= ~((v >> 9) & (v >> 10) & (v >> 11) & (v >> 12));
    m &= 0xffffffffu;
    if (base < from_bit) m &= ~uint64_t{0} << (from_bit - base);
    for (; m != 0; m &= m - 1) {
      const uint64_t b = base + static_cast<uint64_t>(__builtin_ctzll(m));
      if (b >= to_bit) return UINT64_MAX;
      const int ncode = static_cast<int>((v >> (b - base + 13)) & 15) + 4;
      const uint64_t lens = Load64(data, size, static_cast<size_t>((b + 17) / 8)) >> ((b + 17) % 8);
      if (!CompleteCodeLengths(lens, ncode)) continue;
      BitReader br(data, size);
      br.Seek(b + 3);
      if (ReadDynamicTables(br, &scratch).ok()) return b;
    }
  }
  return UINT64_MAX;
}

}  // namespace overlapscope::import::deflate
