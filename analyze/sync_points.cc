// Sync points (METRICS.md §5) and the findings rules run over them (analyze/findings/).
#include <algorithm>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyze/context.h"
#include "analyze/findings/finding_rule.h"
#include "base/phase_log.h"
#include "base/run_all.h"
#include "model/bounds.h"

namespace overlapscope::analyze {

std::string_view ToString(SyncPointKind k) {
  switch (k) {
    case SyncPointKind::kStreamSync: return "stream-sync";
    case SyncPointKind::kEventSync: return "event-sync";
    case SyncPointKind::kDeviceSync: return "device-sync";
    case SyncPointKind::kSyncMemcpy: return "sync-memcpy";
    case SyncPointKind::kSyncMemset: return "sync-memset";
    case SyncPointKind::kPageableCopy: return "pageable-copy";
    case SyncPointKind::kMalloc: return "malloc";
    case SyncPointKind::kFree: return "free";
    case SyncPointKind::kStreamWaitEvent: return "stream-wait-event";
  }
  return "?";
}

namespace {

SyncPointKind PointKind(const model::Trace& t, const BlockedInterval& b) {
  switch (b.reason) {
    case BlockReason::kStreamSync: return SyncPointKind::kStreamSync;
    case BlockReason::kEventSync: return SyncPointKind::kEventSync;
    case BlockReason::kDeviceSync: return SyncPointKind::kDeviceSync;
    case BlockReason::kSyncMemcpy: return SyncPointKind::kSyncMemcpy;
    case BlockReason::kSyncMemset: return SyncPointKind::kSyncMemset;
    case BlockReason::kPageableCopy: return SyncPointKind::kPageableCopy;
    case BlockReason::kSyncRecordOnly:
      return t.syncs()[b.sync].kind == model::SyncKind::kContextSync ? SyncPointKind::kDeviceSync
                                                                     : SyncPointKind::kStreamSync;
  }
  return SyncPointKind::kStreamSync;
}

}  // namespace

SyncPoint findings::SyncPointOfBlocked(const model::Trace& t, const BlockedInterval& b) {
  SyncPoint p;
  p.start_ns = b.start_ns;
  p.end_ns = b.end_ns;
  p.kind = PointKind(t, b);
  p.process = b.process;
  p.thread = b.thread;
  p.stream = b.stream;
  p.api_call = b.api_call;
  p.sync = b.sync;
  p.name = b.call;
  p.blocked_ns = b.duration_ns();
  return p;
}

namespace {

// Explicit host waits (the blocked intervals, in their order: point i is interval i), then
// implicit ones (allocation calls that sync the device), then stream -> stream waits.
// `runs` gets the offset where each of the four lists starts (Finish sorts them one by one and
// merges them).
void AddPoints(const model::Trace& t, const BlockingResult& blocking, int threads, std::vector<SyncPoint>* points,
               std::vector<size_t>* runs) {
  // Each list is made in ranges at once (base::ParallelAppend: the same list at any count).
  constexpr size_t kChunk = 16384;
  runs->push_back(0);
  base::ParallelAppend(threads, blocking.intervals.size(), kChunk, points,
                       [&](size_t lo, size_t hi, std::vector<SyncPoint>* out) {
                         for (size_t i = lo; i < hi; ++i)
                           out->push_back(findings::SyncPointOfBlocked(t, blocking.intervals[i]));
                       });
  runs->push_back(points->size());
  // Implicit syncs: allocation and release calls that are not stream-ordered.
  base::ParallelAppend(
      threads, t.api_calls().size(), kChunk, points, [&](size_t lo, size_t hi, std::vector<SyncPoint>* out) {
        for (size_t i = lo; i < hi; ++i) {
          const model::ApiCall& a = t.api_calls()[i];
          if (a.semantic != model::ApiSemantic::kAlloc && a.semantic != model::ApiSemantic::kFree) continue;
          SyncPoint p;
          p.start_ns = a.start_ns;
          p.end_ns = a.end_ns;
          p.kind = a.semantic == model::ApiSemantic::kAlloc ? SyncPointKind::kMalloc : SyncPointKind::kFree;
          p.process = t.ProcessOfThread(a.thread);
          p.thread = a.thread;
          p.api_call = static_cast<int32_t>(i);
          p.name = a.name;
          p.blocked_ns = a.end_ns - a.start_ns;
          out->push_back(p);
        }
      });
  // Processes whose trace records stream waits (cuda_sync "Stream Wait Event", our captures);
  // each wait's call looked up by correlation.
  runs->push_back(points->size());
  base::ParallelAppend(threads, t.syncs().size(), kChunk / 4, points,
                       [&](size_t lo, size_t hi, std::vector<SyncPoint>* out) {
                         for (size_t i = lo; i < hi; ++i) {
                           const model::Sync& s = t.syncs()[i];
                           if (s.kind != model::SyncKind::kStreamWaitEvent) continue;
                           SyncPoint p;
                           p.start_ns = s.start_ns;
                           p.end_ns = s.end_ns;
                           p.kind = SyncPointKind::kStreamWaitEvent;
                           p.process = s.device != model::kNone ? t.ProcessOfDevice(s.device) : model::kNone;
                           p.stream = s.stream;
                           p.wait_on_stream = s.wait_on_stream;
                           p.sync = static_cast<int32_t>(i);
                           p.name = s.name;
                           p.thread = s.thread;
                           if (p.process != model::kNone && s.correlation_id != model::kNoCorrelation) {
                             p.api_call = t.ApiCallIndexByCorrelation(p.process, s.correlation_id);
                             if (p.api_call != model::kNone && p.thread == model::kNone)
                               p.thread = t.api_calls()[p.api_call].thread;
                           }
                           out->push_back(p);
                         }
                       });
  std::vector<uint8_t> records_waits(t.processes().size(), 0);
  for (size_t i = runs->back(); i < points->size(); ++i)
    if ((*points)[i].process != model::kNone) records_waits[(*points)[i].process] = 1;
  // Stream waits known only from their call, in processes whose trace records no waits at all
  // (hipStreamWaitEvent: roctracer writes no sync rows; cudaStreamWaitEvent in Kineto traces
  // without cuda_sync rows, PyTorch < 2.1 or the sync activity off): the streams are not
  // recorded (HIP's "stream" arg is a handle). Where waits are recorded, a call whose record is
  // missing is left out: the trace itself shows no wait for it.
  runs->push_back(points->size());
  base::ParallelAppend(
      threads, t.api_calls().size(), kChunk, points, [&](size_t lo, size_t hi, std::vector<SyncPoint>* out) {
        for (size_t i = lo; i < hi; ++i) {
          const model::ApiCall& a = t.api_calls()[i];
          if (a.semantic != model::ApiSemantic::kStreamWait || records_waits[t.ProcessOfThread(a.thread)]) continue;
          SyncPoint p;
          p.start_ns = a.start_ns;
          p.end_ns = a.end_ns;
          p.kind = SyncPointKind::kStreamWaitEvent;
          p.process = t.ProcessOfThread(a.thread);
          p.thread = a.thread;
          p.api_call = static_cast<int32_t>(i);
          p.name = a.name;
          out->push_back(p);
        }
      });
}

// Points in time order, ties in their order here: each list (mostly in time order already)
// sorted stably, then merged stably in list order: what one stable sort of them all gives.
void SortPoints(const std::vector<size_t>& runs, std::vector<SyncPoint>* points) {
  auto by_start = [](const SyncPoint& a, const SyncPoint& b) { return a.start_ns < b.start_ns; };
  std::vector<SyncPoint>& v = *points;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto b = v.begin() + static_cast<std::ptrdiff_t>(runs[r]);
    const auto e = r + 1 < runs.size() ? v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]) : v.end();
    if (!std::is_sorted(b, e, by_start)) std::stable_sort(b, e, by_start);
    if (r > 0) std::inplace_merge(v.begin(), b, e, by_start);
  }
}

