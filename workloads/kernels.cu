// Kernels of kernels.h. Grid-stride loops; grids are sized from the element count (capped), so
// launch cost is independent of the problem size.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>

#include "workloads/all_reduce_device.h"
#include "workloads/kernels.h"

namespace overlapscope::workloads {
namespace {

using ar_device::FromFloat;
using ar_device::GlobalTimerNs;

constexpr int kThreads = 256;

__host__ __device__ inline uint32_t Hash32(uint64_t x) {
  // splitmix64 finaliser, folded to 32 bits: cheap and well mixed.
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<uint32_t>(x ^ (x >> 32));
}

// 32-bit integer hash (two multiplies): cheap enough for per-element checks of 64 M elements.
__host__ __device__ inline uint32_t Mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// u/v in {-2,-1,1,2}; sigma in {-1,1}.
__device__ inline float Factor(int64_t i, uint32_t seed) {
  uint32_t h = Mix32(static_cast<uint32_t>(i) * 0x9E3779B1u + seed * 0x85EBCA77u);
  float mag = (h & 1u) ? 1.0f : 2.0f;
  return (h & 2u) ? -mag : mag;
}
__device__ inline float Sigma(int64_t p) { return (Mix32(static_cast<uint32_t>(p) ^ 0xA5A5A5A5u) & 4u) ? -1.0f : 1.0f; }

__device__ inline uint32_t Pattern32(int64_t i, int rank, uint32_t salt) {
  return Hash32((static_cast<uint64_t>(rank) << 40) ^ static_cast<uint64_t>(i) ^ (static_cast<uint64_t>(salt) << 20));
}
__device__ inline int32_t PatternI32(int64_t i, int32_t tag) {
  return static_cast<int32_t>(Mix32(static_cast<uint32_t>(i) * 0x9E3779B1u ^ static_cast<uint32_t>(tag)) & 0x7FFFFFFF);
}

// Raw bits, so the comparison is exact (and NaN never equals anything).
template <typename T>
__device__ inline bool SameValue(T a, T b);
template <>
__device__ inline bool SameValue<__half>(__half a, __half b) {
  return __heq(a, b);
}
template <>
__device__ inline bool SameValue<__nv_bfloat16>(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __heq(a, b);
}
template <>
__device__ inline bool SameValue<float>(float a, float b) {
  return a == b;
}

__device__ inline void Report(DeviceCheck chk, long long idx) {
  atomicAdd(chk.bad, 1ull);
  atomicMin(chk.first_bad, idx);
}

__device__ inline float Pow2(int e) { return ldexpf(1.0f, -e); }

template <typename T>
__global__ void FillAKernel(T* a, int64_t rows, int64_t k, uint32_t seed, int e) {
  float s = Pow2(e);
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < rows * k; x += int64_t(gridDim.x) * blockDim.x) {
    int64_t i = x % rows, p = x / rows;
    a[x] = FromFloat<T>(Factor(i, seed) * Sigma(p) * s);
  }
}

template <typename T>
__global__ void FillBKernel(T* b, int64_t k, int64_t cols, uint32_t seed, int e) {
  float s = Pow2(e);
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < k * cols; x += int64_t(gridDim.x) * blockDim.x) {
    int64_t p = x % k, j = x / k;
    b[x] = FromFloat<T>(Sigma(p) * s * Factor(j, seed));
  }
}

// Expected C(i,j) in float: exact (k * 2^-2e * u * v with 4k < 2^24), then rounded like cuBLAS
// rounds its FP32 result into T.
__device__ inline float Expected(int64_t i, int64_t j, int64_t k, uint32_t seed_a, uint32_t seed_b, int e) {
  return static_cast<float>(k) * Pow2(2 * e) * Factor(i, seed_a) * Factor(j, seed_b);
}

template <typename T>
__global__ void ValidateGemmKernel(const T* c, int64_t m, int64_t n, int64_t k, uint32_t sa, uint32_t sb, int e,
                                   DeviceCheck chk) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < m * n; x += int64_t(gridDim.x) * blockDim.x) {
    if (!SameValue(c[x], FromFloat<T>(Expected(x % m, x / m, k, sa, sb, e)))) Report(chk, x);
  }
}

