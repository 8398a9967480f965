// Entry point of the analyses: everything METRICS.md §1–5 defines, computed once over a
// finalized model::Trace. Pure: no I/O, no JSON, no CUDA. Renderers (exporters/report_*)
// and the Perfetto exporter draw the plain structs below.
//
// Units: every *_ns field is int64_t nanoseconds on the trace's clock. Ratios are std::optional
// and absent (never NaN) when their denominator is zero.
//
// Failure modes: InvalidArgument for a bad user rule (regex) in AnalyzeOptions::rules; otherwise
// any trace that model::TraceBuilder accepted is analyzed (missing facts are counted, not guessed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyze/classify.h"
#include "analyze/cpu_blocking.h"
#include "analyze/critical_path.h"
#include "analyze/cross_rank.h"
#include "analyze/gpu_idle.h"
#include "analyze/graph/graph.h"
#include "analyze/interval_set.h"
#include "analyze/iterations.h"
#include "analyze/launch_stats.h"
#include "analyze/overlap.h"
#include "analyze/straggler_causes.h"
#include "analyze/stream_concurrency.h"
#include "analyze/sync_points.h"
#include "analyze/windows.h"
#include "model/trace.h"

namespace overlapscope::analyze {

struct AnalyzeOptions {
  ClassRules rules = ClassRules::Defaults();
  std::string iteration_marker = "ProfilerStep#";  // prefix of the iteration range names
  int64_t min_gap_ns = 5000;                       // §4 --min-gap
  int64_t runtime_cutoff_ns = 50000;               // HTA's runtime_cutoff (50 µs)
  int64_t launch_delay_cutoff_ns = 100000;         // HTA's launch_delay_cutoff (100 µs)
  size_t top_n = 10;                               // lengths of "top" lists (analyses' own)
  std::vector<GroupSpec> groups;                   // §9 --group NAME=REGEX (stream_concurrency.h)
  // Keep every iteration's critical-path segments (the Perfetto track draws them; memory grows
  // with the path, so only when asked).
  bool keep_path_segments = false;
  // The critical path and straggler causes (METRICS §8). false leaves them out (empty results):
  // the per-rank reduction (engine/reduce.h) cannot compute them, since the job's path crosses
  // ranks at collectives and needs every rank's events at once.
  bool critical_path = true;
  // The transfer/wait split of communication (METRICS §2, analyze/comm_wait.h). Like the
  // critical path it needs every rank's events at once (each rank's comm activities against the
  // last arrival), so the per-rank reduction leaves it out (null / n/a), and so does
  // `--critical-path off`, which prints what the per-rank reduction prints.
  bool comm_wait_split = true;
  // Findings' messages name times after the trace's start ("+1.234 ms"); with this they carry a
  // marker with the absolute time instead (findings/finding_rule.h), for the per-rank reduction,
  // which knows the job's start only when every rank is done.
  bool mark_message_times = false;
  // Also HTA's figures under the opposite step-filter decision (AnalysisResult::hta_other) and
  // the trace's step names (hta_step_names): HTA filters when the whole job holds >= 2 distinct
  // ProfilerStep#N names, which the per-rank reduction knows only once every rank is in.
  bool hta_both_filters = false;
  // Independent analyses run on this many threads (1: all on the caller's thread). Results do
  // not depend on it.
  int threads = 2;
};

// One rank (process): the summary the report leads with.
struct RankSummary {
  model::ProcessId process = model::kNone;
  int32_t rank = model::kNone;
  int64_t pid = -1;
  std::vector<int32_t> devices;  // indexes into AnalysisResult::overlap / idle (same order)
  // Totals over the rank's devices (sums of per-device figures).
  int64_t comm_ns = 0, hidden_comm_ns = 0, exposed_comm_ns = 0, compute_ns = 0;
  std::optional<double> overlap_ratio;  // hidden / comm over the rank's devices
  int64_t contention_ns = 0, net_overlap_gain_ns = 0;
  // METRICS §2 transfer and waiting, over the rank's devices whose arrivals are known (wait_known).
  bool wait_known = false;
  int64_t comm_wait_ns = 0, hidden_wait_ns = 0, exposed_wait_ns = 0;
  int32_t waited_for = model::kNone;  // the participant waited for most (CrossRankResult index)
  int64_t waited_for_ns = 0;          // how long
  // HTA's number for this rank (HtaCompat): its default (GPU work launched before the last
  // ProfilerStep when the trace has >= 2 steps) and the same rules over the whole trace.
  std::optional<double> hta_compat_overlap_pct;
  std::optional<double> hta_wholetrace_overlap_pct;
  int64_t blocked_ns = 0;  // over all threads of the rank
  // The most-blocked thread of the rank (largest blocked_ns): its blocked_ns / active span.
  // Absent when no thread of the rank has an active span.
  std::optional<double> blocked_share;
  model::ThreadId blocked_thread = model::kNone;
  int64_t gpu_span_ns = 0, gpu_idle_ns = 0, gpu_gap_ns = 0;
  std::optional<double> gpu_idle_share;  // idle / span
  int64_t gap_cause_ns[kGapCauses] = {0, 0, 0, 0};
  std::vector<int64_t> finding_count, finding_cost_ns;  // parallel to FindingKinds()
};

struct AnalysisResult {
  ClassificationSummary classes;
  IterationAssignment iterations;
  std::vector<DeviceOverlap> overlap;       // one per device with GPU activity, in DeviceId order
  std::vector<HtaCompat> hta;               // one per process with GPU activity
  std::vector<HtaCompat> hta_other;         // AnalyzeOptions::hta_both_filters: the other filter decision
  std::vector<std::string> hta_step_names;  // hta_both_filters: the first 2 distinct step names
  BlockingResult blocking;
  std::vector<DeviceIdle> idle;  // parallel to `overlap`
  std::vector<IdleGap> gaps;     // all devices, sorted by (device, start)
  SyncResult sync;
  LaunchStats launch;
  std::vector<RankSummary> ranks;  // one per process
  CrossRankResult cross_rank;      // METRICS §6 (analyze/cross_rank.h): matched collectives
  // Capture windows of own captures (analyze/windows.h), sorted by (process, start); empty for
  // traces recorded throughout. The figures above count only time inside them.
  std::vector<WindowFigures> windows;
  CriticalPathResult critical_path;  // METRICS §8 (analyze/critical_path.h)
  StragglerResult stragglers;        // METRICS §8 (analyze/straggler_causes.h)
  ConcurrencyResult concurrency;     // METRICS §9 (analyze/stream_concurrency.h)
  int64_t min_gap_ns = 0;
  // The dependency graph's counts (analyze/graph/graph.h GraphStats): edges by kind, recorded and
  // inferred apart, and the cross-stream waits recorded, inferred, ambiguous and unresolved; in
  // total and per process (Trace::processes() order).
  graph::GraphStats dependency_graph;
  std::vector<graph::GraphStats> dependency_graph_by_process;
};

absl::StatusOr<AnalysisResult> AnalyzeAll(const model::Trace& trace, const AnalyzeOptions& options);

}  // namespace overlapscope::analyze
