// The traceEvents array: chunked, two-thread speculative parsing (see file_reader.h).
#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>

#include "base/status_macros.h"
#include "importers/kineto/file_reader.h"

namespace overlapscope::import {
namespace {

constexpr size_t kMinParallelBytes = 4096;  // below this a second thread is not worth it
constexpr size_t kSplitSearchBytes = size_t{1} << 20;

bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A position at or after `from` that looks like the start of an event following another one.
const char* GuessSplit(const char* lo, const char* from, const char* end) {
  const char* limit = std::min(end, from + kSplitSearchBytes);
  for (const char* q = from; q < limit; ++q) {
    q = static_cast<const char*>(std::memchr(q, '{', static_cast<size_t>(limit - q)));
    if (q == nullptr) return nullptr;
    const char* b = q - 1;
    while (b > lo && IsWs(*b)) --b;
    if (*b != ',') continue;
    --b;
    while (b > lo && IsWs(*b)) --b;
    if (*b == '}') return q;
  }
  return nullptr;
}

}  // namespace

FileReader::ChunkResult FileReader::ParseEvents(const char* p, ArrayState state, const char* stop_at,
                                                ThreadOut& out) const {
  const char* end = End();
  const char* buf = win_;
  RawEvent ev;
  ChunkResult r;
  for (;;) {
    p = scan::SkipWs(p);
    if (state == ArrayState::kAfterElement) {
      if (*p == ',') {
        ++p;
        state = ArrayState::kBeforeElement;
        continue;
      }
      if (*p == ']') return {ChunkEnd::kDone, p + 1, state};
      if (p >= end) return {ChunkEnd::kNeedMore, p, state};
      return {ChunkEnd::kError, p, state, p, "expected ',' or ']' after an event"};
    }
    if (*p == ']' && state == ArrayState::kBeforeFirst) return {ChunkEnd::kDone, p + 1, state};
    if (stop_at != nullptr && p >= stop_at) return {ChunkEnd::kStopped, p, state};
    if (*p != '{') {
      if (p >= end) return {ChunkEnd::kNeedMore, p, state};
      return {ChunkEnd::kError, p, state, p, "expected '{' (an event object) in traceEvents"};
    }
    const char* after = nullptr;
    scan::Scan s = ParseEvent(p, end, &after, &ev, &r.err_pos, &r.err);
    if (s == scan::Scan::kNeedMore) return {ChunkEnd::kNeedMore, p, state};
    if (s == scan::Scan::kError) return {ChunkEnd::kError, p, state, r.err_pos, r.err};
    EmitEvent(ev, base_ + (p - buf), out);
    p = after;
    state = ArrayState::kAfterElement;
  }
}

FileReader::ChunkResult FileReader::ParseChunk(const char* p, ArrayState state) {
  const char* end = End();
  const char* split = nullptr;
  if (threads_ >= 2 && static_cast<size_t>(end - p) >= kMinParallelBytes) split = GuessSplit(p, p + (end - p) / 2, end);
  if (split == nullptr) {
    ChunkResult r = ParseEvents(p, state, nullptr, outs_[0]);
    MergeOut(outs_[0], 0, ctx_);
    return r;
  }
  ChunkResult second;
  bool second_ok = false;
  std::thread worker;
  try {
    worker = std::thread([&] {
      try {  // nothing may escape a thread: a failure just drops the speculative half
        second = ParseEvents(split, ArrayState::kBeforeElement, nullptr, outs_[1]);
        second_ok = true;
      } catch (...) {
      }
    });
  } catch (const std::system_error&) {  // no thread available: parse alone
    ChunkResult r = ParseEvents(p, state, nullptr, outs_[0]);
    MergeOut(outs_[0], 0, ctx_);
    return r;
  }
  ChunkResult first;
  try {
    first = ParseEvents(p, state, split, outs_[0]);
  } catch (...) {
    worker.join();
    throw;  // caught at the importer's entry
  }
  worker.join();
  if (second_ok && first.end == ChunkEnd::kStopped && first.pos == split) {
    MergeOut(outs_[0], 0, ctx_);
    MergeOut(outs_[1], 1, ctx_);
    return second;
  }
  outs_[1].ClearChunk();  // the guess was not an event boundary: drop the speculative work
  if (first.end == ChunkEnd::kStopped) first = ParseEvents(first.pos, first.state, nullptr, outs_[0]);
  MergeOut(outs_[0], 0, ctx_);
  return first;
}

void FileReader::ReserveFromFirstChunk(const char* parsed_to) {
  // After the first few MB, extrapolate the event counts to the whole file and reserve once:
  // no doubling copies, no old+new peak. Reserved but untouched pages cost no RSS.
  if (reserved_) return;
  const int64_t consumed = base_ + (parsed_to - win_);
  if (consumed < (int64_t{8} << 20)) return;
  reserved_ = true;
  // Fraction of the file behind us: for gzip from the compressed position at the window's end
  // (in_ itself belongs to the reader thread now), scaled to the part of the window parsed.
  const double window_end = static_cast<double>(base_ + static_cast<int64_t>(len_));
  double factor = 0;
  if (window_end_file_pos_ > 0)
    factor = static_cast<double>(in_file_size_) / window_end_file_pos_ * (window_end / consumed);
  if (factor <= 1.0) return;
  factor = std::min(factor * 1.05, 1e4);
  model::TraceData& d = ctx_.builder->data();
  auto grow = [factor](auto& v, size_t from) {
    size_t want = from + static_cast<size_t>(static_cast<double>(v.size() - from) * factor);
    if (want > v.capacity()) v.reserve(want);
  };
  grow(d.kernels, ctx_.kernels0);
  grow(d.memcpys, ctx_.memcpys0);
  grow(d.memsets, ctx_.memsets0);
  grow(d.api_calls, ctx_.api0);
  grow(d.syncs, ctx_.syncs0);
  grow(d.ranges, ctx_.ranges0);
  grow(d.gpu_ranges, ctx_.gpu_ranges0);
  grow(d.collectives, ctx_.collectives0);
  ctx_.api_correlations.reserve(static_cast<size_t>(static_cast<double>(ctx_.api_correlations.size()) * factor));
}

absl::Status FileReader::ParseEventArray() {
  ArrayState state = ArrayState::kBeforeFirst;
  for (;;) {
    ChunkResult r = ParseChunk(pos_, state);
    if (r.end == ChunkEnd::kNeedMore) ReserveFromFirstChunk(r.pos);
    switch (r.end) {
      case ChunkEnd::kDone: pos_ = r.pos; return absl::OkStatus();
      case ChunkEnd::kError:
        return ErrorAt(r.err_pos != nullptr ? r.err_pos : r.pos, r.err != nullptr ? r.err : "malformed JSON");
      case ChunkEnd::kNeedMore:
      case ChunkEnd::kStopped:
        if (eof_) return Truncated();
        state = r.state;
        RETURN_IF_ERROR(Refill(r.pos));
        break;
    }
  }
}

}  // namespace overlapscope::import
