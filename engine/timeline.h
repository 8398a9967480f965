// engine::IterationTimelines — the compact timeline the HTML pages draw (report/html.h): for each
// rank of the report, the GPU activities of its median-step-time iteration, one row per (GPU,
// stream), each slice with its class. Built from the trace (the report holds no events).
#pragma once

#include <cstddef>
#include <vector>

#include "engine/analysis.h"
#include "report/html.h"

namespace overlapscope::engine {

// At most max_slices slices per rank (the longest are kept; RankTimeline::dropped counts the
// rest). Ranks without iterations get no timeline. Never fails.
std::vector<report::RankTimeline> IterationTimelines(const Analysis& analysis, size_t max_slices = 3000);

}  // namespace overlapscope::engine
