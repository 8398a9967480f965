// CPU blocking (METRICS.md §3): decided from the API call, never from a sync record alone.
#include <algorithm>
#include <optional>
#include <vector>

#include "analyze/context.h"
#include "analyze/strings.h"
#include "base/run_all.h"

namespace overlapscope::analyze {

std::string_view ToString(BlockReason r) {
  switch (r) {
    case BlockReason::kStreamSync: return "stream-sync";
    case BlockReason::kEventSync: return "event-sync";
    case BlockReason::kDeviceSync: return "device-sync";
    case BlockReason::kSyncMemcpy: return "sync-memcpy";
    case BlockReason::kSyncMemset: return "sync-memset";
    case BlockReason::kPageableCopy: return "pageable-async-copy";
    case BlockReason::kSyncRecordOnly: return "sync-record";
  }
  return "?";
}

namespace {

enum CallCat : int8_t { kOther, kStream, kEvent, kDevice, kMemcpySync, kMemsetSync, kMemcpyAsync };

// The calls that may block the host, by their semantic kind (CUDA runtime, driver and HIP alike).
CallCat Categorize(model::ApiSemantic s) {
  switch (s) {
    case model::ApiSemantic::kStreamSync: return kStream;
    case model::ApiSemantic::kEventSync: return kEvent;
    case model::ApiSemantic::kDeviceSync: return kDevice;
    case model::ApiSemantic::kCopy: return kMemcpySync;
    case model::ApiSemantic::kMemset: return kMemsetSync;
    case model::ApiSemantic::kCopyAsync: return kMemcpyAsync;
    default: return kOther;
  }
}

// The last activity of one stream that ends at or before `until`. A stream runs its activities
// one after another, so scanning back from the last one starting before `until`, the first that
// has ended is the answer.
std::optional<model::GpuRef> LastOnStreamBefore(const model::Trace& t, absl::Span<const model::GpuRef> acts,
                                                int64_t until) {
  auto it =
      std::upper_bound(acts.begin(), acts.end(), until, [&](int64_t x, model::GpuRef r) { return x < t.StartNs(r); });
  for (int scanned = 0; it != acts.begin() && scanned < 64; ++scanned) {
    --it;
    if (t.EndNs(*it) <= until) return *it;
  }
  return std::nullopt;
}

// The same over a whole device (streams overlap): the largest end <= `until` among the
// activities that start shortly before it; a bounded look-back past the first candidate.
std::optional<model::GpuRef> LastOnDeviceBefore(absl::Span<const model::GpuRef> acts,
                                                const std::vector<Interval>& spans, int64_t until) {
  auto it = std::upper_bound(spans.begin(), spans.end(), until,
                             [](int64_t x, const Interval& iv) { return x < iv.start_ns; });
  size_t i = static_cast<size_t>(it - spans.begin());
  std::optional<model::GpuRef> best;
  int64_t best_end = INT64_MIN;
  int after_first = 0;
  for (int scanned = 0; i > 0 && scanned < 256 && after_first < 32; ++scanned) {
    --i;
    if (best) ++after_first;
    if (spans[i].end_ns <= until && spans[i].end_ns > best_end) {
      best_end = spans[i].end_ns;
      best = acts[i];
    }
  }
  return best;
}

// Devices of each process, for calls that name no device: a process with one device waited on
// that one; with several (or none), the device stays unknown.
std::vector<model::DeviceId> OnlyDevices(const model::Trace& t) {
  std::vector<model::DeviceId> only_device(t.processes().size(), model::kNone);
  std::vector<int> device_count(t.processes().size(), 0);
  for (size_t d = 0; d < t.devices().size(); ++d) {
    model::ProcessId p = t.devices()[d].process;
    if (++device_count[p] == 1)
      only_device[p] = static_cast<model::DeviceId>(d);
    else
      only_device[p] = model::kNone;
  }
  return only_device;
}

// Sync records only add to the call they belong to (its awaited device and stream), so each is
// joined to its API call here: sync_of_call[call] = record. A record without its call (the
// call fell outside the trace) is counted, and becomes a blocked interval of its own only where
// it is known to wait.
struct SyncJoin {
  std::vector<int32_t> sync_of_call;
  std::vector<BlockedInterval> record_only;
};
SyncJoin JoinSyncRecords(const model::Trace& t, const std::vector<model::DeviceId>& only_device, BlockingResult* out) {
  const auto& calls = t.api_calls();
  SyncJoin j;
  j.sync_of_call.assign(calls.size(), model::kNone);
  for (size_t i = 0; i < t.syncs().size(); ++i) {
    const model::Sync& s = t.syncs()[i];
    if (s.kind == model::SyncKind::kStreamWaitEvent) continue;
    model::ProcessId p = s.device != model::kNone   ? t.ProcessOfDevice(s.device)
                         : s.thread != model::kNone ? t.ProcessOfThread(s.thread)
                                                    : model::kNone;
    int32_t call = (p == model::kNone || s.correlation_id == model::kNoCorrelation)
                       ? model::kNone
                       : t.ApiCallIndexByCorrelation(p, s.correlation_id);
    if (call != model::kNone) {
      const CallCat c = Categorize(calls[call].semantic);
      if (c == kOther || c == kMemcpyAsync) ++out->nonblocking_sync_records;
      j.sync_of_call[call] = static_cast<int32_t>(i);
      continue;
    }
    ++out->sync_records_without_call;
    // Without its call, only stream/context syncs are known to wait (an event sync record may
    // come from a cudaEventQuery poll).
    if ((s.kind == model::SyncKind::kStreamSync || s.kind == model::SyncKind::kContextSync) &&
        s.thread != model::kNone) {
      BlockedInterval b;
      b.start_ns = s.start_ns;
      b.end_ns = s.end_ns;
      b.thread = s.thread;
      b.process = t.ProcessOfThread(s.thread);
      b.sync = static_cast<int32_t>(i);
      b.call = s.name;
      b.reason = BlockReason::kSyncRecordOnly;
      b.device = s.device != model::kNone ? s.device : only_device[b.process];
      b.stream = s.stream;
      j.record_only.push_back(b);
    }
  }
  return j;
}

// A copy or memset call blocks when it is synchronous (except device-to-device and
// host-to-host copies, which do not wait for the host) or, for cudaMemcpyAsync, when its host
// side is pageable memory; what it launched says which device and stream it waited on. False:
// the call did not block.
bool CopyBlocked(const model::Trace& t, CallCat c, absl::Span<const model::GpuRef> gpu, BlockedInterval& b) {
  bool blocking = c != kMemcpyAsync;
  for (model::GpuRef r : gpu) {
    b.device = t.DeviceOfStream(t.StreamOf(r));
    b.stream = t.StreamOf(r);
    b.released_by = r;
    if (r.kind != model::GpuKind::kMemcpy) continue;
    const model::Memcpy& m = t.memcpys()[r.index];
    if (c == kMemcpyAsync && IsPageable(t, m)) blocking = true;
    // A synchronous device-to-device or host-to-host copy does not wait for the host.
    if (c == kMemcpySync && (m.kind == model::MemcpyKind::kDtoD || m.kind == model::MemcpyKind::kHtoH))
      blocking = false;
  }
  if (!blocking) return false;
  b.reason = c == kMemcpyAsync  ? BlockReason::kPageableCopy
             : c == kMemcpySync ? BlockReason::kSyncMemcpy
                                : BlockReason::kSyncMemset;
  return true;
}

// A stream/event/device sync always blocks. Its sync record (if any) names what it waited on;
// the activity that released it is the last to end before it returned on that stream (stream
// syncs) or anywhere on the device (event and device syncs, or an unknown stream).
void SyncBlocked(const Context& ctx, CallCat c, BlockedInterval& b) {
  const model::Trace& t = ctx.t;
  b.reason = c == kStream ? BlockReason::kStreamSync : c == kEvent ? BlockReason::kEventSync : BlockReason::kDeviceSync;
  if (b.sync != model::kNone) {
    const model::Sync& s = t.syncs()[b.sync];
    if (s.device != model::kNone) b.device = s.device;
    if (s.stream != model::kNone) b.stream = s.stream;
  }
  if (b.stream != model::kNone && c == kStream) {
    b.released_by = LastOnStreamBefore(t, t.StreamActivities(b.stream), b.end_ns);
  } else if (b.device != model::kNone) {
    b.released_by = LastOnDeviceBefore(t.DeviceActivities(b.device), ctx.act_span[b.device], b.end_ns);
  }
}

// The calls [begin, end) that blocked, one interval each, in call order (METRICS.md §3).
void BlockingCallsIn(const Context& ctx, const std::vector<model::DeviceId>& only_device,
                     const std::vector<int32_t>& sync_of_call, size_t begin, size_t end,
                     std::vector<BlockedInterval>& v) {
  const model::Trace& t = ctx.t;
  const auto& calls = t.api_calls();
  for (size_t i = begin; i < end; ++i) {
    const model::ApiCall& a = calls[i];
    CallCat c = Categorize(a.semantic);
    if (c == kOther) continue;
    model::ProcessId p = t.ProcessOfThread(a.thread);
    BlockedInterval b;
    b.start_ns = a.start_ns;
    b.end_ns = a.end_ns;
    b.thread = a.thread;
    b.process = p;
    b.api_call = static_cast<int32_t>(i);
    b.sync = sync_of_call[i];
    b.call = a.name;
    b.device = only_device[p];
    auto gpu = a.correlation_id == model::kNoCorrelation ? absl::Span<const model::GpuRef>{}
                                                         : t.GpuByCorrelation(p, a.correlation_id);
    if (c == kMemcpyAsync || c == kMemcpySync || c == kMemsetSync) {
      if (!CopyBlocked(t, c, gpu, b)) continue;
    } else {
      SyncBlocked(ctx, c, b);
    }
    v.push_back(b);
  }
}

// Blocking is decided from the API call alone, so the calls are read in ranges at once, each
// range appending in call order (base::ParallelAppend): the same list at any thread count.
void BlockingCalls(const Context& ctx, const std::vector<model::DeviceId>& only_device,
                   const std::vector<int32_t>& sync_of_call, size_t min_chunk, std::vector<BlockedInterval>& v) {
  base::ParallelAppend(ctx.opt.threads, ctx.t.api_calls().size(), min_chunk, &v,
                       [&](size_t begin, size_t end, std::vector<BlockedInterval>* out) {
                         BlockingCallsIn(ctx, only_device, sync_of_call, begin, end, *out);
                       });
}

// Nested calls on one thread (a runtime call and the driver call inside it) count once: drops
// intervals contained in an earlier-starting interval of the same thread. The result is sorted
// by start (then thread).
std::vector<BlockedInterval> DropNested(std::vector<BlockedInterval>& v) {
  std::stable_sort(v.begin(), v.end(), [](const BlockedInterval& x, const BlockedInterval& y) {
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.end_ns > y.end_ns;
  });
  std::vector<BlockedInterval> kept;
  kept.reserve(v.size());
  for (const BlockedInterval& b : v) {
    if (!kept.empty() && kept.back().thread == b.thread && b.end_ns <= kept.back().end_ns) continue;
    kept.push_back(b);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const BlockedInterval& x, const BlockedInterval& y) {
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.thread < y.thread;
  });
  return kept;
}

// What the reports say about each interval besides the call: how busy its device was meanwhile,
// its iteration, and whether it is the program's final device-wide sync (listed, not counted).
void AnnotateOne(const Context& ctx, BlockedInterval& b) {
  if (b.device != model::kNone) {
    b.device_busy_ns = ctx.dev[b.device].busy.CoveredIn(b.start_ns, b.end_ns);
    b.device_idle_ns = b.duration_ns() - b.device_busy_ns;
  }
  b.iteration = IterationAt(ctx.iters, b.process, b.start_ns);
  b.final_sync =
      b.start_ns >= ctx.last_launch_start[b.process] &&
      (b.reason == BlockReason::kDeviceSync ||
       (b.reason == BlockReason::kSyncRecordOnly && ctx.t.syncs()[b.sync].kind == model::SyncKind::kContextSync));
}

// Each interval is annotated alone: in ranges at once.
void Annotate(const Context& ctx, size_t min_chunk, std::vector<BlockedInterval>& v) {
  base::ParallelFor(ctx.opt.threads, v.size(), min_chunk, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) AnnotateOne(ctx, v[i]);
  });
}

}  // namespace

void ComputeBlocking(const Context& ctx, BlockingResult* out, size_t min_chunk) {
  const std::vector<model::DeviceId> only_device = OnlyDevices(ctx.t);
  SyncJoin join = JoinSyncRecords(ctx.t, only_device, out);
  std::vector<BlockedInterval>& v = out->intervals;
  BlockingCalls(ctx, only_device, join.sync_of_call, min_chunk, v);
  v.insert(v.end(), join.record_only.begin(), join.record_only.end());
  v = DropNested(v);
  Annotate(ctx, min_chunk, v);
  // Capture windows (windows.h): blocking outside them was not recorded or is start-up.
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const BlockedInterval& b) { return !ctx.InWindows(b.process, b.start_ns, b.end_ns); }),
          v.end());
  ComputeThreadBlocking(ctx, out, min_chunk);
}

}  // namespace overlapscope::analyze
