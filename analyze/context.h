// Internal to analyze/: facts computed once and shared by the analyses (classes of every GPU
// activity, per-device busy/compute/comm sets, per-thread launch lists, iterations).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyze/analysis.h"
#include "analyze/classify.h"
#include "analyze/graph/graph.h"
#include "analyze/interval_set.h"
#include "analyze/iterations.h"
#include "model/trace.h"

namespace overlapscope::analyze {

struct DeviceSets {
  IntervalSet compute, comm, busy;  // busy: every kernel/memcpy/memset not of class sync
};

struct Context {
  Context(const model::Trace& trace, const AnalyzeOptions& options)
      : t(trace),
        opt(options),
        kernel_launch(trace.kernel_launches()),
        memcpy_launch(trace.memcpy_launches()),
        memset_launch(trace.memset_launches()) {}

  const model::Trace& t;
  const AnalyzeOptions& opt;
  std::vector<ActivityClass> kernel_cls, memcpy_cls, memset_cls;
  std::vector<DeviceSets> dev;  // indexed by DeviceId
  IterationAssignment iters;
  // Per thread: indexes of API calls that enqueued GPU work, by start.
  std::vector<std::vector<int32_t>> launches_by_thread;
  // Per process: start of the last launch call (INT64_MIN when none).
  std::vector<int64_t> last_launch_start;
  // Launch call (index into api_calls, kNone when absent) of every kernel/memcpy/memset: the
  // model's join (Trace::LaunchOf), built once at Finalize().
  const std::vector<int32_t>& kernel_launch;
  const std::vector<int32_t>& memcpy_launch;
  const std::vector<int32_t>& memset_launch;
  // Per device: [start, end) of each activity, parallel to Trace::DeviceActivities(d) (saves
  // the per-kind dispatch of Trace::StartNs/EndNs in the hot loops).
  std::vector<std::vector<Interval>> act_span;
  std::vector<std::vector<model::StringId>> act_name;  // names, parallel to act_span
  std::vector<int64_t> stream_compute_ns;              // per stream: summed compute-class time
  // Capture windows (windows.h), sorted by (process, start), GPU figures still zero; per process
  // the range [first, last) of its entries (equal: no windows, analyze the whole trace).
  std::vector<WindowFigures> windows;
  std::vector<std::pair<int32_t, int32_t>> process_windows;

  // True when process p has capture windows (then only time inside them counts).
  bool Windowed(model::ProcessId p) const { return process_windows[p].first != process_windows[p].second; }
  // True when [start, end) touches a window of p (always true for a process without windows).
  bool InWindows(model::ProcessId p, int64_t start_ns, int64_t end_ns) const;

