// Bounds applied once at import, so that every later difference and sum stays inside int64.
//
// Times: |t| <= kMaxAbsTimeNs (4e18 ns, the year 2096 on the Unix epoch) and durations
// <= kMaxDurationNs (1e15 ns, 11.6 days): any two times of a trace differ by less than 2^63.
// Sizes (bytes, element counts): <= kMaxSize (2^50, 1 PiB). Importers skip records outside
// these bounds and count them (import_stats.h: time_out_of_bounds, size_out_of_bounds); the
// analyses may then subtract any two times and sum up to 2^13 full-length durations without
// overflow, and use SatAdd where a sum runs over an unbounded number of records.
#pragma once

#include <cstdint>

namespace overlapscope::model {

inline constexpr int64_t kMaxAbsTimeNs = 4'000'000'000'000'000'000;
inline constexpr int64_t kMaxDurationNs = 1'000'000'000'000'000;
inline constexpr int64_t kMaxSize = int64_t{1} << 50;

inline bool TimeInBounds(int64_t t) { return t >= -kMaxAbsTimeNs && t <= kMaxAbsTimeNs; }
// A record starting at ts that lasts dur: both ends and the duration within bounds.
inline bool TimeInBounds(int64_t ts, int64_t dur) { return TimeInBounds(ts) && dur >= 0 && dur <= kMaxDurationNs; }
inline bool SizeInBounds(int64_t v) { return v >= 0 && v <= kMaxSize; }

// Bytes of `elements` elements of `element_bytes` each; -1 when either is unknown (negative or
// zero element size) or the product leaves [0, kMaxSize].
inline int64_t BytesOf(int64_t elements, int64_t element_bytes) {
  if (elements < 0 || element_bytes <= 0 || elements > kMaxSize || element_bytes > kMaxSize) return -1;
  int64_t bytes;
  if (__builtin_mul_overflow(elements, element_bytes, &bytes) || bytes > kMaxSize) return -1;
  return bytes;
}

// a + b clamped to [INT64_MIN, INT64_MAX]: totals over unboundedly many records.
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

}  // namespace overlapscope::model
