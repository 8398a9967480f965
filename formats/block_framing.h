// Checksummed block framing of overlapscope's own files (.ovspill version 2, .ovnccl version 2):
// a reader can tell a file cut short (the writing process was killed: everything before the
// cut is good) from a file damaged in the middle (a corrupt length or payload: an error).
//
//   file  := file header (16 bytes, the format's own magic and version)  block*
//   block := u32 magic "OVBK"  u32 payload_bytes  u32 crc32c(payload)  u32 crc32c(first 12 bytes)
//            payload (whole records of the format)
// A writer seals what it has pending as one block at each write (SealPending) and writes the
// header and the payload with one or two write() calls. CheckBlock classifies a block:
//   kOk         header and payload intact;
//   kTruncated  the file ends inside the header, or inside a payload whose header is intact
//               (a kill between or during the writes): the rest of the file is lost, counted;
//   kCorrupt    the header's own checksum fails (a damaged length cannot be trusted), or the
//               payload's does: the file is damaged, the reader fails with the offset.
// CRC-32C (Castagnoli), with the SSE4.2 instruction where the CPU has it. Header-only: the NCCL
// plugin (a self-contained shared library) and the CUPTI writer include it; no dependencies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace overlapscope::formats {

inline constexpr uint32_t kBlockMagic = 0x4b42564f;  // "OVBK" little-endian
inline constexpr size_t kBlockHeaderBytes = 16;

namespace internal {

inline constexpr std::array<uint32_t, 256> kCrc32cTable = [] {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}();

inline uint32_t Crc32cTable(uint32_t crc, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) crc = kCrc32cTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) inline uint32_t Crc32cHw(uint32_t crc, const unsigned char* p, size_t n) {
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
#endif

}  // namespace internal

// CRC-32C of n bytes.
inline uint32_t Crc32c(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("sse4.2");
  if (hw) return ~internal::Crc32cHw(~0u, p, n);
#endif
  return ~internal::Crc32cTable(~0u, p, n);
}

// Fills the 16-byte header of a block holding payload[0, n).
inline void SealBlock(const char* payload, uint32_t n, char header[kBlockHeaderBytes]) {
  const uint32_t words[3] = {kBlockMagic, n, Crc32c(payload, n)};
  std::memcpy(header, words, 12);
  const uint32_t header_crc = Crc32c(header, 12);
  std::memcpy(header + 12, &header_crc, 4);
}

// For a writer's pending bytes that may begin with the file header (the first write): the
// offset where the block's payload starts (kFileHeaderBytes when `data` starts with
// `file_magic`, else 0), with `header` sealed for data[offset, n). Returns n when there is no
// payload (nothing to frame).
inline size_t SealPending(const char* data, size_t n, const char (&file_magic)[8], size_t file_header_bytes,
                          char header[kBlockHeaderBytes]) {
  const size_t at = n >= file_header_bytes && std::memcmp(data, file_magic, 8) == 0 ? file_header_bytes : 0;
  if (at == n) return n;
  SealBlock(data + at, static_cast<uint32_t>(n - at), header);
  return at;
}

enum class BlockCheck : uint8_t { kOk, kTruncated, kCorrupt };

// Classifies the block at p with `avail` bytes left in the file (see above). On kOk,
// *payload_bytes is its payload size; on kCorrupt, *reason says what failed.
inline BlockCheck CheckBlock(const char* p, size_t avail, uint32_t* payload_bytes, const char** reason) {
  if (avail < kBlockHeaderBytes) return BlockCheck::kTruncated;
  uint32_t words[4];
  std::memcpy(words, p, sizeof(words));
  if (words[0] != kBlockMagic || words[3] != Crc32c(p, 12)) {
    *reason = words[0] != kBlockMagic ? "no block header where one must start (corrupt file)"
                                      : "block header checksum mismatch (corrupt file)";
    return BlockCheck::kCorrupt;
  }
  *payload_bytes = words[1];
  if (avail - kBlockHeaderBytes < words[1]) return BlockCheck::kTruncated;
  if (Crc32c(p + kBlockHeaderBytes, words[1]) != words[2]) {
    *reason = "block payload checksum mismatch (corrupt file)";
    return BlockCheck::kCorrupt;
  }
  return BlockCheck::kOk;
}

}  // namespace overlapscope::formats
