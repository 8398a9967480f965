// report::Report — the content of the JSON report `overlapscope.report/1` (docs/report-schema.md)
// as plain structs: built once from the analysis (report/build.h), then rendered by pure
// functions of it (report/render.h: JSON, text, Markdown; report/gates.h). Nothing here refers
// to the trace model or the analyses: names are strings, references are resolved (labels,
// native stream and thread ids, iteration numbers), so a Report can be kept, merged, compared
// or handed to another process on its own.
//
// Units: *_ns are int64 nanoseconds on the trace clock (aligned as at load); *_us only in
// HtaCompat; ratios are std::optional<double>, absent when their denominator is 0 (rendered as
// null / "n/a", never NaN). An optional id (stream, thread, iteration) is absent when unknown.
//
// Assembled from per-rank parts (for analyses of one rank at a time, in bounded memory): every
// RankReport is built from one rank's results alone plus that rank's cross-rank figures
// (collective_wait_ns, collective_times_last: its rows of the cross-rank result; critical_path_*
// and straggler_lateness_ns: its rows of the job's path results). The global
// sections are merged from per-rank partials (GlobalPartial, below) and the cross-rank result:
//  - time_span: min start / max end over the partials;
//  - classes.totals, iterations: sums (the rule table and the marker are the options');
//  - top_kernels: the per-(kind, name, carries-a-collective) totals of all ranks are summed,
//    then each (kind, name) takes the class of its largest entry and the top_n per class are
//    kept (report/assemble.h: the same function makes the one-trace report, so the two are
//    identical by construction);
//  - collectives_across_ranks: from the cross-rank result (matching needs every rank's
//    collectives, not their events);
//  - ranks: the RankReports in process order;
//  - critical_path, straggler_causes, stream_concurrency (report/report_paths.h): built from the
//    job's path and concurrency results (the paths cross ranks at collectives, so they need every
//    rank's events at once), set on the assembled report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/report_paths.h"

