// Device helpers shared by the workloads' kernels (all_reduce_kernels.cu, all_reduce_push.cu,
// kernels.cu): element conversions to and from FP32 and the GPU's global nanosecond timer. CUDA
// only: include it from .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace overlapscope::workloads::ar_device {

template <typename T>
__device__ inline float ToFloat(T x);
template <>
__device__ inline float ToFloat<__half>(__half x) {
  return __half2float(x);
}
template <>
__device__ inline float ToFloat<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <>
__device__ inline float ToFloat<float>(float x) {
  return x;
}

template <typename T>
__device__ inline T FromFloat(float f);
template <>
__device__ inline __half FromFloat<__half>(float f) {
  return __float2half_rn(f);
}
template <>
__device__ inline __nv_bfloat16 FromFloat<__nv_bfloat16>(float f) {
  return __float2bfloat16_rn(f);
}
template <>
__device__ inline float FromFloat<float>(float f) {
  return f;
}

__device__ inline uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace overlapscope::workloads::ar_device
