// GPU idle gaps (METRICS.md §4), attributed by the activity that ends each gap.
#include <algorithm>
#include <mutex>
#include <utility>

#include "analyze/context.h"
#include "base/run_all.h"

namespace overlapscope::analyze {

std::string_view ToString(GapCause c) {
  switch (c) {
    case GapCause::kHostBlocked: return "host-blocked";
    case GapCause::kLaunchBound: return "launch-bound";
    case GapCause::kDependency: return "dependency";
    case GapCause::kUnknown: return "unknown";
  }
  return "?";
}

namespace {

// Per thread, the blocked intervals and the other traced API calls (calls minus blocked time) as
// interval sets, built on first use: only threads that launch host-blocked gap ends need them.
// Split may be called from several threads at once.
class HostSplitter {
 public:
  HostSplitter(const model::Trace& t, const BlockingResult& blocking)
      : t_(t),
        blocking_(blocking),
        blocked_(t.threads().size()),
        other_(t.threads().size()),
        built_(t.threads().size()) {}

  // METRICS.md §4 / gpu_idle.h HostSplit: where `thread` was during the gap [s, e) whose ending
  // activity was launched by a call starting at launch_start_ns.
  HostSplit Split(model::ThreadId thread, int64_t s, int64_t e, int64_t launch_start_ns) {
    Build(thread);
    const IntervalSet& b = blocked_[thread];
    const int64_t l = std::clamp(launch_start_ns, s, e);
    HostSplit h;
    h.blocked_ns = b.CoveredIn(s, e);
    h.launch_ns = (e - l) - b.CoveredIn(l, e);
    h.other_calls_ns = other_[thread].CoveredIn(s, l);
    h.outside_ns = (e - s) - h.blocked_ns - h.launch_ns - h.other_calls_ns;
    return h;
  }

 private:
  // Once per thread, whichever range of gaps asks first (the others wait for it): the sets are
  // the same whoever builds them.
  void Build(model::ThreadId th) {
    std::call_once(built_[th], [&] { BuildOnce(th); });
  }
  void BuildOnce(model::ThreadId th) {
    std::vector<Interval> b, calls;
    for (const BlockedInterval& x : blocking_.intervals)
      if (x.thread == th) b.push_back({x.start_ns, x.end_ns});
    for (const model::ApiCall& c : t_.api_calls())
      if (c.thread == th) calls.push_back({c.start_ns, c.end_ns});
    blocked_[th] = IntervalSet::FromUnsorted(std::move(b));
    other_[th] = IntervalSet::FromUnsorted(std::move(calls)).Subtract(blocked_[th]);
  }

  const model::Trace& t_;
  const BlockingResult& blocking_;
  std::vector<IntervalSet> blocked_, other_;
  std::vector<std::once_flag> built_;
};

void Add(HostSplit& sum, const HostSplit& h) {
  sum.blocked_ns += h.blocked_ns;
  sum.launch_ns += h.launch_ns;
  sum.other_calls_ns += h.other_calls_ns;
  sum.outside_ns += h.outside_ns;
}

// Blocked intervals per thread, in start order (disjoint per thread): the one a thread was in
// during a gap, if any.
class BlockedLookup {
 public:
  explicit BlockedLookup(const model::Trace& t, const BlockingResult& blocking)
      : blocking_(blocking), by_thread_(t.threads().size()) {
    for (size_t i = 0; i < blocking.intervals.size(); ++i)
      by_thread_[blocking.intervals[i].thread].push_back(static_cast<int32_t>(i));
  }
  // Index into blocking.intervals, or kNone.
  int32_t During(model::ThreadId th, int64_t s, int64_t e) const {
    const auto& list = by_thread_[th];
    // First interval ending after s; it blocks the gap when it starts before e.
    auto it = std::upper_bound(list.begin(), list.end(), s,
                               [&](int64_t x, int32_t i) { return x < blocking_.intervals[i].end_ns; });
    if (it != list.end() && blocking_.intervals[*it].start_ns < e) return *it;
    return model::kNone;
  }

