// Sync points and findings (METRICS.md §5).
#include <algorithm>

#include "absl/strings/str_format.h"
#include "analyze/context.h"
#include "analyze/strings.h"

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

std::string_view ToString(FindingKind k) {
  switch (k) {
    case FindingKind::kPageableAsyncCopy: return "pageable-async-copy";
    case FindingKind::kUnsynchronizedD2H: return "unsynchronized-d2h";
    case FindingKind::kBlockingD2HBeforeIndependentWork: return "blocking-d2h-before-independent-work";
    case FindingKind::kCollectiveOnComputeStream: return "collective-on-compute-stream";
    case FindingKind::kDeviceWideSyncInLoop: return "device-wide-sync-in-loop";
  }
  return "?";
}

namespace {

// A finding about one blocked host interval: when, where, which call, and its cost (the time
// the host was blocked). Callers add the message and the advice.
Finding FindingOfBlocked(FindingKind kind, const BlockedInterval& b) {
  Finding fd;
  fd.kind = kind;
  fd.time_ns = b.start_ns;
  fd.end_ns = b.end_ns;
  fd.process = b.process;
  fd.thread = b.thread;
  fd.stream = b.stream;
  fd.call = b.call;
  fd.api_call = b.api_call;
  fd.iteration = b.iteration;
  fd.cost_ns = b.duration_ns();
  return fd;
}

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

bool IsDeviceWide(const BlockedInterval& b, const SyncPointKind k) { return k == SyncPointKind::kDeviceSync; }

struct Fmt {
  const model::Trace& t;
  std::string Ms(int64_t ns) const { return absl::StrFormat("+%.3f ms", static_cast<double>(ns - t.start_ns()) / 1e6); }
  std::string Us(int64_t ns) const { return absl::StrFormat("%.1f µs", static_cast<double>(ns) / 1e3); }
  std::string Thread(model::ThreadId th) const {
    if (th == model::kNone) return "thread ?";
    return absl::StrFormat("thread %d", t.threads()[th].tid);
  }
  std::string Stream(model::StreamId s) const {
    if (s == model::kNone) return "stream ?";
    return absl::StrFormat("stream %d", t.streams()[s].native_id);
  }
};

}  // namespace

