// Kernels of all_reduce_kernels.h. Data moves in 16-byte vectors (8 bf16/fp16 or 4 fp32
// elements); the elements past the last whole vector are handled one by one.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <type_traits>

#include "workloads/all_reduce_device.h"
#include "workloads/all_reduce_kernels.h"
#include "workloads/all_reduce_push.h"

namespace overlapscope::workloads {
namespace {

constexpr int kFlagPhases = 2;  // start and end barrier
constexpr int kFillThreads = 256;

using ar_device::FromFloat;
using ar_device::GlobalTimerNs;
using ar_device::GridDependencyWait;
using ar_device::GridDependentsAllow;
using ar_device::StampEntry;
using ar_device::StampExit;
using ar_device::StampReady;
using ar_device::ToFloat;

__device__ inline void StoreRelease(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ inline uint32_t LoadAcquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ inline void StoreRelaxed(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ inline uint32_t LoadRelaxed(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// See the header. Thread q < n signals peer q and waits for peer q. kRelease (the end barrier
// of two-shot, whose stores into the peers' outputs must be visible when the peers leave):
// release/acquire at system scope; the block's barrier before it makes the release cumulative
// over every thread's stores. Otherwise (the start barrier) relaxed flags and no fence: it only
// needs to know that every peer's kernel runs (its input was complete before it started, by
// stream order), and nothing of this kernel precedes it, so no block barrier before it either.
template <bool kRelease>
__device__ void Barrier(const AllReduceArgs& a, int n, int rank, int phase) {
  if (kRelease) __syncthreads();
  if (threadIdx.x < n) {
    const int q = threadIdx.x;
    const int64_t slot = (static_cast<int64_t>(phase) * kAllReduceMaxBlocks + blockIdx.x) * kAllReduceMaxRanks;
    if (kRelease) {
      StoreRelease(a.flags[q] + slot + rank, a.epoch);
    } else {
      StoreRelaxed(a.flags[q] + slot + rank, a.epoch);
    }
    const uint32_t* mine = a.flags[rank] + slot + q;
    uint64_t t0 = 0;
    // Wrap-safe "flag < epoch".
    for (uint32_t spins = 1; static_cast<int32_t>((kRelease ? LoadAcquire(mine) : LoadRelaxed(mine)) - a.epoch) < 0;
         ++spins) {
      if ((spins & 1023u) != 0) continue;
      const uint64_t now = GlobalTimerNs();
      if (t0 == 0) {
        t0 = now;
      } else if (now - t0 > static_cast<uint64_t>(a.timeout_ns)) {
        if (a.timeouts) atomicAdd(a.timeouts, 1u);
        break;
      }
    }
  }
  __syncthreads();
  if (phase == 0) StampReady(a.stamps);
}

template <typename T>
struct Vec {
  static constexpr int kN = 16 / sizeof(T);
};

// Sums of kU vectors (v, v + stride, ...; those >= end are skipped) over the ranks in rank order,
// FP32, rounded once. Every load of the kU vectors from every rank is issued before the first
// addition, so kU * n 16-byte reads are in flight per thread. kN: the rank count when known at
// compile time (2, 4, 8), else 0 (then n).
template <typename T, int kN, int kU>
__device__ inline void ReduceVecs(const AllReduceArgs& a, int n, int64_t v, int64_t stride, int64_t end, uint4* r) {
  constexpr int kMax = kN > 0 ? kN : kAllReduceMaxRanks;
  uint4 x[kU][kMax];
#pragma unroll
  for (int u = 0; u < kU; ++u)
#pragma unroll
    for (int q = 0; q < kMax; ++q)
      if ((kN > 0 || q < n) && v + u * stride < end) x[u][q] = static_cast<const uint4*>(a.in[q])[v + u * stride];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    float acc[Vec<T>::kN];
#pragma unroll
    for (int i = 0; i < Vec<T>::kN; ++i) acc[i] = 0.0f;
#pragma unroll
    for (int q = 0; q < kMax; ++q) {
      if (kN == 0 && q >= n) break;
      const T* e = reinterpret_cast<const T*>(&x[u][q]);
#pragma unroll
      for (int i = 0; i < Vec<T>::kN; ++i) acc[i] += ToFloat<T>(e[i]);
    }
    T* o = reinterpret_cast<T*>(&r[u]);
#pragma unroll
    for (int i = 0; i < Vec<T>::kN; ++i) o[i] = FromFloat<T>(acc[i]);
  }
}

// Vectors in flight per thread and loop step.
constexpr int kUnroll = 2;

template <typename T>
__device__ inline T ReduceOne(const AllReduceArgs& a, int n, int64_t i) {
  float acc = 0.0f;
  for (int q = 0; q < n; ++q) acc += ToFloat<T>(static_cast<const T*>(a.in[q])[i]);
  return FromFloat<T>(acc);
}

}  // namespace

// The two kernels live outside the anonymous namespace so that their names read
// "overlapscope::workloads::ovs_allreduce_..." in traces.
template <typename T, int kN>
__global__ void __launch_bounds__(kAllReduceThreads) ovs_allreduce_one_shot(AllReduceArgs a) {
  StampEntry(a.stamps);
  GridDependencyWait();
  GridDependentsAllow();
  const int rank = a.rank + blockIdx.y;
  const int n = kN > 0 ? kN : a.nranks;
  Barrier<false>(a, n, rank, 0);
  const int64_t nvec = a.count / Vec<T>::kN;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  uint4* out = static_cast<uint4*>(a.out[rank]);
  int64_t b0 = 0, b1 = 0;
  AllReduceBlockRange(0, nvec, blockIdx.x, gridDim.x, &b0, &b1);
  const int64_t step = blockDim.x;
  for (int64_t v = b0 + threadIdx.x; v < b1; v += kUnroll * step) {
    uint4 r[kUnroll];
    ReduceVecs<T, kN, kUnroll>(a, n, v, step, b1, r);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (v + u * step < b1) out[v + u * step] = r[u];
  }
  for (int64_t i = nvec * Vec<T>::kN + first; i < a.count; i += stride)
    static_cast<T*>(a.out[rank])[i] = ReduceOne<T>(a, n, i);
  // No end barrier (header): the next all-reduce's start barrier is where this rank learns that
  // every peer has finished reading its input.
  StampExit(a.stamps);
}

template <typename T, int kN>
__global__ void __launch_bounds__(kAllReduceThreads) ovs_allreduce_two_shot(AllReduceArgs a) {
  StampEntry(a.stamps);
  GridDependencyWait();
  GridDependentsAllow();
  const int rank = a.rank + blockIdx.y;
  const int n = kN > 0 ? kN : a.nranks;
  Barrier<false>(a, n, rank, 0);
  // Segment of whole vectors per rank; the last rank also takes the elements past them.
  const int64_t nvec = a.count / Vec<T>::kN;
  const int64_t per = (nvec + n - 1) / n;
  const int64_t v0 = min(nvec, rank * per), v1 = min(nvec, v0 + per);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t b0 = 0, b1 = 0;
  AllReduceBlockRange(v0, v1, blockIdx.x, gridDim.x, &b0, &b1);
  const int64_t step = blockDim.x;
  for (int64_t v = b0 + threadIdx.x; v < b1; v += kUnroll * step) {
    uint4 r[kUnroll];
    ReduceVecs<T, kN, kUnroll>(a, n, v, step, b1, r);
    // Starting with the next rank spreads the stores over the links.
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      if (v + u * step < b1)
        for (int j = 1; j <= n; ++j) static_cast<uint4*>(a.out[(rank + j) % n])[v + u * step] = r[u];
  }
  if (rank == n - 1) {
    for (int64_t i = nvec * Vec<T>::kN + first; i < a.count; i += stride) {
      const T r = ReduceOne<T>(a, n, i);
      for (int q = 0; q < n; ++q) static_cast<T*>(a.out[q])[i] = r;
    }
  }
  Barrier<true>(a, n, rank, 1);
  StampExit(a.stamps);
}

namespace {

__device__ inline uint32_t Mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// Integer in [-4, 4]: exact sums in every type (header).
__device__ inline float InputValue(int64_t i, int rank, uint32_t salt) {
  const uint32_t h = Mix32(static_cast<uint32_t>(i) * 0x9E3779B1u ^ static_cast<uint32_t>(i >> 32) * 0x85EBCA77u ^
                           static_cast<uint32_t>(rank) * 0xC2B2AE3Du ^ salt);
  return static_cast<float>(static_cast<int>(h % 9u) - 4);
}

template <typename T>
__global__ void FillAllReduceKernel(T* in, int64_t count, int rank, uint32_t salt) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    in[i] = FromFloat<T>(InputValue(i, rank, salt));
}

template <typename T>
__global__ void ValidateAllReduceKernel(T* out, int64_t count, int nranks, uint32_t salt, DeviceCheck chk) {
  unsigned long long bad = 0;
  long long first_bad = LLONG_MAX;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    float want = 0.0f;
    for (int r = 0; r < nranks; ++r) want += InputValue(i, r, salt);
    const bool ok = ToFloat<T>(out[i]) == want;  // NaN (an element not written) is never equal
    if (!ok) {
      ++bad;
      if (first_bad == LLONG_MAX) first_bad = i;
    }
    out[i] = FromFloat<T>(__int_as_float(0x7FC00000));
  }
  if (bad) {
    atomicAdd(chk.bad, bad);
    atomicMin(chk.first_bad, first_bad);
  }
}

__global__ void HoldStreamKernel(const volatile int* flag, int64_t timeout_ns, unsigned int* timeouts) {
  const uint64_t t0 = GlobalTimerNs();
  while (*flag == 0) {
    if (GlobalTimerNs() - t0 > static_cast<uint64_t>(timeout_ns)) {
      if (timeouts) atomicAdd(timeouts, 1u);
      return;
    }
  }
}

int FillGrid(int64_t n) {
  const int64_t blocks = (n + kFillThreads - 1) / kFillThreads;
  return static_cast<int>(blocks < 2048 ? (blocks > 0 ? blocks : 1) : 2048);
}

// The kernel for `algo` and the rank count: specialised for 2, 4 and 8 ranks (loops unrolled
// without per-rank predicates), generic otherwise.
template <typename T>
constexpr DType DTypeOf() {
  return sizeof(T) == 4 ? DType::kF32 : std::is_same_v<T, __half> ? DType::kF16 : DType::kBF16;
}

template <typename T>
void (*KernelFor(AllReduceAlgo algo, int n))(AllReduceArgs) {
  if (algo == AllReduceAlgo::kOneShotPush) return OneShotPushKernel(DTypeOf<T>(), n);
  const bool one = algo == AllReduceAlgo::kOneShot;
  switch (n) {
    case 2: return one ? ovs_allreduce_one_shot<T, 2> : ovs_allreduce_two_shot<T, 2>;
    case 4: return one ? ovs_allreduce_one_shot<T, 4> : ovs_allreduce_two_shot<T, 4>;
    case 8: return one ? ovs_allreduce_one_shot<T, 8> : ovs_allreduce_two_shot<T, 8>;
    default: return one ? ovs_allreduce_one_shot<T, 0> : ovs_allreduce_two_shot<T, 0>;
  }
}

template <typename T>
cudaError_t LaunchTyped(AllReduceAlgo algo, const AllReduceArgs& a, int blocks, int ranks_per_launch, cudaStream_t s) {
  auto kernel = KernelFor<T>(algo, a.nranks);
  // Residency of the kernel on this device, asked once per (device, kernel): the launch path
  // stays free of driver queries.
  thread_local int cached_device = -1, sms = 0;
  thread_local void (*cached_kernel)(AllReduceArgs) = nullptr;
  thread_local int per_sm = 0;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  if (device != cached_device || kernel != cached_kernel) {
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kAllReduceThreads, 0);
    if (e != cudaSuccess) return e;
    cached_device = device;
    cached_kernel = kernel;
  }
  // Blocks wait for each other in the barriers: they must all be resident at once.
  if (static_cast<int64_t>(blocks) * ranks_per_launch > static_cast<int64_t>(per_sm) * sms)
    return cudaErrorCooperativeLaunchTooLarge;
  // Programmatic dependent launch: the kernel may be scheduled while the previous kernel on `s`
  // finishes and waits for it (GridDependencyWait) before touching any buffer, so stream order
  // holds. Back to back it saves 0.4-1.2 us per all-reduce; with an event in between (the
  // workload's per-call timing) it measured the same as an ordinary launch (docs/RESULTS.md).
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks, ranks_per_launch);
  cfg.blockDim = dim3(kAllReduceThreads);
  cfg.stream = s;
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, a);
}

