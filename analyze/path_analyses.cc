#include "analyze/path_analyses.h"

#include <optional>
#include <utility>

#include "analyze/path_walker.h"
#include "base/phase_log.h"
#include "base/run_all.h"

namespace overlapscope::analyze {
namespace {

// Runs `b` and `a` at once when parallel (on the threads of the call around, base::RunAll), else
// `b` then `a` on this thread.
template <typename A, typename B>
void Beside(bool parallel, A&& a, B&& b) {
  base::RunAll(parallel ? 2 : 1, {b, a});
}

}  // namespace

absl::Status AnalyzePathsAndConcurrency(const model::Trace& trace, const PathInputs& in,
                                        const PathAndConcurrencyOptions& opt, PathAnalyses* paths,
                                        ConcurrencyResult* concurrency) {
  if (!opt.paths) {
    if (!opt.concurrency_too) return absl::OkStatus();
    absl::StatusOr<ConcurrencyResult> conc = AnalyzeStreamConcurrency(trace, in.gpu, *in.iterations, opt.concurrency);
    if (!conc.ok()) return conc.status();
    *concurrency = std::move(conc).value();
    return absl::OkStatus();
  }
  const bool parallel = opt.threads > 1;
  // The index and the concurrency sweep take about as long as the two walks together: pairing
  // them so keeps both threads busy (bench/critical_path_bench prints the phases).
  std::optional<PathIndex> ix;
  absl::StatusOr<ConcurrencyResult> conc;
  if (opt.concurrency_too) {
    Beside(
        parallel, [&] { ix.emplace(trace, in); },
        [&] { conc = AnalyzeStreamConcurrency(trace, in.gpu, *in.iterations, opt.concurrency); });
    if (!conc.ok()) return conc.status();
    *concurrency = std::move(conc).value();
  } else {
    base::PhaseSpan s_("path index");
    ix.emplace(trace, in);
  }
  Beside(
      parallel,
      [&] {
        base::PhaseSpan s_("critical path");
        paths->critical_path = CriticalPathOn(*ix, opt.critical_path);
      },
      [&] {
        base::PhaseSpan s_("stragglers");
        paths->stragglers = StragglerCausesOn(*ix, opt.stragglers);
      });
  return absl::OkStatus();
}

}  // namespace overlapscope::analyze
