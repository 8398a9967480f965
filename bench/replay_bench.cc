// Replay and what-if (METRICS §11, analyze/replay) on a synthetic trace.
//
// Target (printed, never asserted): replay of a 10 M-event trace in <= 2 s on the 2-core
// development machine, a what-if the same. The passes replay reads (classes, iterations, host
// blocking, collectives across ranks, the dependency graph) are timed apart.
//
// usage: replay_bench [EVENTS (default 10000000)] [REPEATS (default 3)] [--keep-freed]
//   --keep-freed: the allocator keeps what the process frees (one heap for every thread, no
//   block mapped apart, nothing trimmed), so that a repeat reuses the last run's pages instead of
//   faulting in fresh ones: the figure of a process that replays again and again. Without it
//   (the default) every run pays the first touch of its arrays, as one CLI run does. On a VM
//   that reports free memory to its host (virtio-balloon free page reporting) those first
//   touches cost several times a native fault, and vary (docs/PERFORMANCE.md, tenth round).
//   Two ranks. Per iteration and rank: a ProfilerStep# range; 40 compute kernels on stream 7 with
//   their cudaLaunchKernel; an all-gather (NCCL kernel on stream 7, matched across the ranks by
//   sequence number, rank 1 a few µs late on odd iterations); a D2H copy and a
//   cudaStreamSynchronize with its sync record. Kernel durations vary (fixed seed). The what-if
//   is `async:/AllGather/` (the all-gather moved to a stream of its own, contention on).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "analyze/context.h"
#include "analyze/cpu_blocking.h"
#include "analyze/cross_rank.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "analyze/replay/replay.h"
#include "bench_util.h"
#include "model/trace_builder.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

using namespace overlapscope;
using bench::Clock;
using bench::CpuSeconds;
using bench::RssMb;
using bench::Seconds;

struct Gen {
  model::TraceBuilder b;
  std::mt19937_64 rng{42};
  std::vector<model::StringId> names;
  model::StringId launch, memcpy_async, stream_sync, copy, sync_name, nccl, allgather, pg;
  Gen() {
    for (int i = 0; i < 20; ++i) names.push_back(b.Intern("void gemm_kernel_variant_" + std::to_string(i) + "<float>"));
    launch = b.Intern("cudaLaunchKernel"), memcpy_async = b.Intern("cudaMemcpyAsync");
    stream_sync = b.Intern("cudaStreamSynchronize"), copy = b.Intern("Memcpy DtoH (Device -> Pinned)");
    sync_name = b.Intern("Stream Sync"), nccl = b.Intern("ncclDevKernel_AllGather_RING_LL");
    allgather = b.Intern("allgather"), pg = b.Intern("0");
  }
  int64_t Kernel(model::DeviceId dev, model::StreamId s, model::ThreadId th, int64_t& now, int64_t& gpu, int64_t& corr,
                 model::StringId name, int64_t dur) {
    b.data().api_calls.push_back({now, now + 4000, th, corr, model::kNoCorrelation, launch});
    gpu = std::max(gpu, now + 6000);
    model::Kernel k;
    k.start_ns = gpu, k.end_ns = gpu + dur, k.device = dev, k.stream = s, k.correlation_id = corr++, k.name = name;
    k.grid = {264, 1, 1};
    b.data().kernels.push_back(k);
    gpu += dur + 500;
    now += 5000;
    return static_cast<int64_t>(b.data().kernels.size() - 1);
  }
  void Rank(int rank, int64_t iters) {
    auto& d = b.data();
    model::ProcessId pid = b.AddProcess(model::Process{1000 + rank, rank, 2});
    model::ThreadId th = b.GetOrAddThread(pid, 1000 + rank);
    model::DeviceId dev = b.GetOrAddDevice(pid, rank);
    model::StreamId s7 = b.GetOrAddStream(dev, 7);
    int64_t now = 0, corr = 1, gpu = 0;
    for (int64_t it = 0; it < iters; ++it) {
      const int64_t it_start = now;
      for (int k = 0; k < 40; ++k) Kernel(dev, s7, th, now, gpu, corr, names[k % 20], 5000 + rng() % 20000);
      model::Collective c;
      c.op = allgather, c.communicator = pg, c.sequence = it, c.nranks = 2, c.rank = rank, c.bytes = 1 << 20;
      d.collectives.push_back(c);
      if (rank == 1 && it % 2) gpu += 5000;
      const int64_t ck = Kernel(dev, s7, th, now, gpu, corr, nccl, 40000);
      d.kernels[ck].collective = static_cast<int32_t>(d.collectives.size() - 1);
      d.kernels[ck].grid = {16, 1, 1};
      d.api_calls.push_back({now, now + 3000, th, corr, model::kNoCorrelation, memcpy_async});
      model::Memcpy m;
      m.start_ns = std::max(gpu, now + 4000), m.end_ns = m.start_ns + 2000, m.device = dev, m.stream = s7;
      m.correlation_id = corr++, m.name = copy, m.bytes = 4, m.kind = model::MemcpyKind::kDtoH;
      m.src_kind = model::MemoryKind::kDevice, m.dst_kind = model::MemoryKind::kPinned, m.is_async = 1;
      d.memcpys.push_back(m);
      gpu = m.end_ns;
      now += 3000;
      const int64_t sync_end = m.end_ns + 1000;
      d.api_calls.push_back({now, sync_end, th, corr, model::kNoCorrelation, stream_sync});
      model::Sync y;
      y.start_ns = now + 100, y.end_ns = sync_end - 100, y.kind = model::SyncKind::kStreamSync;
      y.device = dev, y.stream = s7, y.correlation_id = corr++, y.name = sync_name;
      d.syncs.push_back(y);
      now = sync_end + 2000 + static_cast<int64_t>(rng() % 10000);
      d.ranges.push_back({it_start, now, model::RangeKind::kUserAnnotation, th, model::kNoCorrelation,
                          b.Intern("ProfilerStep#" + std::to_string(it)), 0});
    }
  }
};

