// Kernels of gemm_data.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "workloads/all_reduce_device.h"
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

using ar_device::FromFloat;
using ar_device::ToFloat;

// The input element as the GEMM saw it (rounded to T), exactly, in double.
template <typename T>
__device__ inline double Input(uint32_t seed, int64_t x) {
  return ToFloat(FromFloat<T>(Normal(seed, x)));
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
    p[x] = FromFloat<T>(Normal(seed, x));
}

__device__ inline void Report(DeviceCheck chk, long long idx) {
  atomicAdd(chk.bad, 1ull);
  atomicMin(chk.first_bad, idx);
}

__host__ __device__ inline int64_t SampleIndex(uint32_t salt, int64_t s, int64_t total) {
  return static_cast<int64_t>(Mix64((static_cast<uint64_t>(salt) << 32) ^ static_cast<uint64_t>(s)) %
                              static_cast<uint64_t>(total));
}

// One block per sample: its threads split the k products, then reduce in FP64. (A warp per sample
// left most SMs idle with the few hundred samples of the all-to-all's consumer and made each lane
// generate k/32 input pairs in turn: 30 us per layer, a cost the PyTorch reference's consumer
// does not have.)
template <typename T>
__global__ void SampledKernel(SampledGemm g, const T* out, int samples, uint32_t salt, DeviceCheck chk) {
  __shared__ double part_acc[kThreads / 32], part_mag[kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t total = g.m * g.n;
  for (int64_t s = blockIdx.x; s < samples; s += gridDim.x) {
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
    for (int64_t p = threadIdx.x; p < g.k; p += blockDim.x) {
      const double prod = Input<T>(seed_a, i + p * g.m) * Input<T>(g.seed_b, p + j * g.k);
      acc += prod;
      mag += fabs(prod);
    }
    for (int off = 16; off > 0; off >>= 1) {
      acc += __shfl_down_sync(0xFFFFFFFFu, acc, off);
      mag += __shfl_down_sync(0xFFFFFFFFu, mag, off);
    }
    if (lane == 0) {
      part_acc[warp] = acc;
      part_mag[warp] = mag;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      acc = mag = 0;
      for (int w = 0; w < kThreads / 32; ++w) {
        acc += part_acc[w];
        mag += part_mag[w];
      }
      const double got = ToFloat(out[x]);
      const double tol = EpsOut<T>() * fabs(acc) + 4.0 * sqrt(static_cast<double>(g.k)) * 0x1p-24 * mag;
      const bool ok = fabs(got - acc) <= tol;  // false for NaN and Inf
      if (!ok && chk.bad) Report(chk, x);
    }
    __syncthreads();  // the partial sums are rewritten by the next sample
  }
}

template <typename T>
__device__ inline bool Finite(T v) {
  return isfinite(ToFloat(v));
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
    if (kPoison) p[x] = FromFloat<T>(ok ? __int_as_float(0x7FC00000) : -__int_as_float(0x7FC00000));
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

// The poisoning consumer in 16-byte vectors (the scalar kernel above moved 256 MiB at 1.3 TB/s
// where a plain elementwise PyTorch op reaches ~2.9): finiteness from the exponent bits of
// every element of the vector (all ones: NaN or Inf), then the vector overwritten with NaN (its
// sign set for a non-finite element, so the store depends on the check). p must be 16-byte
// aligned; the elements past the last whole vector are done one by one.
template <typename T>
struct Bits;
template <>
struct Bits<__half> {
  using U = uint16_t;
  static constexpr U kExp = 0x7C00, kNaN = 0x7E00, kSign = 0x8000;
};
template <>
struct Bits<__nv_bfloat16> {
  using U = uint16_t;
  static constexpr U kExp = 0x7F80, kNaN = 0x7FC0, kSign = 0x8000;
};
template <>
struct Bits<float> {
  using U = uint32_t;
  static constexpr U kExp = 0x7F800000u, kNaN = 0x7FC00000u, kSign = 0x80000000u;
};

template <typename T>
__global__ void FinitePoisonVecKernel(T* p, int64_t count, DeviceCheck chk) {
  using B = Bits<T>;
  using U = typename B::U;
  constexpr int kPer = 16 / sizeof(U);
  const int64_t nvec = count / kPer;
  uint4* v = reinterpret_cast<uint4*>(p);
  unsigned long long bad = 0;
  long long first = -1;
  const int64_t start = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t x = start; x < nvec; x += stride) {
    uint4 w = v[x];
    U* e = reinterpret_cast<U*>(&w);
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const bool ok = (e[i] & B::kExp) != B::kExp;
      if (!ok) {
        ++bad;
        if (first < 0) first = x * kPer + i;
      }
      e[i] = static_cast<U>(ok ? B::kNaN : (B::kNaN | B::kSign));
    }
    v[x] = w;
  }
  U* u = reinterpret_cast<U*>(p);
  for (int64_t x = nvec * kPer + start; x < count; x += stride) {
    const bool ok = (u[x] & B::kExp) != B::kExp;
    if (!ok) {
      ++bad;
      if (first < 0) first = x;
    }
    u[x] = static_cast<U>(ok ? B::kNaN : (B::kNaN | B::kSign));
  }
  if (bad && chk.bad) {
    atomicAdd(chk.bad, bad);
    atomicMin(chk.first_bad, first);
  }
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
  // A block per sample, at most a few waves of them (each block loops over its samples).
  const int blocks = samples < 2048 ? samples : 2048;
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
    if (reinterpret_cast<uintptr_t>(z) % 16 != 0) {
      FiniteKernel<T, true><<<GridFor(count), kThreads, 0, s>>>(static_cast<T*>(z), count, chk);
    } else {
      const int64_t vecs = (count * static_cast<int64_t>(sizeof(T)) + 15) / 16;
      FinitePoisonVecKernel<T><<<GridFor(vecs), kThreads, 0, s>>>(static_cast<T*>(z), count, chk);
    }
  });
}

}  // namespace overlapscope::workloads
