// Figures of one iteration on one schedule (internal to analyze/replay): step span, comm and
// exposed comm (METRICS §2 on the schedule's times), and the composition of the critical path
// found by walking the schedule's binding constraints backwards from the step's last end.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/replay/build.h"
#include "analyze/replay/replay.h"
#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {

// GPU nodes per iteration (index into ReplayInputs::iterations), in node order.
struct IterationNodes {
  std::vector<int64_t> off;  // size iterations + 1
  std::vector<int32_t> nodes;
};
// `skip` (may be null): nodes left out (removed by a change).
IterationNodes GroupByIteration(const NodeAttrs& a, int32_t iterations, const ZeroedVector<uint8_t>* skip);

// Step, comm and exposed comm of iteration `it` on times start/end (recorded or simulated).
StepFigures MeasureStep(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const std::vector<int64_t>& start,
                        const std::vector<int64_t>& end);
// The same on g's recorded times.
StepFigures MeasureRecorded(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const SimGraph& g);

// The longest wait of iteration `it`'s collectives in schedule `s` of `g` for a peer that arrived
// after them (the peer's start minus their own), and that peer's node (-1: none waited).
struct PeerWait {
  int64_t wait_ns = 0;
  int32_t peer = -1;
};
PeerWait LongestPeerWait(const IterationNodes& idx, int32_t it, const SimGraph& g, const Schedule& s);

// The critical path's composition of iteration `it` in schedule `s` of `g`, clipped to the step.
PathComposition WalkPath(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const SimGraph& g,
                         const Schedule& s);

}  // namespace overlapscope::analyze::replay
