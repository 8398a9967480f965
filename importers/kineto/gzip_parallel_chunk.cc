// One chunk of the parallel gzip inflate (see gzip_parallel_chunk.h).
#include "importers/kineto/gzip_parallel_chunk.h"

#include <zlib.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#ifdef OVERLAPSCOPE_HAVE_ISAL
#include <isa-l/crc.h>
#endif

#include <algorithm>
#include <cstring>
#include <memory>

namespace overlapscope::import {

using deflate::kMarker;
using deflate::kWindow;

namespace {

uint32_t Crc(uint32_t crc, const uint8_t* p, size_t n) {
#ifdef OVERLAPSCOPE_HAVE_ISAL
  return crc32_gzip_refl(crc, p, n);  // several times zlib's speed
#endif
  while (n > 0) {  // zlib takes 32-bit lengths
    const uInt step = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    crc = static_cast<uint32_t>(crc32(crc, p, step));
    p += step;
    n -= step;
  }
  return crc;
}

// Continues c's decode into bytes after its wide part became free of markers: the last 32 KiB
// of wide become narrow's preamble.
void ContinueNarrow(deflate::BitReader& br, uint64_t stop_bit, size_t max_out, deflate::BlockTables& t,
                    InflatedChunk* c) {
  c->narrow_pre = std::min(kWindow, c->wide.n);
  c->narrow.limit = max_out;
  c->narrow.Reserve(c->narrow_pre + (size_t{1} << 20));
  const uint16_t* src = c->wide.p.get() + c->wide.n - c->narrow_pre;
  for (size_t i = 0; i < c->narrow_pre; ++i) c->narrow.p[i] = static_cast<uint8_t>(src[i]);
  c->narrow.n = c->narrow_pre;
  c->status = deflate::DecodeBlocks(br, stop_bit, false, c->narrow, t, &c->why);
}

}  // namespace

void DecodeKnown(const uint8_t* data, size_t size, const std::vector<uint8_t>& window, uint64_t stop_bit,
                 size_t max_out, deflate::BlockTables* t, InflatedChunk* c) {
  c->start_bit = c->begin_bit;
  c->narrow_pre = window.size();
  c->narrow.limit = max_out;
  c->narrow.Reserve(window.size() + (size_t{1} << 20));
  if (!window.empty()) std::memcpy(c->narrow.p.get(), window.data(), window.size());
  c->narrow.n = window.size();
  deflate::BitReader br(data, size);
  br.Seek(c->start_bit);
  const int64_t blocks0 = t->blocks;
  c->status = deflate::DecodeBlocks(br, stop_bit, false, c->narrow, *t, &c->why);
  c->end_bit = br.BitPos();
  c->blocks = t->blocks - blocks0;
}

void DecodeGuessed(const uint8_t* data, size_t size, uint64_t stop_bit, size_t max_out, deflate::BlockTables* t,
                   InflatedChunk* c) {
  c->start_bit = deflate::FindBlockStart(data, size, c->begin_bit, stop_bit, *t);
  if (c->start_bit == UINT64_MAX) return;
  c->wide.limit = max_out;
  c->wide.Reserve(kWindow + (size_t{1} << 20));
  for (size_t i = 0; i < kWindow; ++i) c->wide.p[i] = static_cast<uint16_t>(kMarker + i);
  c->wide.n = kWindow;
  deflate::BitReader br(data, size);
  br.Seek(c->start_bit);
  const int64_t blocks0 = t->blocks;
  c->status = deflate::DecodeBlocks(br, stop_bit, true, c->wide, *t, &c->why);
  if (c->status.ok() && c->why == deflate::Stop::kMarkerFree) ContinueNarrow(br, stop_bit, max_out, *t, c);
  c->end_bit = br.BitPos();
  c->blocks = t->blocks - blocks0;
}

namespace {

// Byte of symbol s given the chunk's window (aligned to end at the chunk's start).
inline bool ResolveSym(uint16_t s, const std::vector<uint8_t>& window, uint8_t* out) {
  if (s < kMarker) {
    *out = static_cast<uint8_t>(s);
    return true;
  }
  const size_t i = s - kMarker, missing = kWindow - window.size();
  if (i < missing) return false;  // reaches before the member's start
  *out = window[i - missing];
  return true;
}

// Narrows 16 symbols into dst when none is a marker; false (nothing written) otherwise. dst
// may overlap the symbols' memory before them (the in-place narrowing of Resolve).
inline bool NarrowPlain16(const uint16_t* src, uint8_t* dst) {
#ifdef __SSE2__
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 8));
  const __m128i high = _mm_and_si128(_mm_or_si128(a, b), _mm_set1_epi16(static_cast<int16_t>(0xff00)));
  if (_mm_movemask_epi8(_mm_cmpeq_epi8(high, _mm_setzero_si128())) != 0xffff) return false;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_packus_epi16(a, b));  // all <= 255: exact
  return true;
