#include "exporters/perfetto_flows.h"

#include <algorithm>
#include <optional>

namespace overlapscope::exporters {
namespace {

using model::kNoCorrelation;
using model::kNone;

struct Endpoint {
  Src src;
  int32_t index;
};

Src SrcOf(model::GpuKind k) {
  return k == model::GpuKind::kKernel ? Src::kKernel : k == model::GpuKind::kMemcpy ? Src::kMemcpy : Src::kMemset;
}

// See the header: the activity a cudaStreamWaitEvent waits for. Activities of one stream run
// in enqueue order, so their correlation ids increase along the stream and a binary search
// finds the last one enqueued before the record (or, without a record id, before the wait call).
// Without any correlation: the last activity that started before the wait.
std::optional<model::GpuRef> WaitSource(const model::Trace& t, model::ProcessId p, const model::Sync& y) {
  if (y.event_record_correlation_id != kNoCorrelation) {
    auto refs = t.GpuByCorrelation(p, y.event_record_correlation_id);
    if (!refs.empty()) return refs.back();
  }
  if (y.wait_on_stream == kNone) return std::nullopt;
  auto acts = t.StreamActivities(y.wait_on_stream);
  const int64_t bound =
      y.event_record_correlation_id != kNoCorrelation ? y.event_record_correlation_id : y.correlation_id;
  const model::GpuRef* it;
  if (bound != kNoCorrelation) {
    it = std::partition_point(acts.begin(), acts.end(), [&](const model::GpuRef& r) {
      const int64_t c = t.CorrelationOf(r);
      return c == kNoCorrelation || c < bound;
    });
  } else {
    it = std::upper_bound(acts.begin(), acts.end(), y.start_ns,
                          [&](int64_t ts, const model::GpuRef& r) { return ts < t.StartNs(r); });
  }
  while (it != acts.begin()) {
    --it;
    if (bound == kNoCorrelation || t.CorrelationOf(*it) != kNoCorrelation) return *it;
  }
  return std::nullopt;
}

}  // namespace

Flows BuildFlows(const model::Trace& t, const Layout& L) {
  struct Pending {
    Endpoint e;
    FlowRef f;
  };
  std::vector<Pending> pending;
  uint64_t next_id = 1;
  auto start_of = [&](Endpoint e) -> int64_t {
    switch (e.src) {
      case Src::kKernel: return t.kernels()[e.index].start_ns;
      case Src::kMemcpy: return t.memcpys()[e.index].start_ns;
      case Src::kMemset: return t.memsets()[e.index].start_ns;
      case Src::kApi: return t.api_calls()[e.index].start_ns;
      case Src::kSync: return t.syncs()[e.index].start_ns;
      default: return 0;
    }
  };
  auto link_at = [&](Endpoint a, int64_t a_start, Endpoint b, int64_t b_start) {
    const int32_t ta = L.track_of[static_cast<int>(a.src)][a.index];
    const int32_t tb = L.track_of[static_cast<int>(b.src)][b.index];
    if (ta == kNone || tb == kNone) return;
    const bool a_first = std::make_pair(a_start, ta) <= std::make_pair(b_start, tb);
    const uint64_t id = next_id++;
    pending.push_back({a, {id, !a_first}});
    pending.push_back({b, {id, a_first}});
  };
  auto link = [&](Endpoint a, Endpoint b) { link_at(a, start_of(a), b, start_of(b)); };
  // The launch call of each activity is the model's join (Trace::LaunchOf).
  auto gpu_links = [&](Src src, const std::vector<int32_t>& launches) {
    for (size_t i = 0; i < launches.size(); ++i)
      if (launches[i] != kNone) link({Src::kApi, launches[i]}, {src, static_cast<int32_t>(i)});
  };
  pending.reserve(2 * (t.kernels().size() + t.memcpys().size() + t.memsets().size() + t.syncs().size()));
  gpu_links(Src::kKernel, t.kernel_launches());
  gpu_links(Src::kMemcpy, t.memcpy_launches());
  gpu_links(Src::kMemset, t.memset_launches());
  for (size_t i = 0; i < t.syncs().size(); ++i) {
    const model::Sync& y = t.syncs()[i];
    const model::ProcessId p = y.device != kNone   ? t.ProcessOfDevice(y.device)
                               : y.thread != kNone ? t.ProcessOfThread(y.thread)
                                                   : kNone;
    if (p == kNone) continue;
    const int32_t a = y.correlation_id == kNoCorrelation ? kNone : t.ApiCallIndexByCorrelation(p, y.correlation_id);
    if (a != kNone) link({Src::kApi, a}, {Src::kSync, static_cast<int32_t>(i)});
    if (y.kind == model::SyncKind::kStreamWaitEvent && y.stream != kNone)
      if (auto source = WaitSource(t, p, y))
        link({SrcOf(source->kind), source->index}, {Src::kSync, static_cast<int32_t>(i)});
  }
  // Arrows between the layout's own slices (the critical path's chain).
  for (const Layout::ExtraLink& x : L.extra_links)
    link_at({Src::kExtra, x.from}, x.from_start_ns, {Src::kExtra, x.to}, x.to_start_ns);
  // Counting sort of the endpoints into the per-Src CSR tables.
  Flows flows;
  for (const Pending& p : pending) {
    auto& off = flows.offsets[static_cast<int>(p.e.src)];
    if (off.empty()) off.assign(L.track_of[static_cast<int>(p.e.src)].size() + 1, 0);
    ++off[p.e.index + 1];
  }
  std::array<std::vector<uint32_t>, kSrcCount> fill;
  for (int s = 0; s < kSrcCount; ++s) {
    auto& off = flows.offsets[s];
    if (off.empty()) continue;
    for (size_t i = 1; i < off.size(); ++i) off[i] += off[i - 1];
    flows.refs[s].resize(off.back());
    fill[s].assign(off.begin(), off.end() - 1);
  }
  for (const Pending& p : pending) {
    const int s = static_cast<int>(p.e.src);
    flows.refs[s][fill[s][p.e.index]++] = p.f;
  }
  flows.count = static_cast<int64_t>(next_id - 1);
  return flows;
}

}  // namespace overlapscope::exporters
