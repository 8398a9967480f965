// CPU blocking (METRICS.md §3): decided from the API call, never from a sync record alone.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/context.h"
#include "analyze/strings.h"
#include "model/bounds.h"

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

}  // namespace

void ComputeBlocking(const Context& ctx, BlockingResult* out) {
  const model::Trace& t = ctx.t;
  const auto& calls = t.api_calls();
  // Devices of each process (for calls that name no device: one device means that one).
  std::vector<model::DeviceId> only_device(t.processes().size(), model::kNone);
  std::vector<int> device_count(t.processes().size(), 0);
  for (size_t d = 0; d < t.devices().size(); ++d) {
    model::ProcessId p = t.devices()[d].process;
    if (++device_count[p] == 1)
      only_device[p] = static_cast<model::DeviceId>(d);
    else
      only_device[p] = model::kNone;
  }

  // Sync records -> their API calls.
  std::vector<int32_t> sync_of_call(calls.size(), model::kNone);
  auto cat = [&](const model::ApiCall& a) { return Categorize(a.semantic); };
  std::vector<BlockedInterval> record_only;
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
      if (cat(calls[call]) == kOther || cat(calls[call]) == kMemcpyAsync) ++out->nonblocking_sync_records;
      sync_of_call[call] = static_cast<int32_t>(i);
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
      record_only.push_back(b);
    }
  }

  std::vector<BlockedInterval>& v = out->intervals;
  for (size_t i = 0; i < calls.size(); ++i) {
    const model::ApiCall& a = calls[i];
    CallCat c = cat(a);
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
      if (!blocking) continue;
      b.reason = c == kMemcpyAsync  ? BlockReason::kPageableCopy
                 : c == kMemcpySync ? BlockReason::kSyncMemcpy
                                    : BlockReason::kSyncMemset;
    } else {
      b.reason = c == kStream  ? BlockReason::kStreamSync
                 : c == kEvent ? BlockReason::kEventSync
                               : BlockReason::kDeviceSync;
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
    v.push_back(b);
  }
  v.insert(v.end(), record_only.begin(), record_only.end());
  // Nested calls on one thread (a runtime call and the driver call inside it) count once:
  // drop intervals contained in an earlier-starting interval of the same thread.
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
  for (BlockedInterval& b : kept) {
    if (b.device != model::kNone) {
      b.device_busy_ns = ctx.dev[b.device].busy.CoveredIn(b.start_ns, b.end_ns);
      b.device_idle_ns = b.duration_ns() - b.device_busy_ns;
    }
    b.iteration = IterationAt(ctx.iters, b.process, b.start_ns);
    b.final_sync = b.start_ns >= ctx.last_launch_start[b.process] &&
                   (b.reason == BlockReason::kDeviceSync || (b.reason == BlockReason::kSyncRecordOnly &&
                                                             t.syncs()[b.sync].kind == model::SyncKind::kContextSync));
  }
  v = std::move(kept);
  // Capture windows (windows.h): blocking outside them was not recorded or is start-up.
  v.erase(std::remove_if(v.begin(), v.end(),
                         [&](const BlockedInterval& b) { return !ctx.InWindows(b.process, b.start_ns, b.end_ns); }),
          v.end());

  // Per thread: active span, blocked time (intervals are disjoint per thread now), call sites.
  const size_t nt = t.threads().size();
  std::vector<int64_t> lo(nt, INT64_MAX), hi(nt, INT64_MIN);
  std::vector<uint8_t> final_call(calls.size(), 0);
  for (const BlockedInterval& b : v)
    if (b.final_sync && b.api_call != model::kNone) final_call[b.api_call] = 1;
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& a = calls[i];
    if (final_call[i]) continue;
    lo[a.thread] = std::min(lo[a.thread], a.start_ns);
    hi[a.thread] = std::max(hi[a.thread], a.end_ns);
  }
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
