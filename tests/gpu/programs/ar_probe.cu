// ar_probe: where the time of overlapscope's small all-reduces goes, on 2+ GPUs of one process
// (one host thread drives every GPU; peers by cudaDeviceEnablePeerAccess). Prints, as medians:
//   timer    - the step of %globaltimer (its resolution) per GPU;
//   pingpong - a flag's round trip GPU 0 -> GPU 1 -> GPU 0 (st.relaxed.sys into the peer's
//              memory, polled with ld.relaxed.sys in one's own) and GPU 1's timer offset;
//   chase    - one thread's dependent loads (ld.relaxed.sys): own memory vs the peer's;
//   empty    - a kernel that does nothing, timed like the workload times an all-reduce (behind a
//              held stream: event, kernel, event, validation kernel), by grid and parameter size;
//   ar       - the all-reduce kernels timed the same way, with their diagnostic stamps
//              (AllReduceArgs::stamps): event time, entry -> ready (barrier / first data),
//              ready -> exit, the kernel's own span, the time outside it (event minus span), the
//              spread of the blocks' entries and the ranks' entry skew (timer offset removed).
// Every all-reduce is validated on the device (workloads/all_reduce_kernels.h); a wrong element
// or a barrier timeout makes the probe exit 1. Usage: ar_probe [iters] [reps] [blocks...].
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "workloads/all_reduce_kernels.h"
#include "workloads/all_reduce_push.h"

namespace ws = overlapscope::workloads;

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

