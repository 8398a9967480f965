// Skew of collectives as the ranks measure it themselves (CUDA events right before and right
// after each collective, on the stream that runs it). All ranks leave a collective together, so
// for one instance rank r's duration is end - own start, and
//   skew  = max over ranks of duration - min over ranks of duration  (= max(start) - min(start))
//   wait_r = duration_r - min over ranks of duration                   (= max(start) - own start)
// which are METRICS.md §6's skew_ns and wait_ns, without comparing clocks of different GPUs.
//
// Pure functions (no CUDA), so they are unit-tested with hand-made numbers. Units: ms (double),
// as CUDA events give them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace overlapscope::workloads {

// Per rank: series name (a mode, e.g. "overlap") -> durations of its collective instances in ms,
// in the order the rank ran them (the same order on every rank).
using Series = std::map<std::string, std::vector<double>>;

struct SkewStats {
  int64_t instances = 0;
  double median_skew_ms = 0, max_skew_ms = 0;
  std::vector<double> median_wait_ms;  // per rank
};

// durations[r][i]: rank r's duration of instance i. Fails when fewer than 2 ranks or when the
// ranks ran different numbers of instances (the error gives the counts).
absl::StatusOr<SkewStats> ComputeSkew(const std::vector<std::vector<double>>& durations);

// Writes <prefix><name>_skew_median_ms, _skew_max_ms, _skew_instances and
// _wait_rank<R>_median_ms for every series the ranks share into `fig`. `by_rank` is indexed by
// rank. Series some rank lacks are an error.
absl::Status AddSkewFigures(const std::vector<Series>& by_rank, const std::string& prefix,
                            std::map<std::string, double>& fig);

// The table lines of the skew figures in `fig` (those AddSkewFigures wrote), "" when none.
std::string RenderSkew(const std::map<std::string, double>& fig, int nranks);

// Text form of a Series (one line per series: name, TAB, comma-separated %.17g values), for
// sending between MPI ranks; Parse fails on malformed text, naming the line.
std::string SerializeSeries(const Series& s);
absl::StatusOr<Series> ParseSeries(const std::string& text);

}  // namespace overlapscope::workloads