 private:
  const BlockingResult& blocking_;
  std::vector<std::vector<int32_t>> by_thread_;
};

// Device d's busy time and span, whole or per capture window (only time inside windows counts;
// each window gets its own GPU figures too). Returns the gaps between busy intervals of at least
// min_gap_ns with the window each lies in (-1: no windows), in time order.
std::vector<std::pair<Interval, int32_t>> DeviceGaps(const Context& ctx, size_t d, DeviceIdle& di,
                                                     std::vector<WindowFigures>* windows) {
  const IntervalSet& busy = ctx.dev[d].busy;
  std::vector<std::pair<Interval, int32_t>> all_gaps;
  auto add = [&](const IntervalSet& b, int32_t w) {
    if (b.empty()) return;
    const int64_t span = b.intervals().back().end_ns - b.intervals().front().start_ns;
    di.span_ns += span;
    di.busy_ns += b.Length();
    if (w >= 0) {
      WindowFigures& f = (*windows)[w];
      f.gpu_span_ns += span, f.gpu_busy_ns += b.Length(), f.gpu_idle_ns += span - b.Length();
    }
    // Only the gaps the report counts (>= min_gap_ns), read off the busy intervals in place: a
    // busy device has many short gaps, and a list of them all cost more than the rest here.
    const std::vector<Interval>& iv = b.intervals();
    for (size_t i = 1; i < iv.size(); ++i)
      if (const Interval g{iv[i - 1].end_ns, iv[i].start_ns}; g.length() >= ctx.opt.min_gap_ns)
        all_gaps.push_back({g, w});
  };
  if (ctx.Windowed(di.process)) {
    const auto [first, last] = ctx.process_windows[di.process];
    for (int32_t w = first; w < last; ++w) add(busy.Clip(ctx.windows[w].start_ns, ctx.windows[w].end_ns), w);
  } else {
    add(busy, -1);
  }
  di.idle_ns = di.span_ns - di.busy_ns;
  return all_gaps;
}

// The cause of a gap (METRICS.md §4), from the call that launched the activity ending it: none
// in the trace (unknown); launched before the gap began (dependency: the GPU waited for other
// work); launched during it while its thread was blocked (host-blocked, with where the thread's
// time went) or not (launch-bound).
void ExplainGap(const Context& ctx, const BlockedLookup& blocked, HostSplitter& splitter, IdleGap& gap) {
  gap.iteration = ctx.iters.Of(gap.ended_by);
  gap.launch_call = ctx.LaunchOf(gap.ended_by);
  if (gap.launch_call == model::kNone) {
    gap.cause = GapCause::kUnknown;
    return;
  }
  const model::ApiCall& call = ctx.t.api_calls()[gap.launch_call];
  gap.thread = call.thread;
  if (call.start_ns < gap.start_ns) {
    gap.cause = GapCause::kDependency;
    return;
  }
  gap.blocked_interval = blocked.During(call.thread, gap.start_ns, gap.end_ns);
  gap.cause = gap.blocked_interval != model::kNone ? GapCause::kHostBlocked : GapCause::kLaunchBound;
  if (gap.cause == GapCause::kHostBlocked) {
    gap.host = splitter.Split(call.thread, gap.start_ns, gap.end_ns, call.start_ns);
  }
}

// What a range of devices found: each device's figures and gaps in device order, and the
// windows' GPU figures they add (only those members; summed into the result afterwards).
struct IdlePart {
  std::vector<DeviceIdle> idle;
  std::vector<IdleGap> gaps;
  std::vector<WindowFigures> windows;
};

// The gap [g.start, g.end) of device d with its ending activity (the first non-sync one of
// nonzero length starting at or after its end; `pos` moves forward over acts, sorted by start,
// as the gaps come in time order) and cause.
void OneGap(const Context& ctx, const BlockedLookup& blocked, HostSplitter& splitter, size_t d, const Interval& g,
            size_t& pos, IdleGap& gap) {
  auto acts = ctx.t.DeviceActivities(static_cast<model::DeviceId>(d));
  const std::vector<Interval>& spans = ctx.act_span[d];
  gap.device = static_cast<model::DeviceId>(d);
  gap.start_ns = g.start_ns;
  gap.end_ns = g.end_ns;
  while (pos < acts.size() && (spans[pos].start_ns < g.end_ns || ctx.Cls(acts[pos]) == ActivityClass::kSync ||
                               spans[pos].end_ns <= spans[pos].start_ns))
    ++pos;
  if (pos < acts.size()) gap.ended_by = acts[pos];
  ExplainGap(ctx, blocked, splitter, gap);
}

// Device d's figures and gaps (none for a device without activities), its windows' figures
// added to part.windows. The gaps are explained in ranges at once on `threads` threads (each
// range's cursor starts at the first activity starting at or after its first gap's end, where
// the one pass's cursor would be), then counted in order.
void DeviceIdleGaps(const Context& ctx, const BlockedLookup& blocked, HostSplitter& splitter, size_t d, int threads,
                    size_t min_chunk, IdlePart& part) {
  const model::Trace& t = ctx.t;
  if (t.DeviceActivities(static_cast<model::DeviceId>(d)).empty()) return;
  std::vector<WindowFigures>& windows = part.windows;
  DeviceIdle di;
  di.device = static_cast<model::DeviceId>(d);
  di.process = t.ProcessOfDevice(di.device);
  std::vector<std::pair<Interval, int32_t>> all = DeviceGaps(ctx, d, di, &windows);
  std::vector<IdleGap> found(all.size());
  const std::vector<Interval>& spans = ctx.act_span[d];
  base::ParallelFor(threads, all.size(), min_chunk, [&](size_t b, size_t e) {
    if (b >= e) return;
    const int64_t first_end = all[b].first.end_ns;
    size_t pos = static_cast<size_t>(
        std::partition_point(spans.begin(), spans.end(), [&](const Interval& x) { return x.start_ns < first_end; }) -
        spans.begin());
    for (size_t i = b; i < e; ++i) OneGap(ctx, blocked, splitter, d, all[i].first, pos, found[i]);
  });
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& [g, w] = all[i];
    const IdleGap& gap = found[i];
    ++di.gaps;
    di.gap_ns += g.length();
    if (w >= 0) ++windows[w].gaps, windows[w].gpu_gap_ns += g.length();
    di.cause_ns[static_cast<int>(gap.cause)] += g.length();
    ++di.cause_count[static_cast<int>(gap.cause)];
    if (gap.cause == GapCause::kHostBlocked) Add(di.host_blocked_split, gap.host);
    part.gaps.push_back(gap);
  }
  part.idle.push_back(di);
}

}  // namespace

