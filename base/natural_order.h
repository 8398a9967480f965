// Numeric-aware ("natural") order of names: "rank2.json" < "rank10.json". Runs of decimal
// digits compare by value (leading zeros ignored, then fewer zeros first), everything else
// byte by byte; names equal under that order fall back to plain byte order, so the order is
// total and deterministic. Used wherever input files are listed (a directory of rank files is
// read, analyzed, reported and exported in rank order, not as names sort: rank 0, 1, 2, ..., 10,
// not 0, 1, 10, 11, ..., 2). Pure, no allocation, any bytes.
#pragma once

#include <cstddef>
#include <string_view>

namespace overlapscope::base {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// <0, 0, >0 as a sorts before, with, after b in natural order (0 only for equal names).
inline int NaturalCompare(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  int zeros = 0;  // tie-break: the name whose digit runs had fewer leading zeros first
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t za = i, zb = j;
      while (za < a.size() && a[za] == '0') ++za;
      while (zb < b.size() && b[zb] == '0') ++zb;
      size_t ea = za, eb = zb;
      while (ea < a.size() && IsDigit(a[ea])) ++ea;
      while (eb < b.size() && IsDigit(b[eb])) ++eb;
      if (ea - za != eb - zb) return ea - za < eb - zb ? -1 : 1;  // more significant digits: larger
      for (size_t k = 0; k < ea - za; ++k)
        if (a[za + k] != b[zb + k]) return a[za + k] < b[zb + k] ? -1 : 1;
      if (zeros == 0 && za - i != zb - j) zeros = za - i < zb - j ? -1 : 1;
      i = ea;
      j = eb;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i < a.size() || j < b.size()) return i < a.size() ? 1 : -1;  // a prefix sorts first
  if (zeros != 0) return zeros;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

inline bool NaturalLess(std::string_view a, std::string_view b) { return NaturalCompare(a, b) < 0; }

}  // namespace overlapscope::base
