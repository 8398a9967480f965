// When a collective became runnable on its stream ("arrival"), estimated from the trace, for
// METRICS §6's skew and wait (analyze/cross_rank.h).
//
// The start of a collective's first carrying activity is when it got hardware, not when the rank
// reached it: a copy-engine collective first runs stream memory operations (a barrier with its
// peers, invisible to CUPTI) and only then its copies, so on the early rank the first copy
// appears when the late peer arrives; an NCCL kernel queued behind a GEMM that holds every SM
// starts when SMs free up. Arrival is the time its stream could run it:
//   max( (a) when the rank called the collective: the start of the NCCL API range (NVTX domain
//            "NCCL", own captures) on the calling thread that contains the API call which
//            enqueued the first carrying activity, else that call's own host start. NCCL does
//            tens of µs of host work inside ncclAllGather & co. before it enqueues anything (a
//            copy-engine collective first enqueues its barrier's stream memory operations, which
//            CUPTI does not record), while the rank's stream may be idle; the ranks' own CUDA
//            events, recorded right before the call, see the call's start,
//        (b) end of the last activity (kernel, memcpy, memset) on the same stream that started
//            before the first carrying activity,
//        (c) for each stream-wait-event on that stream enqueued after (b)'s activity and before
//            the collective's call (by correlation id, monotonic per process; without (b) or
//            without its correlation: every earlier wait), the end of the last activity on the
//            recording stream enqueued before the cudaEventRecord (correlation < the record's;
//            none: the event was already complete and adds nothing) )
// clamped to <= the first carrying activity's start. Host API calls and GPU activities must
// share one clock (own captures and Kineto traces do).
//
// Fallbacks (arrival = the first activity's start, the pre-arrival rule): no carrying activity,
// no correlation id or no API call for it in the trace, or a wait in (c) without the record's
// correlation or stream (Kineto writes wait_on_stream = -1 and no record correlation, so NCCL
// collectives that PyTorch makes wait on the compute stream fall back there). Waits without a
// correlation id of their own are placed by host start time between (b)'s call (or the trace
// start) and the collective's call. Only one level of waits is followed: a wait of the
// recording stream itself that no later activity of that stream reflects is not seen.
//
// Activities without a correlation id on a recording stream are ignored in (c).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

// Which term of the estimate gave the arrival.
enum class ArrivalSource : uint8_t {
  kApiCall,                 // (a)
  kStreamPredecessor,       // (b)
  kEventWait,               // (c)
  kStart,                   // an estimate past the first activity's start, clamped to it
  kFallbackNoCall,          // fallback: no carrying activity / correlation / API call
  kFallbackUnresolvedWait,  // fallback: a wait in (c) could not be resolved
};
// "api-call", "stream-predecessor", "event-wait", "clamped-to-start", "fallback-no-call",
// "fallback-unresolved-wait"
std::string_view ToString(ArrivalSource s);
inline bool IsFallback(ArrivalSource s) {
  return s == ArrivalSource::kFallbackNoCall || s == ArrivalSource::kFallbackUnresolvedWait;
}

struct CollectiveArrival {
  int64_t arrival_ns = 0;  // trace clock ns; <= the collective's start_ns
  ArrivalSource source = ArrivalSource::kFallbackNoCall;
};

// Indexes a trace once (waits per stream by correlation, activities of waited-on streams by
// correlation); Of() is then O(log n) plus the waits in the window. Keeps a reference to the
// trace, which must outlive it.
class ArrivalEstimator {
 public:
  explicit ArrivalEstimator(const model::Trace& t);
  CollectiveArrival Of(model::CollectiveId c) const;

 private:
  // A stream-wait-event on a waiting stream, resolved at construction.
  struct Wait {
    int64_t key = 0;               // correlation id, or host start_ns for waits without one
    int64_t ready_ns = INT64_MIN;  // (c)'s end; INT64_MIN: nothing to wait for
    bool unresolved = false;
  };
  struct StreamWaits {
    std::vector<Wait> by_corr;          // sorted by correlation
    std::vector<int64_t> prefix_ready;  // max ready_ns over by_corr[0..i]
    std::vector<int32_t> prefix_unresolved;
    std::vector<Wait> by_time;  // waits without correlation id, sorted by host start
  };
  // Activities of one stream as (correlation, running max of end), sorted by correlation.
  struct Done {
    std::vector<int64_t> corr, max_end;
  };
  int64_t ReadyBefore(model::StreamId s, int64_t record_corr) const;

  const model::Trace& t_;
  std::vector<StreamWaits> waits_;  // by waiting stream
  std::vector<Done> done_;          // by recording stream (filled for waited-on streams only)
  // NCCL-domain NVTX ranges (start, end) per host thread, sorted by start ((a)); empty when the
  // trace has none.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> nccl_ranges_;
  // Start times of StreamActivities(s), for streams that carry a collective: (b)'s binary search
  // then reads one contiguous array instead of the scattered activity records.
  std::vector<std::vector<int64_t>> starts_;
};

}  // namespace overlapscope::analyze