template <typename T>
cudaError_t Dispatch3(DType t, T&& fn) {
  switch (t) {
    case DType::kF16: return fn(__half{});
    case DType::kBF16: return fn(__nv_bfloat16{});
    case DType::kF32: return fn(float{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

size_t AllReduceFlagBytes() { return sizeof(uint32_t) * kFlagPhases * kAllReduceMaxBlocks * kAllReduceMaxRanks; }

int AllReduceBlocks(DType t, int64_t count, int max_blocks) {
  const int64_t per_vec = 16 / DTypeBytes(t);
  const int64_t vecs = (count + per_vec - 1) / per_vec;
  int64_t b = (vecs + kAllReduceVecsPerBlock - 1) / kAllReduceVecsPerBlock;
  const int cap = max_blocks < 1 ? 1 : (max_blocks > kAllReduceMaxBlocks ? kAllReduceMaxBlocks : max_blocks);
  return static_cast<int>(b < 1 ? 1 : (b > cap ? cap : b));
}

cudaError_t LaunchAllReduce(AllReduceAlgo algo, DType t, const AllReduceArgs& a, int blocks, int ranks_per_launch,
                            cudaStream_t s) {
  if (a.nranks < 1 || a.nranks > kAllReduceMaxRanks || ranks_per_launch < 1 || a.rank < 0 ||
      a.rank + ranks_per_launch > a.nranks || blocks < 1 || blocks > kAllReduceMaxBlocks || a.count < 0)
    return cudaErrorInvalidValue;
  for (int q = 0; q < a.nranks; ++q) {
    const auto misaligned = [](const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 != 0; };
    if (misaligned(a.in[q]) || misaligned(a.out[q]) || misaligned(a.flags[q])) return cudaErrorInvalidValue;
    if (algo == AllReduceAlgo::kOneShotPush && misaligned(a.recv[q])) return cudaErrorInvalidValue;
  }
  if (algo == AllReduceAlgo::kOneShotPush) {
    const int64_t need = (a.count * DTypeBytes(t) + 15) / 16 * 16;
    if (a.recv_slot_bytes % 16 != 0 || a.recv_slot_bytes < need || a.recv_half > 1) return cudaErrorInvalidValue;
  }
  return Dispatch3(t, [&](auto zero) { return LaunchTyped<decltype(zero)>(algo, a, blocks, ranks_per_launch, s); });
}

cudaError_t FillAllReduceInput(DType t, void* in, int64_t count, int rank, uint32_t salt, cudaStream_t s) {
  return Dispatch3(t, [&](auto zero) {
    using T = decltype(zero);
    FillAllReduceKernel<T><<<FillGrid(count), kFillThreads, 0, s>>>(static_cast<T*>(in), count, rank, salt);
    return cudaGetLastError();
  });
}

cudaError_t ValidateAndPoisonAllReduce(DType t, void* out, int64_t count, int nranks, uint32_t salt, DeviceCheck chk,
                                       cudaStream_t s) {
  return Dispatch3(t, [&](auto zero) {
    using T = decltype(zero);
    ValidateAllReduceKernel<T><<<FillGrid(count), kFillThreads, 0, s>>>(static_cast<T*>(out), count, nranks, salt, chk);
    return cudaGetLastError();
  });
}

cudaError_t HoldStream(const volatile int* host_flag, int64_t timeout_ns, unsigned int* timeouts, cudaStream_t s) {
  HoldStreamKernel<<<1, 1, 0, s>>>(host_flag, timeout_ns, timeouts);
  return cudaGetLastError();
}

}  // namespace overlapscope::workloads