void ComputeSyncPoints(const Context& ctx, const BlockingResult& blocking, const std::vector<DeviceOverlap>& overlap,
                       SyncResult* out) {
  const model::Trace& t = ctx.t;
  Fmt f{t};
  // The profiler's own / the program's final device sync: no GPU work is launched after it.
  auto trailing = [&](const BlockedInterval& b) { return b.final_sync; };
  auto iteration_end = [&](int32_t it) { return it == model::kNone ? INT64_MAX : ctx.iters.iterations[it].end_ns; };
  auto add_finding = [&](Finding fd) {
    out->findings.push_back(std::move(fd));
    return static_cast<int32_t>(out->findings.size() - 1);
  };

  // Points from blocked intervals; remember their finding slots.
  std::vector<int32_t> point_of_blocked(blocking.intervals.size(), model::kNone);
  for (size_t i = 0; i < blocking.intervals.size(); ++i) {
    const BlockedInterval& b = blocking.intervals[i];
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
    point_of_blocked[i] = static_cast<int32_t>(out->points.size());
    out->points.push_back(p);
  }
  // 0 other, 1 malloc, 2 free; per distinct name.
  std::vector<int8_t> alloc_kind(t.strings().size(), -1);
  for (size_t i = 0; i < t.api_calls().size(); ++i) {
    const model::ApiCall& a = t.api_calls()[i];
    int8_t& ak = alloc_kind[a.name];
    if (ak < 0) {
      std::string_view n = t.str(a.name);
      ak = IsMallocCall(n) ? 1 : IsFreeCall(n) ? 2 : 0;
    }
    if (ak == 0) continue;
    bool m = ak == 1;
    SyncPoint p;
    p.start_ns = a.start_ns;
    p.end_ns = a.end_ns;
    p.kind = m ? SyncPointKind::kMalloc : SyncPointKind::kFree;
    p.process = t.ProcessOfThread(a.thread);
    p.thread = a.thread;
    p.api_call = static_cast<int32_t>(i);
    p.name = a.name;
    p.blocked_ns = a.end_ns - a.start_ns;
    out->points.push_back(p);
  }
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
      p.api_call = t.ApiCallIndexByCorrelation(p.process, s.correlation_id);
      if (p.api_call != model::kNone && p.thread == model::kNone) p.thread = t.api_calls()[p.api_call].thread;
    }
    out->points.push_back(p);
  }

  // Blocked intervals per thread, in start order.
  std::vector<std::vector<int32_t>> blocked_by_thread(t.threads().size());
  for (size_t i = 0; i < blocking.intervals.size(); ++i)
    blocked_by_thread[blocking.intervals[i].thread].push_back(static_cast<int32_t>(i));

  // 1. pageable-async-copy.
  for (size_t i = 0; i < blocking.intervals.size(); ++i) {
    const BlockedInterval& b = blocking.intervals[i];
    if (b.reason != BlockReason::kPageableCopy) continue;
    Finding fd = FindingOfBlocked(FindingKind::kPageableAsyncCopy, b);
    fd.message = absl::StrFormat("%s at %s on %s (%s) copies pageable host memory: the host blocked %s", t.str(b.call),
                                 f.Ms(b.start_ns), f.Thread(b.thread), f.Stream(b.stream), f.Us(fd.cost_ns));
    fd.advice = "use pinned host memory (cudaMallocHost / tensor.pin_memory()) so the copy runs asynchronously";
    out->points[point_of_blocked[i]].finding = add_finding(std::move(fd));
  }

  // 2. unsynchronized-d2h: an async D2H copy into pinned memory with no later covering sync on
  // its thread before its iteration ends (or, outside iterations, before the final sync).
  for (size_t i = 0; i < t.memcpys().size(); ++i) {
    const model::Memcpy& m = t.memcpys()[i];
    if (!IsDtoH(t, m) || !IsPinnedDst(t, m) || IsPageable(t, m)) continue;
    int32_t call = ctx.memcpy_launch[i];
    if (call == model::kNone) continue;
    const model::ApiCall& a = t.api_calls()[call];
    if (m.is_async == 0 || (m.is_async < 0 && !Contains(t.str(a.name), "Async"))) continue;
    int32_t it = IterationAt(ctx.iters, t.ProcessOfThread(a.thread), a.start_ns);
    int64_t deadline = iteration_end(it);
    bool covered = false;
    const auto& list = blocked_by_thread[a.thread];
    auto pos = std::lower_bound(list.begin(), list.end(), a.end_ns,
                                [&](int32_t x, int64_t v) { return blocking.intervals[x].start_ns < v; });
    for (; pos != list.end() && blocking.intervals[*pos].start_ns < deadline; ++pos) {
      const BlockedInterval& b = blocking.intervals[*pos];
      SyncPointKind k = PointKind(t, b);
      if (k == SyncPointKind::kEventSync) covered = true;
      if (k == SyncPointKind::kStreamSync && (b.stream == model::kNone || b.stream == m.stream)) covered = true;
      if (k == SyncPointKind::kDeviceSync && !trailing(b)) covered = true;
      if (covered) break;
    }
    if (covered) continue;
    Finding fd;
    fd.kind = FindingKind::kUnsynchronizedD2H;
    fd.time_ns = a.start_ns;
    fd.end_ns = m.end_ns;
    fd.process = t.ProcessOfThread(a.thread);
    fd.thread = a.thread;
    fd.stream = m.stream;
    fd.call = a.name;
    fd.api_call = call;
    fd.iteration = it;
    fd.message = absl::StrFormat(
        "%s at %s on %s (%s): device-to-host copy of %d bytes into pinned memory with no later event, stream or "
        "device synchronization on that thread%s: the host may read stale data",
        t.str(a.name), f.Ms(a.start_ns), f.Thread(a.thread), f.Stream(m.stream), m.bytes,
        it == model::kNone ? "" : " in its iteration");
    fd.advice =
        "record an event after the copy and call event.synchronize() (cudaEventSynchronize) before reading "
        "the buffer";
    add_finding(std::move(fd));
  }

  // 3. blocking-d2h-before-independent-work: the host waited for a D2H copy it had just
  // launched, then launched more GPU work in the same iteration. The trace cannot show data
  // dependence; work launched right after the wait is the candidate to launch before it.
  for (size_t i = 0; i < blocking.intervals.size(); ++i) {
    const BlockedInterval& b = blocking.intervals[i];
    SyncPointKind k = PointKind(t, b);
    if (k == SyncPointKind::kDeviceSync && trailing(b)) continue;
    const auto& launches = ctx.launches_by_thread[b.thread];
    bool d2h = false;
    int64_t bytes = -1;
    if (b.reason == BlockReason::kSyncMemcpy || b.reason == BlockReason::kPageableCopy) {
      if (b.released_by && b.released_by->kind == model::GpuKind::kMemcpy &&
          IsDtoH(t, t.memcpys()[b.released_by->index])) {
        d2h = true;
        bytes = t.memcpys()[b.released_by->index].bytes;
      }
    } else if (k == SyncPointKind::kStreamSync || k == SyncPointKind::kEventSync || k == SyncPointKind::kDeviceSync) {
      auto pos = std::lower_bound(launches.begin(), launches.end(), b.start_ns,
                                  [&](int32_t x, int64_t v) { return t.api_calls()[x].start_ns < v; });
      if (pos != launches.begin()) {
        const model::ApiCall& last = t.api_calls()[*(pos - 1)];
        for (model::GpuRef r : t.GpuByCorrelation(b.process, last.correlation_id)) {
          if (r.kind == model::GpuKind::kMemcpy && IsDtoH(t, t.memcpys()[r.index]) &&
              (b.stream == model::kNone || t.StreamOf(r) == b.stream)) {
            d2h = true;
            bytes = t.memcpys()[r.index].bytes;
          }
        }
      }
    }
    if (!d2h) continue;
    int64_t deadline = iteration_end(b.iteration);
    auto pos = std::lower_bound(launches.begin(), launches.end(), b.end_ns,
                                [&](int32_t x, int64_t v) { return t.api_calls()[x].start_ns < v; });
    int64_t after = 0, after_gpu_ns = 0;
    for (; pos != launches.end() && t.api_calls()[*pos].start_ns < deadline; ++pos) {
      ++after;
      for (model::GpuRef r : t.GpuByCorrelation(b.process, t.api_calls()[*pos].correlation_id))
        after_gpu_ns += t.EndNs(r) - t.StartNs(r);
    }
    if (after == 0) continue;
    Finding fd = FindingOfBlocked(FindingKind::kBlockingD2HBeforeIndependentWork, b);
    fd.message = absl::StrFormat(
        "%s at %s on %s blocked %s waiting for a device-to-host copy (%d bytes); afterwards the thread launched "
        "%d more GPU operations (%s of GPU time)%s",
        t.str(b.call), f.Ms(b.start_ns), f.Thread(b.thread), f.Us(fd.cost_ns), bytes, after, f.Us(after_gpu_ns),
        b.iteration == model::kNone ? "" : " in the same iteration");
    fd.advice =
        "if that work does not need the copied value, launch it before waiting: copy with "
        "non_blocking=True, record an event, and synchronize on the event just before the value is used";
    out->points[point_of_blocked[i]].finding = add_finding(std::move(fd));
  }

  // 4. collective-on-compute-stream: streams carrying >= 10% of the device's compute time.
  const std::vector<int64_t>& stream_compute = ctx.stream_compute_ns;
  for (const DeviceOverlap& dv : overlap) {
    int64_t device_compute = 0;
    for (size_t s = 0; s < t.streams().size(); ++s)
      if (t.streams()[s].device == dv.device) device_compute += stream_compute[s];
    if (device_compute <= 0) continue;
    for (const CollectiveOverlap& co : dv.collectives) {
      if (co.stream == model::kNone || stream_compute[co.stream] * 10 < device_compute) continue;
      Finding fd;
      fd.kind = FindingKind::kCollectiveOnComputeStream;
      fd.time_ns = co.start_ns;
      fd.end_ns = co.end_ns;
      fd.process = dv.process;
      fd.stream = co.stream;
      fd.call = co.name;
      fd.api_call = ctx.LaunchOf(co.first_activity);
      if (fd.api_call != model::kNone) fd.thread = t.api_calls()[fd.api_call].thread;
      fd.iteration = ctx.iters.Of(co.first_activity);
      fd.cost_ns = co.own_ns - co.hidden_ns;
      fd.message = absl::StrFormat(
          "%s at %s runs on %s, which also runs %.0f%% of the device's compute: it cannot overlap with it (%s "
          "exposed)",
          t.str(co.name), f.Ms(co.start_ns), f.Stream(co.stream),
          100.0 * static_cast<double>(stream_compute[co.stream]) / static_cast<double>(device_compute),
          f.Us(fd.cost_ns));
      fd.advice =
          "issue the collective asynchronously on its own stream (async_op=True, wait() just before the "
          "result is used) and give the compute independent work to do meanwhile";
      add_finding(std::move(fd));
    }
  }

  // 5. device-wide-sync-in-loop: a non-final device sync inside every iteration of a process.
  {
    const auto& its = ctx.iters.iterations;
    std::vector<int64_t> iter_count(t.processes().size(), 0);
    for (const Iteration& it : its) ++iter_count[it.process];
    std::vector<uint8_t> has_sync(its.size(), 0);
    std::vector<int32_t> candidates;
    for (size_t i = 0; i < blocking.intervals.size(); ++i) {
      const BlockedInterval& b = blocking.intervals[i];
      if (!IsDeviceWide(b, PointKind(t, b)) || trailing(b) || b.iteration == model::kNone) continue;
      has_sync[b.iteration] = 1;
      candidates.push_back(static_cast<int32_t>(i));
    }
    std::vector<int64_t> with_sync(t.processes().size(), 0);
    for (size_t i = 0; i < its.size(); ++i) with_sync[its[i].process] += has_sync[i];
    for (int32_t i : candidates) {
      const BlockedInterval& b = blocking.intervals[i];
      if (iter_count[b.process] < 2 || with_sync[b.process] != iter_count[b.process]) continue;
      Finding fd = FindingOfBlocked(FindingKind::kDeviceWideSyncInLoop, b);
      fd.stream = model::kNone;  // a device-wide sync waits on no single stream
      fd.message = absl::StrFormat(
          "%s at %s on %s (iteration %d) waits for every stream of the device, in each of "
          "the %d iterations; blocked %s",
          t.str(b.call), f.Ms(b.start_ns), f.Thread(b.thread), its[b.iteration].number, iter_count[b.process],
          f.Us(fd.cost_ns));
      fd.advice = "synchronize only what the host needs (an event or one stream), or drop the sync from the loop";
      out->points[point_of_blocked[i]].finding = add_finding(std::move(fd));
    }
  }

  // Time order; remap the points' finding indexes.
  std::vector<int32_t> order(out->findings.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return out->findings[a].time_ns < out->findings[b].time_ns; });
  std::vector<int32_t> new_index(order.size());
  std::vector<Finding> sorted;
  sorted.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = static_cast<int32_t>(i);
    sorted.push_back(std::move(out->findings[order[i]]));
  }
  out->findings = std::move(sorted);
  for (SyncPoint& p : out->points)
    if (p.finding != model::kNone) p.finding = new_index[p.finding];
  std::stable_sort(out->points.begin(), out->points.end(),
                   [](const SyncPoint& a, const SyncPoint& b) { return a.start_ns < b.start_ns; });
  for (const Finding& fd : out->findings) {
    ++out->finding_count[static_cast<int>(fd.kind)];
    out->finding_cost_ns[static_cast<int>(fd.kind)] += fd.cost_ns;
  }
}

}  // namespace overlapscope::analyze
