// The 16-byte test that reading and writing JSON strings share: which of the 16 bytes at p end a
// plain stretch of a string, that is '"', '\\', a control byte (< 0x20) or a non-ASCII byte
// (>= 0x80). The reader stops there (an escape, the end, UTF-8 to check); the writer copies a
// string unchanged while there are none. Reads 16 bytes at p: the caller keeps them readable.
#pragma once

#include <emmintrin.h>

namespace overlapscope::base {

// Bit i set where byte i of the 16 at p is '"', '\\', below 0x20 or at or above 0x80.
inline unsigned JsonStringSpecialMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                   _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));  // signed: also the bytes >= 0x80
  return static_cast<unsigned>(_mm_movemask_epi8(m));
}

}  // namespace overlapscope::base
