// Critical path, straggler causes and stream concurrency (METRICS §8, §9) on a synthetic trace.
//
// Target (printed, never asserted): critical path + straggler causes + concurrency on a 10 M-event
// trace in <= 2 s on the 2-core development machine. The passes they read (classes, iterations,
// host blocking, collectives across ranks) are AnalyzeAll's and timed separately.
//
// usage: critical_path_bench [EVENTS (default 10000000)] [REPEATS (default 3)]
//   Two ranks. Per iteration and rank: a ProfilerStep# range; 40 compute kernels on stream 7, each
//   with its cudaLaunchKernel, the second half launched inside an NVTX range "optimizer"; a
//   cudaEventRecord after the 20th and a stream wait of stream 17 on it; an all-reduce (NCCL
//   kernel on stream 17, a collective matched across the ranks by sequence number, rank 1 a few
//   µs late on odd iterations); a D2H copy and a cudaStreamSynchronize with its sync record.
//   Kernel durations vary (fixed seed). Two groups: "opt=optimizer" and "nccl=nccl".
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "analyze/context.h"
#include "analyze/cross_rank.h"
#include "analyze/path_analyses.h"
#include "analyze/path_walker.h"
#include "analyze/straggler_causes.h"
#include "analyze/stream_concurrency.h"
#include "bench_util.h"
#include "model/trace_builder.h"

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
  model::StringId launch, record, wait, memcpy_async, stream_sync, copy, sync_name, wait_name, nccl, allreduce, pg,
      optimizer;
  Gen() {
    for (int i = 0; i < 20; ++i) names.push_back(b.Intern("void gemm_kernel_variant_" + std::to_string(i) + "<float>"));
    launch = b.Intern("cudaLaunchKernel"), record = b.Intern("cudaEventRecord"), wait = b.Intern("cudaStreamWaitEvent");
    memcpy_async = b.Intern("cudaMemcpyAsync"), stream_sync = b.Intern("cudaStreamSynchronize");
    copy = b.Intern("Memcpy DtoH (Device -> Pinned)"), sync_name = b.Intern("Stream Sync");
    wait_name = b.Intern("Stream Wait Event"), nccl = b.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    allreduce = b.Intern("allreduce"), pg = b.Intern("0"), optimizer = b.Intern("optimizer");
  }
  void Rank(int rank, int64_t iters) {
    constexpr int kCompute = 40;
    auto& d = b.data();
    model::ProcessId pid = b.AddProcess(model::Process{1000 + rank, rank, 2});
    model::ThreadId th = b.GetOrAddThread(pid, 1000 + rank);
    model::DeviceId dev = b.GetOrAddDevice(pid, rank);
    model::StreamId s7 = b.GetOrAddStream(dev, 7), s17 = b.GetOrAddStream(dev, 17);
    int64_t now = 0, corr = 1, gpu = 0, comm_free = 0;
    for (int64_t it = 0; it < iters; ++it) {
      const int64_t it_start = now;
      gpu = std::max(gpu, now + 20000);
      int64_t rec_corr = 0, opt_start = 0;
      for (int k = 0; k < kCompute; ++k) {
        if (k == kCompute / 2) opt_start = now;
        d.api_calls.push_back({now, now + 4000, th, corr, model::kNoCorrelation, launch});
        const int64_t dur = 5000 + static_cast<int64_t>(rng() % 20000);
        gpu = std::max(gpu, now + 6000);
        model::Kernel kern;
        kern.start_ns = gpu, kern.end_ns = gpu + dur, kern.device = dev, kern.stream = s7;
        kern.correlation_id = corr++, kern.name = names[k % names.size()];
        d.kernels.push_back(kern);
        gpu += dur + 500;
        now += 5000;
        if (k == kCompute / 2) {  // event after the 20th kernel; stream 17 waits on it
          rec_corr = corr;
          d.api_calls.push_back({now, now + 1000, th, corr++, model::kNoCorrelation, record});
          d.api_calls.push_back({now + 1000, now + 2000, th, corr, model::kNoCorrelation, wait});
          model::Sync y;
          y.start_ns = now + 1100, y.end_ns = now + 1200, y.kind = model::SyncKind::kStreamWaitEvent;
          y.device = dev, y.stream = s17, y.wait_on_stream = s7, y.event_record_correlation_id = rec_corr;
          y.correlation_id = corr++, y.name = wait_name;
          d.syncs.push_back(y);
          now += 2000;
        }
      }
      d.ranges.push_back({opt_start, now, model::RangeKind::kNvtx, th, model::kNoCorrelation, optimizer, 0});
      // The all-reduce on stream 17: after the recorded kernel and the previous all-reduce.
      d.api_calls.push_back({now, now + 3000, th, corr, model::kNoCorrelation, launch});
      model::Collective c;
      c.op = allreduce, c.communicator = pg, c.sequence = it, c.nranks = 2, c.rank = rank, c.bytes = 1 << 20;
      d.collectives.push_back(c);
      model::Kernel ck;
      ck.start_ns = std::max({comm_free, now + 4000, gpu - 200000}) + (rank == 1 && it % 2 ? 5000 : 0);
      ck.end_ns = std::max(ck.start_ns + 30000, gpu + 20000), ck.device = dev, ck.stream = s17;
      ck.correlation_id = corr++, ck.name = nccl, ck.collective = static_cast<int32_t>(d.collectives.size() - 1);
      d.kernels.push_back(ck);
      comm_free = ck.end_ns;
      now += 3000;
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
  const int64_t per_iter = 1 + 2 * 40 + 3 + 3 + 2 + 2 + 2;  // ranges, kernels+launches, event, nccl, copy, sync
  const int64_t iters = std::max<int64_t>(1, target_events / per_iter / 2);
  g.b.data().kernels.reserve(iters * 2 * 41);
  g.b.data().api_calls.reserve(iters * 2 * 45);
  for (int rank = 0; rank < 2; ++rank) g.Rank(rank, iters);
  auto t = std::move(g.b).Finalize();
  if (!t.ok()) {
    std::fprintf(stderr, "finalize: %s\n", std::string(t.status().message()).c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t events = argc > 1 ? std::atoll(argv[1]) : 10000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  auto t0 = Clock::now();
  model::Trace t = MakeTrace(events);
  std::printf(
      "synthetic trace: %lld events (%zu kernels, %zu api calls, %zu syncs, %zu collectives), built in %.2f s\n",
      static_cast<long long>(t.total_events()), t.kernels().size(), t.api_calls().size(), t.syncs().size(),
      t.collectives().size(), Seconds(t0, Clock::now()));
  // The passes these analyses read, as AnalyzeAll runs them (not part of the figure).
  analyze::AnalyzeOptions opt;
  analyze::Context ctx(t, opt);
  analyze::ClassificationSummary cs;
  analyze::BlockingResult blocking;
  double c0 = CpuSeconds();
  if (!analyze::PrepareContext(ctx, &cs).ok()) return 1;
  analyze::ComputeBlocking(ctx, &blocking);
  analyze::CrossRankResult cross = analyze::AnalyzeCrossRank(t);
  std::printf("prerequisites (context, blocking, cross-rank): %.2f s CPU\n", CpuSeconds() - c0);
  analyze::PathInputs in;
  in.gpu.kernel_cls = ctx.kernel_cls, in.gpu.memcpy_cls = ctx.memcpy_cls, in.gpu.memset_cls = ctx.memset_cls;
  in.iterations = &ctx.iters, in.blocking = &blocking, in.cross_rank = &cross;
  analyze::PathAndConcurrencyOptions po;
  po.concurrency.groups = {{"opt", "optimizer"}, {"nccl", "nccl"}};
  po.threads = 2;
  // As AnalyzeAll runs them (analyze/path_analyses.h).
  std::vector<double> walls;
  for (int i = 0; i < repeats; ++i) {
    auto a = Clock::now();
    double ca = CpuSeconds();
    analyze::PathAnalyses p;
    analyze::ConcurrencyResult conc;
    const absl::Status s = analyze::AnalyzePathsAndConcurrency(t, in, po, &p, &conc);
    auto b = Clock::now();
    double cb = CpuSeconds();
    if (!s.ok()) return 1;
    walls.push_back(Seconds(a, b));
    std::printf(
        "run %d: critical path + straggler causes + concurrency (2 threads): %.2f s wall, %.2f s CPU; %zu "
        "iterations, job paths %.3f s, %zu straggler causes, %zu devices\n",
        i, Seconds(a, b), cb - ca, p.critical_path.iterations.size(),
        static_cast<double>(p.critical_path.total.Total()) / 1e9, p.stragglers.causes.size(), conc.devices.size());
  }
  std::sort(walls.begin(), walls.end());
  std::printf("wall: min %.2f s, median %.2f s (target <= 2 s for 10 M events)\n", walls.front(),
              walls[walls.size() / 2]);
  {
    // Phase breakdown (CPU s).
    double p0 = CpuSeconds();
    analyze::PathIndex ix(t, in);
    double p1 = CpuSeconds();
    auto cp = analyze::CriticalPathOn(ix, analyze::CriticalPathOptions{});
    double p2 = CpuSeconds();
    auto st = analyze::StragglerCausesOn(ix, analyze::StragglerOptions{});
    double p3 = CpuSeconds();
    auto conc = analyze::AnalyzeStreamConcurrency(t, in.gpu, ctx.iters, po.concurrency);
    double p4 = CpuSeconds();
    std::printf("phases, one thread (CPU s): index %.3f, critical path %.3f, straggler causes %.3f, concurrency %.3f\n",
                p1 - p0, p2 - p1, p3 - p2, p4 - p3);
  }
  std::printf("peak RSS %ld MB\n", RssMb());
  return 0;
}
