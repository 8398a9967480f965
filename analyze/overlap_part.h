// Internal to analyze/overlap.cc: one range of a device's activities read for the overlap
// (METRICS.md §2), so that ranges can be read at once on several threads and merged in range
// order into what one pass over the device gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "analyze/context.h"

namespace overlapscope::analyze {

// An overlapped compute kernel: its name's dense slot, its iteration's slot (-1: none) and
// duration.
struct OverlappedInstance {
  int32_t name_slot;
  int32_t it_slot;
  int64_t dur;
};

// Slots per ComputeOverlap call (sized once for the trace, reset after each use, so a device
// costs its own activities, not the trace's iteration or name count): iteration -> slot among
// the device's (or a range's) iterations, and compute-kernel name -> dense name slot.
struct SharedSlots {
  std::vector<int32_t> of_iteration;
  std::vector<int32_t> of_name;
};

// Compute/comm intervals tagged with their iteration slot (bit 0 of `tag`: 1 = comm); grouped
// by a stable counting sort in IterationStats, so each group stays in start order.
struct Tagged {
  Interval iv;
  int32_t tag;
};

// What one contiguous range of a device's activities (in start order) adds: its iterations
// (slots in first-seen order), tagged intervals, per-name durations alone and overlapped, the
// overlapped instances and the collectives whose first activity in the range it holds. Ranges
// are filled at once and merged in range order (DeviceOverlapBuilder::Merge), which gives every
// list in the order one pass over the whole device gives it.
struct OverlapPart {
  std::vector<int32_t> used;  // iteration indexes with activity here, in first-seen order
  std::vector<IterationOverlap> its;
  std::vector<Tagged> tagged;
  std::vector<model::StringId> names_used;
  std::vector<std::vector<int64_t>> alone, overl;
  std::vector<OverlappedInstance> overlapped;
  std::vector<CollectiveOverlap> collectives;
};

// Fills `out` from activities [begin, end) of `acts` (device d's, in start order), with `slots`
// its own while it runs (all -1 before and after).
void FillOverlapPart(const Context& ctx, model::DeviceId d, absl::Span<const model::GpuRef> acts, size_t begin,
                     size_t end, SharedSlots& slots, OverlapPart* out);

}  // namespace overlapscope::analyze
