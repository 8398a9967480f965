// The dependency graph's inputs (analyze/graph/graph.h GraphInputs) from the passes before it:
// the host syncs and the GPU work that released them (cpu_blocking.h) and the collectives
// matched across ranks with their last arrival (cross_rank.h).
#pragma once

#include "analyze/cpu_blocking.h"
#include "analyze/cross_rank.h"
#include "analyze/graph/graph.h"

namespace overlapscope::analyze {

// Blocked intervals without an API call (sync records only) have no host node and are left
// out; instances where nobody waited (no last participant) add no peer edge.
graph::GraphInputs MakeGraphInputs(const BlockingResult& blocking, const CrossRankResult& cross_rank);

}  // namespace overlapscope::analyze
