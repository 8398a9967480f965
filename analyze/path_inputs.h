// What the critical-path and straggler analyses (critical_path.h, straggler_causes.h) read from
// the passes before them: the class of every GPU activity, the iterations, the
// host blocking intervals and the collectives matched across ranks. Views only: the vectors they
// point into belong to the caller and must outlive the analysis.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "analyze/classify.h"
#include "analyze/cpu_blocking.h"
#include "analyze/cross_rank.h"
#include "analyze/graph/graph.h"
#include "analyze/iterations.h"
#include "analyze/windows.h"
#include "model/trace.h"

namespace overlapscope::analyze {

// Per GPU activity, indexed like Trace::kernels()/memcpys()/memsets(): its class (METRICS §1).
// (Launch calls come from the model: Trace::LaunchOf.)
struct GpuFacts {
  absl::Span<const ActivityClass> kernel_cls, memcpy_cls, memset_cls;

  ActivityClass Cls(model::GpuRef r) const {
    switch (r.kind) {
      case model::GpuKind::kKernel: return kernel_cls[r.index];
      case model::GpuKind::kMemcpy: return memcpy_cls[r.index];
      case model::GpuKind::kMemset: return memset_cls[r.index];
    }
    return ActivityClass::kCompute;
  }
};

struct PathInputs {
  GpuFacts gpu;
  // The dependency graph of the trace (analyze/graph/graph.h): the walks take their cross-stream
  // waits from it (recorded and inferred). Null: no wait is followed (tests of other parts).
  const graph::Graph* graph = nullptr;
  const IterationAssignment* iterations = nullptr;  // required; may hold no iteration (whole trace)
  const BlockingResult* blocking = nullptr;         // required; host syncs and what released them
  const CrossRankResult* cross_rank = nullptr;      // required; may hold no instance (one rank)
  // Capture windows of own captures (analyze/windows.h), sorted by (process, start); empty for
  // traces recorded throughout. A walk never goes back before its process's window: a
  // whole-trace path starts at the first window's start (start-up excluded), a straggler window
  // without a previous collective or iteration at the start of the capture window around it.
  absl::Span<const WindowFigures> windows;
  // Threads the index's independent parts are built on (the same index at any count), and the
  // least events in one range of the calls or host ranges cut for them (tests: 1; 64 Ki: few
  // ranges, as round 3 runs the sync points beside the index).
  int threads = 1;
  size_t min_chunk = size_t{1} << 16;
};

// The start of `p`'s capture window that contains `t` (the latest starting at or before t), or
// `fallback` when p has none there.
int64_t WindowStartAt(absl::Span<const WindowFigures> windows, model::ProcessId p, int64_t t, int64_t fallback);

}  // namespace overlapscope::analyze
