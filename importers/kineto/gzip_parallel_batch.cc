// The parallel gzip inflate's batch (see gzip_parallel.h): one round of the threads in which
// every chunk is decoded, chained to the chunks before it and resolved, and its delivery.
//
// Why one round: with a round for the decode, the serial chain of windows between rounds and a
// round for the resolution (and the Read's copy after), a batch's threads waited at every
// barrier for its slowest chunk and the chain, and each chunk's 16-bit output was read back by
// another thread, out of its cache. Here the thread that decoded chunk j waits only for chunk
// j - 1's link (the chain step is short), publishes chunk j's, and resolves chunk j while the
// chunks after it chain: straight into the Read's buffer where its output falls there.
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "importers/kineto/gzip_parallel.h"
#include "importers/kineto/gzip_parallel_chunk.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {

// What chunk j needs from the chunks before it: links[0] is the batch's start, links[j + 1]
// is published by chunk j's thread once chunk j is chained.
struct ChainLink {
  bool open = true;                              // a later chunk may still be kept (the last kept one reached its stop)
  bool resolvable = true;                        // every kept chunk so far decoded and chained: `window` is known
  uint64_t end_bit = 0;                          // where the last kept chunk ended
  const std::vector<uint8_t>* window = nullptr;  // the <= 32 KiB before the next kept chunk
  size_t out_off = 0;                            // output bytes of the kept chunks so far
};

struct BatchRound {
  std::vector<std::unique_ptr<InflatedChunk>> chunks;
  std::vector<ChainLink> links;                   // chunks.size() + 1
  std::unique_ptr<std::atomic<bool>[]> ready;     // links[j] published
  std::vector<std::vector<uint8_t>> win;          // win[j + 1]: the window after chunk j (kept)
  std::vector<uint8_t> kept;                      // chunk j kept (KeepChained's rule, below)
  std::vector<absl::Status> chain_err, resolved;  // a kept chunk's decode or window; resolution
  std::vector<size_t> direct;                     // bytes chunk j wrote to dst
  uint8_t* dst = nullptr;
  size_t cap = 0;
  bool timed = false;
  std::vector<double> decoded, chained, resolved_at;
};

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Chunk j's place in the chain after `in` (*out starts as a copy of in). Chunk 0 is kept; a
// later chunk where the last kept one ended (its start is then a real block boundary); a start
// before that end is false (skipped), one past it leaves a gap (no later chunk is kept: the next
// batch decodes from the end). A kept chunk's decode error, or its window's, ends what can be
// resolved there (*err); earlier chunks are delivered first.
bool ChainOne(size_t j, const InflatedChunk& ch, const ChainLink& in, std::vector<uint8_t>* next, absl::Status* err,
              ChainLink* out) {
  if (j > 0) {
    if (!in.open) return false;
    if (ch.start_bit != in.end_bit) {
      if (ch.start_bit != UINT64_MAX && ch.start_bit > in.end_bit) out->open = false;
      return false;
    }
  }
  out->open = ch.status.ok() && ch.why == deflate::Stop::kReachedStop;
  out->end_bit = ch.end_bit;
  if (!in.resolvable) return true;
  *err = ch.status.ok() ? NextWindow(*in.window, ch, next) : ch.status;
  if (!err->ok()) {
    out->resolvable = false;
    return true;
  }
  out->window = next;
  out->out_off = in.out_off + ch.wide_len() + ch.narrow_len();
  return true;
}

}  // namespace

// Chunk j's task: decode, wait for chunk j - 1's link, chain, publish, resolve. Exceptions
// (std::bad_alloc) are rethrown after the link is published, so no later chunk waits forever.
void ParallelGunzip::RunChunk(BatchRound& b, size_t j) {
  InflatedChunk& ch = *b.chunks[j];
  std::exception_ptr thrown;
  try {
    if (j == 0) {
      DecodeKnown(data_, size_, window_, ch.stop_bit, ch.max_out, tables_[j].get(), &ch);
    } else {
      DecodeGuessed(data_, size_, ch.stop_bit, ch.max_out, tables_[j].get(), &ch);
    }
  } catch (...) {
    thrown = std::current_exception();
  }
  if (b.timed) b.decoded[j] = Now();
  b.ready[j].wait(false, std::memory_order_acquire);
  const ChainLink in = b.links[j];
  ChainLink out = in;
  bool keep = false;
  if (!thrown) {
    try {
      keep = ChainOne(j, ch, in, &b.win[j + 1], &b.chain_err[j], &out);
    } catch (...) {
      thrown = std::current_exception();
    }
  }
  if (thrown) out.open = out.resolvable = false;
  b.kept[j] = keep ? 1 : 0;
  b.links[j + 1] = out;
  b.ready[j + 1].store(true, std::memory_order_release);
  b.ready[j + 1].notify_one();  // only chunk j + 1 waits for it
  if (b.timed) b.chained[j] = Now();
  if (thrown) std::rethrow_exception(thrown);
  if (keep && in.resolvable && b.chain_err[j].ok()) {
    const size_t len = ch.wide_len() + ch.narrow_len();
    const size_t n = in.out_off < b.cap ? std::min(len, b.cap - in.out_off) : 0;
    b.direct[j] = n;
    b.resolved[j] = Resolve(*in.window, &ch, n > 0 ? b.dst + in.out_off : nullptr, n);
  }
  if (b.timed) b.resolved_at[j] = Now();
}

