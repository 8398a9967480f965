// Straggler causes (METRICS.md §8): for each collective instance matched across ranks
// (cross_rank.h) in which someone waited, the rank that arrived last, how late it was, and what
// made it late compared with the median rank.
//
// lateness_ns = max(arrival) − median(arrival) (the median of an even count is the mean of the two
// middle arrivals, floored). The median rank is the participant at the lower middle of the
// arrivals. For the late rank and the median rank alike, the window runs from the end of the
// participant's previous collective on the same GPU (the latest that ended before the arrival;
// without one, the start of the iteration around the arrival, else the rank's first event) to its
// arrival, and the rank's own critical path in that window (critical_path.h, peers not followed)
// says what the rank was doing: which GPU activities by name, host work by the op, call or range
// it lay in, syncs, launch latency.
// The difference between the two ranks' arrivals, behind_ns = arrival(late) − arrival(median),
// is then split exactly into
//   started_later_ns  = window start(late) − window start(median), plus
//   Σ over categories and names of (time on the late path − time on the median path), plus
//   unexplained_ns    = what a walk that stopped early (no predecessor) did not cover.
// For an odd number of ranks behind_ns = lateness_ns.
//
// Aggregated per (participant, op): how often it arrived last among the matched instances of that
// op it took part in, its summed lateness, and per name the summed difference, so a report can say
// "rank 5 arrives last in 80 % of all-reduces; 70 % of its lateness is `kernel X` running 12 %
// slower than the median rank" (share = Σ delta / Σ behind_ns; slower = Σ late / Σ median − 1).
//
// Units: *_ns int64 nanoseconds. Never fails; instances without skew are skipped.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/critical_path.h"
#include "analyze/path_inputs.h"
#include "model/trace.h"

namespace overlapscope::analyze {

// One name on the late and the median rank's paths: a GPU activity (kCompute, kComm, kMemory), or
// the host op, runtime call or range that host time lay in (kHostLaunch: the innermost one, and
// also the innermost record_function/NVTX range around it other than the iteration's, which so
// counts every op inside it; kHostBlocked: the blocking call). Untraced host time has no name.
// Nested names overlap: their deltas do not add up to behind_ns.
struct NameDelta {
  model::StringId name = 0;
  PathCategory category = PathCategory::kCompute;
  int64_t late_ns = 0, median_ns = 0;
  int64_t late_count = 0, median_count = 0;  // path segments of that name
  int64_t delta_ns() const { return late_ns - median_ns; }
};

struct StragglerCause {
  int32_t instance = model::kNone;  // index into CrossRankResult::instances
  model::StringId op = 0;
  int32_t late = model::kNone, median = model::kNone;  // participants (CrossRankResult::participants)
  int32_t late_rank = model::kNone, median_rank = model::kNone;
  int64_t late_arrival_ns = 0, median_arrival_ns = 0;
  int64_t lateness_ns = 0;  // max(arrival) − median(arrival)
  int64_t behind_ns = 0;    // late_arrival_ns − median_arrival_ns
  int64_t late_window_start_ns = 0, median_window_start_ns = 0;
  int64_t started_later_ns = 0;  // late_window_start_ns − median_window_start_ns
  int64_t unexplained_ns = 0;    // behind − started_later − (late path − median path)
  PathComposition late_path, median_path;
  std::vector<NameDelta> names;  // by delta_ns descending (StragglerOptions::top_n)
};

struct StragglerSummary {
  int32_t participant = model::kNone;
  int32_t rank = model::kNone;
  model::StringId op = 0;
  int64_t instances = 0;   // matched instances of `op` it took part in
  int64_t times_last = 0;  // of those, where it arrived last (with skew > 0)
  int64_t lateness_ns = 0, behind_ns = 0, started_later_ns = 0, unexplained_ns = 0;  // Σ over times_last
  PathComposition late_path, median_path;                                            // Σ over times_last
  std::vector<NameDelta> names;  // Σ per name, by delta_ns descending (top_n)
};

struct StragglerOptions {
  size_t top_n = 5;
};

struct StragglerResult {
  std::vector<StragglerCause> causes;        // one per matched instance with skew > 0, instance order
  std::vector<StragglerSummary> summaries;   // by times_last, then lateness, descending
  int64_t windows_from_iteration_start = 0;  // windows without a previous collective
  PathCounts counts;
};

StragglerResult AnalyzeStragglerCauses(const model::Trace& trace, const PathInputs& in, const StragglerOptions& opt);

// Both path analyses on one shared index (what AnalyzeAll runs).
struct PathAnalyses {
  CriticalPathResult critical_path;
  StragglerResult stragglers;
};
PathAnalyses AnalyzePaths(const model::Trace& trace, const PathInputs& in, const CriticalPathOptions& cp,
                          const StragglerOptions& st);

}  // namespace overlapscope::analyze
