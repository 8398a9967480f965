// The parallel gzip inflate's batches, members and Read (see gzip_parallel.h).
#include "importers/kineto/gzip_parallel.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "importers/kineto/gzip_parallel_chunk.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {
namespace {

absl::Status GzipError(const char* why) { return absl::DataLossError(why); }

uint32_t Le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Byte offset just past the gzip header at `p`, or an error.
absl::StatusOr<size_t> SkipHeader(const uint8_t* d, size_t size, size_t p) {
  const size_t start = p;
  if (size - p < 2) return GzipError("truncated gzip stream");
  if (d[p] != 0x1f || d[p + 1] != 0x8b) return GzipError("incorrect header check");
  if (size - p < 10) return GzipError("truncated gzip stream");
  if (d[p + 2] != 8) return GzipError("unknown compression method");
  const uint8_t flags = d[p + 3];
  if (flags & 0xe0) return GzipError("unknown header flags set");
  p += 10;
  if (flags & 4) {  // FEXTRA
    if (size - p < 2) return GzipError("truncated gzip stream");
    const size_t xlen = d[p] | (size_t{d[p + 1]} << 8);
    p += 2;
    if (size - p < xlen) return GzipError("truncated gzip stream");
    p += xlen;
  }
  for (uint8_t bit : {uint8_t{8}, uint8_t{16}}) {  // FNAME, FCOMMENT: zero-terminated
    if (!(flags & bit)) continue;
    const void* nul = std::memchr(d + p, 0, size - p);
    if (nul == nullptr) return GzipError("truncated gzip stream");
    p = static_cast<size_t>(static_cast<const uint8_t*>(nul) - d) + 1;
  }
  if (flags & 2) {  // FHCRC: the low 16 bits of the header's CRC-32
    if (size - p < 2) return GzipError("truncated gzip stream");
    const uint32_t crc = static_cast<uint32_t>(crc32(0, d + start, static_cast<uInt>(p - start)));
    if ((crc & 0xffff) != (d[p] | (uint32_t{d[p + 1]} << 8))) return GzipError("header crc mismatch");
    p += 2;
  }
  return p;
}

}  // namespace

ParallelGunzip::ParallelGunzip(const uint8_t* data, size_t size, int threads, size_t chunk_bytes)
    : data_(data), size_(size), threads_(std::max(threads, 1)), chunk_bytes_(chunk_bytes) {}

ParallelGunzip::~ParallelGunzip() = default;

TaskPool& ParallelGunzip::Pool() {
  if (shared_pool_ != nullptr) return *shared_pool_;
  if (pool_ == nullptr) pool_ = std::make_unique<TaskPool>(threads_);
  return *pool_;
}

void ParallelGunzip::RunTasks(const std::vector<std::function<void()>>& tasks) {
  Pool().Run(tasks, shared_pool_ != nullptr && pool_first_);
}

size_t ParallelGunzip::ChunkBytes() const {
  // The compression ratio seen so far (16 before the first MiB).
  const int64_t in = in_pos();
  const double ratio =
      in > (1 << 20) ? std::clamp(static_cast<double>(decoded_) / static_cast<double>(in), 1.0, 1100.0) : 16.0;
  // Output per chunk ~ kBatchOutput / threads, and at least two blocks of the size seen so far
  // (a chunk holding no block start leaves its thread idle and the one before it twice the
  // work), up to kMaxBatchOutput a batch.
  double per_chunk = static_cast<double>(kBatchOutput) / threads_ / ratio;
  if (blocks_ >= 4) {
    const double two_blocks = 2.0 * static_cast<double>(block_bits_) / 8 / static_cast<double>(blocks_);
    per_chunk = std::max(per_chunk, std::min(two_blocks, static_cast<double>(kMaxBatchOutput) / threads_ / ratio));
  }
  size_t bytes =
      chunk_bytes_ > 0 ? chunk_bytes_ : std::clamp(static_cast<size_t>(per_chunk), size_t{32} << 10, size_t{8} << 20);
  // Batches that kept no guessed chunk (stored or fixed blocks only, blocks larger than a
  // chunk) double the chunks while one chunk's output stays within kBatchOutput: the first
  // chunk then does more per batch, and the others are searched again less often.
  const size_t most = std::max(bytes, static_cast<size_t>(static_cast<double>(kBatchOutput) / ratio));
  for (int i = 0; i < serial_batches_ && bytes * 2 <= most; ++i) bytes *= 2;
  return bytes;
}

absl::Status ParallelGunzip::StartMember() {
  auto p = SkipHeader(data_, size_, static_cast<size_t>(cur_bit_ / 8));
  if (!p.ok()) return p.status();
  cur_bit_ = uint64_t{*p} * 8;
  in_member_ = true;
  window_.clear();
  crc_ = 0;
  isize_ = 0;
  return absl::OkStatus();
}

absl::Status ParallelGunzip::EndMember(uint64_t end_bit) {
  const size_t p = static_cast<size_t>((end_bit + 7) / 8);
  if (size_ - p < 8) return GzipError("truncated gzip stream");
  if (Le32(data_ + p) != crc_) return GzipError("incorrect data check");
  if (Le32(data_ + p + 4) != isize_) return GzipError("incorrect length check");
  cur_bit_ = uint64_t{p + 8} * 8;
  in_member_ = false;
  if (cur_bit_ / 8 >= size_) done_ = true;
  return absl::OkStatus();
}

// A kept chunk's output, blocks and end: what the next batch's chunk sizes and start follow.
void ParallelGunzip::AddStats(const InflatedChunk& ch) {
  decoded_ += static_cast<int64_t>(ch.wide_len() + ch.narrow_len());  // its size once resolved
  blocks_ += ch.blocks;
  block_bits_ += static_cast<int64_t>(ch.end_bit - ch.start_bit);
  cur_bit_ = ch.end_bit;
}

// The next batch's chunks from cur_bit_: where each begins its search and stops, and how much
// it may decode.
ParallelGunzip::Chunks ParallelGunzip::PlanChunks() {
  const size_t c = ChunkBytes();
  const uint64_t base = cur_bit_ / 8;
  // A guessed start decodes at most this much (a false start may decode garbage); the first
  // chunk, whose start is known, up to 1 GiB (beyond is a gzip bomb).
  const size_t guess_limit = (size_t{64} << 20) + 64 * c, first_limit = size_t{1} << 30;
  Chunks chunks;
  for (int j = 0; j < threads_; ++j) {
    const uint64_t begin = j == 0 ? cur_bit_ : (base + j * c) * 8;
    if (j > 0 && begin >= uint64_t{size_} * 8) break;
    chunks.push_back(std::make_unique<InflatedChunk>());
    InflatedChunk* ch = chunks.back().get();
    ch->begin_bit = begin;
    ch->stop_bit = (base + (j + 1) * c) * 8;
    ch->max_out = j == 0 ? first_limit : guess_limit;
    TakeSpare(ch);
    // Default-initialized: 128 KiB a chunk not zeroed (BuildTable writes what it reads).
    if (tables_.size() <= static_cast<size_t>(j)) tables_.emplace_back(new deflate::BlockTables);
  }
  return chunks;
}

}  // namespace overlapscope::import
