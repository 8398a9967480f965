// Analysis benchmark: all analyses (AnalyzeAll) and the JSON report on a synthetic trace.
//
// Target (printed, never asserted): AnalyzeAll on a 10 M-event trace in <= 2 s on the 2-core
// development machine.
//
// usage: analyze_bench [EVENTS (default 10000000)] [REPEATS (default 3)]
//   Two ranks. Per iteration and rank: a ProfilerStep# range, 40 compute kernels (20 names) on
//   stream 7 each with its cudaLaunchKernel, one NCCL kernel on stream 17 overlapping the
//   second half of the compute, a D2H copy with cudaMemcpyAsync, a cudaStreamSynchronize with
//   its sync record, and a few µs of launch gap. Kernel durations vary (fixed seed).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/context.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "bench_util.h"
#include "model/trace_builder.h"
#include "report/build.h"
#include "report/render.h"

namespace {

using namespace overlapscope;
using bench::Clock;
using bench::CpuSeconds;
using bench::RssMb;
using bench::Seconds;

model::Trace MakeTrace(int64_t target_events) {
  model::TraceBuilder b;
  constexpr int kCompute = 40;
  const int64_t per_iter = 1 + 2 * kCompute + 2 + 2 + 2;  // range, kernels+launches, nccl, copy, sync
  const int64_t iters_per_rank = std::max<int64_t>(1, target_events / per_iter / 2);
  std::mt19937_64 rng(42);
  std::vector<model::StringId> names;
  for (int i = 0; i < 20; ++i)
    names.push_back(b.Intern("void gemm_kernel_variant_" + std::to_string(i) + "<float>(...)"));
  model::StringId nccl = b.Intern("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  model::StringId launch = b.Intern("cudaLaunchKernel"), memcpy_async = b.Intern("cudaMemcpyAsync"),
                  stream_sync = b.Intern("cudaStreamSynchronize"), copy = b.Intern("Memcpy DtoH (Device -> Pinned)"),
                  sync_name = b.Intern("Stream Sync");
  auto& d = b.data();
  d.kernels.reserve(iters_per_rank * 2 * (kCompute + 1));
  d.api_calls.reserve(iters_per_rank * 2 * (kCompute + 3));
  for (int rank = 0; rank < 2; ++rank) {
    model::Process p;
    p.pid = 1000 + rank;
    p.rank = rank;
    model::ProcessId pid = b.AddProcess(p);
    model::ThreadId th = b.GetOrAddThread(pid, 1000 + rank);
    model::DeviceId dev = b.GetOrAddDevice(pid, rank);
    model::StreamId s7 = b.GetOrAddStream(dev, 7), s17 = b.GetOrAddStream(dev, 17);
    int64_t now = 0, corr = 1;
    for (int64_t it = 0; it < iters_per_rank; ++it) {
      int64_t it_start = now;
      int64_t gpu = now + 20000;
      int64_t comm_start = 0;
      for (int k = 0; k < kCompute; ++k) {
        model::ApiCall a{now, now + 4000, th, corr, model::kNoCorrelation, launch};
        d.api_calls.push_back(a);
        int64_t dur = 5000 + static_cast<int64_t>(rng() % 20000);
        gpu = std::max(gpu, now + 6000);
        model::Kernel kern;
        kern.start_ns = gpu;
        kern.end_ns = gpu + dur;
        kern.device = dev;
        kern.stream = s7;
        kern.correlation_id = corr++;
        kern.name = names[k % names.size()];
        d.kernels.push_back(kern);
        if (k == kCompute / 2) comm_start = gpu;
        gpu += dur + 500;
        now += 5000;
      }
      // NCCL kernel from the middle of the compute to a bit past its end.
      d.api_calls.push_back({it_start + 1000, it_start + 3000, th, corr, model::kNoCorrelation, launch});
      model::Kernel c;
      c.start_ns = comm_start;
      c.end_ns = gpu + 30000;
      c.device = dev;
      c.stream = s17;
      c.correlation_id = corr++;
      c.name = nccl;
      d.kernels.push_back(c);
      gpu = c.end_ns + 1000;
      d.api_calls.push_back({now, now + 3000, th, corr, model::kNoCorrelation, memcpy_async});
      model::Memcpy m;
      m.start_ns = std::max(gpu, now + 4000);
      m.end_ns = m.start_ns + 2000;
      m.device = dev;
      m.stream = s7;
      m.correlation_id = corr++;
      m.name = copy;
      m.bytes = 4;
      m.kind = model::MemcpyKind::kDtoH;
      m.src_kind = model::MemoryKind::kDevice;
      m.dst_kind = model::MemoryKind::kPinned;
      m.is_async = 1;
      d.memcpys.push_back(m);
      now += 3000;
      int64_t sync_end = m.end_ns + 1000;
      d.api_calls.push_back({now, sync_end, th, corr, model::kNoCorrelation, stream_sync});
      model::Sync y;
      y.start_ns = now + 100;
      y.end_ns = sync_end - 100;
      y.kind = model::SyncKind::kStreamSync;
      y.device = dev;
      y.stream = s7;
      y.correlation_id = corr++;
      y.name = sync_name;
      d.syncs.push_back(y);
      now = sync_end + 2000 + static_cast<int64_t>(rng() % 10000);
      model::Range r;
      r.start_ns = it_start;
      r.end_ns = now;
      r.kind = model::RangeKind::kUserAnnotation;
      r.thread = th;
      r.name = b.Intern("ProfilerStep#" + std::to_string(it));
      d.ranges.push_back(r);
    }
  }
  auto t = std::move(b).Finalize();
  if (!t.ok()) {
    std::fprintf(stderr, "finalize: %s\n", std::string(t.status().message()).c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = argc > 1 ? std::atoll(argv[1]) : 10000000;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  auto t0 = Clock::now();
  model::Trace t = MakeTrace(events);
  auto t1 = Clock::now();
  std::printf(
      "synthetic trace: %lld events (%zu kernels, %zu api calls, %zu memcpys, %zu syncs, %zu ranges), "
      "built+finalized in %.2f s\n",
      static_cast<long long>(t.total_events()), t.kernels().size(), t.api_calls().size(), t.memcpys().size(),
      t.syncs().size(), t.ranges().size(), Seconds(t0, t1));
  std::vector<double> times, cpu_times;
  analyze::AnalysisResult last;
  for (int i = 0; i < repeats; ++i) {
    auto a = Clock::now();
    double ca = CpuSeconds();
    // OVERLAPSCOPE_BENCH_NO_PATH=1: without the critical path and the transfer/wait split (what
    // --critical-path off leaves out), to see their share.
    analyze::AnalyzeOptions all;
    if (std::getenv("OVERLAPSCOPE_BENCH_NO_PATH") != nullptr) all.critical_path = false, all.comm_wait_split = false;
    auto r = analyze::AnalyzeAll(t, all);
    cpu_times.push_back(CpuSeconds() - ca);
    auto b = Clock::now();
    if (!r.ok()) {
      std::fprintf(stderr, "analyze: %s\n", std::string(r.status().message()).c_str());
      return 1;
    }
    times.push_back(Seconds(a, b));
    last = std::move(r).value();
  }
  {
    // Phase breakdown (the pieces AnalyzeAll runs, timed one by one).
    analyze::AnalyzeOptions opt;
    analyze::AnalysisResult r;
    analyze::Context ctx(t, opt);
    double p0 = CpuSeconds();
    if (!analyze::PrepareContext(ctx, &r.classes).ok()) return 1;
    double p1 = CpuSeconds();
    analyze::ComputeOverlap(ctx, &r.overlap);
    double p2 = CpuSeconds();
    analyze::ComputeHtaCompat(ctx, &r.hta);
    double p3 = CpuSeconds();
    analyze::ComputeBlocking(ctx, &r.blocking);
    double p4 = CpuSeconds();
    analyze::ComputeIdle(ctx, r.blocking, &r.idle, &r.gaps, &r.windows);
    double p5 = CpuSeconds();
    analyze::ComputeSyncPoints(ctx, r.blocking, r.overlap, nullptr, &r.sync);
    double p6 = CpuSeconds();
    analyze::ComputeLaunchStats(ctx, &r.launch);
    double p7 = CpuSeconds();
    // The graph's build, the least of three (one phase measured alone is at the mercy of the
    // machine's other work).
    const analyze::graph::GraphInputs gin = analyze::MakeGraphInputs(r.blocking, r.cross_rank);
    analyze::graph::Graph g = analyze::graph::BuildGraph(t, gin);
    double p8 = CpuSeconds();
    for (int k = 0; k < 2; ++k) {
      const double q = CpuSeconds();
      g = analyze::graph::BuildGraph(t, gin);
      p8 = std::min(p8, p7 + CpuSeconds() - q);
    }
    std::printf(
        "phases (CPU s): prepare (classify, sets, launch lookup, iterations) %.3f, overlap %.3f, hta %.3f, "
        "blocking %.3f, idle %.3f, sync points %.3f, launch stats %.3f, dependency graph %.3f (%d nodes)\n",
        p1 - p0, p2 - p1, p3 - p2, p4 - p3, p5 - p4, p6 - p5, p7 - p6, p8 - p7, g.num_nodes());
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  double med = times[times.size() / 2];
  double load = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  std::printf("AnalyzeAll CPU time (both threads): min %.3f s, median %.3f s; machine load average %.2f on %u cores\n",
              cpu_times.front(), cpu_times[cpu_times.size() / 2], load, std::thread::hardware_concurrency());
  std::printf(
      "AnalyzeAll wall: min %.3f s, median %.3f s over %d runs = %.1f M events/s (target <= 2 s for 10 M: %s)\n",
      times.front(), med, repeats, static_cast<double>(t.total_events()) / med / 1e6,
      t.total_events() >= 9000000 ? (med <= 2.0 ? "met" : "NOT met") : "n/a at this size");
  auto a = Clock::now();
  std::string json = report::RenderJson(report::BuildReport(t, last, report::ReportInfo{}));
  auto b = Clock::now();
  std::printf("JSON report: %.3f s, %zu bytes; findings %zu, blocked intervals %zu, gaps %zu\n", Seconds(a, b),
              json.size(), last.sync.findings.size(), last.blocking.intervals.size(), last.gaps.size());
  if (!last.ranks.empty() && last.ranks[0].overlap_ratio)
    std::printf("rank 0: overlap_ratio %.4f, blocked_share %.4f\n", *last.ranks[0].overlap_ratio,
                last.ranks[0].blocked_share.value_or(-1));
  std::printf("peak RSS %ld MB\n", RssMb());
  return 0;
}
