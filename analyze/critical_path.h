// Critical path per iteration, across ranks (METRICS.md §8).
//
// The dependency graph is implicit: its nodes are host threads' time (API calls, CPU ops and the
// gaps between them) and GPU activities; its edges are program order on a thread, stream order,
// launch call -> the GPU activity it enqueued (by correlation; a graph launch -> every kernel of
// that launch, which share its correlation id), event record -> stream wait or host event sync
// (the last activity the recording stream had enqueued before the cudaEventRecord), the GPU
// activity that released a host sync -> the host's continuation, and, for a collective matched
// across ranks (cross_rank.h), every participant's collective -> the last participant's arrival.
// Every edge goes forward in time (an edge whose source lies after its target is not taken, and
// counted), so there are no cycles; a guard stops a walk that makes no progress (counted).
//
// Every path from the iteration's start to its end has the same length in wall time; the critical
// path is the one that follows, backwards from the iteration's last GPU activity or host op, the
// *binding* dependency of each node: the predecessor that became ready last (ties: stream order,
// then event waits, then the launch call). Its length is split into categories (PathCategory)
// so that the parts add up to the length exactly: what the step waited for, moment by moment.
// The job path crosses ranks at collectives; each rank's own path does not (the time its
// collective waited for the last peer is then "waiting for peers").
//
// Units: *_ns int64 nanoseconds on the trace clock. Nodes that cannot be joined (a GPU activity
// without its launch call, a stream wait without its event record, a host sync without the GPU
// work that released it) are counted in PathCounts, never guessed; a walk that cannot go further
// back stops there and says so (PathStop).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analyze/path_inputs.h"
#include "model/trace.h"

namespace overlapscope::analyze {

enum class PathCategory : uint8_t {
  kCompute,       // a compute-class GPU activity (METRICS §1)
  kComm,          // a comm-class activity, from the last participant's arrival on
  kMemory,        // a memory-class activity (copies, memsets)
  kHostLaunch,    // host running the program inside a recorded op: CUDA API calls, CPU ops, ranges
  kHostUntraced,  // host time on the thread outside any recorded op (Python, data loading, ...)
  kHostBlocked,   // host inside a blocking call (METRICS §3) not explained by GPU work on the path
  kGpuWaitHost,   // launch latency: from the launch call's start to its activity's start, when the
                  // GPU had nothing else to wait for (GPU waiting for the host)
  kGpuGap,        // the activity's stream and events were ready, yet it started later (kernel-to-
                  // kernel overhead, SMs held by another stream, a dependency the trace lacks)
  kWaitPeers,     // a rank's own path: its collective waiting for the last participant to arrive
};
inline constexpr int kPathCategories = 9;
// "compute", "comm", "memory", "host_launch", "host_untraced", "host_blocked", "gpu_wait_host",
// "gpu_gap", "wait_peers" (the JSON keys, with _ns appended)
std::string_view ToString(PathCategory c);
inline bool IsGpuCategory(PathCategory c) { return c <= PathCategory::kMemory; }
inline bool IsHostCategory(PathCategory c) {
  return c == PathCategory::kHostLaunch || c == PathCategory::kHostUntraced || c == PathCategory::kHostBlocked;
}

struct PathComposition {
  int64_t ns[kPathCategories] = {};
  int64_t Total() const;
  void Add(const PathComposition& o);
  int64_t operator[](PathCategory c) const { return ns[static_cast<int>(c)]; }
};

// One piece of a path: a stretch of time on one lane (a host thread or a GPU stream).
struct PathSegment {
  int64_t start_ns = 0, end_ns = 0;
  PathCategory category = PathCategory::kCompute;
  model::ProcessId process = model::kNone;
  model::ThreadId thread = model::kNone;  // host categories; kGpuWaitHost: the launching thread
  model::StreamId stream = model::kNone;  // GPU categories, kGpuGap, kWaitPeers, kGpuWaitHost
  model::GpuRef gpu;                      // valid when stream != kNone: the activity (that waited)
  int32_t api_call = model::kNone;        // the API call the host time lies in / the launch call
  model::StringId name = 0;               // activity, call or enclosing op name; 0 for untraced
};

// Why a walk stopped where it did.
enum class PathStop : uint8_t {
  kReachedStart,   // the cursor reached the iteration's start (the normal end)
  kNoPredecessor,  // a GPU activity with no launch call, stream predecessor or event in the trace
  kGuard,          // no progress in time (zero-length loops in bad data): stopped, counted
};
std::string_view ToString(PathStop s);  // "reached-start", "no-predecessor", "guard"

// A name on the path and the time spent in it.
struct PathActivity {
  model::StringId name = 0;  // 0: host time outside any recorded op
  PathCategory category = PathCategory::kCompute;
  int64_t ns = 0;
  int64_t segments = 0;
};

// Counts of joins that could not be made, over every walk of the analysis.
struct PathCounts {
  int64_t gpu_without_launch = 0;     // activities on a path whose launch call is not in the trace
  int64_t unresolved_waits = 0;       // stream waits without their event record (stream or correlation)
  int64_t syncs_without_release = 0;  // host syncs on a path with no GPU activity that released them
  int64_t backward_edges = 0;         // dependencies whose source lies after their target (not taken)
  int64_t guard_stops = 0;
  int64_t no_predecessor_stops = 0;
  // Kernels on a path that waited for SMs: started long after they could, while a kernel of
  // another stream filling the device ran; the path went on through that kernel.
  int64_t sm_holders = 0;
};

struct RankPath {
  model::ProcessId process = model::kNone;
  int32_t rank = model::kNone;
  int64_t start_ns = 0, end_ns = 0;  // own paths: where the walk started and ended
  PathStop stop = PathStop::kReachedStart;
  PathComposition composition;
};

struct IterationPath {
  int64_t number = -1;  // ProfilerStep / marker number shared by the ranks; -1: the whole trace
  int64_t start_ns = 0, end_ns = 0;
  PathStop stop = PathStop::kReachedStart;
  model::ProcessId end_process = model::kNone;  // where the path ends (its last node)
  PathComposition total;
  std::vector<RankPath> on_rank;      // the job path's time on each process (processes it touched)
  std::vector<RankPath> own;          // each process's own path (collectives not followed)
  std::vector<PathActivity> top;      // by ns, descending (CriticalPathOptions::top_n)
  std::vector<PathSegment> segments;  // ascending; only with CriticalPathOptions::keep_segments
  int64_t length_ns() const { return end_ns - start_ns; }
};

struct CriticalPathOptions {
  size_t top_n = 10;
  bool keep_segments = false;  // keep every iteration's job-path segments (for the Perfetto track)
};

struct CriticalPathResult {
  std::vector<IterationPath> iterations;  // by number
  PathComposition total;                  // Σ over iterations' job paths
  std::vector<RankPath> own_total;        // per process: Σ of its own paths over iterations
  std::vector<PathActivity> top;          // over every iteration's job path
  PathCounts counts;
};

// Never fails: a trace without GPU work or host calls gives empty paths.
CriticalPathResult AnalyzeCriticalPath(const model::Trace& trace, const PathInputs& in, const CriticalPathOptions& opt);

}  // namespace overlapscope::analyze
