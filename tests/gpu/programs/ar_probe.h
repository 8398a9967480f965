// ar_probe's harness (ar_probe.cu: what it measures and prints): one host thread drives 2 GPUs,
// every launch timed like the all-reduce workload times it (behind a held stream: event, kernel,
// event, validation kernel). ar_probe_raw.cu holds the measurements of the raw costs (timer,
// ping-pong, dependent loads, empty kernels, NVLink copies).
#pragma once

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

namespace ar_probe {

double Median(std::vector<double> v);

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

  void Setup();
  ws::AllReduceArgs Args(int r, int64_t count);
  void Hold();
  void Release();
  // GPU 0 <-> GPU 1 flag ping-pong (also sets offset_ns), and the timer's step.
  void TimerAndPingPong();
  // One thread's dependent loads of its own and of the peer's memory.
  void ChaseLatency();
  // An empty kernel timed like an all-reduce, by grid and parameter size.
  void Empty();
  // GPU 0 alone copies `bytes` from GPU 1 (read over NVLink) or to it (write), timed like an
  // all-reduce (the other GPU runs nothing but its validation).
  void Bandwidth();
  // One all-reduce size and algorithm with stamps: one line per rank.
  void AllReduce(ws::AllReduceAlgo algo, int64_t bytes, int blocks);
  // Wrong elements and barrier timeouts of every rank; non-zero when any.
  int Check();

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
};

}  // namespace ar_probe
