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
  runs->push_back(0);
  for (const BlockedInterval& b : blocking.intervals) points->push_back(findings::SyncPointOfBlocked(t, b));
  runs->push_back(points->size());
  // Implicit syncs: allocation and release calls that are not stream-ordered.
  for (size_t i = 0; i < t.api_calls().size(); ++i) {
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
    points->push_back(p);
  }
  // Processes whose trace records stream waits (cuda_sync "Stream Wait Event", our captures).
  // Each wait's call is looked up by correlation in ranges of waits at once (the lookups only
  // read the trace); the points are made in order after.
  std::vector<int32_t> call_of(t.syncs().size(), model::kNone);
  base::ParallelFor(threads, t.syncs().size(), 4096, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      const model::Sync& s = t.syncs()[i];
      if (s.kind != model::SyncKind::kStreamWaitEvent || s.device == model::kNone ||
          s.correlation_id == model::kNoCorrelation)
        continue;
      const model::ProcessId p = t.ProcessOfDevice(s.device);
      if (p != model::kNone) call_of[i] = t.ApiCallIndexByCorrelation(p, s.correlation_id);
    }
  });
  std::vector<uint8_t> records_waits(t.processes().size(), 0);
  runs->push_back(points->size());
  for (size_t i = 0; i < t.syncs().size(); ++i) {
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
      p.api_call = call_of[i];
      if (p.api_call != model::kNone && p.thread == model::kNone) p.thread = t.api_calls()[p.api_call].thread;
    }
    points->push_back(p);
    if (p.process != model::kNone) records_waits[p.process] = 1;
  }
  // Stream waits known only from their call, in processes whose trace records no waits at all
  // (hipStreamWaitEvent: roctracer writes no sync rows; cudaStreamWaitEvent in Kineto traces
  // without cuda_sync rows, PyTorch < 2.1 or the sync activity off): the streams are not
  // recorded (HIP's "stream" arg is a handle). Where waits are recorded, a call whose record is
  // missing is left out: the trace itself shows no wait for it.
  runs->push_back(points->size());
  for (size_t i = 0; i < t.api_calls().size(); ++i) {
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
    points->push_back(p);
  }
}

// Findings in time order (stable: rules in registry order on ties), each sync point pointing at
// the finding about it, points in time order, and the per-kind totals.
void Finish(std::vector<findings::Emitted> emitted, const std::vector<size_t>& runs, SyncResult* out) {
  std::stable_sort(emitted.begin(), emitted.end(), [](const findings::Emitted& a, const findings::Emitted& b) {
    return a.finding.time_ns < b.finding.time_ns;
  });
  out->finding_count.assign(FindingKinds().size(), 0);
  out->finding_cost_ns.assign(FindingKinds().size(), 0);
  for (findings::Emitted& e : emitted) {
    // Point i is blocked interval i (AddPoints), until the points are sorted below.
    if (e.blocked_interval != model::kNone)
      out->points[e.blocked_interval].finding = static_cast<int32_t>(out->findings.size());
    const int32_t k = FindingKindIndex(e.finding.kind);
    if (k >= 0) {
      ++out->finding_count[k];
      out->finding_cost_ns[k] = model::SatAdd(out->finding_cost_ns[k], e.finding.cost_ns);
    }
    out->findings.push_back(std::move(e.finding));
  }
  // Points in time order, ties in their order here: each list (mostly in time order already)
  // sorted stably, then merged stably in list order: what one stable sort of them all gives.
  auto by_start = [](const SyncPoint& a, const SyncPoint& b) { return a.start_ns < b.start_ns; };
  std::vector<SyncPoint>& v = out->points;
  for (size_t r = 0; r < runs.size(); ++r) {
    const auto b = v.begin() + static_cast<std::ptrdiff_t>(runs[r]);
    const auto e = r + 1 < runs.size() ? v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]) : v.end();
    if (!std::is_sorted(b, e, by_start)) std::stable_sort(b, e, by_start);
    if (r > 0) std::inplace_merge(v.begin(), b, e, by_start);
  }
}

}  // namespace

void ComputeSyncPoints(const Context& ctx, const BlockingResult& blocking, const std::vector<DeviceOverlap>& overlap,
                       const graph::Graph* g, SyncResult* out) {
  const model::Trace& t = ctx.t;
  std::vector<size_t> runs;
  {
    base::PhaseSpan s_("sp add points");
    AddPoints(t, blocking, ctx.opt.threads, &out->points, &runs);
  }
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
  base::RunAll(ctx.opt.threads, tasks);
  std::vector<findings::Emitted> emitted;
  for (std::vector<findings::Emitted>& v : by_rule)
    for (findings::Emitted& e : v) emitted.push_back(std::move(e));
  base::PhaseSpan s_("sp finish");
  Finish(std::move(emitted), runs, out);
}

void AddWaitSources(const graph::Graph& g, SyncResult* out) {
  if (g.waits().empty()) return;
  absl::flat_hash_map<int32_t, const graph::WaitEdge*> by_sync, by_call;
  for (const graph::WaitEdge& w : g.waits()) {
    if (w.sync != model::kNone) by_sync.emplace(w.sync, &w);
    if (w.api_call != model::kNone) by_call.emplace(w.api_call, &w);
  }
  for (SyncPoint& p : out->points) {
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
}

}  // namespace overlapscope::analyze