namespace overlapscope::report {

inline constexpr char kSchema[] = "overlapscope.report/1";
inline constexpr char kSchemaVersion[] = "1.11";  // minor: additive changes only

// A data-loss warning of the import (model::ImportWarnings): part of an input was read but not
// understood. Every rendering shows the warnings first.
struct ImportWarning {
  std::string source;  // the file
  std::string stat;    // the declared statistic (model/import_stats.h), or "no_gpu_activity"
  std::string severity = "data-loss";
  int64_t count = 0;
  std::string message;  // one sentence naming the file
};

struct TimeSpan {
  int64_t start_ns = 0, end_ns = 0;  // 0/0: no events
};

struct Options {
  std::string iteration_marker;
  int64_t min_gap_ns = 0, runtime_cutoff_ns = 0, launch_delay_cutoff_ns = 0;
  int64_t top_n = 10;
  std::string align_clocks;  // "off", "auto", "on"
};

struct HostClock {
  std::string host;
  std::vector<int64_t> pids;
  bool reference = false, aligned = false;
  int64_t offset_ns = 0, instances = 0, residual_spread_ns = 0;
  std::optional<std::string> reason;  // why not aligned
};

struct ClockAlignment {
  std::string mode = "auto";
  std::string status = "not-evaluated";
  bool applied = false;
  std::optional<std::string> reference_host;
  int64_t min_instances = 3, matched_instances_used = 0, residual_spread_ns = 0;
  std::string summary;  // one line, e.g. "one host: clocks shared, not aligned"
  std::vector<HostClock> hosts;
};

struct ClassRule {
  std::string rule;    // "comm regex ^ncclDevKernel"
  std::string origin;  // "default", "--comm-kernel", "FILE:LINE"
};
struct ClassTotal {
  std::string cls;  // "compute", "comm", "memory", "sync" (in this order)
  int64_t count = 0, total_ns = 0;
};
struct Classes {
  std::vector<ClassRule> rules;
  std::vector<ClassTotal> totals;
};

struct Iterations {
  std::string marker;
  int64_t count = 0, assigned_by_launch_call = 0, assigned_by_own_start = 0, outside_iterations = 0;
};

// Time of one activity name in one iteration (summed over the ranks that have that iteration).
struct IterationNs {
  int64_t iteration = 0;  // ProfilerStep number (or ordinal)
  int64_t ns = 0;
};
struct KernelTotal {
  std::string cls, kind, name;  // class "compute"...; kind "kernel", "memcpy", "memset"
  int64_t count = 0, total_ns = 0, max_ns = 0;
  int64_t median_ns = 0;                   // median duration of one activity (1.6)
  std::vector<IterationNs> per_iteration;  // by iteration number, ascending (1.6; run comparison)
};

// One named figure of a rank summary or a per-kind table ("host_blocked", 1234).
struct NamedValue {
  std::string name;
  int64_t value = 0;
};

struct PathShare {
  std::string category;
  std::optional<double> share;
};

// ranks[i].summary: the gate metrics (report/gates.h lists them from SummaryMetrics()).
struct RankSummary {
  int64_t comm_ns = 0, hidden_comm_ns = 0, exposed_comm_ns = 0;
  // 1.9, METRICS §2 transfer and waiting: the part of each spent waiting for the last peer;
  // absent when no collective of the rank was matched across ranks (arrivals unknown).
  std::optional<int64_t> comm_wait_ns, hidden_wait_ns, exposed_wait_ns;
  std::optional<double> overlap_ratio;
  int64_t compute_ns = 0;
  std::optional<double> compute_share_overlapped;
  int64_t contention_ns = 0, net_overlap_gain_ns = 0;
  std::optional<double> hta_compat_overlap_pct;      // HTA's default (step filter)
  std::optional<double> hta_wholetrace_overlap_pct;  // the same rules over the whole trace
  int64_t blocked_ns = 0;
  std::optional<double> blocked_share;
  int64_t gpu_span_ns = 0, gpu_idle_ns = 0;
  std::optional<double> gpu_idle_share;
  int64_t gpu_gap_ns = 0;
  std::vector<NamedValue> gap_ns;    // by cause, "host_blocked", ...: keys gap_<name>_ns
  std::vector<NamedValue> findings;  // by kind, "pageable_async_copy", ...: keys finding_<name>
  int64_t collective_wait_ns = 0, collective_times_last = 0;
  // METRICS §8: the rank's own critical paths summed over iterations, the share of each path
  // category in them (every category, in order: keys critical_path_<category>_share), and its
  // lateness as the last rank of collectives (report/report_paths.h).
  int64_t critical_path_ns = 0;
  std::vector<PathShare> critical_path_shares;
  int64_t straggler_lateness_ns = 0;
  // 1.9: the median step time over the rank's iterations (report/overview.h MedianStepNs: per
  // iteration the GPU span from the previous one's end, the largest over its GPUs); 0 without
  // iterations. The job overview's first column.
  int64_t step_time_ns = 0;
};

struct OverlapFigures {
  int64_t comm_ns = 0, hidden_comm_ns = 0, exposed_comm_ns = 0;
  std::optional<double> overlap_ratio;
  int64_t compute_ns = 0;
  std::optional<double> compute_share_overlapped;
  int64_t contention_ns = 0, net_overlap_gain_ns = 0;
  int64_t overlapped_compute_instances = 0, contention_unknown_instances = 0, activities = 0;
};

struct IterationOverlap {
  int64_t iteration = 0;  // ProfilerStep number (or ordinal)
  int64_t gpu_start_ns = 0, gpu_end_ns = 0, cpu_start_ns = 0, cpu_end_ns = 0;
  OverlapFigures stats;
  // Idle time in gaps by cause (1.7): the device's gaps (>= min_gap_ns) whose ending activity
  // belongs to this iteration, every cause in order ("host_blocked", "launch_bound",
  // "dependency", "unknown"); empty when read from a report before 1.7.
  std::vector<NamedValue> gap_ns;
};

struct CollectiveExposure {
  std::string name;
  std::optional<int64_t> stream;
  int64_t start_ns = 0, end_ns = 0, own_ns = 0, hidden_ns = 0;
  std::optional<double> overlap_ratio;
};
struct DeviceCollectives {
  int64_t count = 0, exposed_ns = 0;
  std::vector<CollectiveExposure> top_exposed;
};

struct Slowdown {
  std::string name;
  int64_t overlapped_count = 0, alone_count = 0, median_overlapped_ns = 0, median_alone_ns = 0;
  double slowdown = 0;
};

struct CauseFigures {
  std::string name;  // "host_blocked", "launch_bound", "dependency", "unknown"
  int64_t ns = 0, count = 0;
};
// Where the launching host thread was during host-blocked gaps (analyze/gpu_idle.h HostSplit):
// in blocking calls, launch latency, other runtime calls, outside any traced call; ns, summing to
// the gap time.
struct HostSplit {
  int64_t blocked_ns = 0, launch_ns = 0, other_calls_ns = 0, outside_ns = 0;
};
struct DeviceIdle {
  int64_t span_ns = 0, busy_ns = 0, idle_ns = 0;
  std::optional<double> idle_share;
  int64_t min_gap_ns = 0, gaps = 0, gap_ns = 0;
  std::vector<CauseFigures> causes;
  std::optional<HostSplit> host_blocked_split;  // over the host-blocked gaps; absent when none
};

// A GPU activity referred to by another record (what ended a gap, what released the host).
struct GpuActivity {
  std::string kind, name;
  int64_t start_ns = 0, end_ns = 0;
  std::optional<int64_t> stream;
};

struct IdleGap {
  int64_t start_ns = 0, end_ns = 0;
  std::string cause;
  std::optional<GpuActivity> ended_by;
  std::optional<std::string> launch_call;
  std::optional<int64_t> thread, iteration;
  std::optional<HostSplit> host;  // host-blocked gaps only
  // 1.9: a dependency gap ended through a cross-stream wait: the stream and activity waited on,
  // and whether the trace recorded that wait or the evidence rule inferred it (METRICS §8).
  struct WaitingOn {
    std::optional<int64_t> stream;
    std::string name;
    bool inferred = false;
  };
  std::optional<WaitingOn> waiting_on;
};

struct Percentiles {
  int64_t count = 0, min_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
  double mean_ns = 0;
};

struct StreamLaunchDelay {
  std::optional<int64_t> stream;
  Percentiles launch_delay;
  int64_t launch_delay_outliers = 0, without_launch_call = 0;
};

// The participant waited for (1.9): its label and the wait before its arrivals.
struct WaitedFor {
  std::string label;
  std::optional<int64_t> rank;
  int64_t wait_ns = 0;
};
// A device's communication split into waiting for the last peer and transfer (1.9, METRICS §2);
// absent from DeviceReport when no collective of the device was matched across ranks.
struct CommWait {
  int64_t comm_wait_ns = 0, hidden_wait_ns = 0, exposed_wait_ns = 0;
  std::vector<WaitedFor> waited_for;  // by wait_ns descending (top_n)
};

struct DeviceReport {
  int64_t device = 0;  // CUDA ordinal
  std::string name;
  OverlapFigures overlap;
  std::vector<IterationOverlap> iterations;
  DeviceCollectives collectives;
  std::vector<Slowdown> slowdowns;
  DeviceIdle idle;
  std::vector<IdleGap> top_gaps;
  std::vector<StreamLaunchDelay> launch_delay;
  std::optional<CommWait> comm_wait;  // 1.9
};

// What HTA's TraceAnalysis(dir).get_comm_comp_overlap() prints (analyze/overlap.h, HtaCompat).
struct HtaCompat {
  std::optional<double> overlap_pct;  // HTA's default
  int64_t comm_us = 0, overlap_us = 0;
  bool step_filter = false;                   // the default's filter applied (>= 2 ProfilerSteps)
  std::optional<int64_t> last_step_start_us;  // its bound (present with the filter)
  int64_t filtered_out = 0;                   // GPU activities it left out
  std::optional<double> wholetrace_overlap_pct;
  int64_t wholetrace_comm_us = 0, wholetrace_overlap_us = 0;
  int64_t dropped_sub_us = 0;
  std::string note;
};

struct CallTotal {
  std::string call;
  int64_t count = 0, total_ns = 0, max_ns = 0;
};
struct ThreadBlocking {
  std::optional<int64_t> thread;
  std::string name;
  int64_t blocked_ns = 0, final_sync_ns = 0, active_span_ns = 0;
  std::optional<double> blocked_share;
  std::vector<CallTotal> top_calls;
};

struct BlockedInterval {
  std::string call, reason;
  std::optional<int64_t> thread;
  int64_t start_ns = 0, duration_ns = 0;
  std::optional<int64_t> stream;
  std::optional<GpuActivity> released_by;
  int64_t device_busy_ns = 0, device_idle_ns = 0;
  std::optional<int64_t> iteration;
  bool final_sync = false;
};
struct BlockedIntervals {
  int64_t count = 0;
  std::vector<BlockedInterval> top;
};

struct KindFigures {
  std::string kind;           // "pageable-async-copy", "stream-sync", ...
  int64_t count = 0, ns = 0;  // ns: findings' cost_ns, sync points' blocked_ns
};

struct Finding {
  std::string kind;
  int64_t time_ns = 0, end_ns = 0;
  std::optional<int64_t> thread, stream;
  std::string call;
  std::optional<int64_t> iteration;
  int64_t cost_ns = 0;
  std::string message, advice;
};
struct Findings {
  std::vector<KindFigures> by_kind;  // every kind, in the rules' order
  std::vector<Finding> items;
};

struct SyncPoints {
  int64_t count = 0;
  std::vector<KindFigures> by_kind;  // kinds that occur, in order of first occurrence
  // 1.9: the stream waits with a source (dependency graph, METRICS §8), grouped by (waiting
  // stream, stream waited on, activity waited for, waiting activity, inferred), most frequent
  // first; inferred ones are never merged with recorded ones.
  struct StreamWait {
    std::optional<int64_t> stream, wait_on_stream;
    std::string source, waiter;
    bool inferred = false;
    int64_t count = 0;
  };
  std::vector<StreamWait> stream_waits;
};

struct LaunchCall {
  std::string call;
  Percentiles duration;
  int64_t outliers = 0;
};

struct ShortKernel {
  std::string name;
  int64_t count = 0, gpu_total_ns = 0, cpu_total_ns = 0;
};
struct ShortKernels {
  int64_t count = 0;
  std::vector<ShortKernel> top;
};

// A capture window of our own captures (ranks[].windows, schema 1.4): what the rank's figures
// cover (analyze/windows.h says how start and end are chosen).
struct Window {
  int64_t index = 0;                                 // 1-based
  std::string trigger;                               // "process", "session", "cudaProfilerApi", "nvtx", "delay"
  std::string name;                                  // the NVTX range; empty otherwise
  int64_t capture_start_ns = 0, capture_end_ns = 0;  // as recorded
  int64_t start_ns = 0, end_ns = 0;                  // what the figures cover
  int64_t startup_excluded_ns = 0;                   // "process": capture start to start_ns
  int64_t kernels = 0, memcpys = 0, memsets = 0;     // starting inside
  int64_t gpu_span_ns = 0, gpu_busy_ns = 0, gpu_idle_ns = 0, gpu_gap_ns = 0, gaps = 0;
};

// 1.9: the dependency graph's counts for one rank (METRICS §8; analyze/graph GraphStats): edges
// by kind, recorded and inferred apart, and what became of the cross-stream waits.
struct DependencyGraph {
  struct EdgeCount {
    std::string kind;  // "program-order", "stream-order", "launch", "event-wait", "host-release"
    int64_t recorded = 0, inferred = 0;
  };
  std::vector<EdgeCount> edges;
  int64_t waits_recorded = 0;                 // the trace links both ends
  int64_t waits_recorded_without_source = 0;  // the trace names the waiter only (placed by the rule)
  int64_t waits_inferred = 0, waits_ambiguous = 0, waits_unresolved = 0, waits_not_delayed = 0;
  int64_t waits_inferred_by_order = 0;  // of waits_inferred: placed by the host's call order (1.10)
  int64_t waits_already_complete = 0;
  int64_t gpu_without_launch = 0, syncs_without_release = 0, backward_edges = 0;
};

struct RankReport {
  std::string label;  // "rank 3", or "pid 42 (GPU 0, GPU 1)"
  std::optional<int64_t> rank;
  int64_t pid = -1;
  std::string host, source;
  RankSummary summary;
  std::optional<WaitedFor> waited_for_most;  // 1.9: over the rank's devices; absent when none waited
  std::vector<Window> windows;               // empty for traces recorded throughout (Kineto)
  std::vector<DeviceReport> devices;
  std::optional<HtaCompat> hta_compat;
  std::vector<ThreadBlocking> threads;
  BlockedIntervals blocked_intervals;
  Findings findings;
  SyncPoints sync_points;
  std::vector<LaunchCall> launch_calls;
  ShortKernels short_kernels;
  std::optional<DependencyGraph> dependency_graph;  // absent in reports before 1.9
};

// collectives_across_ranks (METRICS §6).
struct ParticipantRef {
  std::string label;
  std::optional<int64_t> rank, gpu, pid;
};
struct Participant {
  ParticipantRef ref;
  std::optional<std::string> host;
};
struct Straggling {
  ParticipantRef ref;
  int64_t times_last = 0, others_wait_ns = 0, own_wait_ns = 0;
};
struct SkewedInstance {
  std::string op, communicator;
  int64_t sequence = -1;  // -1: none (printed as is, schema 1.0)
  int64_t first_start_ns = 0, skew_ns = 0;
  int64_t last_rank = -1;  // -1: nobody was last (printed as is)
  std::optional<std::string> last;
  int64_t bus_time_ns = 0, size_bytes = -1;
  std::optional<double> algbw_gbps, busbw_gbps;
};
struct InstanceRank {
  ParticipantRef ref;
  std::optional<int64_t> comm_rank;
  int64_t start_ns = 0, arrival_ns = 0;
  std::string arrival_source;
  int64_t end_ns = 0, wait_ns = 0;
  std::optional<int64_t> stream, channels, channel_span_ns;
  // 1.7: the rank's time in this collective not hidden by compute (METRICS §2: the union of its
  // activities minus the part overlapped by compute on the device); absent when the overlap
  // analysis has no record of it (no GPU activity) or the report is older.
  std::optional<int64_t> exposed_ns;
};
struct Instance {
  int64_t index = 0;  // 1-based, in order of first start
  std::string op, communicator;
  std::optional<int64_t> sequence, order;
  std::optional<std::string> dtype;
  std::optional<int64_t> in_elements, out_elements, bytes, size_bytes, nranks;
  std::optional<std::string> algorithm, protocol;
  std::optional<int64_t> channels, root_or_peer;
  std::optional<std::string> reduce_op;
  int64_t first_start_ns = 0, skew_ns = 0;
  std::optional<std::string> last;
  int64_t last_rank = -1;
  int64_t bus_time_ns = 0;
  std::optional<double> algbw_gbps, busbw_gbps;
  std::vector<InstanceRank> ranks;
};
struct CrossRank {
  int64_t matched_instances = 0;
  std::string matched_by;  // "sequence", "order", "sequence and order"
  int64_t matched_by_order = 0;
  std::string identified_by, identified_note;
  int64_t unmatched = 0, without_rank = 0, duplicates = 0, max_skew_ns = 0, total_skew_ns = 0;
  int64_t arrival_fallbacks = 0;
  std::vector<Participant> participants;
  std::vector<Straggling> ranks;
  std::vector<SkewedInstance> top_skew;
  std::vector<Instance> instances;
};

// A process of the trace with no GPU activity (a launcher such as torchrun, a data-loader worker):
// listed once, not as a rank (1.9). Only when at least one other process has GPU activity.
struct ProcessWithoutGpu {
  int64_t pid = -1;
  std::optional<int64_t> rank;
  std::string name;  // the process name as the trace gives it; empty when unknown
  std::string host;
};

struct Report {
  std::vector<ImportWarning> warnings;  // empty when nothing was lost
  std::string tool = "overlapscope 0.1.0";
  std::vector<std::string> inputs;
  TimeSpan time_span;
  Options options;
  std::string clock_note;
  ClockAlignment clock_alignment;
  Classes classes;
  Iterations iterations;
  std::vector<KernelTotal> top_kernels;
  std::vector<RankReport> ranks;
  std::vector<ProcessWithoutGpu> processes_without_gpu_work;  // 1.9: not in `ranks`
  CrossRank collectives_across_ranks;
  CriticalPath critical_path;            // METRICS §8 (report/report_paths.h)
  StragglerCauses straggler_causes;      // METRICS §8
  StreamConcurrency stream_concurrency;  // METRICS §9
  // Why critical_path and straggler_causes were not computed (1.7: the per-rank reduction, or
  // --critical-path off); absent when they were. The ranks' critical_path_* and
  // straggler_lateness_ns are then not figures (gates on them are refused).
  std::optional<std::string> paths_skipped;
};

}  // namespace overlapscope::report
