// GPU idle gaps (METRICS.md §4): per device, intervals with no kernel, memcpy or memset running,
// at least min_gap_ns long, attributed by the activity that ends the gap.
#pragma once

#include <cstdint>
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

struct IdleGap {
  model::DeviceId device = model::kNone;
  int64_t start_ns = 0, end_ns = 0;
  GapCause cause = GapCause::kUnknown;
  model::GpuRef ended_by;              // first activity after the gap
  int32_t launch_call = model::kNone;  // its launch call (index into Trace::api_calls())
  model::ThreadId thread = model::kNone;
  int32_t blocked_interval = model::kNone;  // index into BlockingResult::intervals (host-blocked)
  int32_t iteration = model::kNone;         // iteration of the ending activity
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
};

}  // namespace overlapscope::analyze
