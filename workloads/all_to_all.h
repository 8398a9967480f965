// all-to-all: `layers` matmuls per step, each output resharded with an all-to-all (a
// sequence-parallel reshard) and consumed afterwards. Modes:
//   sync  — every all-to-all on the compute stream right after its matmul;
//   async — all-to-alls on the comm stream; the consumer of layer l waits on an event only when
//           it needs the data, after the independent matmul of layer l+1 was enqueued.
//   async-ce — as async, but the all-to-alls run on the copy engines (zero-CTA communicator,
//           ncclMemAlloc buffers registered as symmetric windows, ncclAlltoAll; NCCL >= 2.28).
// The consumer is a validation kernel: it checks every received element against the closed
// form of the sender's GEMM output (kernels.h) and then poisons the buffer with NaN, so every
// single all-to-all is validated on the device. Also times compute alone (the matmuls) and
// communication alone (the all-to-alls) for METRICS.md §7.
// NCCL API: ncclAlltoAll when the loaded library has it (looked up at run time: the GPU
// machine's NCCL may be older than the headers), else ncclGroupStart + ncclSend/ncclRecv.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/gemm.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

struct AllToAllOptions {
  RunParams run;
  GemmShape gemm{8192, 8192, 2048, DType::kF16};  // per layer: Y (m x n) = X (m x k) * W_l (k x n)
  int layers = 4;
  std::string impl = "auto";  // auto | alltoall | sendrecv
  std::vector<std::string> modes = {"sync", "async"};
};

inline const std::vector<std::string>& AllToAllModes() {
  static const std::vector<std::string> m = {"sync", "async", "async-ce"};
  return m;
}

absl::StatusOr<WorkloadResult> RunAllToAll(const AllToAllOptions& o, const CaptureHooks& hooks = {});

}  // namespace overlapscope::workloads
