// The decoding tables of deflate_decode.h: canonical prefix codes into two-level tables
// (HuffTable), literal pairs, the fixed code. Written from RFC 1951; which codes are refused
// follows zlib.
#include <algorithm>
#include <cstring>

#include "importers/kineto/deflate_decode.h"

namespace overlapscope::import::deflate {
namespace {

constexpr uint16_t kLenBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                   31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLenExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

constexpr int kRoot = HuffTable::kRootBits;
constexpr uint64_t kRootMask = (uint64_t{1} << kRoot) - 1;

uint32_t Reverse(uint32_t code, int len) {
  uint32_t r = 0;
  for (int i = 0; i < len; ++i, code >>= 1) r = (r << 1) | (code & 1);
  return r;
}

// The table entry of symbol `sym` with a code of `len` bits (see HuffTable).
uint32_t EntryOf(CodeKind kind, int sym, int len) {
  const uint32_t l = static_cast<uint32_t>(len);
  if (kind == CodeKind::kCodeLengths) return l | (l << 8) | (static_cast<uint32_t>(sym) << 16);
  if (kind == CodeKind::kDistances) {
    if (sym >= 30) return 0;  // 30 and 31 (fixed code): invalid where used
    return (l + kDistExtra[sym]) | (l << 8) | (uint32_t{kDistBase[sym]} << 16);
  }
  if (sym < 256) return l | HuffTable::kLiteral | (static_cast<uint32_t>(sym) << 16);
  if (sym == 256) return l | HuffTable::kEnd;
  if (sym >= 286) return 0;  // 286 and 287 (fixed code): invalid where used
  return (l + kLenExtra[sym - 257]) | (l << 8) | (uint32_t{kLenBase[sym - 257]} << 16);
}

// Root entries of one literal whose next root bits hold a whole second literal become pairs.
// Descending, so that entry[i >> l1] (< i) is still a single literal's when read.
void PairLiterals(HuffTable* t) {
  constexpr uint32_t kRootSize = uint32_t{1} << kRoot;
  for (uint32_t i = kRootSize; i-- > 0;) {
    const uint32_t e = t->entry[i];
    if ((e & HuffTable::kLiteral) == 0) continue;
    const uint32_t l1 = e & 31;
    if (l1 >= kRoot) continue;
    const uint32_t e2 = t->entry[i >> l1];
    if ((e2 & HuffTable::kLiteral) == 0 || (e2 & HuffTable::kPair) != 0) continue;
    const uint32_t l2 = e2 & 31;
    if (l1 + l2 > kRoot) continue;
    t->entry[i] = (l1 + l2) | HuffTable::kLiteral | HuffTable::kPair | (e & 0xff0000u) | ((e2 & 0xff0000u) << 8);
  }
}

}  // namespace

bool BuildTable(const uint8_t* lens, int n, CodeKind kind, HuffTable* t) {
  int count[16] = {0};
  for (int i = 0; i < n; ++i) ++count[lens[i]];
  count[0] = 0;
  int max = 0, left = 1;
  for (int len = 1; len <= 15; ++len) {
    if (count[len] != 0) max = len;
    left = (left << 1) - count[len];
    if (left < 0) return false;  // over-subscribed
  }
  // Incomplete codes: only a single 1-bit code, or none at all, and never for code lengths.
  if (left > 0 && (kind == CodeKind::kCodeLengths || max > 1)) return false;
  t->bits = max > 0 ? max : 1;
  constexpr uint32_t kRootSize = uint32_t{1} << kRoot;
  std::memset(t->entry, 0, kRootSize * sizeof(uint32_t));
  uint32_t next[16] = {0};
  uint32_t code = 0;
  for (int len = 1; len <= 15; ++len) {
    code = (code + static_cast<uint32_t>(count[len - 1])) << 1;
    next[len] = code;
  }
  uint16_t codes[288 + 32];  // each symbol's code, bit-reversed (the stream's order)
  for (int sym = 0; sym < n; ++sym) {
    if (lens[sym] != 0) codes[sym] = static_cast<uint16_t>(Reverse(next[lens[sym]]++, lens[sym]));
  }
  // Subtables: one per root prefix of longer codes, as wide as the longest of them needs.
  uint8_t sub_bits[kRootSize];
  uint16_t sub_at[kRootSize];
  if (max > kRoot) {
    std::memset(sub_bits, 0, sizeof(sub_bits));
    for (int sym = 0; sym < n; ++sym) {
      if (lens[sym] <= kRoot) continue;
      uint8_t& b = sub_bits[codes[sym] & kRootMask];
      b = std::max<uint8_t>(b, static_cast<uint8_t>(lens[sym] - kRoot));
    }
    uint32_t used = kRootSize;
    for (uint32_t p = 0; p < kRootSize; ++p) {
      if (sub_bits[p] == 0) continue;
      sub_at[p] = static_cast<uint16_t>(used);
      t->entry[p] = HuffTable::kLink | (uint32_t{sub_bits[p]} << 8) | (used << 16);
      std::memset(t->entry + used, 0, (size_t{1} << sub_bits[p]) * sizeof(uint32_t));
      used += uint32_t{1} << sub_bits[p];
    }
  }
  for (int sym = 0; sym < n; ++sym) {
    const int len = lens[sym];
    if (len == 0) continue;
    const uint32_t e = EntryOf(kind, sym, len);
    if (len <= kRoot) {
      for (uint32_t k = codes[sym]; k < kRootSize; k += uint32_t{1} << len) t->entry[k] = e;
    } else {
      const uint32_t p = codes[sym] & kRootMask, size = uint32_t{1} << sub_bits[p];
      for (uint32_t k = codes[sym] >> kRoot; k < size; k += uint32_t{1} << (len - kRoot)) t->entry[sub_at[p] + k] = e;
    }
  }
  if (kind == CodeKind::kLiterals) PairLiterals(t);
  return true;
}

const BlockTables& FixedTables() {
  static const BlockTables* const fixed = [] {
    auto* t = new BlockTables;
    uint8_t lens[288 + 32];
    std::memset(lens, 8, 144);
    std::memset(lens + 144, 9, 112);
    std::memset(lens + 256, 7, 24);
    std::memset(lens + 280, 8, 8);
    std::memset(lens + 288, 5, 32);
    BuildTable(lens, 288, CodeKind::kLiterals, &t->lit);
    BuildTable(lens + 288, 32, CodeKind::kDistances, &t->dist);
    return t;
  }();
  return *fixed;
}

}  // namespace overlapscope::import::deflate
