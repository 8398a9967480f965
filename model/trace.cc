#include "model/trace.h"

#include <algorithm>

namespace overlapscope::model {

StreamId Trace::StreamOf(GpuRef r) const {
  switch (r.kind) {
    case GpuKind::kKernel: return d_.kernels[r.index].stream;
    case GpuKind::kMemcpy: return d_.memcpys[r.index].stream;
    case GpuKind::kMemset: return d_.memsets[r.index].stream;
  }
  return kNone;
}

int64_t Trace::CorrelationOf(GpuRef r) const {
  switch (r.kind) {
    case GpuKind::kKernel: return d_.kernels[r.index].correlation_id;
    case GpuKind::kMemcpy: return d_.memcpys[r.index].correlation_id;
    case GpuKind::kMemset: return d_.memsets[r.index].correlation_id;
  }
  return kNoCorrelation;
}

const ApiCall* Trace::ApiCallByCorrelation(ProcessId p, int64_t correlation_id) const {
  int32_t i = ApiCallIndexByCorrelation(p, correlation_id);
  return i == kNone ? nullptr : &d_.api_calls[i];
}

int32_t Trace::ApiCallIndexByCorrelation(ProcessId p, int64_t correlation_id) const {
  return api_by_corr_.Find(p, correlation_id);
}

absl::Span<const GpuRef> Trace::GpuByCorrelation(ProcessId p, int64_t correlation_id) const {
  auto key = std::make_pair(p, correlation_id);
  auto [lo, hi] = std::equal_range(gpu_by_corr_keys_.begin(), gpu_by_corr_keys_.end(), key);
  size_t begin = static_cast<size_t>(lo - gpu_by_corr_keys_.begin());
  return absl::MakeConstSpan(gpu_by_corr_refs_).subspan(begin, static_cast<size_t>(hi - lo));
}

namespace {
absl::Span<const GpuRef> Csr(const std::vector<int32_t>& offsets, const std::vector<GpuRef>& refs, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) + 1 >= offsets.size()) return {};
  return absl::MakeConstSpan(refs).subspan(offsets[i], offsets[i + 1] - offsets[i]);
}
}  // namespace

absl::Span<const GpuRef> Trace::StreamActivities(StreamId s) const { return Csr(stream_offsets_, stream_refs_, s); }
absl::Span<const GpuRef> Trace::DeviceActivities(DeviceId d) const { return Csr(device_offsets_, device_refs_, d); }
absl::Span<const GpuRef> Trace::CollectiveActivities(CollectiveId c) const {
  return Csr(collective_offsets_, collective_refs_, c);
}

int64_t Trace::total_events() const {
  return static_cast<int64_t>(d_.kernels.size() + d_.memcpys.size() + d_.memsets.size() + d_.api_calls.size() +
                              d_.syncs.size() + d_.ranges.size() + d_.gpu_ranges.size());
}

}  // namespace overlapscope::model
