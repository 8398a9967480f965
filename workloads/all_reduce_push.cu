// The push all-reduce of all_reduce_push.h. Data moves in 16-byte vectors (8 fp16/bf16 or 4
// fp32 elements); the partial last vector is read and written element by element and travels
// padded with +0.0.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "workloads/all_reduce_device.h"
#include "workloads/all_reduce_push.h"

namespace overlapscope::workloads {
namespace {

using ar_device::FromFloat;
using ar_device::GlobalTimerNs;
using ar_device::GridDependencyWait;
using ar_device::GridDependentsAllow;
using ar_device::StampEntry;
using ar_device::StampExit;
using ar_device::StampReady;
using ar_device::ToFloat;

constexpr int kFillThreads = 256;
// Vectors polled together per thread and loop step (x peers: the loads in flight).
constexpr int kUnroll = 2;
// Input vectors loaded per thread before their stores are issued.
constexpr int kPushUnroll = 4;

// Negative zero per element, as one 32-bit word: two 16-bit elements or one 32-bit one.
template <int kBytes>
__host__ __device__ constexpr uint32_t SentinelWord() {
  return kBytes == 2 ? 0x80008000u : 0x80000000u;
}

// True when no element of `x` is the sentinel.
template <int kBytes>
__device__ inline bool Arrived(const uint4& x) {
  const uint32_t w[4] = {x.x, x.y, x.z, x.w};
  bool ok = true;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (kBytes == 2) {
      ok &= (w[i] & 0xFFFFu) != 0x8000u && (w[i] >> 16) != 0x8000u;
    } else {
      ok &= w[i] != 0x80000000u;
    }
  }
  return ok;
}

// -0.0 -> +0.0 in every element (the sentinel must never travel as data).
template <int kBytes>
__device__ inline uint32_t CanonWord(uint32_t w) {
  if (kBytes == 2) {
    if ((w & 0xFFFFu) == 0x8000u) w ^= 0x8000u;
    if ((w >> 16) == 0x8000u) w ^= 0x80000000u;
    return w;
  }
  return w == 0x80000000u ? 0u : w;
}
template <int kBytes>
__device__ inline uint4 Canon(uint4 x) {
  return make_uint4(CanonWord<kBytes>(x.x), CanonWord<kBytes>(x.y), CanonWord<kBytes>(x.z), CanonWord<kBytes>(x.w));
}

// Morally strong accesses at system scope (a peer GPU writes what this one polls); relaxed
// loads bypass the SM's non-coherent L1.
__device__ inline void StoreRelaxed(uint4* p, const uint4& v) {
  asm volatile("st.relaxed.sys.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ inline uint4 LoadRelaxed(const uint4* p) {
  uint4 v;
  asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// Vector v of the input: whole, or (the partial last one) its elements below count, +0.0 after.
template <typename T>
__device__ inline uint4 LoadInput(const void* in, int64_t v, int64_t count) {
  constexpr int kV = 16 / sizeof(T);
  if ((v + 1) * kV <= count) return static_cast<const uint4*>(in)[v];
  uint4 x = make_uint4(0, 0, 0, 0);
  T* e = reinterpret_cast<T*>(&x);
  for (int i = 0; i < kV && v * kV + i < count; ++i) e[i] = static_cast<const T*>(in)[v * kV + i];
  return x;
}

template <typename T>
__device__ inline void StoreOutput(void* out, int64_t v, int64_t count, const uint4& x) {
  constexpr int kV = 16 / sizeof(T);
  if ((v + 1) * kV <= count) {
    static_cast<uint4*>(out)[v] = x;
    return;
  }
  const T* e = reinterpret_cast<const T*>(&x);
  for (int i = 0; i < kV && v * kV + i < count; ++i) static_cast<T*>(out)[v * kV + i] = e[i];
}

// kU vectors (v, v + step, ...; those >= b1 skipped) of every rank, as one thread reduces them:
// this rank's own from its input, the peers' polled from the current half of its buffer.
template <typename T, int kN, int kU>
struct Gather {
  static constexpr int kMax = kN > 0 ? kN : kAllReduceMaxRanks;
  uint4 x[kU][kMax];
  uint32_t pending = 0;  // bit u * kMax + q: vector u of peer q not seen yet

  __device__ void Start(const AllReduceArgs& a, int rank, int n, int64_t v, int64_t step, int64_t b1) {
#pragma unroll
    for (int u = 0; u < kU; ++u)
#pragma unroll
      for (int q = 0; q < kMax; ++q)
        if ((kN > 0 || q < n) && v + u * step < b1) {
          if (q == rank) {
            x[u][q] = Canon<sizeof(T)>(LoadInput<T>(a.in[rank], v + u * step, a.count));
          } else {
            pending |= 1u << (u * kMax + q);
          }
        }
  }

  // Loads the pending vectors until none is the sentinel. A wait longer than a.timeout_ns gives
  // up (counted once per thread; *gave_up then makes later calls look only once).
  __device__ void Wait(const AllReduceArgs& a, const uint4* half, int64_t slot, int64_t v, int64_t step,
                       bool* gave_up) {
    uint64_t t0 = 0;
    for (uint32_t spins = 1; pending != 0; ++spins) {
#pragma unroll
      for (int u = 0; u < kU; ++u)
#pragma unroll
        for (int q = 0; q < kMax; ++q)
          if (pending & (1u << (u * kMax + q))) x[u][q] = LoadRelaxed(half + q * slot + v + u * step);
#pragma unroll
      for (int u = 0; u < kU; ++u)
#pragma unroll
        for (int q = 0; q < kMax; ++q)
          if ((pending & (1u << (u * kMax + q))) && Arrived<sizeof(T)>(x[u][q])) pending &= ~(1u << (u * kMax + q));
      if (pending == 0 || *gave_up) return;
      if ((spins & 255u) != 0) continue;
      const uint64_t now = GlobalTimerNs();
      if (t0 == 0) {
        t0 = now;
      } else if (now - t0 > static_cast<uint64_t>(a.timeout_ns)) {
        if (a.timeouts) atomicAdd(a.timeouts, 1u);
        *gave_up = true;
        return;
      }
    }
  }

  // Vector u summed over the ranks in rank order in FP32, rounded once.
  __device__ uint4 Sum(int u, int n) const {
    constexpr int kV = 16 / sizeof(T);
    float acc[kV];
#pragma unroll
    for (int i = 0; i < kV; ++i) acc[i] = 0.0f;
#pragma unroll
    for (int q = 0; q < kMax; ++q) {
      if (kN == 0 && q >= n) break;
      const T* e = reinterpret_cast<const T*>(&x[u][q]);
#pragma unroll
      for (int i = 0; i < kV; ++i) acc[i] += ToFloat<T>(e[i]);
    }
    uint4 r;
    T* o = reinterpret_cast<T*>(&r);
#pragma unroll
    for (int i = 0; i < kV; ++i) o[i] = FromFloat<T>(acc[i]);
    return r;
  }
};

}  // namespace

// Outside the anonymous namespace so that the name reads
// "overlapscope::workloads::ovs_allreduce_one_shot_push<...>" in traces.
template <typename T, int kN>
__global__ void __launch_bounds__(kAllReduceThreads) ovs_allreduce_one_shot_push(AllReduceArgs a) {
  StampEntry(a.stamps);
  GridDependencyWait();
  GridDependentsAllow();
  constexpr int kB = sizeof(T);
  constexpr int kMax = kN > 0 ? kN : kAllReduceMaxRanks;
  const int rank = a.rank + blockIdx.y;
  const int n = kN > 0 ? kN : a.nranks;
  const int64_t nvec = (a.count + 16 / kB - 1) / (16 / kB);
  const int64_t slot = a.recv_slot_bytes / 16;  // vectors per slot
  int64_t b0 = 0, b1 = 0;
  AllReduceBlockRange(0, nvec, blockIdx.x, gridDim.x, &b0, &b1);
  const int64_t step = blockDim.x;

  // 1. Push: this rank's slot of the current half in every peer's buffer, next rank first (the
  // stores spread over the links). All loads of a step are issued before its stores.
  const int64_t my_slot = (static_cast<int64_t>(a.recv_half) * n + rank) * slot;
  for (int64_t v = b0 + threadIdx.x; v < b1; v += kPushUnroll * step) {
    uint4 x[kPushUnroll];
#pragma unroll
    for (int u = 0; u < kPushUnroll; ++u)
      if (v + u * step < b1) x[u] = Canon<kB>(LoadInput<T>(a.in[rank], v + u * step, a.count));
#pragma unroll
    for (int u = 0; u < kPushUnroll; ++u) {
      if (v + u * step >= b1) break;
#pragma unroll
      for (int j = 1; j < kMax; ++j) {
        if (kN == 0 && j >= n) break;
        const int q = rank + j < n ? rank + j : rank + j - n;
        StoreRelaxed(static_cast<uint4*>(a.recv[q]) + my_slot + v + u * step, x[u]);
      }
    }
  }

  // 2. Wait for the peers' vectors in this rank's own buffer, reduce, write the output, clear.
  uint4* half = static_cast<uint4*>(a.recv[rank]) + static_cast<int64_t>(a.recv_half) * n * slot;
  const uint32_t s = SentinelWord<kB>();
  bool gave_up = false;
  for (int64_t v = b0 + threadIdx.x; v < b1; v += kUnroll * step) {
    Gather<T, kN, kUnroll> g;
    g.Start(a, rank, n, v, step, b1);
    g.Wait(a, half, slot, v, step, &gave_up);
    if (v == b0 + threadIdx.x) StampReady(a.stamps);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (v + u * step >= b1) break;
      StoreOutput<T>(a.out[rank], v + u * step, a.count, g.Sum(u, n));
      // Safety rule 2 of the header: the reader clears what it read, in this launch.
#pragma unroll
      for (int q = 0; q < kMax; ++q)
        if ((kN > 0 || q < n) && q != rank) half[q * slot + v + u * step] = make_uint4(s, s, s, s);
    }
  }
  StampExit(a.stamps);
}

namespace {

__global__ void FillSentinelKernel(uint4* p, int64_t nvec, uint32_t word) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < nvec; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = make_uint4(word, word, word, word);
}

template <typename T>
AllReduceKernelFn PushKernelFor(int n) {
  switch (n) {
    case 2: return ovs_allreduce_one_shot_push<T, 2>;
    case 4: return ovs_allreduce_one_shot_push<T, 4>;
    case 8: return ovs_allreduce_one_shot_push<T, 8>;
    default: return ovs_allreduce_one_shot_push<T, 0>;
  }
}

}  // namespace

