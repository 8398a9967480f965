// What the critical-path and straggler analyses (critical_path.h, straggler_causes.h) read from
// the passes before them: the class of every GPU activity, the iterations, the
// host blocking intervals and the collectives matched across ranks. Views only: the vectors they
// point into belong to the caller and must outlive the analysis.
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "analyze/classify.h"
#include "analyze/cpu_blocking.h"
#include "analyze/cross_rank.h"
#include "analyze/iterations.h"
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
  const IterationAssignment* iterations = nullptr;  // required; may hold no iteration (whole trace)
  const BlockingResult* blocking = nullptr;         // required; host syncs and what released them
  const CrossRankResult* cross_rank = nullptr;      // required; may hold no instance (one rank)
};

}  // namespace overlapscope::analyze
