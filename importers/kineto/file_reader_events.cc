// The traceEvents array: chunked, N-thread speculative parsing (see file_reader.h).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "base/status_macros.h"
#include "importers/kineto/file_reader.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {
namespace {

constexpr size_t kMinPartBytes = 2048;  // below this a part of its own is not worth a thread
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

std::vector<const char*> FileReader::SplitPoints(const char* p) const {
  const char* end = End();
  std::vector<const char*> splits = {p};
  const size_t bytes = static_cast<size_t>(end - p);
  const int parts = static_cast<int>(std::min<size_t>(parts_, bytes / kMinPartBytes));
  // Part 0 weighs first_share_ against 1 for each other part (its task also merges).
  const double total = first_share_ + (parts - 1);
  for (int i = 1; i < parts; ++i) {
    // Start the search at a newline past the i-th boundary: Kineto writes one event per line,
    // and a JSON string holds no raw newline, so the next event usually begins right there.
    // Without newlines (minified JSON) the search starts at the boundary itself.
    const char* from = p + static_cast<size_t>(static_cast<double>(bytes) * (first_share_ + (i - 1)) / total);
    if (from <= splits.back()) from = splits.back() + 1;
    const char* nl = static_cast<const char*>(std::memchr(from, '\n', std::min<size_t>(end - from, kSplitSearchBytes)));
    const char* guess = GuessSplit(p, nl != nullptr ? nl : from, end);
    if (guess != nullptr && guess > splits.back()) splits.push_back(guess);
  }
  return splits;
}

double FileReader::MergePending() {
  if (pending_parts_ == 0) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<ThreadOut*> outs;
  std::vector<int> which;
  for (size_t k = 0; k < pending_parts_; ++k)
    outs.push_back(&Out(pending_set_, k)), which.push_back(Which(pending_set_, k));
  MergeOuts(outs, which, ctx_);
  pending_parts_ = 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

FileReader::ChunkResult FileReader::ParseChunk(const char* p, ArrayState state) {
  WindowTimes* times = nullptr;
  if (timeline_on_) {
    times = &timeline_.emplace_back();
    times->start = Now(), times->refill = refill_s_, times->refill_wait = refill_wait_s_;
    times->bytes = static_cast<size_t>(End() - p);
  }
  const std::vector<const char*> splits = threads_ >= 2 ? SplitPoints(p) : std::vector<const char*>{p};
  const size_t n = splits.size();
  if (times != nullptr) times->parts = n;
  if (n == 1) {
    MergePending();
    ChunkResult r = ParseEvents(p, state, nullptr, Out(set_, 0));
    MergeOut(Out(set_, 0), Which(set_, 0), ctx_);
    return r;
  }
  // Part i > 0 parses from its guessed event start up to the next guess, speculatively, on the
  // file's parser threads (started at the first window that has parts, kept to the file's end).
  // Part i is used only when the parse before it, sequential up to there, stopped exactly at
  // its start; from the first part that fails that test on, its work is dropped and the rest of
  // the window is parsed in order. The result is always that of a sequential parse. Task 0
  // merges the previous window's parts while the others parse this one's, then parses part 0;
  // a window whose parts all hold waits for the next one to be merged, one that does not is
  // merged at once (the rest is parsed in order into part 0's output).
  std::vector<ChunkResult> results(n);
  std::unique_ptr<bool[]> ok(new bool[n]());
  std::vector<double> seconds(n, 0.0);  // each part's parse, for the next window's split
  std::vector<double> ends(n, 0.0);     // each part's end (the timeline's, when on)
  const int set = set_;
  ChunkResult cur;
  double merge_seconds = 0;
  std::vector<std::function<void()>> tasks;
  tasks.reserve(n);
  tasks.emplace_back([&] {  // an exception here is rethrown by Run, then caught at the importer's entry
    if (times != nullptr) times->spawned = Now();
    merge_seconds = MergePending();
    if (times != nullptr) times->merged = Now();
    const auto t0 = std::chrono::steady_clock::now();
    cur = ParseEvents(p, state, splits[1], Out(set, 0));
    seconds[0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (times != nullptr) times->part0 = Now();
  });
  for (size_t i = 1; i < n; ++i) {
    const char* stop = i + 1 < n ? splits[i + 1] : nullptr;
    tasks.emplace_back([this, &results, &ok, &seconds, &ends, &splits, i, stop, set] {
      try {  // a failure just drops this part's work: it is parsed in order below
        const auto t0 = std::chrono::steady_clock::now();
        results[i] = ParseEvents(splits[i], ArrayState::kBeforeElement, stop, Out(set, i));
        seconds[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (timeline_on_) ends[i] = Now();
        ok[i] = true;
      } catch (...) {
      }
    });
  }
  if (parse_pool_ == nullptr) parse_pool_ = std::make_unique<TaskPool>(threads_);
  parse_pool_->Run(tasks);
  size_t i = 1;
  for (; i < n; ++i) {
    if (!ok[i] || cur.end != ChunkEnd::kStopped || cur.pos != splits[i]) break;
    cur = results[i];
  }
  if (times != nullptr) {
    times->joined = Now();
    for (size_t k = 1; k < n; ++k) times->last_part = std::max(times->last_part, ends[k]);
  }
  if (i == n) {
    BalanceFirstPart(seconds, merge_seconds);
    pending_set_ = set, pending_parts_ = n, set_ = 1 - set;
    return cur;
  }
  for (size_t k = 0; k < i; ++k) MergeOut(Out(set, k), Which(set, k), ctx_);
  for (size_t j = i; j < n; ++j) DropOut(Out(set, j), Which(set, j), ctx_);
  if (cur.end == ChunkEnd::kStopped) {
    cur = ParseEvents(cur.pos, cur.state, nullptr, Out(set, 0));
    MergeOut(Out(set, 0), Which(set, 0), ctx_);
  }
  return cur;
}

void FileReader::BalanceFirstPart(const std::vector<double>& seconds, double merge_seconds) {
  // Task 0 merges the window before and then parses part 0: it should end its parse earlier
  // by about the merge's time. Part 0's weight for the next window: what makes its parse plus
  // the merges last as long as the other parts' mean parse, half-way from the current one.
  // Only the speed depends on it: the parts' results are always a sequential parse's.
  double others = 0;
  for (size_t k = 1; k < seconds.size(); ++k) others += seconds[k];
  others /= static_cast<double>(seconds.size() - 1);
  if (seconds[0] <= 0 || others <= 0) return;
  const double per_weight = seconds[0] / first_share_;
  const double target = std::clamp((others - merge_seconds) / per_weight, 0.1, 1.5);
  first_share_ = 0.5 * first_share_ + 0.5 * target;
}

void FileReader::ReserveFromFirstChunk(const char* parsed_to) {
  // After the first few MB, extrapolate the event counts to the whole file and reserve once:
  // no doubling copies, no old+new peak. Reserved but untouched pages cost no RSS.
  if (reserved_) return;
  const int64_t consumed = base_ + (parsed_to - win_);
  if (consumed < (int64_t{8} << 20)) return;
  reserved_ = true;
  MergePending();  // the builder's sizes are the extrapolation's base
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
  grow(ctx_.flow_ids, 0);                    // this file's flow ids (kept for FinishFile): ~40 % of the events
  ctx_.api_correlations.ReserveFor(factor);  // the duplicate check's bits (one per id's span)
}

absl::Status FileReader::ParseEventArray() {
  ArrayState state = ArrayState::kBeforeFirst;
  for (;;) {
    ChunkResult r = ParseChunk(pos_, state);
    if (r.end == ChunkEnd::kNeedMore) ReserveFromFirstChunk(r.pos);
    if (r.end == ChunkEnd::kDone || r.end == ChunkEnd::kError) MergePending();
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
