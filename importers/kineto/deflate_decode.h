// A raw deflate (RFC 1951) decoder of our own for the parallel gzip inflate (gzip_parallel.h):
// it starts at any bit offset, and decodes either into bytes (the 32 KiB before the start are
// known) or into 16-bit symbols where the 32 KiB before the start are unknown: values 0..255 are
// bytes, 256 + i is "byte i of the unknown window" (i in 0..32767, 32767 the byte just before the
// start), so that a back-reference that reaches before the start copies a marker, resolved later
// once the window is known. FindBlockStart guesses where a dynamic-Huffman block begins.
//
// Failure modes: corrupt data gives an error status naming the reason ("invalid block type",
// "invalid distance too far back", ...); data that ends inside a block gives "truncated gzip
// stream". Never reads outside [data, data + size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"

namespace overlapscope::import::deflate {

inline constexpr size_t kWindow = size_t{1} << 15;  // the deflate window: 32 KiB
inline constexpr uint16_t kMarker = 256;            // symbol 256 + i: byte i of the unknown window

// Little-endian bit reader over a byte span; past the end it delivers zero bits (Overrun() says
// whether any of them were consumed).
struct BitReader {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;  // next byte to load (may pass size by the zero bytes delivered)
  uint64_t buf = 0;
  int bits = 0;

  BitReader(const uint8_t* d, size_t n) : data(d), size(n) {}
  uint64_t BitPos() const { return uint64_t{pos} * 8 - static_cast<uint64_t>(bits); }
  bool Overrun() const { return BitPos() > uint64_t{size} * 8; }
  void Seek(uint64_t bit);
  // Makes at least 56 bits available.
  void Refill() {
    if (pos + 8 <= size) {
      uint64_t v;
      __builtin_memcpy(&v, data + pos, 8);
      buf |= v << bits;
      pos += static_cast<size_t>((63 - bits) >> 3);
      bits |= 56;
    } else {
      RefillSlow();
    }
  }
  void RefillSlow();
  uint32_t Peek(int n) const { return static_cast<uint32_t>(buf & ((uint64_t{1} << n) - 1)); }
  void Drop(int n) {
    buf >>= n;
    bits -= n;
  }
  uint32_t Take(int n) {
    const uint32_t v = Peek(n);
    Drop(n);
    return v;
  }
};

// 64 bits at byte `at` of data[0, size), little-endian, zeros past the end.
inline uint64_t Load64(const uint8_t* data, size_t size, size_t at) {
  uint64_t v = 0;
  if (at + 8 <= size) {
    __builtin_memcpy(&v, data + at, 8);
  } else {
    for (size_t i = 0; at + i < size && i < 8; ++i) v |= uint64_t{data[at + i]} << (8 * i);
  }
  return v;
}

// Two-level decoding table of a canonical prefix code, indexed by the next bits of the stream
// (LSB first). The first kRootBits index the root; a code longer than that finds there a link
// to a subtable indexed by the bits after the root's. Entry layout (uint32_t):
//   bits 0-4   bits the entry consumes: the code's length plus its extra bits (lengths,
//              distances), or both codes of a literal pair; 0: no code (invalid data)
//   bits 8-11  the code's own length (where the extra bits start); a link: its subtable's bits
//   bit 12     a literal (bits 16-23 the byte); bit 13: and a second one (bits 24-31)
//   bit 14     a link (bits 16-31: the subtable's index in entry[])
//   bit 15     end of block
//   bits 16-31 otherwise: the length's or distance's base, or the code-length symbol
// so that a length or distance is base + ((bits & mask(consumed)) >> code length).
struct HuffTable {
  static constexpr int kRootBits = 11;
  // The root plus at most one 16-entry subtable per code longer than the root (286 literal/
  // length codes of up to 15 bits).
  static constexpr int kMaxEntries = (1 << kRootBits) + 286 * (1 << (15 - kRootBits));
  static constexpr uint32_t kLiteral = 1u << 12, kPair = 1u << 13, kLink = 1u << 14, kEnd = 1u << 15;
  int bits = 0;  // the longest code length (at least 1)
  uint32_t entry[kMaxEntries];
};

enum class CodeKind { kCodeLengths, kLiterals, kDistances };

// Builds `t` from code lengths lens[0..n). False when the lengths over-subscribe, or leave the
// code incomplete where zlib would refuse it (complete codes only, except a single 1-bit code or
// no code at all for distances and literals).
bool BuildTable(const uint8_t* lens, int n, CodeKind kind, HuffTable* t);

// The two tables of a Huffman block.
struct BlockTables {
  HuffTable lit, dist;
  int64_t blocks = 0;  // blocks DecodeBlocks decoded with these tables, for chunk sizing
};

// Reads a dynamic block's code description (after its 3 header bits) into `t`.
absl::Status ReadDynamicTables(BitReader& br, BlockTables* t);

// The fixed-code tables (built once, shared).
const BlockTables& FixedTables();

// Output of a decode: symbols [0, pre) are the window given before the start, then the output.
template <typename Sym>
struct OutBuf {
  std::unique_ptr<Sym[]> p;
  size_t n = 0, cap = 0;
  size_t limit = SIZE_MAX;  // decoding past this many symbols fails (ResourceExhausted)
  OutBuf() = default;
  OutBuf(OutBuf&& o) noexcept { *this = std::move(o); }
  OutBuf& operator=(OutBuf&& o) noexcept {  // the moved-from buffer is empty
    p = std::move(o.p);
    n = std::exchange(o.n, 0);
    cap = std::exchange(o.cap, 0);
    limit = o.limit;
    return *this;
  }
  void Reserve(size_t want);
  size_t capacity_bytes() const { return cap * sizeof(Sym); }
  void clear() {  // keeps the memory
    n = 0;
    limit = SIZE_MAX;
  }
};

// Why a DecodeBlocks call returned OK.
enum class Stop { kReachedStop, kFinalBlock, kMarkerFree };

// Decodes whole blocks from br's position into `out` until a block boundary at or past
// `stop_bit` (kReachedStop), the end of a final block (kFinalBlock), or, with check_markers, a
// block end after which the last 32 KiB of `out` hold no marker (kMarkerFree; wide output
// only). Back-references may reach anywhere in out[0, n): the window given and the output so
// far. br is left at the boundary reached.
template <typename Sym>
absl::Status DecodeBlocks(BitReader& br, uint64_t stop_bit, bool check_markers, OutBuf<Sym>& out, BlockTables& t,
                          Stop* why);

// The first bit offset in [from_bit, to_bit) where a non-final dynamic-Huffman block header
// parses into valid, complete codes; UINT64_MAX when none.
uint64_t FindBlockStart(const uint8_t* data, size_t size, uint64_t from_bit, uint64_t to_bit, BlockTables& scratch);

}  // namespace overlapscope::import::deflate
