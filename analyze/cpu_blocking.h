// CPU blocking (METRICS.md §3): intervals in which a host thread sits inside a call that waits
// for the device, decided from the runtime/driver call (cudaStreamSynchronize, synchronous
// cudaMemcpy, pageable cudaMemcpyAsync, ...). Sync records (Kineto cuda_sync) only add the
// awaited stream; an "Event Sync" record whose call is cudaEventQuery (NCCL watchdog) does not
// block. Sync records with no API call in the trace count as blocking only for stream/context
// syncs, and are counted in sync_records_without_call.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

enum class BlockReason : uint8_t {
  kStreamSync,      // cudaStreamSynchronize / cuStreamSynchronize
  kEventSync,       // cudaEventSynchronize / cuEventSynchronize
  kDeviceSync,      // cudaDeviceSynchronize / cuCtxSynchronize
  kSyncMemcpy,      // synchronous cudaMemcpy* / cuMemcpy* (not *Async)
  kSyncMemset,      // synchronous cudaMemset* / cuMemset* (not *Async)
  kPageableCopy,    // cudaMemcpyAsync whose host side is pageable memory
  kSyncRecordOnly,  // a stream/context sync record with no API call in the trace
};
std::string_view ToString(BlockReason r);

struct BlockedInterval {
  int64_t start_ns = 0, end_ns = 0;
  model::ProcessId process = model::kNone;
  model::ThreadId thread = model::kNone;
  int32_t api_call = model::kNone;  // index into Trace::api_calls(), kNone for kSyncRecordOnly
  int32_t sync = model::kNone;      // index into Trace::syncs() of its sync record, if any
  model::StringId call = 0;         // call name (or the sync record's name)
  BlockReason reason = BlockReason::kStreamSync;
  model::DeviceId device = model::kNone;  // device waited on (kNone: unknown)
  model::StreamId stream = model::kNone;  // stream waited on (kNone: event/device/unknown)
  // The GPU activity whose completion released the host: the last one to end on the awaited
  // stream(s) (all streams of the device for device syncs) before the call returned.
  std::optional<model::GpuRef> released_by;
  int64_t device_busy_ns = 0, device_idle_ns = 0;  // of the interval, on `device`
  int32_t iteration = model::kNone;
  // A device-wide sync after the last launch of its process: the program's (or the profiler's:
  // every Kineto trace ends with one) final cudaDeviceSynchronize. Listed, but excluded from
  // blocked_ns, blocked_share, active spans and the device-wide-sync-in-loop finding.
  bool final_sync = false;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct CallSite {
  model::StringId call = 0;
  int64_t count = 0, total_ns = 0, max_ns = 0;
};

struct ThreadBlocking {
  model::ThreadId thread = model::kNone;
  model::ProcessId process = model::kNone;
  int64_t blocked_ns = 0;               // excluding final syncs
  int64_t final_sync_ns = 0;            // time in final syncs (see BlockedInterval::final_sync)
  int64_t active_span_ns = 0;           // first to last API call / range, final syncs excluded
  std::optional<double> blocked_share;  // blocked / active span; absent for an empty span
  std::vector<CallSite> top_calls;      // by total_ns, descending
};

struct BlockingResult {
  std::vector<BlockedInterval> intervals;  // sorted by start
  std::vector<ThreadBlocking> threads;     // threads with API calls or ranges
  int64_t sync_records_without_call = 0;   // sync records whose API call is not in the trace
  int64_t nonblocking_sync_records = 0;    // e.g. Event Sync from cudaEventQuery (watchdog)
};

}  // namespace overlapscope::analyze