template <typename T>
__device__ inline T NaNOf();
template <>
__device__ inline __half NaNOf<__half>() {
  return __ushort_as_half(0x7E00);
}
template <>
__device__ inline __nv_bfloat16 NaNOf<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0x7FC0);
}
template <>
__device__ inline float NaNOf<float>() {
  return __int_as_float(0x7FC00000);
}

// I is the index type: 32-bit when m*n fits, because 64-bit division costs tens of
// instructions on the GPU and this kernel runs inside the timed steps.
template <typename T, typename I>
__global__ void ValidateA2AKernel(T* z, I m, I n, int64_t k, I nranks, I me, uint32_t sa_base, uint32_t sb, int e,
                                  DeviceCheck chk) {
  const I total = m * n, chunk = total / nranks;
  for (I x = blockIdx.x * I(blockDim.x) + threadIdx.x; x < total; x += I(gridDim.x) * blockDim.x) {
    const I sender = x / chunk;
    const I g = me * chunk + (x - sender * chunk);  // index in the sender's Y
    const I j = g / m;
    T want = FromFloat<T>(Expected(g - j * m, j, k, sa_base + static_cast<uint32_t>(sender), sb, e));
    const bool ok = SameValue(z[x], want);
    if (!ok && chk.bad) Report(chk, static_cast<long long>(x));
    // The poison depends on the comparison, so the check is never optimized away (also when
    // chk.bad is null: the uncounted consumer of "compute alone" costs what the real one does).
    z[x] = ok ? NaNOf<T>() : -NaNOf<T>();
  }
}

__global__ void FillPatternKernel(uint32_t* p, int64_t count, int rank, uint32_t salt) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < count; x += int64_t(gridDim.x) * blockDim.x)
    p[x] = Pattern32(x, rank, salt);
}

__global__ void ValidateAllGatherKernel(const uint32_t* recv, int64_t count, int nranks, uint32_t salt,
                                        DeviceCheck chk) {
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < count * nranks;
       x += int64_t(gridDim.x) * blockDim.x) {
    if (recv[x] != Pattern32(x % count, static_cast<int>(x / count), salt)) Report(chk, x);
  }
}

__global__ void SpinKernelImpl(int64_t duration_ns) {
  uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < static_cast<uint64_t>(duration_ns)) {
  }
}

__global__ void ProduceBatchKernel(int32_t* buf, int64_t count, int32_t tag, int64_t duration_ns) {
  uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < static_cast<uint64_t>(duration_ns)) {
  }
  for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < count; x += int64_t(gridDim.x) * blockDim.x)
    buf[x] = PatternI32(x, tag);
}

__global__ void ComputeFlagKernel(const int32_t* buf, int64_t count, int32_t tag, int32_t* flag, DeviceCheck chk) {
  __shared__ unsigned long long block_bad;
  if (threadIdx.x == 0) block_bad = 0;
  __syncthreads();
  unsigned long long bad = 0;
  for (int64_t x = threadIdx.x; x < count; x += blockDim.x) bad += (buf[x] != PatternI32(x, tag));
  atomicAdd(&block_bad, bad);
  __syncthreads();
  if (threadIdx.x == 0) {
    *flag = block_bad == 0 ? tag : -tag;
    if (block_bad) {
      atomicAdd(chk.bad, block_bad);
      atomicMin(chk.first_bad, 0ll);
    }
  }
}

int GridFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

template <template <typename> class Launch, typename... Args>
cudaError_t Dispatch(DType t, Args&&... args) {
  switch (t) {
    case DType::kF16: Launch<__half>::Run(args...); break;
    case DType::kBF16: Launch<__nv_bfloat16>::Run(args...); break;
    case DType::kF32: Launch<float>::Run(args...); break;
  }
  return cudaGetLastError();
}