size_t AllReducePushBytes(int nranks, int64_t slot_bytes) {
  return static_cast<size_t>(2) * static_cast<size_t>(nranks) * static_cast<size_t>(slot_bytes);
}

cudaError_t FillAllReducePushSentinel(DType t, void* recv, size_t bytes, cudaStream_t s) {
  if (recv == nullptr || reinterpret_cast<uintptr_t>(recv) % 16 != 0 || bytes % 16 != 0) return cudaErrorInvalidValue;
  const int64_t nvec = static_cast<int64_t>(bytes / 16);
  if (nvec == 0) return cudaSuccess;
  const int64_t blocks = (nvec + kFillThreads - 1) / kFillThreads;
  FillSentinelKernel<<<static_cast<int>(blocks < 2048 ? blocks : 2048), kFillThreads, 0, s>>>(
      static_cast<uint4*>(recv), nvec, DTypeBytes(t) == 2 ? SentinelWord<2>() : SentinelWord<4>());
  return cudaGetLastError();
}

AllReduceKernelFn OneShotPushKernel(DType t, int nranks) {
  switch (t) {
    case DType::kF16: return PushKernelFor<__half>(nranks);
    case DType::kBF16: return PushKernelFor<__nv_bfloat16>(nranks);
    case DType::kF32: return PushKernelFor<float>(nranks);
  }
  return nullptr;
}

}  // namespace overlapscope::workloads
