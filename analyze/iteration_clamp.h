// The stream-order clamp of AssignIterations (METRICS.md §2): an activity without a launch call in
// the trace keeps the iteration its start gave it only within those of the launched activities
// before and after it on its stream. Internal to analyze/iterations.cc; a header of its own so that
// the clamp's split into ranges can be tested against its one-thread order.
#pragma once

#include <cstddef>

#include "analyze/iterations.h"
#include "model/trace.h"

namespace overlapscope::analyze {

// Rewrites the iterations of `a`'s unlaunched activities (a.iterations must be non-empty, sorted
// by (process, start)). The streams' slots are gathered, ordered and clamped in ranges of at least
// `min_chunk` slots on up to `threads` threads; the result is the same at any count and range
// size, and `threads` <= 1 runs the one-thread order. Never fails (std::bad_alloc aside).
void ClampByStreamOrder(const model::Trace& t, IterationAssignment& a, int threads, size_t min_chunk);

}  // namespace overlapscope::analyze
