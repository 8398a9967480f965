// Per-rank summary of a replay (engine-internal): medians over a rank's iterations of every
// step figure, the mean critical-path composition, and whether its replay error is too large for
// its predictions to be trusted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/replay/replay.h"
#include "model/trace.h"

namespace overlapscope::engine {

struct ReplayRankSummary {
  model::ProcessId process = model::kNone;
  int32_t rank = model::kNone;
  std::string label;  // "rank 3" or "pid 42"
  int64_t iterations = 0;
  double median_error = 0, worst_abs_error = 0;
  bool unreliable = false;  // |median replay error| > the flag threshold
  // Step, comm and exposed comm: medians; critical path: means.
  analyze::replay::StepFigures measured, replayed;
  std::optional<analyze::replay::StepFigures> predicted, predicted_contention;
  // The median over the rank's iterations of (predicted − replayed) / replayed step of the same
  // iteration (the job's rule, engine/replay_job.h: a late peer's wait that a change moves into
  // another iteration does not decide it); nullopt without that prediction.
  std::optional<double> change, change_contention;
};

std::vector<ReplayRankSummary> SummarizeRanks(const model::Trace& t, const analyze::replay::ReplayResult& r,
                                              double flag_above);

}  // namespace overlapscope::engine
