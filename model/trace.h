// model::Trace — the immutable, analysis-ready trace every part of overlapscope works on.
//
// Built with TraceBuilder (trace_builder.h) by importers and captures; after Finalize() every
// event vector is sorted by (start_ns, end_ns) and the lookups below are O(1) or O(log n).
// Ids in events index the vectors returned here. Times are int64_t ns; a trace built from
// several sources (ranks) shares one clock when the sources did (same host), see clock_note().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "model/correlation_index.h"
#include "model/events.h"
#include "model/source_stats.h"
#include "model/string_table.h"

namespace overlapscope::model {

// Everything a trace holds; TraceBuilder fills it, Trace owns it read-only.
struct TraceData {
  StringTable strings;
  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<Device> devices;
  std::vector<Stream> streams;
  std::vector<Kernel> kernels;
  std::vector<Memcpy> memcpys;
  std::vector<Memset> memsets;
  std::vector<ApiCall> api_calls;
  std::vector<Sync> syncs;
  std::vector<Range> ranges;
  std::vector<GpuRange> gpu_ranges;
  std::vector<Collective> collectives;
  std::vector<CaptureWindow> windows;  // own captures only; sorted by (process, start)
  std::vector<OpShape> op_shapes;      // record_shapes traces only; in import order
  std::vector<SourceStats> sources;
  std::string clock_note;  // how timestamps were aligned, e.g. "CLOCK_REALTIME ns"
};

class Trace {
 public:
  Trace() = default;
  Trace(Trace&&) noexcept = default;
  Trace& operator=(Trace&&) noexcept = default;

  std::string_view str(StringId id) const { return d_.strings.Get(id); }
  // kNone when the string does not occur in the trace.
  StringId FindString(std::string_view s) const { return d_.strings.Find(s); }
  const StringTable& strings() const { return d_.strings; }

  const std::vector<Process>& processes() const { return d_.processes; }
  const std::vector<Thread>& threads() const { return d_.threads; }
  const std::vector<Device>& devices() const { return d_.devices; }
  const std::vector<Stream>& streams() const { return d_.streams; }
  const std::vector<Kernel>& kernels() const { return d_.kernels; }
  const std::vector<Memcpy>& memcpys() const { return d_.memcpys; }
  const std::vector<Memset>& memsets() const { return d_.memsets; }
  const std::vector<ApiCall>& api_calls() const { return d_.api_calls; }
  const std::vector<Sync>& syncs() const { return d_.syncs; }
  const std::vector<Range>& ranges() const { return d_.ranges; }
  const std::vector<GpuRange>& gpu_ranges() const { return d_.gpu_ranges; }
  const std::vector<Collective>& collectives() const { return d_.collectives; }
  // Capture windows (events.h); empty when the source recorded throughout (imports).
  const std::vector<CaptureWindow>& windows() const { return d_.windows; }
  const std::vector<SourceStats>& sources() const { return d_.sources; }
  // Matrix-product shapes of framework ops (events.h OpShape); empty unless the trace recorded them.
  const std::vector<OpShape>& op_shapes() const { return d_.op_shapes; }
  const std::string& clock_note() const { return d_.clock_note; }

  // Earliest start and latest end over all events; 0/0 for an empty trace.
  int64_t start_ns() const { return start_ns_; }
  int64_t end_ns() const { return end_ns_; }

  ProcessId ProcessOfDevice(DeviceId d) const { return d_.devices[d].process; }
  ProcessId ProcessOfThread(ThreadId t) const { return d_.threads[t].process; }
  DeviceId DeviceOfStream(StreamId s) const { return d_.streams[s].device; }

