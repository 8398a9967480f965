// matmul-allgather: a cuBLAS GEMM and an NCCL all-gather with no data dependency between them
// (FSDP prefetching the next layer's weights), in three modes:
//   sequential  — GEMM, then all-gather, both on the compute stream;
//   overlap     — all-gather on its own stream, concurrently with the GEMM;
//   overlap-ce  — the same with a copy-engine all-gather: a communicator with
//                 CTAPolicy = NCCL_CTA_POLICY_ZERO and send/receive buffers from ncclMemAlloc
//                 registered as symmetric windows (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC).
// It also times the GEMM alone, a plain back-to-back cublasGemmEx loop, the all-gather alone (and
// optionally a sweep of all-gather sizes), and prints METRICS.md §7 figures.
// Every GEMM output element and every gathered word is validated on the device after each phase.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/gemm.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

struct MatmulAllGatherOptions {
  RunParams run;
  GemmShape gemm;                // default 8192^3 fp16
  double ag_mb = 64;             // all-gather input per rank, MiB
  std::vector<double> sweep_mb;  // extra all-gather-alone sizes (MiB per rank)
  std::vector<std::string> modes = {"sequential", "overlap"};
  // > 0: in the overlap modes the GEMM is told to use (SMs - sm_carveout) SMs
  // (cublasSetSmCountTarget), leaving SMs to the NCCL kernels.
  int sm_carveout = 0;
};

inline const std::vector<std::string>& MatmulAllGatherModes() {
  static const std::vector<std::string> m = {"sequential", "overlap", "overlap-ce"};
  return m;
}

absl::StatusOr<WorkloadResult> RunMatmulAllGather(const MatmulAllGatherOptions& o, const CaptureHooks& hooks = {});

}  // namespace overlapscope::workloads
