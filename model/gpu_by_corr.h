// The GPU activities by (process, correlation id): Trace::GpuByCorrelation's index, built by
// TraceBuilder::Finalize as its last step (model-internal; not for the analyses). Its own small
// header so that the threads it takes leave trace_builder.h, which every importer includes, as is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace overlapscope::model {

// Fills *keys and *refs (cleared first) with every activity of `all` (the GPU activities in time
// order, TraceBuilder::GpuRefsByTime) that has a correlation id, sorted by (process, correlation
// id), in `all`'s order within one key. The keys are gathered, sorted (base::ParallelSort: the
// keys are unique, `all`'s position among them, so std::sort's order) and written out in ranges of
// at least `min_chunk` on up to `threads` threads: the same vectors at any count. Reads only the
// activities' stream, device and correlation id. Failure modes: std::bad_alloc (rethrown on the
// calling thread).
void BuildGpuByCorrelationIndex(const Trace& t, const std::vector<GpuRef>& all, int threads,
                                std::vector<std::pair<int32_t, int64_t>>* keys, std::vector<GpuRef>* refs,
                                size_t min_chunk = size_t{1} << 15);

}  // namespace overlapscope::model