  // Start/end/stream of any GPU activity, whatever its kind.
  // Inline: every analysis reads them per activity.
  int64_t StartNs(GpuRef r) const {
    switch (r.kind) {
      case GpuKind::kKernel: return d_.kernels[r.index].start_ns;
      case GpuKind::kMemcpy: return d_.memcpys[r.index].start_ns;
      case GpuKind::kMemset: return d_.memsets[r.index].start_ns;
    }
    return 0;
  }
  int64_t EndNs(GpuRef r) const {
    switch (r.kind) {
      case GpuKind::kKernel: return d_.kernels[r.index].end_ns;
      case GpuKind::kMemcpy: return d_.memcpys[r.index].end_ns;
      case GpuKind::kMemset: return d_.memsets[r.index].end_ns;
    }
    return 0;
  }
  StreamId StreamOf(GpuRef r) const;
  int64_t CorrelationOf(GpuRef r) const;
  // The recorded name of a GPU activity, and the collective it carries (kNone for memsets and
  // activities of no collective).
  StringId NameOf(GpuRef r) const {
    switch (r.kind) {
      case GpuKind::kKernel: return d_.kernels[r.index].name;
      case GpuKind::kMemcpy: return d_.memcpys[r.index].name;
      case GpuKind::kMemset: return d_.memsets[r.index].name;
    }
    return 0;
  }
  CollectiveId CollectiveOf(GpuRef r) const {
    switch (r.kind) {
      case GpuKind::kKernel: return d_.kernels[r.index].collective;
      case GpuKind::kMemcpy: return d_.memcpys[r.index].collective;
      case GpuKind::kMemset: return kNone;
    }
    return kNone;
  }

  // The API call with this correlation id in this process, or nullptr. When a source had
  // duplicate ids the first call (by start time) wins; duplicates are counted in
  // duplicate_api_correlations().
  const ApiCall* ApiCallByCorrelation(ProcessId p, int64_t correlation_id) const;
  // Index form of the above; kNone when absent.
  int32_t ApiCallIndexByCorrelation(ProcessId p, int64_t correlation_id) const;
  // The launch call of a GPU activity: the API call (index into api_calls()) with the
  // activity's correlation id in the activity's process, kNone when that call is not in the
  // trace (launched before the capture, or no correlation). Joined once at Finalize().
  int32_t LaunchOf(GpuRef r) const {
    switch (r.kind) {
      case GpuKind::kKernel: return kernel_launch_[r.index];
      case GpuKind::kMemcpy: return memcpy_launch_[r.index];
      case GpuKind::kMemset: return memset_launch_[r.index];
    }
    return kNone;
  }
  // The launch calls of all kernels / memcpys / memsets, parallel to kernels() etc.
  const std::vector<int32_t>& kernel_launches() const { return kernel_launch_; }
  const std::vector<int32_t>& memcpy_launches() const { return memcpy_launch_; }
  const std::vector<int32_t>& memset_launches() const { return memset_launch_; }
  // GPU activities enqueued by the call with this correlation id (kernels, copies, memsets).
  absl::Span<const GpuRef> GpuByCorrelation(ProcessId p, int64_t correlation_id) const;
  // GPU activities of one stream / one device, sorted by (start, end).
  absl::Span<const GpuRef> StreamActivities(StreamId s) const;
  absl::Span<const GpuRef> DeviceActivities(DeviceId d) const;
  // Kernels and memcpys that carry collective c, sorted by start.
  absl::Span<const GpuRef> CollectiveActivities(CollectiveId c) const;

  int64_t duplicate_api_correlations() const { return api_by_corr_.duplicates(); }
  int64_t total_events() const;

 private:
  friend class TraceBuilder;
  TraceData d_;
  int64_t start_ns_ = 0, end_ns_ = 0;
  // CSR indexes: entries for id i are refs[offsets[i] .. offsets[i+1]).
  std::vector<int32_t> stream_offsets_, device_offsets_, collective_offsets_;
  std::vector<GpuRef> stream_refs_, device_refs_, collective_refs_;
  CorrelationIndex api_by_corr_;
  std::vector<int32_t> kernel_launch_, memcpy_launch_, memset_launch_;  // see LaunchOf()
  // Parallel vectors sorted by (process, correlation); equal_range over the keys gives the
  // activities of one call.
  std::vector<std::pair<int32_t, int64_t>> gpu_by_corr_keys_;
  std::vector<GpuRef> gpu_by_corr_refs_;
};

}  // namespace overlapscope::model
