// Kernels of gemm_data.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "workloads/gemm_data.h"

namespace overlapscope::workloads {
namespace {

constexpr int kThreads = 256;

__host__ __device__ inline uint64_t Mix64(uint64_t x) {
  // splitmix64's finaliser.
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Box–Muller on two 24-bit uniforms of one hash: u1 in (0, 1], u2 in [0, 1).
__device__ inline float Normal(uint32_t seed, int64_t x) {
  const uint64_t h = Mix64((static_cast<uint64_t>(seed) << 40) ^ static_cast<uint64_t>(x >> 1));
  const float u1 = static_cast<float>((h >> 40) + 1) * 0x1p-24f;
  const float u2 = static_cast<float>(h & 0xFFFFFFull) * 0x1p-24f;
  const float r = sqrtf(-2.0f * logf(u1));
  float sn, cs;
  sincospif(2.0f * u2, &sn, &cs);
  return r * ((x & 1) ? sn : cs);
}

template <typename T>
__device__ inline T Round(float f);
template <>
__device__ inline __half Round<__half>(float f) {
  return __float2half_rn(f);
}
template <>
__device__ inline __nv_bfloat16 Round<__nv_bfloat16>(float f) {
  return __float2bfloat16_rn(f);
}
template <>
__device__ inline float Round<float>(float f) {
  return f;
}
__device__ inline double AsDouble(__half x) { return __half2float(x); }
__device__ inline double AsDouble(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline double AsDouble(float x) { return x; }

// The input element as the GEMM saw it (rounded to T), exactly, in double.
template <typename T>
__device__ inline double Input(uint32_t seed, int64_t x) {
  return AsDouble(Round<T>(Normal(seed, x)));
}

template <typename T>
__device__ constexpr double EpsOut();
template <>
__device__ constexpr double EpsOut<__half>() {
  return 0x1p-10;
}
template <>
__device__ constexpr double EpsOut<__nv_bfloat16>() {
  return 0x1p-7;
}
template <>
__device__ constexpr double EpsOut<float>() {
  return 0x1p-23;
}

template <typename T>
__global__ void FillNormalKernel(T* p, int64_t count, uint32_t seed) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < count; x += int64_t(gridDim.x) * blockDim.x)
    p[x] = Round<T>(Normal(seed, x));
}

__device__ inline void Report(DeviceCheck chk, long long idx) {
  atomicAdd(chk.bad, 1ull);
  atomicMin(chk.first_bad, idx);
}

__host__ __device__ inline int64_t SampleIndex(uint32_t salt, int64_t s, int64_t total) {
  return static_cast<int64_t>(Mix64((static_cast<uint64_t>(salt) << 32) ^ static_cast<uint64_t>(s)) %
                              static_cast<uint64_t>(total));
}

// One warp per sample: the lanes split the k products, then reduce in FP64.
template <typename T>
__global__ void SampledKernel(SampledGemm g, const T* out, int samples, uint32_t salt, DeviceCheck chk) {
  const int lane = threadIdx.x & 31;
  const int64_t total = g.m * g.n;
  for (int64_t s = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) >> 5; s < samples;
       s += (int64_t(gridDim.x) * blockDim.x) >> 5) {
    const int64_t x = SampleIndex(salt, s, total);
    int64_t gidx = x;  // index into the producing rank's m x n output
    uint32_t seed_a = g.seed_a;
    if (g.a2a_nranks > 0) {
      const int64_t chunk = total / g.a2a_nranks, sender = x / chunk;
      gidx = g.a2a_me * chunk + (x - sender * chunk);
      seed_a = g.a2a_seed_a_base + static_cast<uint32_t>(sender);
    }
    const int64_t i = gidx % g.m, j = gidx / g.m;
    double acc = 0, mag = 0;
    for (int64_t p = lane; p < g.k; p += 32) {
      const double prod = Input<T>(seed_a, i + p * g.m) * Input<T>(g.seed_b, p + j * g.k);
      acc += prod;
      mag += fabs(prod);
    }
    for (int off = 16; off > 0; off >>= 1) {
      acc += __shfl_down_sync(0xFFFFFFFFu, acc, off);
      mag += __shfl_down_sync(0xFFFFFFFFu, mag, off);
    }
    if (lane == 0) {
      const double got = AsDouble(out[x]);
      const double tol = EpsOut<T>() * fabs(acc) + 4.0 * sqrt(static_cast<double>(g.k)) * 0x1p-24 * mag;
      const bool ok = fabs(got - acc) <= tol;  // false for NaN and Inf
      if (!ok && chk.bad) Report(chk, x);
    }
  }
}

template <typename T>
__device__ inline bool Finite(T v) {
  return isfinite(static_cast<float>(AsDouble(v)));
}

template <typename T, bool kPoison>
__global__ void FiniteKernel(T* p, int64_t count, DeviceCheck chk) {
  unsigned long long bad = 0;
  long long first = -1;
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < count; x += int64_t(gridDim.x) * blockDim.x) {
    const bool ok = Finite(p[x]);
    if (!ok) {
      ++bad;
      if (first < 0) first = x;
    }
    // The poison depends on the check, so the read is never optimized away.
    if (kPoison) p[x] = Round<T>(ok ? __int_as_float(0x7FC00000) : -__int_as_float(0x7FC00000));
  }
  if (bad && chk.bad) {
    atomicAdd(chk.bad, bad);
    atomicMin(chk.first_bad, first);
  }
}

int GridFor(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

template <typename F>
cudaError_t ByType(DType t, F&& fn) {
  switch (t) {
    case DType::kF16: fn(__half{}); break;
    case DType::kBF16: fn(__nv_bfloat16{}); break;
    case DType::kF32: fn(float{}); break;
  }
  return cudaGetLastError();
}

}  // namespace

int64_t GemmSampleIndex(uint32_t salt, int64_t s, int64_t total) { return SampleIndex(salt, s, total); }

cudaError_t FillNormal(DType t, void* p, int64_t count, uint32_t seed, cudaStream_t s) {
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    FillNormalKernel<T><<<GridFor(count), kThreads, 0, s>>>(static_cast<T*>(p), count, seed);
  });
}

cudaError_t ValidateGemmSampled(const SampledGemm& g, const void* out, int samples, uint32_t salt, DeviceCheck chk,
                                cudaStream_t s) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || samples <= 0 || (g.a2a_nranks > 0 && (g.m * g.n) % g.a2a_nranks != 0))
    return cudaErrorInvalidValue;
  const int warps_per_block = kThreads / 32;
  const int blocks = (samples + warps_per_block - 1) / warps_per_block;
  return ByType(g.dtype, [&](auto zero) {
    using T = decltype(zero);
    SampledKernel<T><<<blocks, kThreads, 0, s>>>(g, static_cast<const T*>(out), samples, salt, chk);
  });
}

cudaError_t CheckFinite(DType t, const void* out, int64_t count, DeviceCheck chk, cudaStream_t s) {
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    FiniteKernel<T, false><<<GridFor(count), kThreads, 0, s>>>(const_cast<T*>(static_cast<const T*>(out)), count, chk);
  });
}

cudaError_t CheckFiniteAndPoison(DType t, void* z, int64_t count, DeviceCheck chk, cudaStream_t s) {
  return ByType(t, [&](auto zero) {
    using T = decltype(zero);
    FiniteKernel<T, true><<<GridFor(count), kThreads, 0, s>>>(static_cast<T*>(z), count, chk);
  });
}

}  // namespace overlapscope::workloads
