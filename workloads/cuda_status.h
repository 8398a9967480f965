// Status helpers for CUDA runtime, NCCL and cuBLAS calls in the workloads.
//
// Every call a workload makes goes through one of the OS_CUDA / OS_NCCL / OS_CUBLAS macros,
// which return an absl::Status naming the failed expression, the library's error string and
// the source line from the enclosing function. Workloads never abort the process on a library
// error; the CLI turns the Status into a non-zero exit.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace overlapscope::workloads {

inline absl::Status CudaStatus(cudaError_t e, const char* expr, const char* file, int line) {
  if (e == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(file, ":", line, ": ", expr, " failed: ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ")"));
}

inline absl::Status NcclStatus(ncclResult_t r, const char* expr, const char* file, int line) {
  if (r == ncclSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(file, ":", line, ": ", expr, " failed: NCCL error ", static_cast<int>(r),
                                          " (", ncclGetErrorString(r), ")"));
}

inline absl::Status CublasStatus(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(file, ":", line, ": ", expr, " failed: cuBLAS status ", static_cast<int>(s),
                                          " (", cublasGetStatusString(s), ")"));
}

}  // namespace overlapscope::workloads

#define OS_WL_RETURN_(status_expr)            \
  do {                                        \
    ::absl::Status os_wl_st_ = (status_expr); \
    if (!os_wl_st_.ok()) return os_wl_st_;    \
  } while (0)

#define OS_CUDA(expr) OS_WL_RETURN_(::overlapscope::workloads::CudaStatus((expr), #expr, __FILE__, __LINE__))
#define OS_NCCL(expr) OS_WL_RETURN_(::overlapscope::workloads::NcclStatus((expr), #expr, __FILE__, __LINE__))
#define OS_CUBLAS(expr) OS_WL_RETURN_(::overlapscope::workloads::CublasStatus((expr), #expr, __FILE__, __LINE__))