// The devices are independent: ranges of them at once, each device's gaps in ranges too (one
// splitter: it builds each thread's sets once), their figures and gaps then taken in device and
// gap order and the windows' sums added, so the result is the same at any thread count.
void ComputeIdle(const Context& ctx, const BlockingResult& blocking, std::vector<DeviceIdle>* idle,
                 std::vector<IdleGap>* gaps, std::vector<WindowFigures>* windows, size_t min_chunk) {
  *windows = ctx.windows;
  const model::Trace& t = ctx.t;
  const BlockedLookup blocked(t, blocking);
  HostSplitter splitter(t, blocking);
  // Ranges of devices at once, and each device's gaps in ranges on the threads left to it.
  const int threads = std::max(ctx.opt.threads, 1);
  const int per_device =
      std::max(1, threads / static_cast<int>(std::max<size_t>(1, std::min<size_t>(threads, t.devices().size()))));
  std::vector<IdlePart> parts;
  base::ParallelAppend(threads, t.devices().size(), 1, &parts,
                       [&](size_t begin, size_t end, std::vector<IdlePart>* out) {
                         IdlePart part;
                         part.windows.resize(ctx.windows.size());
                         for (size_t d = begin; d < end; ++d)
                           DeviceIdleGaps(ctx, blocked, splitter, d, per_device, min_chunk, part);
                         out->push_back(std::move(part));
                       });
  for (IdlePart& part : parts) {
    idle->insert(idle->end(), part.idle.begin(), part.idle.end());
    gaps->insert(gaps->end(), part.gaps.begin(), part.gaps.end());
    for (size_t w = 0; w < part.windows.size(); ++w) {
      WindowFigures& f = (*windows)[w];
      const WindowFigures& p = part.windows[w];
      f.gpu_span_ns += p.gpu_span_ns, f.gpu_busy_ns += p.gpu_busy_ns, f.gpu_idle_ns += p.gpu_idle_ns;
      f.gpu_gap_ns += p.gpu_gap_ns, f.gaps += p.gaps;
    }
  }
}

void AddWaitCauses(const graph::Graph& g, std::vector<IdleGap>* gaps) {
  for (IdleGap& gap : *gaps) {
    if (gap.cause != GapCause::kDependency) continue;
    const graph::NodeId x = g.GpuNodeChecked(gap.ended_by);
    if (x == model::kNone) continue;
    graph::NodeId best = model::kNone;
    bool inferred = false;
    for (const graph::Edge& e : g.Preds(x))
      if (e.kind == graph::EdgeKind::kEventWait && (best == model::kNone || g.EndNs(e.from) > g.EndNs(best)))
        best = e.from, inferred = e.inferred;
    if (best == model::kNone) continue;
    gap.waited_for = g.Ref(best);
    gap.wait_inferred = inferred;
  }
}

}  // namespace overlapscope::analyze