template <typename T>
struct FillA {
  static void Run(void* a, int64_t rows, int64_t k, uint32_t seed, int e, cudaStream_t s) {
    FillAKernel<T><<<GridFor(rows * k), kThreads, 0, s>>>(static_cast<T*>(a), rows, k, seed, e);
  }
};
template <typename T>
struct FillB {
  static void Run(void* b, int64_t k, int64_t cols, uint32_t seed, int e, cudaStream_t s) {
    FillBKernel<T><<<GridFor(k * cols), kThreads, 0, s>>>(static_cast<T*>(b), k, cols, seed, e);
  }
};
template <typename T>
struct CheckGemm {
  static void Run(const void* c, int64_t m, int64_t n, int64_t k, uint32_t sa, uint32_t sb, int e, DeviceCheck chk,
                  cudaStream_t s) {
    ValidateGemmKernel<T><<<GridFor(m * n), kThreads, 0, s>>>(static_cast<const T*>(c), m, n, k, sa, sb, e, chk);
  }
};
template <typename T>
struct CheckA2A {
  static void Run(void* z, int64_t m, int64_t n, int64_t k, int nranks, int me, uint32_t sa, uint32_t sb, int e,
                  DeviceCheck chk, cudaStream_t s) {
    if (m * n < (int64_t{1} << 32))
      ValidateA2AKernel<T, uint32_t><<<GridFor(m * n), kThreads, 0, s>>>(
          static_cast<T*>(z), static_cast<uint32_t>(m), static_cast<uint32_t>(n), k, static_cast<uint32_t>(nranks),
          static_cast<uint32_t>(me), sa, sb, e, chk);
    else
      ValidateA2AKernel<T, int64_t>
          <<<GridFor(m * n), kThreads, 0, s>>>(static_cast<T*>(z), m, n, k, nranks, me, sa, sb, e, chk);
  }
};

}  // namespace

int DTypeBytes(DType t) { return t == DType::kF32 ? 4 : 2; }

int GemmScaleExp(int64_t k) {
  // Smallest e >= 0 with 4 * k * 2^-2e <= 2^14.
  int e = 0;
  while (4.0 * static_cast<double>(k) / static_cast<double>(1ll << (2 * e)) > 16384.0) ++e;
  return e;
}

cudaError_t FillGemmA(DType t, void* a, int64_t rows, int64_t k, uint32_t seed, int e, cudaStream_t s) {
  return Dispatch<FillA>(t, a, rows, k, seed, e, s);
}
cudaError_t FillGemmB(DType t, void* b, int64_t k, int64_t cols, uint32_t seed, int e, cudaStream_t s) {
  return Dispatch<FillB>(t, b, k, cols, seed, e, s);
}
cudaError_t ValidateGemm(DType t, const void* c, int64_t m, int64_t n, int64_t k, uint32_t seed_a, uint32_t seed_b,
                         int e, DeviceCheck chk, cudaStream_t s) {
  return Dispatch<CheckGemm>(t, c, m, n, k, seed_a, seed_b, e, chk, s);
}
cudaError_t ValidateAndPoisonA2A(DType t, void* z, int64_t m, int64_t n, int64_t k, int nranks, int my_rank,
                                 uint32_t seed_a_base, uint32_t seed_b, int e, DeviceCheck chk, cudaStream_t s) {
  return Dispatch<CheckA2A>(t, z, m, n, k, nranks, my_rank, seed_a_base, seed_b, e, chk, s);
}

cudaError_t FillPattern32(uint32_t* p, int64_t count, int rank, uint32_t salt, cudaStream_t s) {
  FillPatternKernel<<<GridFor(count), kThreads, 0, s>>>(p, count, rank, salt);
  return cudaGetLastError();
}
cudaError_t ValidateAllGather(const uint32_t* recv, int64_t count, int nranks, uint32_t salt, DeviceCheck chk,
                              cudaStream_t s) {
  ValidateAllGatherKernel<<<GridFor(count * nranks), kThreads, 0, s>>>(recv, count, nranks, salt, chk);
  return cudaGetLastError();
}

cudaError_t SpinKernel(int64_t duration_ns, int num_sms, cudaStream_t s) {
  SpinKernelImpl<<<num_sms, kThreads, 0, s>>>(duration_ns);
  return cudaGetLastError();
}
cudaError_t ProduceBatch(int32_t* buf, int64_t count, int32_t tag, int64_t duration_ns, int num_sms, cudaStream_t s) {
  ProduceBatchKernel<<<num_sms, kThreads, 0, s>>>(buf, count, tag, duration_ns);
  return cudaGetLastError();
}
cudaError_t ComputeFlag(const int32_t* buf, int64_t count, int32_t tag, int32_t* flag, DeviceCheck chk,
                        cudaStream_t s) {
  ComputeFlagKernel<<<1, 1024, 0, s>>>(buf, count, tag, flag, chk);
  return cudaGetLastError();
}

}  // namespace overlapscope::workloads
