// One chunk of the parallel gzip inflate (gzip_parallel.h): its decode, the resolution of its
// markers, and the bytes it holds for Read. Internal to importers/kineto.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "importers/kineto/deflate_decode.h"

namespace overlapscope::import {

struct InflatedChunk {
  uint64_t begin_bit = 0;           // where its search for a block start began
  uint64_t stop_bit = 0;            // it decodes to the first block boundary at or past this
  size_t max_out = 0;               // decoding more output than this fails
  uint64_t start_bit = UINT64_MAX;  // its first block (UINT64_MAX: none found)
  uint64_t end_bit = 0;             // the block boundary where it stopped
  absl::Status status;              // of its decode
  deflate::Stop why = deflate::Stop::kReachedStop;
  // Output: wide[kWindow, wide.n) (markers allowed; empty when decoded with a known window),
  // then narrow[narrow_pre, narrow.n).
  deflate::OutBuf<uint16_t> wide;
  deflate::OutBuf<uint8_t> narrow;
  size_t narrow_pre = 0;
  size_t head_n = 0;  // wide's output once resolved: bytes [0, head_n) of wide's own memory
  const uint8_t* head() const { return reinterpret_cast<const uint8_t*>(wide.p.get()); }
  uint32_t crc = 0;
  int64_t blocks = 0;  // deflate blocks decoded

  size_t wide_len() const { return wide.n > deflate::kWindow ? wide.n - deflate::kWindow : 0; }
  size_t narrow_len() const { return narrow.n - narrow_pre; }
  size_t size() const { return head_n + narrow_len(); }
};

// Decodes from c->begin_bit, a block boundary, with the known `window` (the first chunk of a
// batch). `t`: the decoder's tables (scratch, reused from chunk to chunk).
void DecodeKnown(const uint8_t* data, size_t size, const std::vector<uint8_t>& window, uint64_t stop_bit,
                 size_t max_out, deflate::BlockTables* t, InflatedChunk* c);
// Finds a block start in [c->begin_bit, stop_bit) and decodes from it with an unknown window.
void DecodeGuessed(const uint8_t* data, size_t size, uint64_t stop_bit, size_t max_out, deflate::BlockTables* t,
                   InflatedChunk* c);

// The window after c (whose own window is `window`, <= 32 KiB): the last 32 KiB of both.
absl::Status NextWindow(const std::vector<uint8_t>& window, const InflatedChunk& c, std::vector<uint8_t>* next);
// Replaces c's markers with `window`'s bytes and computes c->crc. The first out_n bytes of c's
// output (out_n <= c->size()) go to out; the rest stay c's: wide's output narrowed in place to
// head() (its bytes [0, out_n) not written), then the narrow part.
absl::Status Resolve(const std::vector<uint8_t>& window, InflatedChunk* c, uint8_t* out = nullptr, size_t out_n = 0);

}  // namespace overlapscope::import
