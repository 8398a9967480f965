// SkipValue's containers, 64 bytes at a time (json_scan.h: SkipContainer).
#include "importers/kineto/json_scan.h"

namespace overlapscope::import::scan {
namespace {

// The rest of a container from q at bracket depth `depth` (q inside a string when in_string),
// one structural byte at a time: the SSE mask finds " [ ] { } and the '\0' sentinel. Strings
// are skipped with their escapes; a raw NUL before the window's end is tolerated.
Scan SkipContainerBytes(const char* q, const char* end, int depth, bool in_string, const char** after) {
  if (in_string) {
    Scan s = SkipString(q - 1, end, &q);  // SkipString reads from its argument's next byte
    if (s != Scan::kOk) return s;
  }
  const __m128i quote = _mm_set1_epi8('"'), zero = _mm_setzero_si128(), bit = _mm_set1_epi8(0x20),
                open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  for (;;) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    __m128i folded = _mm_or_si128(v, bit);  // '[' -> '{', ']' -> '}'
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)),
                             _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, zero)));
    int mask = _mm_movemask_epi8(m);
    if (mask == 0) {
      q += 16;
      continue;
    }
    q += __builtin_ctz(static_cast<unsigned>(mask));
    char d = *q;
    if (d == '"') {
      Scan s = SkipString(q, end, &q);
      if (s != Scan::kOk) return s;
    } else if (d == '{' || d == '[') {
      ++depth;
      ++q;
    } else if (d == '}' || d == ']') {
      ++q;
      if (--depth == 0) {
        *after = q;
        return Scan::kOk;
      }
    } else if (q >= end) {
      return Scan::kNeedMore;
    } else {
      ++q;  // a raw NUL inside a container: not used, tolerated
    }
  }
}

// Set bits of x. The build targets x86-64 without POPCNT, where __builtin_popcountll is a call
// into libgcc (a table walk): this inline form is a dozen instructions without a load.
inline int Popcount64(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<int>((x * 0x0101010101010101ull) >> 56);
}

// Bit i set where byte i of v equals byte i of c.
inline uint64_t Eq16(__m128i v, __m128i c) { return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, c))); }

}  // namespace

Scan SkipContainer(const char* p, const char* end, const char** after) {
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), zero = _mm_setzero_si128(),
                bit = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  const char* q = p;
  int depth = 0;
  uint64_t in_string = 0;  // all ones when the block starts inside a string
  for (;;) {
    uint64_t quotes = 0, special = 0, opens = 0, closes = 0;
    for (int k = 0; k < 4; ++k) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k));
      const __m128i folded = _mm_or_si128(v, bit);  // '[' -> '{', ']' -> '}'
      quotes |= Eq16(v, quote) << (16 * k);
      special |= (Eq16(v, bslash) | Eq16(v, zero)) << (16 * k);
      opens |= Eq16(folded, open) << (16 * k);
      closes |= Eq16(folded, close) << (16 * k);
    }
    if (special != 0) return SkipContainerBytes(q, end, depth, in_string != 0, after);
    uint64_t inside = quotes;  // prefix XOR: 1 from an opening quote up to its closing one
    inside ^= inside << 1;
    inside ^= inside << 2;
    inside ^= inside << 4;
    inside ^= inside << 8;
    inside ^= inside << 16;
    inside ^= inside << 32;
    inside ^= in_string;
    in_string = static_cast<uint64_t>(static_cast<int64_t>(inside) >> 63);
    opens &= ~inside;
    closes &= ~inside;
    const int n_close = Popcount64(closes);
    if (n_close >= depth) {
      for (uint64_t b = opens | closes; b != 0; b &= b - 1) {
        const int i = __builtin_ctzll(b);
        if ((opens >> i) & 1) {
          ++depth;
        } else if (--depth == 0) {
          *after = q + i + 1;
          return Scan::kOk;
        }
      }
    } else {
      depth += Popcount64(opens) - n_close;
    }
    q += 64;
  }
}

}  // namespace overlapscope::import::scan
