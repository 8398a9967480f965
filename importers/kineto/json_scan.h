// Low-level JSON scanning primitives of the Kineto importer: whitespace, strings, numbers,
// skipping values. Hot paths are inline and use SSE2 (every x86-64 has it).
//
// Buffer contract: every function reads a window [p, end) whose byte *end is '\0' and which
// stays readable for kPad bytes after end (SIMD loads may overrun by up to 15 bytes). Reaching
// `end` in the middle of a token yields Scan::kNeedMore (the caller refills the window and
// parses the whole item again); malformed JSON yields Scan::kError with *err set to a reason.
// Nothing allocates except the slow string path, which decodes into a caller-owned scratch.
#pragma once

#include <emmintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/json_bytes.h"

namespace overlapscope::import::scan {

inline constexpr size_t kPad = 64;

enum class Scan : uint8_t { kOk, kNeedMore, kError };

inline bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Kineto pretty-prints: most gaps are one space, but line breaks come with 4-8 spaces of
// indentation, so runs longer than two bytes are skipped 16 at a time.
inline const char* SkipWs(const char* p) {
  if (!IsWs(p[0])) return p;
  if (!IsWs(p[1])) return p + 1;
  const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), tab = _mm_set1_epi8('\t');
  for (p += 2;; p += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
                              _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
    unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(ws)) & 0xFFFFu;
    if (other != 0) return p + __builtin_ctz(other);  // the '\0' sentinel is not whitespace
  }
}

// First byte at or after p that is '"', '\\', a control byte (< 0x20, includes the '\0' at end)
// or a non-ASCII byte (>= 0x80).
inline const char* FindStringSpecial(const char* p) {
  for (;;) {
    if (const unsigned mask = base::JsonStringSpecialMask16(p); mask != 0) return p + __builtin_ctz(mask);
    p += 16;
  }
}