model::Trace MakeTrace(int64_t target_events) {
  Gen g;
  const int64_t per_iter = 1 + 2 * 41 + 2 + 2 + 1;  // range, kernels + launches, copy, sync + record
  const int64_t iters = std::max<int64_t>(1, target_events / per_iter / 2);
  g.b.data().kernels.reserve(iters * 2 * 41);
  g.b.data().api_calls.reserve(iters * 2 * 43);
  for (int rank = 0; rank < 2; ++rank) g.Rank(rank, iters);
  auto t = std::move(g.b).Finalize();
  if (!t.ok()) {
    std::fprintf(stderr, "finalize: %s\n", std::string(t.status().message()).c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

analyze::replay::GpuClass ToClass(analyze::ActivityClass c) {
  return static_cast<analyze::replay::GpuClass>(static_cast<int>(c));  // same order (replay.h)
}

// --keep-freed: freed blocks stay in the process for the next run (glibc only; before any thread
// starts, so that the prediction's threads use the same heap). False where it cannot apply.
bool KeepFreed() {
#if defined(__GLIBC__)
  return mallopt(M_ARENA_MAX, 1) == 1 && mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1 &&
         mallopt(M_TRIM_THRESHOLD, INT32_MAX) == 1;
#else
  return false;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t events = argc > 1 ? std::atoll(argv[1]) : 10000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  if (argc > 3 && std::strcmp(argv[3], "--keep-freed") == 0)
    std::printf("allocator: keeps freed memory (--keep-freed): %s\n", KeepFreed() ? "on" : "not available");
  std::printf("load averages at start: %s\n", bench::LoadAverages().c_str());
  auto t0 = Clock::now();
  model::Trace t = MakeTrace(events);
  std::printf("synthetic trace: %lld events (%zu kernels, %zu api calls), built in %.2f s\n",
              static_cast<long long>(t.total_events()), t.kernels().size(), t.api_calls().size(),
              Seconds(t0, Clock::now()));
  analyze::AnalyzeOptions opt;
  analyze::Context ctx(t, opt);
  analyze::ClassificationSummary cs;
  analyze::BlockingResult blocking;
  double c0 = CpuSeconds();
  if (!analyze::PrepareContext(ctx, &cs).ok()) return 1;
  analyze::ComputeBlocking(ctx, &blocking);
  analyze::CrossRankResult cross = analyze::AnalyzeCrossRank(t);
  double c1 = CpuSeconds();
  const analyze::graph::Graph g = analyze::graph::BuildGraph(t, analyze::MakeGraphInputs(blocking, cross));
  std::printf("prerequisites (context, blocking, cross-rank): %.2f s CPU; dependency graph: %.2f s CPU, %d nodes\n",
              c1 - c0, CpuSeconds() - c1, g.num_nodes());
  analyze::replay::ReplayInputs in;
  for (auto c : ctx.kernel_cls) in.kernel_class.push_back(ToClass(c));
  for (auto c : ctx.memcpy_cls) in.memcpy_class.push_back(ToClass(c));
  for (auto c : ctx.memset_cls) in.memset_class.push_back(ToClass(c));
  in.kernel_iteration = ctx.iters.kernel_iteration;
  in.memcpy_iteration = ctx.iters.memcpy_iteration;
  in.memset_iteration = ctx.iters.memset_iteration;
  for (const analyze::Iteration& it : ctx.iters.iterations)
    in.iterations.push_back({it.process, it.number, it.start_ns, it.end_ns});
  for (int what_if = 0; what_if < 2; ++what_if) {
    analyze::replay::ReplayOptions ro;
    if (what_if) ro.changes.push_back(*analyze::replay::ParseChange("async:/AllGather/"));
    std::vector<double> walls;
    for (int i = 0; i < repeats; ++i) {
      auto a = Clock::now();
      double ca = CpuSeconds();
      const bench::Usage ua = bench::UsageNow();
      auto r = analyze::replay::Replay(t, g, in, ro);
      walls.push_back(Seconds(a, Clock::now()));
      if (!r.ok()) return 1;
      const bench::Usage ub = bench::UsageNow();
      std::printf(
          "run %d: %s: %.2f s wall, %.2f s CPU (%.2f user + %.2f sys, %ld k minor faults); %zu iterations, median "
          "|error| %.4f %%, contention %s\n",
          i, what_if ? "what-if async:/AllGather/ (with contention)" : "replay", walls.back(), CpuSeconds() - ca,
          ub.user_s - ua.user_s, ub.sys_s - ua.sys_s, (ub.minflt - ua.minflt) / 1000, r->iterations.size(),
          r->median_abs_error * 100, std::string(analyze::replay::ToString(r->contention_model)).c_str());
    }
    std::sort(walls.begin(), walls.end());
    std::printf("%s wall: min %.2f s, median %.2f s (target <= 2 s for 10 M events)\n", what_if ? "what-if" : "replay",
                walls.front(), walls[walls.size() / 2]);
  }
  std::printf("peak RSS %ld MB; load averages at the end: %s\n", RssMb(), bench::LoadAverages().c_str());
  return 0;
}
