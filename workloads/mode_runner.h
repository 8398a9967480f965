// Runs one phase of a workload on every rank and, when asked, once more under capture.
//
// A phase has three steps, each run on every rank's thread: `prepare` (clear outputs, reset
// counters), `run` (time `iters` iterations after `warmup`, timing.h, and write medians in ms
// into `fig`) and `validate` (check the outputs on the device). Under capture only `run` lies
// inside the captured window, so the trace shows the workload and not the harness. The figures
// of all ranks are merged as the maximum over ranks (a step is as slow as its slowest rank).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "workloads/rank_group.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

struct PhaseBody {
  std::function<absl::Status(RankContext& ctx)> prepare;  // may be empty
  std::function<absl::Status(RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig)> run;
  std::function<absl::Status(RankContext& ctx)> validate;  // may be empty
};

// Timed run (prepare, run, validate); merges the figures into `out`. Rank errors come back joined.
absl::Status RunPhase(RankGroup& g, const RunParams& p, const PhaseBody& body, std::map<std::string, double>& out);

// RunPhase, then (hooks.iters > 0) prepare, hooks.begin(mode), `hooks.iters` iterations after
// one warm-up with NVTX iteration ranges, hooks.end(mode), validate. The captured run's figures
// are not merged.
absl::Status RunMode(RankGroup& g, const std::string& mode, const RunParams& p, const CaptureHooks& hooks,
                     const PhaseBody& body, std::map<std::string, double>& out);

// Only the captured part of RunMode (nothing when hooks.iters == 0).
absl::Status CaptureMode(RankGroup& g, const std::string& mode, const RunParams& p, const CaptureHooks& hooks,
                         const PhaseBody& body);

}  // namespace overlapscope::workloads