namespace {

__device__ inline unsigned long long Gt() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ inline void StRel(unsigned int* p, unsigned int v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ inline unsigned int LdRel(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ inline unsigned long long LdRel64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__global__ void TimerStep(unsigned long long* out) {
  unsigned long long prev = Gt(), best = ~0ull;
  for (int k = 0; k < 64; ++k) {
    unsigned long long t;
    do t = Gt();
    while (t == prev);
    best = min(best, t - prev);
    prev = t;
  }
  *out = best;
}

// Side 0 starts each round; side 1 answers. t[k] = this side's timer at send (side 0) / at receipt
// (side 1); t[rounds + k] = side 0's timer when the answer came back.
__global__ void PingPong(int side, unsigned int* mine, unsigned int* peer, int rounds, unsigned long long* t,
                         const volatile int* go) {
  while (*go == 0) {
  }
  for (int k = 1; k <= rounds; ++k) {
    if (side == 0) {
      t[k - 1] = Gt();
      StRel(peer, k);
      while (LdRel(mine) != static_cast<unsigned int>(k)) {
      }
      t[rounds + k - 1] = Gt();
    } else {
      while (LdRel(mine) != static_cast<unsigned int>(k)) {
      }
      t[k - 1] = Gt();
      StRel(peer, k);
    }
  }
}

__global__ void Chase(const unsigned long long* p, int hops, unsigned long long* out) {
  const unsigned long long t0 = Gt();
  const unsigned long long* q = p;
  for (int k = 0; k < hops; ++k) q = reinterpret_cast<const unsigned long long*>(LdRel64(q));
  const unsigned long long t1 = Gt();
  out[0] = t1 - t0;
  out[1] = reinterpret_cast<unsigned long long>(q);
}

// One 16-byte vector per thread and step, grid-stride: a plain copy (src or dst a peer's buffer).
__global__ void Copy(const uint4* src, uint4* dst, int64_t nvec) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < nvec; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void HoldAll(const volatile int* go) {
  while (*go == 0) {
  }
}
__global__ void EmptySmall(int) {}
__global__ void EmptyArgs(ws::AllReduceArgs) {}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Gpu {
  cudaStream_t s;
  void *in, *out, *recv;
  unsigned int* flags;
  unsigned int* timeouts;
  unsigned long long* stamps;  // kAllReduceStampWords per launch
  unsigned long long* bad;
  long long* first_bad;
  unsigned long long* junk;  // the validation counters of the empty kernels' runs (ignored)
  std::vector<cudaEvent_t> ev;
};

constexpr uint32_t kSalt = 0x5A17u;
constexpr int64_t kMaxBytes = 4 << 20;

struct Probe {
  int n = 2, iters = 20, reps = 5;
  std::vector<Gpu> g;
  int* go = nullptr;  // mapped pinned host flag shared by every GPU
  int64_t push_launches = 0;
  uint32_t epoch = 0;
  double offset_ns = 0;  // GPU 1's timer minus GPU 0's

  void Setup() {
    CK(cudaHostAlloc(&go, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    g.resize(n);
    for (int r = 0; r < n; ++r) {
      CK(cudaSetDevice(r));
      for (int q = 0; q < n; ++q)
        if (q != r) {
          cudaError_t e = cudaDeviceEnablePeerAccess(q, 0);
          if (e != cudaErrorPeerAccessAlreadyEnabled) CK(e);
          cudaGetLastError();
        }
      Gpu& x = g[r];
      CK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
      CK(cudaMalloc(&x.in, kMaxBytes));
      CK(cudaMalloc(&x.out, kMaxBytes));
      CK(cudaMalloc(&x.recv, ws::AllReducePushBytes(n, kMaxBytes)));
      CK(cudaMalloc(&x.flags, ws::AllReduceFlagBytes()));
      CK(cudaMemset(x.flags, 0, ws::AllReduceFlagBytes()));
      CK(cudaMalloc(&x.timeouts, 16));
      CK(cudaMemset(x.timeouts, 0, 16));
      CK(cudaMalloc(&x.stamps, 8ull * ws::kAllReduceStampWords * 4096));
      CK(cudaMalloc(&x.bad, 8));
      CK(cudaMalloc(&x.first_bad, 8));
      CK(cudaMemset(x.bad, 0, 8));
      CK(cudaMalloc(&x.junk, 16));
      CK(ws::FillAllReducePushSentinel(ws::DType::kBF16, x.recv, ws::AllReducePushBytes(n, kMaxBytes), x.s));
      CK(ws::FillAllReduceInput(ws::DType::kBF16, x.in, kMaxBytes / 2, r, kSalt, x.s));
      x.ev.resize(2 * 64);
      for (auto& e : x.ev) CK(cudaEventCreate(&e));
      CK(cudaStreamSynchronize(x.s));
    }
  }

  ws::AllReduceArgs Args(int r, int64_t count) {
    ws::AllReduceArgs a;
    for (int q = 0; q < n; ++q) {
      a.in[q] = g[q].in;
      a.out[q] = g[q].out;
      a.flags[q] = g[q].flags;
      a.recv[q] = g[q].recv;
    }
    a.count = count;
    a.nranks = n;
    a.rank = r;
    a.timeouts = g[r].timeouts;
    a.recv_slot_bytes = kMaxBytes;
    return a;
  }

  void Hold() {
    *reinterpret_cast<volatile int*>(go) = 0;
    for (int r = 0; r < n; ++r) {
      CK(cudaSetDevice(r));
      HoldAll<<<1, 1, 0, g[r].s>>>(go);
    }
  }
  void Release() {
    __sync_synchronize();
    *reinterpret_cast<volatile int*>(go) = 1;
    for (int r = 0; r < n; ++r) CK(cudaStreamSynchronize(g[r].s));
  }

  void TimerAndPingPong() {
    for (int r = 0; r < n; ++r) {
      CK(cudaSetDevice(r));
      unsigned long long* d;
      unsigned long long h = 0;
      CK(cudaMalloc(&d, 8));
      TimerStep<<<1, 1, 0, g[r].s>>>(d);
      CK(cudaMemcpyAsync(&h, d, 8, cudaMemcpyDeviceToHost, g[r].s));
      CK(cudaStreamSynchronize(g[r].s));
      std::printf("timer    GPU %d: %%globaltimer step %llu ns\n", r, h);
      CK(cudaFree(d));
    }
    const int rounds = 500;
    unsigned long long* t[2];
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaMalloc(&t[r], 16 * rounds));
      CK(cudaMemset(g[r].flags, 0, ws::AllReduceFlagBytes()));
      CK(cudaDeviceSynchronize());
    }
    *reinterpret_cast<volatile int*>(go) = 0;
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(r));
      PingPong<<<1, 1, 0, g[r].s>>>(r, g[r].flags, g[1 - r].flags, rounds, t[r], go);
    }
    Release();
    std::vector<unsigned long long> a(2 * rounds), b(2 * rounds);
    CK(cudaMemcpy(a.data(), t[0], 16 * rounds, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), t[1], 16 * rounds, cudaMemcpyDeviceToHost));
    std::vector<double> rtt, off;
    for (int k = 10; k < rounds; ++k) {
      rtt.push_back(static_cast<double>(a[rounds + k] - a[k]));
      off.push_back(static_cast<double>(b[k]) - 0.5 * (static_cast<double>(a[k]) + static_cast<double>(a[rounds + k])));
    }
    offset_ns = Median(off);
    std::printf(
        "pingpong GPU0->GPU1->GPU0 flag round trip: median %.0f ns, min %.0f ns (one way ~%.0f ns); "
        "GPU1 timer - GPU0 timer %.0f ns\n",
        Median(rtt), *std::min_element(rtt.begin(), rtt.end()), Median(rtt) / 2, offset_ns);
    for (int r = 0; r < 2; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaFree(t[r]));
      CK(cudaMemset(g[r].flags, 0, ws::AllReduceFlagBytes()));
      CK(cudaDeviceSynchronize());
    }
    epoch = 0;
  }

  void ChaseLatency() {
    // A ring of 64 pointers 4 KiB apart in `buf` (on GPU `owner`), chased from GPU 0.
    for (int owner : {0, 1}) {
      CK(cudaSetDevice(owner));
      std::vector<unsigned long long> h(64 * 512);
      char* base = static_cast<char*>(g[owner].out);
      for (int k = 0; k < 64; ++k)
        h[k * 512] = reinterpret_cast<unsigned long long>(base + ((k * 37 + 11) % 64) * 4096);
      CK(cudaMemcpy(g[owner].out, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
      CK(cudaDeviceSynchronize());
      CK(cudaSetDevice(0));
      unsigned long long* d;
      CK(cudaMalloc(&d, 16));
      std::vector<double> ns;
      for (int k = 0; k < 5; ++k) {
        unsigned long long h2[2];
        Chase<<<1, 1, 0, g[0].s>>>(static_cast<unsigned long long*>(g[owner].out), 200, d);
        CK(cudaMemcpyAsync(h2, d, 16, cudaMemcpyDeviceToHost, g[0].s));
        CK(cudaStreamSynchronize(g[0].s));
        ns.push_back(static_cast<double>(h2[0]) / 200);
      }
      std::printf("chase    GPU 0 loading %s memory: %.0f ns per dependent ld.relaxed.sys\n",
                  owner == 0 ? "its own" : "GPU 1's", Median(ns));
      CK(cudaFree(d));
    }
  }

  // Times `launch(r, j)` like the workload: behind a held stream, event, launch, event, validation
  // (poison) of `count` elements of the output; returns per-rank event samples in ms.
  template <typename F>
  std::vector<std::vector<double>> Timed(int64_t count, F launch, bool counts = true) {
    std::vector<std::vector<double>> ms(n);
    for (int it = 0; it < iters + 2; ++it) {
      Hold();
      for (int j = 0; j < reps; ++j)
        for (int r = 0; r < n; ++r) {
          CK(cudaSetDevice(r));
          Gpu& x = g[r];
          CK(cudaEventRecord(x.ev[2 * j], x.s));
          launch(r, it * reps + j);
          CK(cudaEventRecord(x.ev[2 * j + 1], x.s));
          const ws::DeviceCheck chk = counts ? ws::DeviceCheck{x.bad, x.first_bad}
                                             : ws::DeviceCheck{x.junk, reinterpret_cast<long long*>(x.junk + 1)};
          CK(ws::ValidateAndPoisonAllReduce(ws::DType::kBF16, x.out, count, n, kSalt, chk, x.s));
        }
      Release();
      if (it < 2) continue;
      for (int r = 0; r < n; ++r)
        for (int j = 0; j < reps; ++j) {
          float f = 0;
          CK(cudaEventElapsedTime(&f, g[r].ev[2 * j], g[r].ev[2 * j + 1]));
          ms[r].push_back(f);
        }
    }
    return ms;
  }

  void Empty() {
    struct Case {
      const char* name;
      int blocks;
      bool args;
    } cases[] = {{"1x512, 4-byte parameter", 1, false},
                 {"64x512, 4-byte parameter", 64, false},
                 {"128x512, 4-byte parameter", 128, false},
                 {"1x512, AllReduceArgs parameter", 1, true},
                 {"64x512, AllReduceArgs parameter", 64, true}};
    for (const Case& c : cases) {
      auto ms = Timed(
          8,
          [&](int r, int) {
            if (c.args) {
              EmptyArgs<<<c.blocks, 512, 0, g[r].s>>>(Args(r, 8));
            } else {
              EmptySmall<<<c.blocks, 512, 0, g[r].s>>>(r);
            }
          },
          false);
      std::printf("empty    %-32s events around it: GPU0 %.4f ms, GPU1 %.4f ms\n", c.name, Median(ms[0]),
                  Median(ms[1]));
    }
  }

  // GPU 0 alone copies `bytes` from GPU 1 (read over NVLink) or to it (write), timed like an
  // all-reduce (the other GPU runs nothing but its validation).
  void Bandwidth() {
    for (int64_t bytes : {int64_t{512} << 10, int64_t{1} << 20, int64_t{4} << 20}) {
      for (int dir = 0; dir < 3; ++dir) {
        const uint4* src = static_cast<const uint4*>(dir == 0 ? g[1].in : g[0].in);
        uint4* dst = static_cast<uint4*>(dir == 1 ? g[1].out : g[0].out);
        auto ms = Timed(
            8,
            [&](int r, int) {
              if (r == 0) Copy<<<64, 512, 0, g[0].s>>>(src, dst, bytes / 16);
            },
            false);
        const double t = Median(ms[0]);
        std::printf("copy     %-28s %8lld B, 64x512: events %.4f ms (%.0f GB/s counting the events)\n",
                    dir == 0   ? "read GPU1 -> GPU0 (loads)"
                    : dir == 1 ? "write GPU0 -> GPU1 (stores)"
                               : "local",
                    static_cast<long long>(bytes), t, bytes / (t * 1e6));
      }
    }
  }

  void AllReduce(ws::AllReduceAlgo algo, int64_t bytes, int blocks) {
    const int64_t count = bytes / 2;
    const int nb = ws::AllReduceBlocks(ws::DType::kBF16, count, blocks);
    const int W = ws::kAllReduceStampWords;
    const int per_it = reps;
    for (int r = 0; r < n; ++r) {
      CK(cudaSetDevice(r));
      CK(cudaMemset(g[r].stamps, 0, 8ull * W * (iters + 2) * per_it));
    }
    std::vector<uint32_t> halves;
    auto ms = Timed(count, [&](int r, int k) {
      ws::AllReduceArgs a = Args(r, count);
      if (r == 0) {
        ++epoch;
        halves.push_back(static_cast<uint32_t>(push_launches % 2));
        if (algo == ws::AllReduceAlgo::kOneShotPush) ++push_launches;
      }
      a.epoch = epoch;
      a.recv_half = halves.back();
      a.stamps = g[r].stamps + static_cast<int64_t>(k) * W;
      CK(ws::LaunchAllReduce(algo, ws::DType::kBF16, a, nb, 1, g[r].s));
    });
    std::vector<std::vector<unsigned long long>> st(n);
    for (int r = 0; r < n; ++r) {
      CK(cudaSetDevice(r));
      st[r].resize(static_cast<size_t>(W) * (iters + 2) * per_it);
      CK(cudaMemcpy(st[r].data(), g[r].stamps, st[r].size() * 8, cudaMemcpyDeviceToHost));
    }
    const char* name = ws::AllReduceAlgo::kOneShot == algo   ? "one-shot"
                       : ws::AllReduceAlgo::kTwoShot == algo ? "two-shot"
                                                             : "one-shot-push";
    for (int r = 0; r < n; ++r) {
      std::vector<double> wait, data, span, outside, spread, skew, late;
      for (int k = 2 * per_it; k < (iters + 2) * per_it; ++k) {
        const unsigned long long* s = &st[r][static_cast<size_t>(k) * W];
        const unsigned long long* o = &st[1 - r][static_cast<size_t>(k) * W];
        const double e0 = static_cast<double>(s[ws::kStampEntry0]);
        wait.push_back(static_cast<double>(s[ws::kStampReady0]) - e0);
        data.push_back(static_cast<double>(s[ws::kStampExitMax]) - static_cast<double>(s[ws::kStampReady0]));
        span.push_back(static_cast<double>(s[ws::kStampExitMax]) - e0);
        spread.push_back(static_cast<double>(s[ws::kStampEntryMax]) - e0);
        late.push_back(static_cast<double>(s[ws::kStampReadyMax]) - static_cast<double>(s[ws::kStampReady0]));
        const double off = r == 1 ? offset_ns : -offset_ns;  // this GPU's timer minus the other's
        skew.push_back(e0 - off - static_cast<double>(o[ws::kStampEntry0]));
        outside.push_back(ms[r][k - 2 * per_it] * 1e6 - span.back());
      }
      std::printf(
          "ar       %-13s %8lld B blocks %3d rank %d: events %.4f ms | entry->ready %5.0f ns, ready->exit %5.0f ns, "
          "span %5.0f ns, outside %5.0f ns | blocks' entry spread %4.0f ns, ready spread %4.0f ns | entry minus "
          "peer's %+5.0f ns\n",
          name, static_cast<long long>(bytes), nb, r, Median(ms[r]), Median(wait), Median(data), Median(span),
          Median(outside), Median(spread), Median(late), Median(skew));
    }
  }

  int Check() {
    int failed = 0;
    for (int r = 0; r < n; ++r) {
      CK(cudaSetDevice(r));
      unsigned long long bad = 0;
      unsigned int to = 0;
      CK(cudaMemcpy(&bad, g[r].bad, 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&to, g[r].timeouts, 4, cudaMemcpyDeviceToHost));
      std::printf("check    rank %d: %llu wrong elements, %u barrier timeouts\n", r, bad, to);
      failed |= bad != 0 || to != 0;
    }
    return failed;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Probe p;
  int count = 0;
  CK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::fprintf(stderr, "ar_probe needs 2 GPUs, found %d\n", count);
    return 2;
  }
  p.n = 2;
  if (argc > 1) p.iters = std::max(1, std::atoi(argv[1]));
  if (argc > 2) p.reps = std::min(32, std::max(1, std::atoi(argv[2])));
  std::vector<int> blocks;
  for (int k = 3; k < argc; ++k) blocks.push_back(std::atoi(argv[k]));
  if (blocks.empty()) blocks = {64};
  p.Setup();
  p.TimerAndPingPong();
  p.ChaseLatency();
  p.Empty();
  p.Bandwidth();
  // Warm-up of every kernel (module load) before the timed runs.
  for (auto algo : {ws::AllReduceAlgo::kOneShot, ws::AllReduceAlgo::kOneShotPush}) p.AllReduce(algo, 16, 64);
  for (int b : blocks)
    for (auto algo : {ws::AllReduceAlgo::kOneShot, ws::AllReduceAlgo::kOneShotPush})
      for (int64_t bytes : {int64_t{16}, int64_t{512} << 10, int64_t{1} << 20}) p.AllReduce(algo, bytes, b);
  return p.Check();
}
