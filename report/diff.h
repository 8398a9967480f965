// Run-to-run comparison of two reports (`overlapscope diff`, METRICS.md §10): ranks matched, the
// per-rank summary metrics, per-iteration distributions judged by the rank-sum test
// (report/rank_sum.h), kernels by name and class, collectives by (op, communicator, size), and a
// verdict: the changes that moved the step time most. A pure function of two report::Reports;
// rendered as text, Markdown and JSON (schema overlapscope.diff/1, docs/diff-schema.md).
//
// Deltas are TEST − BASE, absolute and relative to BASE (relative absent when BASE is 0).
// Step time of an iteration (per rank): the GPU time from the later of the iteration's first GPU
// start and the previous iteration's last GPU end, to its last GPU end (the spacing of step ends
// when the GPU is kept busy; work the host queued early does not count twice); the maximum over
// the rank's GPUs. A rank's step_time_ns is the median over its iterations (absent without
// iterations).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/rank_sum.h"
#include "report/report.h"

namespace overlapscope::report {

inline constexpr char kDiffSchema[] = "overlapscope.diff/1";
inline constexpr char kDiffSchemaVersion[] = "1.2";

// One value on both sides. Absent: the side lacks it (ratio without denominator, rank or kernel
// missing on that side).
struct Delta {
  std::optional<double> base, test;
  std::optional<double> delta() const;     // test - base when both present
  std::optional<double> relative() const;  // delta / |base| when both present and base != 0
};

struct MetricDelta {
  std::string metric;  // summary key ("exposed_comm_ns"), step_time_ns first
  bool is_ratio = false;
  Delta value;
};

// A metric per iteration on both sides, judged (METRICS §10).
struct SeriesDelta {
  std::string metric;
  std::vector<double> base, test;  // per iteration, in iteration order
  Judgement judged;
};

struct RankDiff {
  std::string label;  // the test side's label ("rank 1")
  std::optional<int64_t> rank;
  std::string matched_by;  // "rank", "gpu", "order"
  std::vector<MetricDelta> summary;
  // step_time_ns, comm_ns, hidden_comm_ns, exposed_comm_ns, overlap_ratio, compute_ns,
  // contention_ns; gap_<cause>_ns (both reports 1.7 or later); critical_path_ns (the rank's own
  // path per iteration, when either report has one).
  std::vector<SeriesDelta> per_iteration;
};

struct KernelDiff {
  std::string cls, kind, name;
  std::string status;  // "changed", "same", "new" (only in TEST), "gone" (only in BASE)
  Delta count, total_ns, median_ns;
  SeriesDelta per_iteration;  // per-iteration totals (all ranks)
};

struct ClassDiff {
  std::string cls;
  Delta count, total_ns;
};

struct CollectiveDiff {
  std::string op, communicator;
  int64_t size_bytes = -1;  // -1: unknown
  // Medians over the instances; exposed_ns: of each instance's exposed time averaged over its
  // ranks (instances[].ranks[].exposed_ns, reports 1.7 on; absent before).
  Delta instances, bus_time_ns, exposed_ns, skew_ns, busbw_gbps;
};

// One entry of the verdict: a change that moved the step time, in ns per iteration and rank.
struct Change {
  std::string what;                 // "kernel ampere_gemm…", "exposed communication", "GPU idle (launch_bound)"
  std::string where;                // rank label, or "all ranks"
  double base_ns = 0, test_ns = 0;  // per iteration (per rank)
  Judgement judged;                 // kNotJudged without per-iteration values (idle by cause before 1.7)
  bool per_iteration_values = false;
  double delta_ns() const { return test_ns - base_ns; }
};

struct Verdict {
  std::vector<SeriesDelta> step_time;  // per matched rank (same order as ReportDiff::ranks)
  std::vector<Delta> overlap_ratio;    // per matched rank
  std::vector<Change> changes;         // largest |delta| first
};

struct ReportDiff {
  std::vector<std::string> base_inputs, test_inputs;
  // Data-loss warnings of either side's import ("BASE: <message>"), printed first.
  std::vector<std::string> warnings;
  std::string base_schema_version, test_schema_version;
  int64_t base_iterations = 0, test_iterations = 0;
  Verdict verdict;
  std::vector<RankDiff> ranks;
  std::vector<std::string> only_in_base, only_in_test;  // rank labels
  std::vector<KernelDiff> kernels;                      // |total delta| descending
  std::vector<ClassDiff> classes;
  std::vector<CollectiveDiff> collectives;
  bool top_kernels_limited = false;  // either report lists only its top N per class
};

struct DiffInfo {
  std::string base_schema_version = kSchemaVersion, test_schema_version = kSchemaVersion;
};
ReportDiff DiffReports(const Report& base, const Report& test, const DiffInfo& info = {});

// Per-iteration step times of one rank (see above), in iteration order.
std::vector<double> StepTimes(const RankReport& rk);

// --fail-on METRIC OP THRESHOLD: OP '>' or '<', THRESHOLD a signed number, '%' for relative to
// BASE (e.g. 'step_time_ns>+5%', 'overlap_ratio<-0.05'). Fails a rank when its delta (or relative
// delta in %) is strictly beyond the threshold, or when the metric exists on one side only.
struct DiffGate {
  std::string text, metric;
  char op = '>';
  double threshold = 0;
  bool relative = false;
};
absl::StatusOr<DiffGate> ParseDiffGate(std::string_view expr);
struct DiffGateResult {
  bool passed = true;
  std::vector<std::string> lines;  // "FAIL rank 1: step_time_ns 445021 -> 504827 (+59806, +13.4%) > +5%"
};
DiffGateResult EvaluateDiffGates(const ReportDiff& d, const std::vector<DiffGate>& gates);
std::vector<std::string> DiffMetricNames(const ReportDiff& d);  // names a gate may use

// Several matched ranks: the job overview of the change (report/overview.h, diff_overview.cc):
// per rank TEST - BASE of each overview column, the ranks whose change stands out first.
struct JobOverview;
JobOverview DiffOverview(const ReportDiff& d);

std::string RenderDiffText(const ReportDiff& d);
std::string RenderDiffMarkdown(const ReportDiff& d);
std::string RenderDiffJson(const ReportDiff& d, const std::vector<DiffGate>& gates = {});

}  // namespace overlapscope::report
