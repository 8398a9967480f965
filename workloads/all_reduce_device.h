// Device helpers shared by the workloads' kernels (all_reduce_kernels.cu, all_reduce_push.cu,
// kernels.cu, gemm_data.cu): element conversions to and from FP32 and the GPU's global nanosecond timer. CUDA
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

// Programmatic dependent launch (a kernel launched with the programmatic stream serialization
// attribute may start before the previous kernel on its stream has finished): Wait() returns once
// every prerequisite grid has completed and its memory is visible (at once without one), Allow()
// lets the next such kernel start launching. Both are no-ops for an ordinary launch.
__device__ inline void GridDependencyWait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ inline void GridDependentsAllow() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// The diagnostic stamps of AllReduceArgs::stamps (all_reduce_kernels.h: AllReduceStamp). p null:
// nothing (one uniform branch per call).
__device__ inline void StampEntry(unsigned long long* p) {
  if (p == nullptr || threadIdx.x != 0) return;
  const unsigned long long t = GlobalTimerNs();
  if (blockIdx.x == 0) p[0] = t;
  atomicMax(p + 3, t);
}
__device__ inline void StampReady(unsigned long long* p) {
  if (p == nullptr || threadIdx.x != 0) return;
  const unsigned long long t = GlobalTimerNs();
  if (blockIdx.x == 0) p[1] = t;
  atomicMax(p + 4, t);
}
// Call from every thread of the block (it synchronizes the block when p is set).
__device__ inline void StampExit(unsigned long long* p) {
  if (p == nullptr) return;
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(p + 2, static_cast<unsigned long long>(GlobalTimerNs()));
}

}  // namespace overlapscope::workloads::ar_device