#else
  uint16_t any = 0;
  for (int k = 0; k < 16; ++k) any |= src[k];
  if (any >= kMarker) return false;
  for (int k = 0; k < 16; ++k) dst[k] = static_cast<uint8_t>(src[k]);
  return true;
#endif
}

absl::Status TooFarBack() { return absl::DataLossError("invalid distance too far back"); }

// Symbol -> byte for a full window: bytes 0..255, then the window (kMarker + kWindow entries).
std::vector<uint8_t> ByteOf(const std::vector<uint8_t>& window) {
  std::vector<uint8_t> byte_of(kMarker + kWindow);
  for (size_t i = 0; i < kMarker; ++i) byte_of[i] = static_cast<uint8_t>(i);
  std::memcpy(byte_of.data() + kMarker, window.data(), kWindow);
  return byte_of;
}

// dst[i] = byte_of[src[i]] for i < n; runs of 16 without a marker narrowed as vectors. dst may
// lie over src's memory at or before it (in place).
void NarrowWith(const uint8_t* byte_of, const uint16_t* src, size_t n, uint8_t* dst) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    if (NarrowPlain16(src + i, dst + i)) continue;
    for (int k = 0; k < 16; ++k) dst[i + k] = byte_of[src[i + k]];
  }
  for (; i < n; ++i) dst[i] = byte_of[src[i]];
}

}  // namespace

absl::Status NextWindow(const std::vector<uint8_t>& window, const InflatedChunk& c, std::vector<uint8_t>* next) {
  const size_t nl = c.narrow_len(), wl = c.wide_len();
  const uint8_t* narrow = c.narrow.p.get() + c.narrow_pre;
  if (nl >= kWindow) {
    next->assign(narrow + nl - kWindow, narrow + nl);
    return absl::OkStatus();
  }
  if (window.size() == kWindow) {  // every marker valid: the last r symbols, the window's tail
    const size_t r = std::min(wl, kWindow - nl), keep = kWindow - r - nl;
    std::vector<uint8_t> out(kWindow);
    std::memcpy(out.data(), window.data() + kWindow - keep, keep);
    if (r > 0) NarrowWith(ByteOf(window).data(), c.wide.p.get() + kWindow + wl - r, r, out.data() + keep);
    if (nl > 0) std::memcpy(out.data() + keep + r, narrow, nl);
    *next = std::move(out);
    return absl::OkStatus();
  }
  std::vector<uint8_t> out(window);
  const size_t from = wl > kWindow ? wl - kWindow : 0;
  for (size_t i = from; i < wl; ++i) {
    uint8_t b;
    if (!ResolveSym(c.wide.p[kWindow + i], window, &b)) return TooFarBack();
    out.push_back(b);
  }
  out.insert(out.end(), narrow, narrow + nl);
  if (out.size() > kWindow) out.erase(out.begin(), out.end() - kWindow);
  *next = std::move(out);
  return absl::OkStatus();
}

absl::Status Resolve(const std::vector<uint8_t>& window, InflatedChunk* c, uint8_t* out, size_t out_n) {
  const size_t wl = c->wide_len(), nl = c->narrow_len();
  const uint8_t* narrow = c->narrow.p.get() + c->narrow_pre;
  c->head_n = wl;
  const size_t to_out = std::min(out_n, wl);  // of the wide part
  const size_t narrow_out = out_n - to_out;
  uint32_t crc = 0;
  if (wl > 0) {
    // In place: byte i is written after symbol i, which lies at bytes 2 * (kWindow + i) onwards,
    // was read: what is overwritten was read before.
    const uint16_t* src = c->wide.p.get() + kWindow;
    uint8_t* head = reinterpret_cast<uint8_t*>(c->wide.p.get());
    if (window.size() == kWindow) {  // every marker is valid: one table lookup a marker
      const std::vector<uint8_t> byte_of = ByteOf(window);
      if (to_out > 0) NarrowWith(byte_of.data(), src, to_out, out);
      NarrowWith(byte_of.data(), src + to_out, wl - to_out, head + to_out);
    } else {
      for (size_t i = 0; i < wl; ++i) {
        if (!ResolveSym(src[i], window, i < to_out ? &out[i] : &head[i])) return TooFarBack();
      }
    }
    if (to_out > 0) crc = Crc(crc, out, to_out);
    crc = Crc(crc, head + to_out, wl - to_out);
  }
  if (narrow_out > 0) std::memcpy(out + to_out, narrow, narrow_out);
  c->crc = Crc(crc, narrow, nl);
  return absl::OkStatus();
}

}  // namespace overlapscope::import
