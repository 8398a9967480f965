// TraceBuilder's indexes of the finalized trace (trace_builder.h): per-stream, per-device and
// per-collective activity lists, GPU activities by correlation id, the launch call of every
// activity and the time span. Each writes its own members of the Trace and reads only the
// sorted vectors it names, so Finalize() starts each as soon as those are sorted.
#include <algorithm>
#include <climits>
#include <mutex>
#include <numeric>

#include "base/run_all.h"
#include "model/gpu_by_corr.h"
#include "model/trace_builder.h"

namespace overlapscope::model {
namespace {

// Builds a CSR index from (group, ref) pairs; refs keep the order in which they are given.
void BuildCsr(size_t groups, const std::vector<std::pair<int32_t, GpuRef>>& pairs, std::vector<int32_t>& offsets,
              std::vector<GpuRef>& refs) {
  offsets.assign(groups + 1, 0);
  for (const auto& [g, r] : pairs) ++offsets[g + 1];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  refs.resize(pairs.size());
  std::vector<int32_t> fill(offsets.begin(), offsets.end() - 1);
  for (const auto& [g, r] : pairs) refs[fill[g]++] = r;
}

}  // namespace

// Every GPU activity in time order: each kind's vector is sorted already, so two linear merges
// (ties: kernels, then memcpys, then memsets, as a stable sort would order them). Reads only the
// activities' start and end.
std::vector<GpuRef> TraceBuilder::GpuRefsByTime(const Trace& t) {
  auto by_time = [&](GpuRef a, GpuRef b) {
    int64_t sa = t.StartNs(a), sb = t.StartNs(b);
    return sa != sb ? sa < sb : t.EndNs(a) < t.EndNs(b);
  };
  auto refs_of = [](GpuKind kind, size_t n) {
    std::vector<GpuRef> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = GpuRef{kind, static_cast<int32_t>(i)};
    return v;
  };
  std::vector<GpuRef> all;
  std::vector<GpuRef> k = refs_of(GpuKind::kKernel, t.d_.kernels.size());
  std::vector<GpuRef> m = refs_of(GpuKind::kMemcpy, t.d_.memcpys.size());
  std::vector<GpuRef> s = refs_of(GpuKind::kMemset, t.d_.memsets.size());
  std::vector<GpuRef> km(k.size() + m.size());
  std::merge(k.begin(), k.end(), m.begin(), m.end(), km.begin(), by_time);
  all.resize(km.size() + s.size());
  std::merge(km.begin(), km.end(), s.begin(), s.end(), all.begin(), by_time);
  return all;
}

// The per-stream and per-device activity lists (CSR, in the order of `all`): at once.
void TraceBuilder::BuildStreamDeviceLists(Trace& t, const std::vector<GpuRef>& all, int threads) {
  base::RunAll(threads, {[&] {
                           std::vector<std::pair<int32_t, GpuRef>> by_stream;
                           by_stream.reserve(all.size());
                           for (GpuRef r : all) by_stream.push_back({t.StreamOf(r), r});
                           BuildCsr(t.d_.streams.size(), by_stream, t.stream_offsets_, t.stream_refs_);
                         },
                         [&] {
                           std::vector<std::pair<int32_t, GpuRef>> by_device;
                           by_device.reserve(all.size());
                           for (GpuRef r : all) by_device.push_back({t.d_.streams[t.StreamOf(r)].device, r});
                           BuildCsr(t.d_.devices.size(), by_device, t.device_offsets_, t.device_refs_);
                         }});
}

// The per-collective activity lists (CSR, in the order of `all`): after SortCollectives, whose
// ids they use.
void TraceBuilder::BuildCollectiveLists(Trace& t, const std::vector<GpuRef>& all) {
  std::vector<std::pair<int32_t, GpuRef>> by_coll;
  for (GpuRef r : all) {
    const CollectiveId c = r.kind == GpuKind::kKernel   ? t.d_.kernels[r.index].collective
                           : r.kind == GpuKind::kMemcpy ? t.d_.memcpys[r.index].collective
                                                        : kNone;
    if (c != kNone) by_coll.push_back({c, r});
  }
  BuildCsr(t.d_.collectives.size(), by_coll, t.collective_offsets_, t.collective_refs_);
}

// On one thread; Finalize builds it on its threads (gpu_by_corr.h).
void TraceBuilder::BuildGpuByCorrelation(Trace& t, const std::vector<GpuRef>& all) {
  BuildGpuByCorrelationIndex(t, all, 1, &t.gpu_by_corr_keys_, &t.gpu_by_corr_refs_);
}

// The correlation index of the API calls (after their sort).
void TraceBuilder::BuildApiIndex(Trace& t, int threads) {
  std::vector<ProcessId> process_of_call(t.d_.api_calls.size());
  base::ParallelFor(threads, t.d_.api_calls.size(), size_t{1} << 15, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) process_of_call[i] = t.d_.threads[t.d_.api_calls[i].thread].process;
  });
  t.api_by_corr_ = CorrelationIndex(t.d_.api_calls, process_of_call, t.d_.processes.size(), threads);
}

// The launch call of every activity, through the API calls' correlation index (the lookups of
// each kind cut into ranges for up to `threads` threads). Reads the activities' device and
// correlation id only.
void TraceBuilder::BuildLaunchJoins(Trace& t, int threads) {
  auto launches = [&](const auto& v, std::vector<int32_t>& out) {
    out.assign(v.size(), kNone);
    base::ParallelFor(threads, v.size(), size_t{1} << 13, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i)
        if (v[i].correlation_id != kNoCorrelation)
          out[i] = t.api_by_corr_.Find(t.d_.devices[v[i].device].process, v[i].correlation_id);
    });
  };
  launches(t.d_.kernels, t.kernel_launch_);
  launches(t.d_.memcpys, t.memcpy_launch_);
  launches(t.d_.memsets, t.memset_launch_);
}

// Time span over every event kind: each vector in ranges at once (min and max do not depend on
// the order in which the ranges are combined).
void TraceBuilder::ComputeTimeSpan(Trace& t, int threads) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::mutex mu;
  auto span = [&](const auto& v) {
    base::ParallelFor(threads, v.size(), size_t{1} << 16, [&](size_t b, size_t e) {
      int64_t l = INT64_MAX, h = INT64_MIN;
      for (size_t i = b; i < e; ++i) {
        l = std::min(l, v[i].start_ns);
        h = std::max(h, v[i].end_ns);
      }
      std::lock_guard<std::mutex> lock(mu);
      lo = std::min(lo, l);
      hi = std::max(hi, h);
    });
  };
  base::RunAll(threads, {[&] { span(t.d_.kernels); }, [&] { span(t.d_.memcpys); }, [&] { span(t.d_.memsets); },
                         [&] { span(t.d_.api_calls); }, [&] { span(t.d_.syncs); }, [&] { span(t.d_.ranges); },
                         [&] { span(t.d_.gpu_ranges); }});
  if (lo != INT64_MAX) {
    t.start_ns_ = lo;
    t.end_ns_ = hi;
  }
}

}  // namespace overlapscope::model
