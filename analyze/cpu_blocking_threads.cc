// CPU blocking per thread (METRICS.md §3): active span, blocked time and call sites of each
// host thread, over the blocked intervals that ComputeBlocking found (cpu_blocking.cc).
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/context.h"
#include "base/run_all.h"
#include "model/bounds.h"

namespace overlapscope::analyze {
namespace {

// Active spans of the threads of processes with capture windows: per window, first to last
// call or range inside it, summed (the time between windows was not recorded). -1 for threads
// of processes without windows.
std::vector<int64_t> WindowedSpans(const Context& ctx, const std::vector<uint8_t>& final_call) {
  const model::Trace& t = ctx.t;
  std::vector<int64_t> span(t.threads().size(), -1);
  if (ctx.windows.empty()) return span;
  absl::flat_hash_map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> lohi;  // (thread, window)
  auto add = [&](model::ThreadId th, int64_t s, int64_t e) {
    const model::ProcessId p = t.ProcessOfThread(th);
    if (!ctx.Windowed(p)) return;
    for (int32_t w = ctx.process_windows[p].first; w < ctx.process_windows[p].second; ++w) {
      const WindowFigures& f = ctx.windows[w];
      const int64_t cs = std::max(s, f.start_ns), ce = std::min(e, f.end_ns);
      if (ce < cs || (ce == cs && (s != e || s >= f.end_ns))) continue;
      auto [it, fresh] = lohi.try_emplace({th, w}, cs, ce);
      if (!fresh) it->second = {std::min(it->second.first, cs), std::max(it->second.second, ce)};
    }
  };
  for (size_t i = 0; i < t.api_calls().size(); ++i)
    if (!final_call[i]) add(t.api_calls()[i].thread, t.api_calls()[i].start_ns, t.api_calls()[i].end_ns);
  for (const auto& r : t.ranges()) add(r.thread, r.start_ns, r.end_ns);
  for (size_t th = 0; th < span.size(); ++th)
    if (ctx.Windowed(t.ProcessOfThread(static_cast<model::ThreadId>(th)))) span[th] = 0;
  for (const auto& [key, v] : lohi) span[key.first] += v.second - v.first;
  return span;
}

// Per thread, the first start and last end of its calls (final syncs excluded): in ranges of
// the calls at once, each range its own lows and highs, then the least and greatest of the
// ranges' (the same at any thread count). INT64_MAX / INT64_MIN: a thread without calls.
void CallSpans(const Context& ctx, const std::vector<uint8_t>& final_call, size_t min_chunk, std::vector<int64_t>* lo,
               std::vector<int64_t>* hi) {
  const auto& calls = ctx.t.api_calls();
  const size_t nt = ctx.t.threads().size();
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> parts;
  base::ParallelAppend(
      ctx.opt.threads, calls.size(), min_chunk, &parts,
      [&](size_t begin, size_t end, std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>* out) {
        std::vector<int64_t> l(nt, INT64_MAX), h(nt, INT64_MIN);
        for (size_t i = begin; i < end; ++i) {
          const auto& a = calls[i];
          if (final_call[i]) continue;
          l[a.thread] = std::min(l[a.thread], a.start_ns);
          h[a.thread] = std::max(h[a.thread], a.end_ns);
        }
        out->emplace_back(std::move(l), std::move(h));
      });
  lo->assign(nt, INT64_MAX), hi->assign(nt, INT64_MIN);
  for (const auto& [l, h] : parts)
    for (size_t th = 0; th < nt; ++th) (*lo)[th] = std::min((*lo)[th], l[th]), (*hi)[th] = std::max((*hi)[th], h[th]);
}

}  // namespace

// Per thread: active span, blocked time (the intervals are disjoint per thread), call sites.
// Final syncs are kept out of all three: every Kineto trace ends with one.
void ComputeThreadBlocking(const Context& ctx, BlockingResult* out, size_t min_chunk) {
  const model::Trace& t = ctx.t;
  const std::vector<BlockedInterval>& v = out->intervals;
  const auto& calls = t.api_calls();
  const size_t nt = t.threads().size();
  std::vector<uint8_t> final_call(calls.size(), 0);
  for (const BlockedInterval& b : v)
    if (b.final_sync && b.api_call != model::kNone) final_call[b.api_call] = 1;
  std::vector<int64_t> lo, hi;
  CallSpans(ctx, final_call, min_chunk, &lo, &hi);
  for (const auto& r : t.ranges()) {
    lo[r.thread] = std::min(lo[r.thread], r.start_ns);
    hi[r.thread] = std::max(hi[r.thread], r.end_ns);
  }
  const std::vector<int64_t> windowed_span = WindowedSpans(ctx, final_call);
  std::vector<ThreadBlocking> th(nt);
  std::vector<absl::flat_hash_map<model::StringId, CallSite>> sites(nt);
  for (const BlockedInterval& b : v) {
    if (b.final_sync) {
      th[b.thread].final_sync_ns = model::SatAdd(th[b.thread].final_sync_ns, b.duration_ns());
      continue;
    }
    th[b.thread].blocked_ns += b.duration_ns();
    CallSite& cs = sites[b.thread][b.call];
    cs.call = b.call;
    ++cs.count;
    cs.total_ns += b.duration_ns();
    cs.max_ns = std::max(cs.max_ns, b.duration_ns());
  }
  for (size_t i = 0; i < nt; ++i) {
    if (lo[i] == INT64_MAX && th[i].blocked_ns == 0 && th[i].final_sync_ns == 0) continue;
    ThreadBlocking& x = th[i];
    x.thread = static_cast<model::ThreadId>(i);
    x.process = t.threads()[i].process;
    x.active_span_ns = windowed_span[i] >= 0 ? windowed_span[i] : lo[i] == INT64_MAX ? 0 : hi[i] - lo[i];
    if (x.active_span_ns > 0)
      x.blocked_share = std::min(1.0, static_cast<double>(x.blocked_ns) / static_cast<double>(x.active_span_ns));
    for (auto& [name, cs] : sites[i]) x.top_calls.push_back(cs);
    std::sort(x.top_calls.begin(), x.top_calls.end(),
              [](const CallSite& a, const CallSite& b) { return a.total_ns > b.total_ns; });
    if (x.top_calls.size() > ctx.opt.top_n) x.top_calls.resize(ctx.opt.top_n);
    out->threads.push_back(std::move(x));
  }
}

}  // namespace overlapscope::analyze