// Length of the valid UTF-8 sequence starting at p (a byte >= 0x80), or 0 when invalid
// (overlong, surrogate, beyond U+10FFFF, truncated). Reads at most 4 bytes; the '\0' sentinel
// stops it at end.
inline int Utf8SequenceLength(const unsigned char* p) {
  unsigned c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return (p[1] & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if ((p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if ((p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

// Slow path of ParseString: decodes escapes and replaces invalid UTF-8 (and lone surrogates)
// with U+FFFD into *scratch. `s` is the first content byte, `q` the first byte that needs care.
Scan ParseStringSlow(const char* s, const char* q, const char* end, const char** after, std::string* scratch,
                     std::string_view* out, int* repaired, const char** err);

// Parses the string whose opening quote is at p. On kOk, *out views the decoded text (inside
// the buffer when nothing needed decoding, else inside *scratch) and *after points past the
// closing quote. *repaired is incremented when invalid UTF-8 was replaced.
inline Scan ParseString(const char* p, const char* end, const char** after, std::string* scratch, std::string_view* out,
                        int* repaired, const char** err) {
  const char* s = p + 1;
  const char* q = s;
  for (;;) {
    q = FindStringSpecial(q);
    unsigned char c = static_cast<unsigned char>(*q);
    if (c == '"') {
      *out = std::string_view(s, static_cast<size_t>(q - s));
      *after = q + 1;
      return Scan::kOk;
    }
    if (c >= 0x80) {
      int n = Utf8SequenceLength(reinterpret_cast<const unsigned char*>(q));
      if (n > 0 && q + n <= end) {
        q += n;
        continue;
      }
    } else if (c < 0x20) {
      if (q >= end) return Scan::kNeedMore;
      ++q;  // raw control byte: not strict JSON, tolerated as content
      continue;
    }
    return ParseStringSlow(s, q, end, after, scratch, out, repaired, err);
  }
}

// Skips a string (opening quote at p) without decoding it.
inline Scan SkipString(const char* p, const char* end, const char** after) {
  const char* q = p + 1;
  for (;;) {
    q = FindStringSpecial(q);
    char c = *q;
    if (c == '"') {
      *after = q + 1;
      return Scan::kOk;
    }
    if (q >= end) return Scan::kNeedMore;
    q += (c == '\\') ? 2 : 1;
    if (q > end) return Scan::kNeedMore;
  }
}

// Skips a container ('{' or '[' at p), 64 bytes at a time: the quotes' running parity marks
// the bytes inside strings, the brackets outside them are counted, and they are walked one by
// one only in a block where the depth may fall to zero. A block with a backslash (an escape
// may hide a quote) or a NUL (the window's end, or a raw NUL) hands over to the byte walk at
// that block's start: the same answer as the byte walk from p. Loads stay within the window's
// padding: a block is passed only when it holds no NUL, so the next starts at or before end.
Scan SkipContainer(const char* p, const char* end, const char** after);

// Skips any JSON value at p (after whitespace). Containers are skipped by bracket depth and
// string awareness only; the scalars inside them are not validated (they are not used).
Scan SkipValue(const char* p, const char* end, const char** after, const char** err);

// True when the value at v is one of the non-JSON tokens old Kineto versions wrote: N/A, NaN,
// nan, inf, Infinity (signed or not), or an unquoted 0x... pointer. They are accepted where a
// number may stand (non-finite, or an integer for 0x...), and counted by the importer.
inline bool IsNonJsonToken(const char* v) {
  const char c = v[0] == '-' ? v[1] : v[0];
  if (v[0] == 'n' && v[1] == 'u') return false;  // null
  if (c == 'N' || c == 'I' || c == 'n' || c == 'i') return true;
  return v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
}

// A JSON number token, as exact decimal digits: value = digits * 10^(exp10), sign separate.
enum class NumKind : uint8_t { kOk, kNotNumber, kNonFinite, kOutOfRange };

inline bool IsDelimiter(char c) {
  return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Skips a plain number at p (an optional '-', a digit, then digits, '.', 'e', 'E', '+', '-')
// that a delimiter ends, without converting it: true with *after at the delimiter. False for
// anything else (another type, 0x..., the window's end, a malformed number): the caller takes
// SkipValue, which gives the same answer where this one does.
inline bool SkipPlainNumber(const char* p, const char** after) {
  const char* q = p + (*p == '-');
  if (*q < '0' || *q > '9' || (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))) return false;
  for (++q; (*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-';) ++q;
  if (!IsDelimiter(*q)) return false;
  *after = q;
  return true;
}

// The count (0-8) of ASCII digits that the 8 bytes at p begin with, and those bytes less '0'
// in *d (the first byte lowest). Reads 8 bytes: the window's padding keeps them readable.
inline int LeadingDigits(const char* p, uint64_t* d) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  const uint64_t x = w ^ 0x3030303030303030ull;  // a digit: 0-9; anything else: 10 or more
  // High bit set in each byte that is not a digit (a carry out of such a byte only reaches
  // bytes after it, which do not count).
  const uint64_t non = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
  *d = x;
  return non == 0 ? 8 : __builtin_ctzll(non) >> 3;
}

// The value of the first k (1-8) digits of d (LeadingDigits'): the other bytes shifted out,
// then pairs, fours and the eight combined by multiplies.
inline uint64_t DigitsValue(uint64_t d, int k) {
  d <<= 8 * (8 - k);  // the k digits last, zeros (leading zero digits) before them
  d = d * 10 + (d >> 8);
  d = (((d & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((d >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  return static_cast<uint32_t>(d);
}

inline constexpr uint64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// General (slow) paths of the two parsers below: signs, exponents, long digit strings, NaN.
Scan ParseIntSlow(const char* p, const char* end, const char** after, int64_t* v, NumKind* kind, const char** err);
Scan ParseMicrosAsNsSlow(const char* p, const char* end, const char** after, int64_t* ns, NumKind* kind,
                         const char** err);

// Parses an integer value (no fraction, no exponent) into *v. A number with a fraction or
// exponent is kNotNumber unless it is integral (e.g. 7.0, 1e3); beyond int64 is kOutOfRange.
// Anything else (string, object, ...) is kNotNumber and is NOT consumed: the caller skips it.
inline Scan ParseInt(const char* p, const char* end, const char** after, int64_t* v, NumKind* kind, const char** err) {
  // Fast path: -?[0-9]{1,18} followed by a delimiter, 8 digits at a time (the window's padding
  // keeps 8 bytes past any digit readable).
  const char* q = p;
  const bool neg = *q == '-';
  q += neg;
  uint64_t d;
  int k = LeadingDigits(q, &d);
  if (k > 0) {
    uint64_t x = DigitsValue(d, k);
    q += k;
    for (int n = k; k == 8 && n < 18;) {  // 8 more, then at most 2 more (18 in all)
      k = std::min(LeadingDigits(q, &d), 18 - n);
      if (k == 0) break;
      x = x * kPow10[k] + DigitsValue(d, k);
      q += k;
      n += k;
    }
    if (IsDelimiter(*q)) {
      *v = neg ? -static_cast<int64_t>(x) : static_cast<int64_t>(x);
      *kind = NumKind::kOk;
      *after = q;
      return Scan::kOk;
    }
  }
  return ParseIntSlow(p, end, after, v, kind, err);
}

// Parses a microsecond value (Kineto ts/dur, e.g. 4430921397268.557) into integer nanoseconds
// exactly: decimal digits, no floating point. Digits beyond the ns position round half away from
// zero. NaN/Infinity (and N/A, nan, inf) literals give kNonFinite; beyond int64 ns gives
// kOutOfRange; a 0x... token is kNotNumber.
inline Scan ParseMicrosAsNs(const char* p, const char* end, const char** after, int64_t* ns, NumKind* kind,
                            const char** err) {
  // Fast path: [0-9]{1,15}(.[0-9]{1,3})? then a delimiter: ns = int * 1000 + frac * 10^(3-len),
  // 8 digits at a time.
  const char* q = p;
  uint64_t d;
  int k = LeadingDigits(q, &d);
  if (k > 0) {
    uint64_t x = DigitsValue(d, k);
    q += k;
    if (k == 8) {  // up to 7 more (15 in all)
      k = std::min(LeadingDigits(q, &d), 7);
      if (k > 0) x = x * kPow10[k] + DigitsValue(d, k);
      q += k;
    }
    x *= 1000;
    bool ok = true;
    if (*q == '.') {
      const int f = std::min(LeadingDigits(q + 1, &d), 3);
      static constexpr uint64_t kScale[] = {1000, 100, 10, 1};
      if (f > 0) x += DigitsValue(d, f) * kScale[f];
      q += 1 + f;
      ok = f > 0;  // "12." is malformed: the general path reports it
    }
    if (ok && IsDelimiter(*q)) {
      *ns = static_cast<int64_t>(x);
      *kind = NumKind::kOk;
      *after = q;
      return Scan::kOk;
    }
  }
  return ParseMicrosAsNsSlow(p, end, after, ns, kind, err);
}

}  // namespace overlapscope::import::scan
