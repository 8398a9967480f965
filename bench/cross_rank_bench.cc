// Multi-rank benchmark: collective matching (AnalyzeCrossRank), clock alignment (estimated and
// applied while the trace is finalized, against a plain Finalize of the same events), AnalyzeAll
// on the aligned trace, and the reports that list every matched collective.
//
// usage: cross_rank_bench [EVENTS (default 10000000)]
//   Two ranks on hosts "a" and "b" (b's clock 1.234567 ms ahead). Per iteration and rank: 40
//   compute kernels with their cudaLaunchKernel, and one all-gather (a Collective record carried
//   by one NCCL kernel, launched too) overlapping the second half of the compute. Printed, never
//   asserted; no target of its own beyond the AnalyzeAll one (<= 2 s for 10 M events).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "analyze/cross_rank.h"
#include "model/trace_builder.h"
#include "report/build.h"
#include "report/render.h"

namespace {

using namespace overlapscope;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

model::TraceBuilder MakeBuilder(int64_t target_events) {
  model::TraceBuilder b;
  constexpr int kCompute = 40;
  const int64_t per_iter = 2 * (kCompute + 1) + 1;
  const int64_t iters = std::max<int64_t>(3, target_events / per_iter / 2);
  // Both ranks draw the same kernel durations (same seed): their collectives end together up to
  // a jitter of < 2 µs, as NCCL collectives do, and b's clock runs ahead by 1.234567 ms.
  model::StringId gemm = b.Intern("void gemm_kernel<float>(...)");
  model::StringId nccl = b.Intern("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  model::StringId launch = b.Intern("cudaLaunchKernel"), op = b.Intern("_allgather_base"), comm = b.Intern("0"),
                  half = b.Intern("Half");
  auto& d = b.data();
  for (int rank = 0; rank < 2; ++rank) {
    model::Process p{2000 + rank, rank, 2};
    p.host = b.Intern(rank == 0 ? "a" : "b");
    model::ProcessId pid = b.AddProcess(p);
    model::ThreadId th = b.GetOrAddThread(pid, 1);
    model::DeviceId dev = b.GetOrAddDevice(pid, 0);
    model::StreamId s7 = b.GetOrAddStream(dev, 7), s17 = b.GetOrAddStream(dev, 17);
    const int64_t clock = rank == 0 ? 0 : 1234567;
    std::mt19937_64 rng(7), jitter(100 + rank);
    int64_t now = 1000000 + clock, corr = 1;
    for (int64_t it = 0; it < iters; ++it) {
      int64_t gpu = now + 20000, comm_start = 0;
      for (int k = 0; k < kCompute; ++k) {
        d.api_calls.push_back({now, now + 4000, th, corr, model::kNoCorrelation, launch});
        const int64_t dur = 5000 + static_cast<int64_t>(rng() % 20000);
        gpu = std::max(gpu, now + 6000);
        model::Kernel kern;
        kern.start_ns = gpu;
        kern.end_ns = gpu + dur;
        kern.device = dev;
        kern.stream = s7;
        kern.correlation_id = corr++;
        kern.name = gemm;
        d.kernels.push_back(kern);
        if (k == kCompute / 2) comm_start = gpu + static_cast<int64_t>(jitter() % 3000);
        gpu += dur + 500;
        now += 5000;
      }
      model::Collective c;
      c.op = op;
      c.communicator = comm;
      c.dtype = half;
      c.in_elements = 1 << 20;
      c.out_elements = 2 << 20;
      c.rank = rank;
      c.nranks = 2;
      d.collectives.push_back(c);
      d.api_calls.push_back({now, now + 3000, th, corr, model::kNoCorrelation, launch});
      model::Kernel k;
      k.start_ns = comm_start;
      const int64_t end = gpu + 30000;  // jitter must not feed back into the timeline
      k.end_ns = end + static_cast<int64_t>(jitter() % 2000);
      k.device = dev;
      k.stream = s17;
      k.correlation_id = corr++;
      k.name = nccl;
      k.collective = static_cast<model::CollectiveId>(d.collectives.size() - 1);
      d.kernels.push_back(k);
      now = std::max(now, end - 20000);
    }
  }
  return b;
}

model::Trace OrDie(absl::StatusOr<model::Trace> t) {
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", std::string(t.status().message()).c_str());
    std::exit(1);
  }
  return std::move(t).value();
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t events = argc > 1 ? std::atoll(argv[1]) : 10000000;
  auto t0 = Clock::now();
  model::TraceBuilder plain = MakeBuilder(events);
  auto t1 = Clock::now();
  model::Trace t = OrDie(std::move(plain).Finalize());
  auto t2 = Clock::now();
  std::printf("synthetic trace: %lld events, %zu collective records, generated in %.2f s; Finalize %.3f s\n",
              static_cast<long long>(t.total_events()), t.collectives().size(), Seconds(t0, t1), Seconds(t1, t2));
  analyze::ClockAlignment ca;
  model::FinalizeOptions align;
  align.clock_shift = analyze::ClockAlignmentShift(analyze::ClockAlignMode::kAuto, &ca);
  model::TraceBuilder shifted = MakeBuilder(events);
  auto a = Clock::now();
  model::Trace aligned = OrDie(std::move(shifted).Finalize(align));
  auto b = Clock::now();
  std::printf("Finalize with clock alignment (estimate + shift in place, one sort): %.3f s: %s\n", Seconds(a, b),
              analyze::DescribeClockAlignment(ca).c_str());
  a = Clock::now();
  analyze::CrossRankResult x = analyze::AnalyzeCrossRank(t);
  b = Clock::now();
  std::printf("AnalyzeCrossRank (unaligned): %.3f s, %zu instances matched (by %s, participants by %s)\n",
              Seconds(a, b), x.instances.size(), x.matched_by_sequence ? "sequence" : "order",
              std::string(analyze::ToString(x.identified_by)).c_str());
  a = Clock::now();
  analyze::ClockAlignment est = analyze::EstimateClockAlignment(t, analyze::ClockAlignMode::kAuto);
  b = Clock::now();
  std::printf("EstimateClockAlignment on the finalized trace: %.3f s: %s\n", Seconds(a, b),
              analyze::DescribeClockAlignment(est).c_str());
  a = Clock::now();
  auto r = analyze::AnalyzeAll(aligned, analyze::AnalyzeOptions{});
  b = Clock::now();
  if (!r.ok()) return 1;
  std::printf("AnalyzeAll on the aligned trace: %.3f s; max skew after alignment %lld ns\n", Seconds(a, b),
              static_cast<long long>(r->cross_rank.max_skew_ns));
  if (std::getenv("CROSS_RANK_BENCH_DEBUG"))
    for (size_t i = 0; i < 5 && i < r->cross_rank.instances.size(); ++i)
      std::printf("instance %zu: skew %lld, starts %lld %lld\n", i,
                  static_cast<long long>(r->cross_rank.instances[i].skew_ns),
                  static_cast<long long>(r->cross_rank.instances[i].ranks[0].start_ns),
                  static_cast<long long>(r->cross_rank.instances[i].ranks[1].start_ns));
  report::ReportInfo info;
  info.clock_alignment = ca;
  a = Clock::now();
  const report::Report rep = report::BuildReport(aligned, *r, info);
  auto built = Clock::now();
  std::string json = report::RenderJson(rep);
  b = Clock::now();
  std::string text = report::RenderText(rep);
  auto c = Clock::now();
  std::printf("typed report built: %.3f s; JSON (every instance): %.3f s, %zu bytes; text: %.3f s, %zu bytes\n",
              Seconds(a, built), Seconds(built, b), json.size(), Seconds(b, c), text.size());
  return 0;
}
