// Iterations (METRICS.md §2): host ranges that delimit training steps, and the assignment of
// every GPU activity to the iteration in which its launch call started.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

struct Iteration {
  int32_t index = 0;    // dense index into AnalysisResult::iterations
  int64_t number = -1;  // N of "ProfilerStep#N"; the ordinal within its process otherwise
  model::StringId name = 0;
  model::ProcessId process = model::kNone;
  model::ThreadId thread = model::kNone;
  int64_t start_ns = 0, end_ns = 0;  // the CPU range
};

// How GPU activities were assigned to iterations.
struct IterationAssignment {
  std::vector<Iteration> iterations;  // sorted by (process, start)
  // Per activity (indexed like Trace::kernels()/memcpys()/memsets()): iteration index or kNone.
  std::vector<int32_t> kernel_iteration, memcpy_iteration, memset_iteration;
  int64_t by_launch_call = 0;  // assigned through the launch call's start
  int64_t by_own_start = 0;    // no launch call in the trace: assigned by the activity's start
  int64_t outside = 0;         // in no iteration at all
  std::string marker;          // what delimited iterations ("ProfilerStep#" or the user's marker)

  int32_t Of(model::GpuRef r) const {
    switch (r.kind) {
      case model::GpuKind::kKernel: return kernel_iteration[r.index];
      case model::GpuKind::kMemcpy: return memcpy_iteration[r.index];
      case model::GpuKind::kMemset: return memset_iteration[r.index];
    }
    return model::kNone;
  }
};

// Finds iteration ranges: user_annotation/CPU-op/NVTX ranges whose name starts with `marker`
// (default "ProfilerStep#"). Nested duplicates (the same step recorded at two levels) are
// collapsed to the outermost range. Never fails: no ranges means no iterations. The calls' and
// the activities' iterations, and the stream-order clamp of those without a launch call, are
// found in ranges of at least `min_chunk` on up to `threads` threads (the same assignment at any
// count; tests set a small min_chunk to split small traces).
IterationAssignment AssignIterations(const model::Trace& t, const std::string& marker, int threads = 1,
                                     size_t min_chunk = size_t{1} << 16);

// The iteration (index) of `process` whose CPU range contains time `ns`, or kNone.
int32_t IterationAt(const IterationAssignment& a, model::ProcessId process, int64_t ns);

}  // namespace overlapscope::analyze
