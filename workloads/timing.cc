#include "workloads/timing.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "workloads/kernels.h"

namespace overlapscope::workloads {

IterEvents::~IterEvents() {
  for (auto& [name, p] : pairs_) {
    if (p.begin) cudaEventDestroy(p.begin);
    if (p.end) cudaEventDestroy(p.end);
  }
}

absl::StatusOr<IterEvents::Pair*> IterEvents::Get(const std::string& name) {
  Pair& p = pairs_[name];
  if (!p.begin) {
    OS_CUDA(cudaEventCreate(&p.begin));
    OS_CUDA(cudaEventCreate(&p.end));
  }
  return &p;
}

absl::Status IterEvents::Begin(const std::string& name, cudaStream_t s) {
  auto p = Get(name);
  if (!p.ok()) return p.status();
  OS_CUDA(cudaEventRecord((*p)->begin, s));
  (*p)->begun = true;
  return absl::OkStatus();
}

absl::Status IterEvents::End(const std::string& name, cudaStream_t s) {
  auto p = Get(name);
  if (!p.ok()) return p.status();
  if (!(*p)->begun) return absl::InternalError(absl::StrCat("event pair '", name, "' ended before it began"));
  OS_CUDA(cudaEventRecord((*p)->end, s));
  (*p)->ended = true;
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> IterEvents::Elapsed() const {
  std::map<std::string, double> out;
  for (const auto& [name, p] : pairs_) {
    if (!p.begun || !p.ended) continue;
    // The end event may sit on another stream than the one the host waited on: wait for it.
    OS_CUDA(cudaEventSynchronize(p.end));
    float ms = 0;
    OS_CUDA(cudaEventElapsedTime(&ms, p.begin, p.end));
    out[name] = ms;
  }
  return out;
}

void IterEvents::Clear() {
  for (auto& [name, p] : pairs_) p.begun = p.ended = false;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Samples::Median(const std::string& name) const {
  auto it = ms.find(name);
  return it == ms.end() ? 0 : workloads::Median(it->second);
}

absl::StatusOr<Samples> TimeIterations(RankContext& ctx, cudaStream_t main, int warmup, int iters,
                                       const std::function<absl::Status(int iter, IterEvents& ev)>& enqueue) {
  Samples out;
  IterEvents ev;
  const bool nvtx = ctx.group->options().nvtx;
  for (int it = 0; it < warmup + iters; ++it) {
    if (!ctx.group->Barrier()) return absl::AbortedError("another rank failed");
    ev.Clear();
    const bool timed = it >= warmup;
    if (nvtx && timed) nvtxRangePushA(absl::StrCat("ProfilerStep#", it - warmup).c_str());
    absl::Status st = ev.Begin("total", main);
    if (st.ok()) st = enqueue(it, ev);
    if (st.ok()) st = ev.End("total", main);
    if (nvtx && timed) nvtxRangePop();
    if (!st.ok()) return st;
    auto ms = ev.Elapsed();
    if (!ms.ok()) return ms.status();
    if (timed)
      for (const auto& [name, v] : *ms) out.ms[name].push_back(v);
  }
  return out;
}

absl::StatusOr<Samples> TimeInterleaved(RankContext& ctx, cudaStream_t main, int warmup, int iters,
                                        const std::vector<std::string>& kinds,
                                        const std::function<absl::Status(int kind, IterEvents& ev)>& enqueue) {
  const int k = static_cast<int>(kinds.size());
  auto fn = [&](int it, IterEvents& ev) { return enqueue(it % k, ev); };
  // TimeIterations names samples by pair only; rename per kind here, iteration by iteration.
  Samples out;
  IterEvents ev;
  for (int it = 0; it < (warmup + iters) * k; ++it) {
    if (!ctx.group->Barrier()) return absl::AbortedError("another rank failed");
    ev.Clear();
    absl::Status st = ev.Begin("total", main);
    if (st.ok()) st = fn(it, ev);
    if (st.ok()) st = ev.End("total", main);
    if (!st.ok()) return st;
    auto ms = ev.Elapsed();
    if (!ms.ok()) return ms.status();
    if (it >= warmup * k)
      for (const auto& [name, v] : *ms)
        out.ms[name == "total" ? kinds[it % k] + "_ms" : kinds[it % k] + "_" + name + "_ms"].push_back(v);
  }
  return out;
}

absl::Status TimedCollective(RankContext& ctx, const RunParams& p, IterEvents& ev, const std::string& pair,
                             cudaStream_t s, const std::function<absl::Status()>& issue) {
  // One block: the straggler is late, not busy; in an overlapped step the GEMM keeps the SMs.
  if (p.delay_us > 0 && ctx.rank == p.delay_rank) OS_CUDA(SpinKernel(p.delay_us * 1000, 1, s));
  RETURN_IF_ERROR(ev.Begin(pair, s));
  RETURN_IF_ERROR(issue());
  return ev.End(pair, s);
}

void KeepCollectiveTimes(RankContext& ctx, const Samples& smp, const std::string& sample_prefix,
                         const std::vector<std::string>& pairs, const std::string& series) {
  for (const auto& pair : pairs) {
    auto it = smp.ms.find(sample_prefix + pair);
    if (it == smp.ms.end()) it = smp.ms.find(sample_prefix + pair + "_ms");
    if (it == smp.ms.end()) continue;  // this kind ran no collective: no series
    std::vector<double>& out = ctx.coll_ms[series];
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
}

int64_t HostNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace overlapscope::workloads
