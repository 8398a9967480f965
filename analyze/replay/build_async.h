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

// Per stream, how its order is rebuilt under a change (0: as recorded).
constexpr uint8_t kRestreamMerged = 1;  // by AddAsyncEdges()
constexpr uint8_t kRestreamInline = 2;  // by the caller, activity by activity (no deferred ones,
                                        // no prefetch): AddAsyncEdges() finds only its waiters

// Adds to `rows`: the stream order of every stream `restream` flags kRestreamMerged (moved
// collectives on a side stream, the others chained as before), and the join edges of every
// moved collective. The caller leaves out the flagged streams' recorded stream-order edges and
// the event waits out of moved collectives.
// Collectives moved by a prefetch: change are issued at the start of their iteration on their
// stream (`anchors`, PrefetchAnchors()): they wait for what preceded the iteration's first
// activity there and start no earlier than it (their own launch edge is left out by the caller).
void AddAsyncEdges(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
                   const ChangeEffects& fx, const std::vector<uint8_t>& restream,
                   const std::vector<graph::NodeId>& anchors, const GapFn& gap, EdgeRows& rows);

// Per GPU node: for a collective moved by a prefetch: change, the first activity of its iteration
// on its stream (-1 when it is that activity, or not prefetched). Empty when no change prefetches.
std::vector<graph::NodeId> PrefetchAnchors(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a,
                                           const std::vector<Change>& changes, const ChangeEffects& fx);

}  // namespace overlapscope::analyze::replay
