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
#include "ar_probe.h"

namespace ar_probe {

__global__ void HoldAll(const volatile int* go) {
  while (*go == 0) {
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Probe::Setup() {
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

ws::AllReduceArgs Probe::Args(int r, int64_t count) {
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

void Probe::Hold() {
  *reinterpret_cast<volatile int*>(go) = 0;
  for (int r = 0; r < n; ++r) {
    CK(cudaSetDevice(r));
    HoldAll<<<1, 1, 0, g[r].s>>>(go);
  }
}

void Probe::Release() {
  __sync_synchronize();
  *reinterpret_cast<volatile int*>(go) = 1;
  for (int r = 0; r < n; ++r) CK(cudaStreamSynchronize(g[r].s));
}

void Probe::AllReduce(ws::AllReduceAlgo algo, int64_t bytes, int blocks) {
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

int Probe::Check() {
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

}  // namespace ar_probe

using ar_probe::Probe;

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
