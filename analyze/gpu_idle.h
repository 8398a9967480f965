// GPU idle gaps (METRICS.md §4): per device, intervals with no kernel, memcpy or memset running,
// at least min_gap_ns long, attributed by the activity that ends the gap.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

enum class GapCause : uint8_t {
  kHostBlocked,  // launch call started after the gap began; its thread was blocked in the gap
  kLaunchBound,  // launch call started after the gap began; thread not blocked
  kDependency,   // launched before the gap began (waited on an event, stream or peers)
  kUnknown,      // the activity ending the gap has no launch call in the trace
};
std::string_view ToString(GapCause c);
inline constexpr int kGapCauses = 4;

// Where the launching host thread was during a host-blocked gap [start, end) (METRICS.md §4): the
// four parts add up to the gap, each ns counted once, in this order of precedence:
//   blocked_ns      inside a blocking call (METRICS.md §3) of that thread;
//   launch_ns       from the start of the launch call of the activity that ends the gap to the
//                   gap's end (launch latency: the call itself and the device picking the work up);
//   other_calls_ns  before that, inside other traced runtime/driver calls of the thread;
//   outside_ns      the rest: the thread was in no traced call (CPU work, Python, or not traced).
struct HostSplit {
  int64_t blocked_ns = 0, launch_ns = 0, other_calls_ns = 0, outside_ns = 0;
};

struct IdleGap {
  model::DeviceId device = model::kNone;
  int64_t start_ns = 0, end_ns = 0;
  GapCause cause = GapCause::kUnknown;
  model::GpuRef ended_by;              // first activity after the gap
  int32_t launch_call = model::kNone;  // its launch call (index into Trace::api_calls())
  model::ThreadId thread = model::kNone;
  int32_t blocked_interval = model::kNone;  // index into BlockingResult::intervals (host-blocked)
  int32_t iteration = model::kNone;         // iteration of the ending activity
  HostSplit host;                           // host-blocked gaps only; zero otherwise
  // Dependency gaps whose ending activity waited on another stream (a recorded or inferred
  // event-wait edge of the dependency graph): the activity it waited for, the latest-ending one.
  std::optional<model::GpuRef> waited_for;
  bool wait_inferred = false;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct DeviceIdle {
  model::DeviceId device = model::kNone;
  model::ProcessId process = model::kNone;
  int64_t span_ns = 0;  // first activity start to last activity end on the device
  int64_t busy_ns = 0;  // union of kernels, memcpys, memsets
  int64_t idle_ns = 0;  // span − busy
  int64_t gap_ns = 0;   // idle in gaps >= min_gap_ns
  int64_t gaps = 0;
  int64_t cause_ns[kGapCauses] = {0, 0, 0, 0};
  int64_t cause_count[kGapCauses] = {0, 0, 0, 0};
  HostSplit host_blocked_split;  // sum of IdleGap::host over the device's host-blocked gaps
};

}  // namespace overlapscope::analyze
