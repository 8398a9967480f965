// Sync points (METRICS.md §5): every host<->device and stream<->stream ordering point in time
// order, and the findings that say what to change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

enum class SyncPointKind : uint8_t {
  kStreamSync,
  kEventSync,
  kDeviceSync,  // explicit host waits
  kSyncMemcpy,
  kSyncMemset,
  kPageableCopy,  // implicit host waits
  kMalloc,
  kFree,             // cudaMalloc/cudaFree family (implicit device sync)
  kStreamWaitEvent,  // stream -> stream edge
};
std::string_view ToString(SyncPointKind k);

struct SyncPoint {
  int64_t start_ns = 0, end_ns = 0;
  SyncPointKind kind = SyncPointKind::kStreamSync;
  model::ProcessId process = model::kNone;
  model::ThreadId thread = model::kNone;          // host side, when known
  model::StreamId stream = model::kNone;          // stream synced on / waiting stream
  model::StreamId wait_on_stream = model::kNone;  // stream-wait-event: the recording stream
  int32_t api_call = model::kNone;
  int32_t sync = model::kNone;
  model::StringId name = 0;
  int64_t blocked_ns = 0;          // host-side blocked time (0 for stream edges)
  int32_t finding = model::kNone;  // index into SyncResult::findings
  // Stream waits: the GPU activity waited for (dependency graph, METRICS §8), recorded by the
  // trace or inferred by the evidence rule (wait_inferred); absent when none was placed.
  std::optional<model::GpuRef> wait_source;
  model::GpuRef waiter;  // the activity that waited (set with wait_source)
  bool wait_inferred = false;
};

// The kinds of findings, in report order: one per rule (analyze/findings/finding_rule.h), e.g.
// "pageable-async-copy", "unsynchronized-d2h", "blocking-d2h-before-independent-work",
// "collective-on-compute-stream", "device-wide-sync-in-loop".
const std::vector<std::string_view>& FindingKinds();
// Position of a kind in FindingKinds(), or -1.
int32_t FindingKindIndex(std::string_view kind);

// One finding instance.
struct Finding {
  std::string_view kind;            // one of FindingKinds() (static storage)
  int64_t time_ns = 0, end_ns = 0;  // the call (or the collective's GPU span)
  model::ProcessId process = model::kNone;
  model::ThreadId thread = model::kNone;
  model::StreamId stream = model::kNone;
  model::StringId call = 0;  // API call name, or the collective's kernel name
  int32_t api_call = model::kNone;
  int32_t iteration = model::kNone;
  // What it costs: host blocked time (pageable copy, blocking D2H, device sync), exposed
  // communication (collective on compute stream), 0 for correctness findings (stale D2H).
  int64_t cost_ns = 0;
  std::string message;  // what happened, one sentence
  std::string advice;   // what to change
};

struct SyncResult {
  std::vector<SyncPoint> points;  // sorted by start
  std::vector<Finding> findings;  // sorted by time
  // Per kind, parallel to FindingKinds(): how many, and their summed cost.
  std::vector<int64_t> finding_count, finding_cost_ns;
  int64_t Count(std::string_view kind) const;
  int64_t CostNs(std::string_view kind) const;
};

}  // namespace overlapscope::analyze
