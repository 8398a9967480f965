// The edges of the async: change (internal to analyze/replay; build_async.cc says how).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "analyze/graph/graph.h"
#include "analyze/replay/build.h"
#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {

// The lag to keep between two consecutive activities of a stream.
using GapFn = std::function<int64_t(graph::NodeId from, graph::NodeId to)>;

// Adds to `rows`: the stream order of every stream flagged in `restream` (moved collectives on a
// side stream, the others chained as before), and the join edges of every moved collective. The
// caller leaves out those streams' recorded stream-order edges and the event waits out of moved
// collectives.
void AddAsyncEdges(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
                   const ChangeEffects& fx, const std::vector<uint8_t>& restream, const GapFn& gap, EdgeRows& rows);

}  // namespace overlapscope::analyze::replay
