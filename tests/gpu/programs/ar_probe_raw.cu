// ar_probe's raw-cost measurements (ar_probe.h): the timer's step, a flag ping-pong between the
// GPUs, dependent loads, an empty kernel and plain NVLink copies, each timed like an all-reduce.
#include "ar_probe.h"

namespace ar_probe {
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

__global__ void EmptySmall(int) {}
__global__ void EmptyArgs(ws::AllReduceArgs) {}

}  // namespace

void Probe::TimerAndPingPong() {
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

void Probe::ChaseLatency() {
  // A ring of 64 pointers 4 KiB apart in `buf` (on GPU `owner`), chased from GPU 0.
  for (int owner : {0, 1}) {
    CK(cudaSetDevice(owner));
    std::vector<unsigned long long> h(64 * 512);
    char* base = static_cast<char*>(g[owner].out);
    for (int k = 0; k < 64; ++k) h[k * 512] = reinterpret_cast<unsigned long long>(base + ((k * 37 + 11) % 64) * 4096);
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

void Probe::Empty() {
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
    std::printf("empty    %-32s events around it: GPU0 %.4f ms, GPU1 %.4f ms\n", c.name, Median(ms[0]), Median(ms[1]));
  }
}

void Probe::Bandwidth() {
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

}  // namespace ar_probe
