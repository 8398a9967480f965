// The predicted timeline beside the measured one (engine-internal; `replay --trace OUT.pftrace`):
// a Perfetto file with every rank's measured GPU activities and host calls, and a process
// "<name> predicted" per rank holding the same events at their predicted (or, without changes,
// replayed) times, so the user sees what moved. Collectives an async: or prefetch: change moved
// (NodeTimes::moved) are drawn on a predicted stream of their own, "async (predicted) from stream N".
#pragma once

#include <string>

#include "absl/status/status.h"
#include "analyze/graph/graph.h"
#include "analyze/replay/replay.h"
#include "model/trace.h"

namespace overlapscope::engine {

// Writes `path`; an error names the path and the reason.
absl::Status WritePredictedTrace(const model::Trace& t, const analyze::graph::Graph& g,
                                 const analyze::replay::NodeTimes& times, const std::string& path);

}  // namespace overlapscope::engine
