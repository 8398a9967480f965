// The job's step of a replay (engine-internal): per iteration the slowest rank's step, the change a
// prediction makes to it, and the iterations in which a rank was late; rendered as a head line of
// the text, Markdown and HTML outputs and as `job` in the JSON (docs/report-schema.md "Replay").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/replay/replay.h"
#include "model/trace.h"
#include "nlohmann/json.hpp"

namespace overlapscope::engine {

// The job's step (the slowest rank's per iteration, iterations matched by number) and the change a
// prediction makes to it. A base whose ranks stall in turn on their hosts (a late rank: its peers
// wait for it at a collective) keeps those stalls in the replay and in the prediction, but a change
// that moves a collective moves the wait with it, often into another iteration (an async
// collective is waited for at the next one): the median of the predicted steps then lands on a
// stalled iteration where the replayed median did not, or the other way round, and the difference
// of the two medians says more about where the stalls fell than about the change. So the change is
// taken per iteration, predicted against replayed of the same iteration, and its median over the
// iterations is the job's change: a stall that moved counts as one outlier up and one down.
struct ReplayJobSummary {
  struct Late {
    int64_t iteration = -1;
    int32_t rank = model::kNone;  // the peer waited for longest (kNone: no rank)
    int64_t wait_ns = 0;          // how long a peer's collective waited for it
  };
  int64_t iterations = 0;  // iterations (by number) with GPU work on some rank
  int32_t ranks = 0;       // processes with iterations
  // Medians over iterations of the slowest rank's step.
  int64_t measured_step_ns = 0, replayed_step_ns = 0;
  // Median over iterations of (predicted − replayed) / replayed of the job's step, without and
  // with contention (nullopt: no prediction, or --no-contention).
  std::optional<double> change, change_contention;
  // replayed_step_ns × (1 + change): the prediction of the job's step (not the median of the
  // predicted steps, which the moved stalls decide).
  std::optional<int64_t> predicted_step_ns, predicted_contention_step_ns;
  // Iterations with a late rank: a collective of some rank waited for a peer at least
  // kLateRankShare of the iteration's replayed job step, by iteration number. Named beside the
  // prediction (the rule for the change does not depend on it).
  std::vector<Late> late;
  // The replay's median |error| over every rank-iteration exceeds `flag_above`: the prediction is
  // printed with that said next to it.
  bool unreliable = false;
  double median_abs_error = 0;
  double flag_above = 0;  // the replay error above which it is `unreliable` (a fraction)
};

// 10 %: the error a prediction is allowed (METRICS §11's goal); a wait of that size alone moves a
// step by more. Skew between ranks stays below it in the steady iterations of the what-if bases
// of tests/data (28 us of 556 on 4 x H100, 15 of 453 on 2), but for one whose GPU 0 ran its GEMM
// 10 % slower (whatif_torch/default/run2: 51-57 us of 509; a late rank all the same).
inline constexpr double kLateRankShare = 0.10;

// `flag_above`: the replay error above which a prediction is flagged (engine/replay.h kReplayErrorFlag).
ReplayJobSummary SummarizeJob(const analyze::replay::ReplayResult& r, double flag_above);

// The head line: the job's step, the predicted change and how it was taken, the late ranks.
std::string ReplayJobLine(const ReplayJobSummary& job);
// `job` of the JSON document.
nlohmann::ordered_json ReplayJobJson(const ReplayJobSummary& job);

}  // namespace overlapscope::engine