  ActivityClass Cls(model::GpuRef r) const {
    switch (r.kind) {
      case model::GpuKind::kKernel: return kernel_cls[r.index];
      case model::GpuKind::kMemcpy: return memcpy_cls[r.index];
      case model::GpuKind::kMemset: return memset_cls[r.index];
    }
    return ActivityClass::kCompute;
  }
  model::StringId NameOf(model::GpuRef r) const { return t.NameOf(r); }
  // The launch call of an activity (index into api_calls), kNone when not in the trace.
  int32_t LaunchOf(model::GpuRef r) const { return t.LaunchOf(r); }
};

// The pieces AnalyzeAll runs, in order (each reads what the earlier ones produced).
absl::Status PrepareContext(Context& ctx, ClassificationSummary* summary);
// Each device's activities are read in ranges of at least `min_chunk` at once on up to
// ctx.opt.threads threads (the same result at any count; tests set a small min_chunk).
void ComputeOverlap(const Context& ctx, std::vector<DeviceOverlap>* out, size_t min_chunk = size_t{1} << 14);
// HTA's figures per process into `out`; with `other`, also under the opposite step-filter
// decision (the per-rank reduction decides it for the whole job later); with `step_names`, the
// trace's first two distinct ProfilerStep#N names (enough to tell a job's ">= 2").
void ComputeHtaCompat(const Context& ctx, std::vector<HtaCompat>* out, std::vector<HtaCompat>* other = nullptr,
                      std::vector<std::string>* step_names = nullptr);
// The calls, their intervals and the threads' spans are read in ranges of at least `min_chunk`
// on up to ctx.opt.threads threads (the same result at any count; tests set a small min_chunk).
void ComputeBlocking(const Context& ctx, BlockingResult* out, size_t min_chunk = size_t{1} << 14);
// The per-thread figures of out->intervals (out->threads); the last step of ComputeBlocking.
void ComputeThreadBlocking(const Context& ctx, BlockingResult* out, size_t min_chunk = size_t{1} << 14);
// Also adds each window's GPU figures to *windows (a copy of ctx.windows). The devices, and
// each device's gaps in ranges of at least `min_chunk`, are read at once on up to
// ctx.opt.threads threads (the same result at any count; tests set a small min_chunk).
void ComputeIdle(const Context& ctx, const BlockingResult& blocking, std::vector<DeviceIdle>* idle,
                 std::vector<IdleGap>* gaps, std::vector<WindowFigures>* windows, size_t min_chunk = 256);
// Dependency gaps that end through a cross-stream wait (graph: a recorded or inferred event-wait
// edge into the activity that ends the gap) get the activity waited for (IdleGap::waited_for).
void AddWaitCauses(const graph::Graph& g, std::vector<IdleGap>* gaps);
// The analysis windows of every process (windows.h): after the launch calls are known.
void PrepareWindows(Context& ctx);
// `g`: the dependency graph, for rules that read its edges (nullptr: they find nothing).
// AddSyncPoints then FindSyncFindings, in one step.
void ComputeSyncPoints(const Context& ctx, const BlockingResult& blocking, const std::vector<DeviceOverlap>& overlap,
                       const graph::Graph* g, SyncResult* out);
// ComputeSyncPoints in two steps, for callers that run the first as soon as the blocked
// intervals are known: the points themselves into out->points (they read only the model and
// the blocking), `runs` the offsets of their four lists; then the findings, which also read the
// overlap, the graph and the context's launch lists, and the points in time order.
void AddSyncPoints(const Context& ctx, const BlockingResult& blocking, SyncResult* out, std::vector<size_t>* runs);
void FindSyncFindings(const Context& ctx, const BlockingResult& blocking, const std::vector<DeviceOverlap>& overlap,
                      const graph::Graph* g, const std::vector<size_t>& runs, SyncResult* out);
void ComputeLaunchStats(const Context& ctx, LaunchStats* out);
// Stream-wait sync points get their source from the graph's wait edges (by sync record, else by
// call); a wait known only from its call also gets its streams from the edge. `threads`: the
// same result at any count.
void AddWaitSources(const graph::Graph& g, SyncResult* out, int threads = 1);
// AddWaitSources in two steps, the first reading only the graph (so it can run beside the
// findings): the first wait edge per sync record and per call, then the points given theirs.
struct WaitSourceIndex {
  absl::flat_hash_map<int32_t, const graph::WaitEdge*> by_sync, by_call;
};
void IndexWaitSources(const graph::Graph& g, WaitSourceIndex* ix, int threads = 1);
void ApplyWaitSources(const graph::Graph& g, const WaitSourceIndex& ix, SyncResult* out, int threads = 1);

// What API calls do is model::ApiCall::semantic (model/api_names.h: CUDA runtime, driver and
// HIP calls in one vocabulary); nothing here matches call names.
bool IsPageable(const model::Trace& t, const model::Memcpy& m);
bool IsDtoH(const model::Trace& t, const model::Memcpy& m);
bool IsPinnedDst(const model::Trace& t, const model::Memcpy& m);

// Median of a non-empty vector (reorders it): lower and upper middle averaged, floored.
int64_t MedianNs(std::vector<int64_t>& v);
// Percentiles (nearest rank) of a vector (reorders it).
Percentiles ComputePercentiles(std::vector<int64_t>& v);

}  // namespace overlapscope::analyze
