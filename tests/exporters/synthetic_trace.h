// Small hand-made traces for the export tests; every number is chosen so the expected
// tracks, nesting, lanes and flows can be worked out by hand (see synthetic_trace.cc).
#pragma once

#include "model/trace.h"

namespace overlapscope::testing {

// One rank (pid 100, host "node1"), one thread (tid 100), GPU 0 "NVIDIA H100" with streams 7
// (compute), 13 (nccl) and 20 (copy). The layout is described in synthetic_trace.cc.
model::Trace MakeSmallTrace();

// `ranks` processes, each with one thread and one GPU with a compute and a comm stream, and
// `steps` iterations (ProfilerStep#i) of launch + kernel pairs. Used for round trips and the
// benchmark. Times start at `base_ns`.
model::Trace MakeStepsTrace(int ranks, int steps, int kernels_per_step, int64_t base_ns);

}  // namespace overlapscope::testing
