// Building the typed report::Report from the analyses (report/report.h says how the parts
// assemble). Everything here reads the trace model and the analysis results once and resolves
// every id to what the report prints; nothing renders.
//
// One trace:            BuildReport(trace, analysis, info)
// One rank at a time:   for each rank: BuildRankReport(...) and BuildGlobalPartial(...) from
//                       that rank's trace and results; BuildCrossRank from the cross-rank
//                       result; then Assemble(header, MergePartials(partials), ranks, cross):
//                       the same JSON as BuildReport on all ranks at once; the job-wide
//                       sections of METRICS §8-9 (BuildCriticalPath, BuildStragglerCauses,
//                       BuildStreamConcurrency) are set on the assembled report.
//
// Out-of-range ids in the results (an analysis of another trace, a corrupted result) are
// rendered as absent, never read out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "model/trace.h"
#include "report/render.h"
#include "report/report.h"

namespace overlapscope::report {

// What the report says besides the analysis results.
struct ReportInfo {
  std::vector<std::string> inputs;  // trace paths as given
  std::string tool_version = "0.1.0";
  int64_t top_n = 10;                       // rows of every "top" list
  analyze::ClockAlignment clock_alignment;  // how the clocks were aligned at load
  int threads = 1;                          // for the parts that can use several; same report at any count
};

// Per-rank partial of the global sections (merged by MergePartials; see report/report.h).
struct ActivityTotal {  // one (kind, name, rule) of the classification
  std::string kind, name, cls;
  int64_t rule = -1;
  int64_t count = 0, total_ns = 0, max_ns = 0;
};
// Durations and per-iteration totals of one (kind, name): top_kernels' median_ns and
// per_iteration (merged by concatenation / sum).
struct NameSamples {
  std::string kind, name;
  std::vector<int64_t> durations_ns;
  std::vector<IterationNs> per_iteration;  // ascending iteration
};
struct GlobalPartial {
  bool has_events = false;
  TimeSpan time_span;
  std::vector<ClassTotal> class_totals;  // compute, comm, memory, sync
  Iterations iterations;                 // counts (marker included)
  std::vector<ActivityTotal> activities;
  std::vector<NameSamples> samples;
};

// The whole report of one trace.
Report BuildReport(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);

// The parts.
Report Header(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info);
// `threads`: for the findings' items (the same report at any count).
RankReport BuildRankReport(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::RankSummary& s,
                           const analyze::CrossRankResult& cross, int64_t top_n, int threads = 1);
// A rank's hta_compat from its analysis (also the per-rank reduction's other filter variant).
HtaCompat BuildHtaCompat(const analyze::HtaCompat& h);
// `overlap`: the overlap results of the devices the collectives ran on (every device of `t`):
// each instance's ranks[].exposed_ns is its collective's own time minus the hidden part there.
CrossRank BuildCrossRank(const model::Trace& t, const analyze::CrossRankResult& x,
                         const std::vector<analyze::DeviceOverlap>& overlap, int64_t top_n);
// The same from each collective's exposed time (parallel to t.collectives(), -1: unknown): the
// per-rank reduction computes it on each rank's own trace (ExposedByCollective there).
// With `instances` false, instances stays empty: BuildInstance builds them one at a time.
CrossRank BuildCrossRank(const model::Trace& t, const analyze::CrossRankResult& x, const std::vector<int64_t>& exposed,
                         int64_t top_n, bool instances = true);
// collectives_across_ranks.instances[k] (index k + 1) of BuildCrossRank; k < x.instances.size().
Instance BuildInstance(const model::Trace& t, const analyze::CrossRankResult& x, const std::vector<int64_t>& exposed,
                       size_t k);
std::vector<int64_t> ExposedByCollective(const model::Trace& t, const std::vector<analyze::DeviceOverlap>& overlap);
// METRICS §8, §9 (build_paths.cc): job-wide sections, like collectives_across_ranks.
CriticalPath BuildCriticalPath(const model::Trace& t, const analyze::CriticalPathResult& cp);
StragglerCauses BuildStragglerCauses(const model::Trace& t, const analyze::StragglerResult& st,
                                     const analyze::CrossRankResult& cross);
StreamConcurrency BuildStreamConcurrency(const model::Trace& t, const analyze::ConcurrencyResult& c);
// A rank's summary figures of them (critical_path_ns, critical_path_<category>_share,
// straggler_lateness_ns): its rows of the job-wide results, like its cross-rank figures.
void AddPathSummary(const analyze::CriticalPathResult& cp, const analyze::StragglerResult& st,
                    const analyze::CrossRankResult& cross, model::ProcessId process, RankSummary* summary);
// A rank's summary figures of the cross-rank matching (collective_wait_ns, collective_times_last):
// its rows of `cross`, as BuildRankReport sets them (a rank built with an empty cross-rank result
// gets them later from the job's).
void AddCrossRankSummary(const analyze::CrossRankResult& cross, model::ProcessId process, RankSummary* summary);
GlobalPartial BuildGlobalPartial(const model::Trace& t, const analyze::AnalysisResult& r);
GlobalPartial MergePartials(const std::vector<GlobalPartial>& parts);
// top_n names per class by total time (ties: name, then kind); each (kind, name) takes the class
// of its entry with the most time (then the most activities, then the lowest rule).
std::vector<KernelTotal> TopKernels(const std::vector<ActivityTotal>& activities, int64_t top_n);
// Sets median_ns and per_iteration of each of `top` from the samples of its (kind, name).
void AddSamples(const std::vector<NameSamples>& samples, std::vector<KernelTotal>* top);
Report Assemble(Report header, const GlobalPartial& merged, std::vector<RankReport> ranks, CrossRank cross);

// --explain-classes.
ClassExplanations BuildClassExplanations(const model::Trace& t, const analyze::ClassificationSummary& c);

// The metric names a gate may use: the keys of every rank summary (gap causes and finding kinds
// of this build included), in their JSON order.
std::vector<std::string> GateMetricNames();

}  // namespace overlapscope::report
