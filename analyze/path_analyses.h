// The critical path and straggler causes (METRICS.md §8) and stream concurrency (§9) together, as
// AnalyzeAll runs them (bench/critical_path_bench times this very function).
//
// With threads > 1 they run in two fork-joins on two threads: the path index beside the
// concurrency sweep, then the critical path beside the straggler causes (both only read the
// index). Results do not depend on the number of threads. A thread that cannot be started runs
// its part on the caller's thread.
//
// Failure modes: InvalidArgument from AnalyzeStreamConcurrency (a bad group); the path analyses
// never fail.
#pragma once

#include "absl/status/status.h"
#include "analyze/critical_path.h"
#include "analyze/iterations.h"
#include "analyze/path_inputs.h"
#include "analyze/straggler_causes.h"
#include "analyze/stream_concurrency.h"
#include "model/trace.h"

namespace overlapscope::analyze {

struct PathAndConcurrencyOptions {
  CriticalPathOptions critical_path;
  StragglerOptions stragglers;
  ConcurrencyOptions concurrency;
  int threads = 2;
  // false: only stream concurrency; `paths` is left empty (AnalyzeOptions::critical_path).
  bool paths = true;
  // false: no stream concurrency (`concurrency` is left as it is: the caller ran it earlier,
  // beside other passes).
  bool concurrency_too = true;
};

// `in.iterations` must be set (the windows of both analyses).
absl::Status AnalyzePathsAndConcurrency(const model::Trace& trace, const PathInputs& in,
                                        const PathAndConcurrencyOptions& opt, PathAnalyses* paths,
                                        ConcurrencyResult* concurrency);

}  // namespace overlapscope::analyze
