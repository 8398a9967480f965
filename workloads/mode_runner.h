// Runs one phase of a workload on every rank and, when asked, once more under capture.
//
// The body runs on each rank's thread: it prepares its buffers, times `iters` iterations after
// `warmup` (timing.h), validates, and writes its medians (ms) into `fig`. The figures of all
// ranks are merged as the maximum over ranks (a step is as slow as its slowest rank).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "workloads/rank_group.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

using PhaseBody = std::function<absl::Status(RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig)>;

// Timed run; merges the figures into `out` (max over ranks). Errors of the ranks come back joined.
absl::Status RunPhase(RankGroup& g, const RunParams& p, const PhaseBody& body, std::map<std::string, double>& out);

// RunPhase, then (hooks.iters > 0) hooks.begin(mode), hooks.iters iterations with NVTX
// iteration ranges, hooks.end(mode). The captured run's figures are not merged.
absl::Status RunMode(RankGroup& g, const std::string& mode, const RunParams& p, const CaptureHooks& hooks,
                     const PhaseBody& body, std::map<std::string, double>& out);

}  // namespace overlapscope::workloads