// Findings in time order (stable: rules in registry order on ties), each sync point pointing at
// the finding about it, points in time order, and the per-kind totals.
void Finish(std::vector<std::vector<findings::Emitted>> by_rule, const std::vector<size_t>& runs, int threads,
            SyncResult* out) {
  // The order a stable sort by time of the rules' lists joined in rule order gives: sorted
  // (time, place in that join) keys, then each finding moved once.
  struct Key {
    int64_t time_ns;
    uint32_t rule, index;
  };
  std::vector<Key> keys;
  for (size_t r = 0; r < by_rule.size(); ++r)
    for (size_t i = 0; i < by_rule[r].size(); ++i)
      keys.push_back({by_rule[r][i].finding.time_ns, static_cast<uint32_t>(r), static_cast<uint32_t>(i)});
  auto before = [](const Key& a, const Key& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.rule != b.rule ? a.rule < b.rule : a.index < b.index;
  };
  if (!std::is_sorted(keys.begin(), keys.end(), before)) std::sort(keys.begin(), keys.end(), before);
  // The findings moved in that order beside the points: each point given the place of the
  // finding about it, then put in time order (each side writes only its own; a point reads only
  // its finding's blocked_interval, which the move leaves alone).
  base::RunAll(threads, {[&] {
                           out->finding_count.assign(FindingKinds().size(), 0);
                           out->finding_cost_ns.assign(FindingKinds().size(), 0);
                           out->findings.reserve(keys.size());
                           for (const Key& key : keys) {
                             findings::Emitted& e = by_rule[key.rule][key.index];
                             const int32_t k = FindingKindIndex(e.finding.kind);
                             if (k >= 0) {
                               ++out->finding_count[k];
                               out->finding_cost_ns[k] = model::SatAdd(out->finding_cost_ns[k], e.finding.cost_ns);
                             }
                             out->findings.push_back(std::move(e.finding));
                           }
                         },
                         [&] {
                           // Point i is blocked interval i (AddPoints), until the points are sorted.
                           for (size_t f = 0; f < keys.size(); ++f)
                             if (const int32_t bi = by_rule[keys[f].rule][keys[f].index].blocked_interval;
                                 bi != model::kNone)
                               out->points[bi].finding = static_cast<int32_t>(f);
                           SortPoints(runs, &out->points);
                         }});
}

}  // namespace

