// Device kernels of the workloads: deterministic data patterns, on-device validation, and
// fixed-duration "compute" for the D2H workload. Plain C++ interface (no Abseil) so that
// kernels.cu compiles with nvcc alone; every launcher returns the launch's cudaError_t.
//
// GEMM data has a closed form so every output element can be checked exactly on the device:
//   A(i,p) = u(i, seed_a) * sigma(p) * 2^-e,   B(p,j) = sigma(p) * 2^-e * v(j, seed_b)
// with u, v in {-2,-1,1,2} and sigma in {-1,1} (hashes), so every product u*v*2^-2e is the same
// along p and C(i,j) = k * 2^-2e * u(i) * v(j) exactly with FP32 accumulation (all partial
// sums are exact multiples while 4k < 2^24). GemmScaleExp(k) picks e so |C| <= 2^14 fits fp16.
// Matrices are column-major (cuBLAS): element (row, col) of a rows x cols matrix is at
// row + col * rows.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace overlapscope::workloads {

enum class DType { kF16, kBF16, kF32 };

// Bytes per element.
int DTypeBytes(DType t);

// Scale exponent e for inner dimension k (see header comment).
int GemmScaleExp(int64_t k);

// Validation counters live in device memory: `bad` counts wrong elements, `first_bad` keeps the
// smallest wrong index (initialise to INT64_MAX).
struct DeviceCheck {
  unsigned long long* bad = nullptr;
  long long* first_bad = nullptr;
};

cudaError_t FillGemmA(DType t, void* a, int64_t rows, int64_t k, uint32_t seed, int e, cudaStream_t s);
cudaError_t FillGemmB(DType t, void* b, int64_t k, int64_t cols, uint32_t seed, int e, cudaStream_t s);
// Checks all m*n elements of C against the closed form.
cudaError_t ValidateGemm(DType t, const void* c, int64_t m, int64_t n, int64_t k, uint32_t seed_a, uint32_t seed_b,
                         int e, DeviceCheck chk, cudaStream_t s);

// 32-bit pattern of element i of rank r: the all-gather payload.
cudaError_t FillPattern32(uint32_t* p, int64_t count, int rank, uint32_t salt, cudaStream_t s);
// recv holds nranks blocks of `count` words, block r from rank r.
cudaError_t ValidateAllGather(const uint32_t* recv, int64_t count, int nranks, uint32_t salt, DeviceCheck chk,
                              cudaStream_t s);

// All-to-all of GEMM outputs: Y (m x n, column-major) of rank s was split into nranks equal
// contiguous chunks and chunk `my_rank` of every sender arrived in Z at offset s*chunk. Sender s
// used seed_a = seed_a_base + s. Checks every element, then overwrites Z with NaN so that a
// later all-to-all that fails to deliver is caught too.
cudaError_t ValidateAndPoisonA2A(DType t, void* z, int64_t m, int64_t n, int64_t k, int nranks, int my_rank,
                                 uint32_t seed_a_base, uint32_t seed_b, int e, DeviceCheck chk, cudaStream_t s);

// Occupies every SM for `duration_ns` (spinning on %globaltimer): stand-in compute of fixed length.
cudaError_t SpinKernel(int64_t duration_ns, int num_sms, cudaStream_t s);
// D2H workload: spins `duration_ns`, then writes buf[i] = pattern(i, tag).
cudaError_t ProduceBatch(int32_t* buf, int64_t count, int32_t tag, int64_t duration_ns, int num_sms, cudaStream_t s);
// Checks buf against pattern(., tag); writes *flag = tag when all match, -tag otherwise, and
// adds the number of wrong elements to chk.bad.
cudaError_t ComputeFlag(const int32_t* buf, int64_t count, int32_t tag, int32_t* flag, DeviceCheck chk, cudaStream_t s);

}  // namespace overlapscope::workloads
