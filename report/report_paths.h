// The report's sections on what bounds the step (METRICS.md §8, §9; docs/report-schema.md):
// critical_path, straggler_causes and stream_concurrency of report::Report, as plain structs.
// Included by report/report.h; like it, nothing here refers to the trace model or the analyses.
//
// Units: *_ns are int64 nanoseconds on the trace clock; shares are ratios (0.25 = 25 %), absent
// when their denominator is 0. Category names are the analysis' ("compute", "comm", "memory",
// "host_launch", "host_untraced", "host_blocked", "gpu_wait_host", "gpu_gap", "wait_peers"),
// in that order; the JSON keys are "<name>_ns".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace overlapscope::report {

// Time on a path by category. The categories add up to length_ns.
struct PathCategoryTime {
  std::string category;
  int64_t ns = 0;
};
struct PathComposition {
  int64_t length_ns = 0;
  std::vector<PathCategoryTime> categories;  // every category, in order
};

// An activity (or call, or enclosing op) on a path, summed by name and category.
struct PathActivity {
  std::optional<std::string> name;  // absent: host time outside any recorded op
  std::string category;
  int64_t ns = 0, segments = 0;
};

// A rank's part of a path (on_rank, own_total) or its own path (own: with where it ran).
struct RankPath {
  std::optional<int64_t> rank;
  std::string label;      // "rank 3", "pid 42"
  bool has_span = false;  // own paths of an iteration: start_ns, end_ns and stop are printed
  int64_t start_ns = 0, end_ns = 0;
  std::string stop;
  PathComposition composition;
};

// Nodes that could not be joined: counted, never guessed.
struct PathUnjoined {
  int64_t gpu_without_launch = 0, unresolved_waits = 0, syncs_without_release = 0, backward_edges = 0,
          no_predecessor_stops = 0, guard_stops = 0;
};

struct IterationCriticalPath {
  std::optional<int64_t> iteration;  // absent: the whole trace (no iterations)
  int64_t start_ns = 0, end_ns = 0;
  std::string stop;     // why the backward walk ended: "reached-start", "no-predecessor", "guard"
  std::string ends_on;  // the label of the rank where the path ends
  PathComposition composition;
  std::vector<RankPath> on_rank;  // the job's path, split by rank
  std::vector<RankPath> own;      // each rank's own path (collectives not followed)
  std::vector<PathActivity> top;  // at most 3
};

struct CriticalPath {
  int64_t iterations = 0;
  PathComposition total;            // the job's paths of every iteration
  std::vector<PathActivity> top;    // top_n activities on them
  std::vector<RankPath> own_total;  // each rank's own paths, summed (ranks with a path only)
  PathUnjoined unjoined;
  // Kernels on the paths that waited for SMs held by a kernel of another stream filling the
  // device (the walk went on through that kernel; 1.11).
  int64_t sm_holders = 0;
  std::vector<IterationCriticalPath> per_iteration;
};

// How much longer a name ran on the late rank's path than on the median rank's.
struct NameLateness {
  std::string name, category;
  int64_t late_ns = 0, median_ns = 0, delta_ns = 0, late_count = 0, median_count = 0;
  std::optional<double> share_of_behind;  // delta / behind_median_ns
  std::optional<double> slower;           // late / median − 1; absent when the median rank ran none
};

// Per (participant, op): how often it arrived last and why, summed over those instances.
struct StragglerSummary {
  std::string label;
  std::optional<int64_t> rank;
  std::string op;
  int64_t instances = 0, times_last = 0;
  std::optional<double> times_last_share;
  int64_t lateness_ns = 0, behind_median_ns = 0, started_later_ns = 0, unexplained_ns = 0;
  std::vector<PathCategoryTime> category_delta;  // late path − median path, per category
  std::vector<NameLateness> names;
};

// One matched collective instance with a last rank.
struct StragglerInstance {
  std::string op, communicator;
  std::optional<int64_t> sequence;
  int64_t ordinal = 0;
  std::string late, median;  // participant labels
  int64_t lateness_ns = 0, behind_median_ns = 0, late_arrival_ns = 0, median_arrival_ns = 0;
  int64_t late_window_start_ns = 0, median_window_start_ns = 0, started_later_ns = 0, unexplained_ns = 0;
  PathComposition late_path, median_path;
  std::vector<NameLateness> names;
};

struct StragglerCauses {
  std::vector<StragglerSummary> summaries;  // participants that were last at least once
  std::vector<StragglerInstance> instances;
  int64_t windows_from_iteration_start = 0;  // windows without a previous collective
};

// |∪A ∩ ∪B| of two streams or groups on one device and window (METRICS §9).
struct Concurrency {
  int64_t concurrent_ns = 0, a_ns = 0, b_ns = 0;
  std::optional<double> share;  // concurrent / min(a, b)
};
struct StreamPair {
  std::optional<int64_t> a, b;  // native stream ids
  Concurrency c;
};
struct GroupPair {
  std::string a, b;  // group names
  Concurrency c;
};
struct WindowConcurrency {
  std::vector<StreamPair> streams;
  std::vector<GroupPair> groups;
};
struct IterationConcurrency {
  int64_t iteration = -1;
  WindowConcurrency pairs;
};
struct DeviceConcurrency {
  std::optional<int64_t> rank;
  std::string label;
  int64_t device = 0;  // CUDA ordinal
  WindowConcurrency whole;
  std::vector<IterationConcurrency> iterations;  // iterations with any pair only
};
struct ConcurrencyGroup {
  std::string name, regex;
  int64_t activities = 0;
};
struct StreamConcurrency {
  std::vector<ConcurrencyGroup> groups;
  std::vector<DeviceConcurrency> devices;
};

}  // namespace overlapscope::report