void AddSyncPoints(const Context& ctx, const BlockingResult& blocking, SyncResult* out, std::vector<size_t>* runs) {
  base::PhaseSpan s_("sp add points");
  AddPoints(ctx.t, blocking, ctx.opt.threads, &out->points, runs);
}

void FindSyncFindings(const Context& ctx, const BlockingResult& blocking, const std::vector<DeviceOverlap>& overlap,
                      const graph::Graph* g, const std::vector<size_t>& runs, SyncResult* out) {
  const model::Trace& t = ctx.t;
  const std::vector<SyncPoint>& points = out->points;  // not resized while the rules read them
  findings::FindingInputs in{t,
                             ctx.iters,
                             blocking,
                             overlap,
                             ctx.launches_by_thread,
                             ctx.stream_compute_ns,
                             points,
                             {},
                             ctx.opt.mark_message_times};
  in.graph = g;
  in.threads = ctx.opt.threads;
  in.blocked_by_thread.resize(t.threads().size());
  for (size_t i = 0; i < blocking.intervals.size(); ++i)
    in.blocked_by_thread[blocking.intervals[i].thread].push_back(static_cast<int32_t>(i));
  // The rules only read the inputs: each into its own list, at once, joined in rule order (the
  // order of one pass over the rules).
  const auto& rules = findings::Rules();
  std::vector<std::vector<findings::Emitted>> by_rule(rules.size());
  std::vector<std::function<void()>> tasks;
  for (size_t i = 0; i < rules.size(); ++i) tasks.emplace_back([&, i] { rules[i]->Find(in, &by_rule[i]); });
  {
    base::PhaseSpan s_("sp rules");
    base::RunAll(ctx.opt.threads, tasks);
  }
  base::PhaseSpan s_("sp finish");
  Finish(std::move(by_rule), runs, ctx.opt.threads, out);
}

void ComputeSyncPoints(const Context& ctx, const BlockingResult& blocking, const std::vector<DeviceOverlap>& overlap,
                       const graph::Graph* g, SyncResult* out) {
  std::vector<size_t> runs;
  AddSyncPoints(ctx, blocking, out, &runs);
  FindSyncFindings(ctx, blocking, overlap, g, runs, out);
}

void IndexWaitSources(const graph::Graph& g, WaitSourceIndex* ix, int threads) {
  // The two maps at once (each keeps the first edge per key).
  base::RunAll(threads, {[&] {
                           for (const graph::WaitEdge& w : g.waits())
                             if (w.sync != model::kNone) ix->by_sync.emplace(w.sync, &w);
                         },
                         [&] {
                           for (const graph::WaitEdge& w : g.waits())
                             if (w.api_call != model::kNone) ix->by_call.emplace(w.api_call, &w);
                         }});
}

void AddWaitSources(const graph::Graph& g, SyncResult* out, int threads) {
  if (g.waits().empty()) return;
  WaitSourceIndex ix;
  IndexWaitSources(g, &ix, threads);
  ApplyWaitSources(g, ix, out, threads);
}

void ApplyWaitSources(const graph::Graph& g, const WaitSourceIndex& ix, SyncResult* out, int threads) {
  if (g.waits().empty()) return;
  const auto& by_sync = ix.by_sync;
  const auto& by_call = ix.by_call;
  // The points in ranges (each writes only itself).
  base::ParallelFor(threads, out->points.size(), 8192, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      SyncPoint& p = out->points[i];
      if (p.kind != SyncPointKind::kStreamWaitEvent) continue;
      const graph::WaitEdge* w = nullptr;
      if (auto it = by_sync.find(p.sync); p.sync != model::kNone && it != by_sync.end()) w = it->second;
      if (auto it = by_call.find(p.api_call); w == nullptr && p.api_call != model::kNone && it != by_call.end())
        w = it->second;
      if (w == nullptr) continue;
      p.wait_source = g.Ref(w->from);
      p.waiter = g.Ref(w->to);
      p.wait_inferred = w->inferred;
      if (p.stream == model::kNone) p.stream = g.Stream(w->to);
      if (p.wait_on_stream == model::kNone) p.wait_on_stream = g.Stream(w->from);
    }
  });
}

}  // namespace overlapscope::analyze
