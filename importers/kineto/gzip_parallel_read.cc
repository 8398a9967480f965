// The parallel gzip inflate's output side (see gzip_parallel.h): Read, the copy of queued
// chunks into the caller's buffer, and the buffers kept for the next batches.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include "importers/kineto/gzip_parallel.h"
#include "importers/kineto/gzip_parallel_chunk.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {

// Buffers of chunks done with are kept for the next batches: fresh ones would cost a page
// fault every 4 KiB of output.
void ParallelGunzip::Recycle(InflatedChunk* c) {
  const size_t most = 2 * static_cast<size_t>(threads_);  // bounded: at most two batches' worth
  if (c->narrow.capacity_bytes() > 0 && spare_narrow_.size() < most) spare_narrow_.push_back(std::move(c->narrow));
  if (c->wide.capacity_bytes() > 0 && spare_wide_.size() < most) spare_wide_.push_back(std::move(c->wide));
}

void ParallelGunzip::TakeSpare(InflatedChunk* c) {
  auto take = [](auto& pool, auto* into) {
    if (!pool.empty()) {
      *into = std::move(pool.back());
      pool.pop_back();
    }
    into->clear();
  };
  take(spare_narrow_, &c->narrow);
  take(spare_wide_, &c->wide);
}

int64_t ParallelGunzip::delivered_in_pos() const {
  if (queue_.empty()) return in_pos();
  const InflatedChunk& c = *queue_.front();
  const double done = c.size() > 0 ? static_cast<double>(queue_off_) / static_cast<double>(c.size()) : 0.0;
  return static_cast<int64_t>((static_cast<double>(c.start_bit) + done * static_cast<double>(c.end_bit - c.start_bit)) /
                              8);
}

absl::StatusOr<size_t> ParallelGunzip::Read(char* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (queue_.empty()) {
      if (!pending_.ok()) {
        if (got > 0) break;
        return pending_;
      }
      if (done_) break;
      size_t direct = 0;
      pending_ = NextBatch(dst + got, n - got, &direct);
      got += direct;
      continue;
    }
    if (!timed_ || times_.empty()) {
      got += CopyQueued(dst + got, n - got);
      continue;
    }
    const auto t = std::chrono::steady_clock::now();
    got += CopyQueued(dst + got, n - got);
    times_.back().copy += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  out_pos_ += static_cast<int64_t>(got);
  return got;
}

// Copies up to n queued bytes to dst, the chunks' pieces side by side when there are many (one
// thread copying a batch would take as long as the batch's share of the decode); returns the
// count and drops the chunks copied whole.
size_t ParallelGunzip::CopyQueued(char* dst, size_t n) {
  struct Piece {
    const uint8_t* from;
    size_t len, at;
  };
  std::vector<Piece> pieces;
  size_t planned = 0, whole = 0, next_off = 0;
  for (size_t q = 0; q < queue_.size() && planned < n; ++q) {
    const InflatedChunk& ch = *queue_[q];
    size_t off = q == 0 ? queue_off_ : 0;
    if (off < ch.head_n) {
      const size_t take = std::min(n - planned, ch.head_n - off);
      pieces.push_back({ch.head() + off, take, planned});
      planned += take;
      off += take;
    }
    if (off >= ch.head_n && planned < n) {
      const size_t at = off - ch.head_n;
      const size_t take = std::min(n - planned, ch.narrow_len() - at);
      // A chunk without a narrowed part has no buffer: no piece (memcpy from null is undefined
      // even for 0 bytes).
      if (take > 0) pieces.push_back({ch.narrow.p.get() + ch.narrow_pre + at, take, planned});
      planned += take;
      off += take;
    }
    if (off < ch.size()) {  // dst is full inside this chunk
      next_off = off;
      break;
    }
    ++whole;
  }
  if (planned >= (size_t{4} << 20) && threads_ > 1 && pieces.size() > 1) {
    std::vector<std::function<void()>> tasks;
    for (const Piece& p : pieces) tasks.emplace_back([=] { std::memcpy(dst + p.at, p.from, p.len); });
    RunTasks(tasks);
  } else {
    for (const Piece& p : pieces) std::memcpy(dst + p.at, p.from, p.len);
  }
  for (size_t q = 0; q < whole; ++q) {
    Recycle(queue_.front().get());
    queue_.pop_front();
  }
  queue_off_ = next_off;
  return planned;
}

}  // namespace overlapscope::import
