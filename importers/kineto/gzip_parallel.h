// Inflate of one gzip file on many threads, one member included (the approach of pugz and
// rapidgzip, our own code). Each member's deflate stream is cut into chunks of compressed bytes,
// taken a batch of `threads` chunks at a time: every chunk but the first finds the first
// dynamic-Huffman block header at or after its start (deflate_decode.h) and decodes from there
// with back-references before its start kept as markers, until the first block boundary at or
// after the next chunk's start. In order, a chunk is kept only if the previous kept one ended
// exactly where it began (so its start is a real block boundary: never a wrong byte), its
// window is the 32 KiB before it. A batch is one round of its threads: the thread that decoded
// a chunk waits for the chunk before it to be chained (kept or not, its window, its output's
// offset), chains its own, then replaces its markers and computes its CRC-32 while the chunks
// after it chain (gzip_parallel_batch.cc) — writing straight into the caller's buffer where the
// output falls inside the Read that started the batch. A chunk not kept is decoded again as the
// first chunk of the next batch. Each member's CRC-32 and length are checked.
//
// Memory: about kBatchOutput bytes of output (plus 2 bytes a symbol for the parts still holding
// markers) per batch; the compressed data is the caller's.
//
// Failure modes: corrupt, truncated or trailing non-gzip data gives DataLoss "gzip error: <reason>"
// (reasons as zlib words them), after every byte before the failing chunk was delivered;
// error_pos() then says where in the inflated data it broke.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "importers/kineto/deflate_decode.h"

namespace overlapscope::import {

struct InflatedChunk;  // gzip_parallel_chunk.h
struct BatchRound;     // gzip_parallel_batch.cc
class TaskPool;        // task_pool.h

class ParallelGunzip {
 public:
  // Output bytes one batch aims at (chunk sizes follow the compression ratio seen so far).
  static constexpr size_t kBatchOutput = size_t{8} << 20;
  // At most this much where two blocks a chunk take more than kBatchOutput.
  static constexpr size_t kMaxBatchOutput = size_t{12} << 20;

  // `data` holds the whole gzip file and outlives this object. chunk_bytes 0: automatic.
  ParallelGunzip(const uint8_t* data, size_t size, int threads, size_t chunk_bytes = 0);
  ~ParallelGunzip();
  ParallelGunzip(const ParallelGunzip&) = delete;
  ParallelGunzip& operator=(const ParallelGunzip&) = delete;

  // Fills dst with up to n bytes; 0 only at the end.
  absl::StatusOr<size_t> Read(char* dst, size_t n);
  int64_t out_pos() const { return out_pos_; }
  // After an error: the inflated bytes before the point where the data broke — the bytes
  // delivered plus what the failing chunk decoded before it stopped (its bytes are not
  // delivered). What the streaming inflates name: their output up to the break. Else out_pos().
  int64_t error_pos() const { return pending_.ok() ? out_pos_ : decoded_ + failed_decoded_; }
  // Compressed bytes decoded so far (data before it is no longer read).
  int64_t in_pos() const { return static_cast<int64_t>(cur_bit_ / 8); }
  // Compressed offset of the bytes delivered so far (interpolated inside a chunk): the file
  // position of progress reports and of the importer's size extrapolation, which in_pos, a
  // batch ahead, would skew.
  int64_t delivered_in_pos() const;
  // Chunks decoded from a guessed start and kept, and all chunks kept (for tests and benches:
  // the share decoded in parallel).
  int64_t guessed_kept() const { return guessed_kept_; }
  int64_t chunks_kept() const { return chunks_kept_; }
  // On: each batch's timeline is kept (when its chunks were decoded, chained and resolved,
  // relative to the first batch's start) for TimesReport (OVERLAPSCOPE_WINDOWS in the
  // importer: a measurement aid). Off by default.
  void SetTimed(bool on) { timed_ = on; }
  // One line a batch, then totals; empty when not timed.
  std::string TimesReport() const;
  // Runs the batches on `pool`'s threads (shared with other work; `first`: before the other
  // lists' tasks) instead of threads of its own. Before the first Read; `pool` outlives the reads.
  void SetSharedPool(TaskPool* pool, bool first) {
    shared_pool_ = pool;
    pool_first_ = first;
  }

 private:
  using Chunks = std::vector<std::unique_ptr<InflatedChunk>>;
  // Decodes, chains and resolves one batch; bytes of its output that fall within dst[0, cap)
  // are written there (*direct of them), the rest queued.
  absl::Status NextBatch(char* dst, size_t cap, size_t* direct);
  Chunks PlanChunks();
  void RunChunk(BatchRound& b, size_t j);
  absl::Status Deliver(BatchRound& b, size_t* direct);
  void AddStats(const InflatedChunk& ch);
  absl::Status StartMember();
  absl::Status EndMember(uint64_t end_bit);
  size_t ChunkBytes() const;
  void Recycle(InflatedChunk* c);
  void TakeSpare(InflatedChunk* c);
  TaskPool& Pool();
  void RunTasks(const std::vector<std::function<void()>>& tasks);
  size_t CopyQueued(char* dst, size_t n);

  const uint8_t* data_;
  size_t size_;
  int threads_;
  size_t chunk_bytes_;
  bool in_member_ = false, done_ = false;
  uint64_t cur_bit_ = 0;          // a true block boundary (or member start) not yet decoded
  std::vector<uint8_t> window_;   // the member's last <= 32 KiB of output
  uint32_t crc_ = 0, isize_ = 0;  // of the member so far
  int64_t out_pos_ = 0;           // bytes delivered by Read
  int64_t decoded_ = 0;           // bytes decoded (queued or delivered)
  int64_t failed_decoded_ = 0;    // bytes the failing chunk decoded before its error (not delivered)
  int64_t guessed_kept_ = 0, chunks_kept_ = 0;
  int64_t blocks_ = 0, block_bits_ = 0;                        // deflate blocks kept and their compressed bits
  int serial_batches_ = 0;                                     // batches in a row that kept their first chunk only
  absl::Status pending_;                                       // delivered once the queue is empty
  std::vector<std::unique_ptr<deflate::BlockTables>> tables_;  // one per chunk of a batch
  // The timeline (SetTimed): per batch its start, chunks planned and kept, output and direct
  // bytes, and per chunk the ends of its decode, chain and resolution (seconds).
  struct BatchTimes {
    double start = 0, end = 0, copy = 0;  // copy: the Reads' copies of its queued bytes
    size_t planned = 0, kept = 0, out = 0, direct = 0;
    std::vector<double> decoded, chained, resolved;
  };
  bool timed_ = false;
  TaskPool* shared_pool_ = nullptr;
  bool pool_first_ = false;
  double t0_ = -1;
  std::vector<BatchTimes> times_;
  std::unique_ptr<TaskPool> pool_;  // threads_ - 1 threads, started at the first batch
  std::deque<std::unique_ptr<InflatedChunk>> queue_;
  size_t queue_off_ = 0;                                // bytes of queue_.front() already delivered
  std::vector<deflate::OutBuf<uint8_t>> spare_narrow_;  // byte buffers of chunks done with
  std::vector<deflate::OutBuf<uint16_t>> spare_wide_;
};

}  // namespace overlapscope::import
