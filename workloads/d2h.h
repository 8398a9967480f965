// d2h: the GPU computes a validation flag over a freshly produced batch, the host needs that
// flag, and there is "irrelevant" GPU work (not depending on the flag) plus host-side work per
// step. Per step: produce batch (fixed-length kernel) -> compute flag -> bring it to the host
// -> launch irrelevant compute -> host work -> read the flag. Modes differ in the copy:
//   blocking            — cudaMemcpy into pinned memory: the host waits before it can launch
//                         the irrelevant compute;
//   nonblocking-nosync  — cudaMemcpyAsync into pinned memory, no synchronization: the host reads
//                         whatever is there (stale reads are counted, the bug being shown);
//   nonblocking-event   — cudaMemcpyAsync + cudaEventRecord; cudaEventSynchronize only when the
//                         flag is read (after the irrelevant compute and the host work).
// All work runs on the legacy default stream, so cudaMemcpy orders after the kernels.
// Figures: host time blocked per step (host clock around cudaMemcpy / cudaEventSynchronize),
// wall time per step, GPU time per step (CUDA events), stale reads. The device also counts
// wrong batch elements; any, or a stale read in the modes that synchronize, fails the run.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

struct D2HOptions {
  RunParams run;                // run.gpus defaults to 1 in the CLI: one GPU is enough
  int64_t producer_us = 2000;   // GPU time to produce a batch
  int64_t irrelevant_us = 500;  // GPU work that does not need the flag
  int64_t host_work_us = 1000;  // host work per step before the flag is needed
  int64_t batch_elems = 1 << 20;
  std::vector<std::string> modes = {"blocking", "nonblocking-nosync", "nonblocking-event"};
};

inline const std::vector<std::string>& D2HModes() {
  static const std::vector<std::string> m = {"blocking", "nonblocking-nosync", "nonblocking-event"};
  return m;
}

absl::StatusOr<WorkloadResult> RunD2H(const D2HOptions& o, const CaptureHooks& hooks = {});

}  // namespace overlapscope::workloads