absl::Status ParallelGunzip::NextBatch(char* dst, size_t cap, size_t* direct) {
  *direct = 0;
  if (!in_member_) {
    if (auto s = StartMember(); !s.ok()) return s;
  }
  BatchRound b;
  b.chunks = PlanChunks();
  const size_t n = b.chunks.size();
  b.links.resize(n + 1);
  b.links[0].end_bit = cur_bit_;
  b.links[0].window = &window_;
  b.ready = std::make_unique<std::atomic<bool>[]>(n + 1);
  b.ready[0].store(true);
  b.win.resize(n + 1);
  b.kept.assign(n, 0);
  b.chain_err.resize(n);
  b.resolved.resize(n);
  b.direct.assign(n, 0);
  b.dst = reinterpret_cast<uint8_t*>(dst);
  b.cap = cap;
  b.timed = timed_;
  double start = 0;
  if (timed_) {
    start = Now();
    if (t0_ < 0) t0_ = start;
    b.decoded.assign(n, 0);
    b.chained.assign(n, 0);
    b.resolved_at.assign(n, 0);
  }
  std::vector<std::function<void()>> tasks;
  for (size_t j = 0; j < n; ++j) tasks.emplace_back([this, &b, j] { RunChunk(b, j); });
  RunTasks(tasks);
  if (timed_) {
    BatchTimes t;
    t.start = start - t0_;
    t.end = Now() - t0_;
    t.planned = n;
    for (size_t j = 0; j < n; ++j) {
      t.decoded.push_back(b.decoded[j] - start);
      t.chained.push_back(b.chained[j] - start);
      t.resolved.push_back(b.resolved_at[j] - start);
    }
    times_.push_back(std::move(t));
  }
  return Deliver(b, direct);
}

// Queues the kept chunks up to the first error, in order (those written whole to dst are done
// with), and checks the member's end. The queue is empty before: a Read's copy of a chunk stops
// exactly where the direct writes stopped (dst full), and a chunk after it, empty ones included,
// stays queued as that copy would have left it.
absl::Status ParallelGunzip::Deliver(BatchRound& b, size_t* direct) {
  size_t kept = 0, last = SIZE_MAX;
  for (uint8_t k : b.kept) kept += k;
  if (threads_ > 1) serial_batches_ = kept > 1 ? 0 : std::min(serial_batches_ + 1, 16);
  absl::Status failed;
  bool final = false;
  size_t out = 0;
  for (size_t j = 0; j < b.chunks.size(); ++j) {
    InflatedChunk* ch = b.chunks[j].get();
    if (b.kept[j] && failed.ok()) {
      failed = !b.chain_err[j].ok() ? b.chain_err[j] : b.resolved[j];
      // A decode error (truncated or corrupt data) leaves the chunk's output up to it: the error's
      // position counts it, as the streaming inflates deliver theirs.
      if (!failed.ok() && !ch->status.ok()) failed_decoded_ = static_cast<int64_t>(ch->wide_len() + ch->narrow_len());
    }
    if (!b.kept[j] || !failed.ok()) {
      Recycle(ch);
      continue;
    }
    const size_t len = ch->size(), off = b.links[j].out_off;
    ++chunks_kept_;
    guessed_kept_ += j == 0 ? 0 : 1;
    crc_ = static_cast<uint32_t>(crc32_combine(crc_, ch->crc, static_cast<z_off_t>(len)));
    isize_ += static_cast<uint32_t>(len);
    AddStats(*ch);
    last = j;
    final = ch->why == deflate::Stop::kFinalBlock;
    *direct += b.direct[j];
    out += len;
    if (off < b.cap && off + len <= b.cap) {
      Recycle(ch);  // delivered whole
    } else {
      if (queue_.empty()) queue_off_ = b.direct[j];
      queue_.push_back(std::move(b.chunks[j]));
    }
  }
  if (timed_) {
    times_.back().kept = kept;
    times_.back().direct = *direct;
    times_.back().out = out;
  }
  if (last != SIZE_MAX) window_ = std::move(b.win[last + 1]);
  if (final && failed.ok()) return EndMember(cur_bit_);
  if (failed.ok()) return absl::OkStatus();
  if (failed.code() == absl::StatusCode::kResourceExhausted)
    return absl::DataLossError("inflates past 1 GiB per chunk");
  return failed;
}

std::string ParallelGunzip::TimesReport() const {
  std::string r;
  double round = 0, copy = 0;
  for (size_t i = 0; i < times_.size(); ++i) {
    const BatchTimes& t = times_[i];
    const double wall = (t.end - t.start) * 1e3;
    double dmin = 1e9, dmax = 0, cmax = 0, rmax = 0;
    for (size_t j = 0; j < t.decoded.size(); ++j) {
      dmin = std::min(dmin, t.decoded[j]);
      dmax = std::max(dmax, t.decoded[j]);
      cmax = std::max(cmax, t.chained[j]);
      rmax = std::max(rmax, t.resolved[j]);
    }
    round += wall;
    copy += t.copy * 1e3;
    absl::StrAppendFormat(
        &r,
        "inflate batch %3zu at %8.2f ms  chunks %2zu/%2zu  out %5.1f MB (direct %5.1f)  round %5.2f ms:"
        " decoded %5.2f-%5.2f, chained %5.2f, resolved %5.2f ms; then copied %5.2f ms\n",
        i, t.start * 1e3, t.kept, t.planned, t.out / 1e6, t.direct / 1e6, wall, dmin * 1e3, dmax * 1e3, cmax * 1e3,
        rmax * 1e3, t.copy * 1e3);
  }
  if (!times_.empty())
    absl::StrAppendFormat(&r, "inflate: %zu batches, rounds %.2f ms, copies %.2f ms\n", times_.size(), round, copy);
  return r;
}

}  // namespace overlapscope::import
