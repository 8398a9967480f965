// Arrival of a collective on its stream (analyze/collective_arrival.h) and the skew, wait and
// bus time measured from it (analyze/cross_rank.h). Synthetic two-rank traces; every expected
// number is worked out by hand in the comments. Times in ns.
#include "analyze/collective_arrival.h"

#include "analyze/cross_rank.h"
#include "gtest/gtest.h"
#include "model/trace_builder.h"

namespace overlapscope::analyze {
namespace {

using model::kNone;

// Two processes (ranks 0 and 1), one host thread and one GPU each; correlation ids count up
// from 1 per rank in the order calls are added (as CUPTI's do per process).
struct Ranks {
  model::TraceBuilder b;
  model::ProcessId proc[2];
  model::ThreadId thread[2];
  model::DeviceId dev[2];
  int64_t next_corr[2] = {1, 1};
  Ranks() {
    for (int r = 0; r < 2; ++r) {
      proc[r] = b.AddProcess(model::Process{1000 + r, r, 2});
      thread[r] = b.GetOrAddThread(proc[r], 1);
      dev[r] = b.GetOrAddDevice(proc[r], 0);
    }
  }
  model::StreamId Stream(int r, int64_t native) { return b.GetOrAddStream(dev[r], native); }
  // A host API call [s, s+5); returns its correlation id.
  int64_t Api(int r, const char* name, int64_t s) {
    model::ApiCall a;
    a.start_ns = s;
    a.end_ns = s + 5;
    a.thread = thread[r];
    a.correlation_id = next_corr[r]++;
    a.name = b.Intern(name);
    b.data().api_calls.push_back(a);
    return a.correlation_id;
  }
  model::CollectiveId Coll(const char* op, int64_t seq) {
    model::Collective c;
    c.op = b.Intern(op);
    c.communicator = b.Intern("0");
    c.sequence = seq;
    c.nranks = 2;
    c.bytes = 1000;
    b.data().collectives.push_back(c);
    return static_cast<model::CollectiveId>(b.data().collectives.size() - 1);
  }
  void Kernel(int r, int64_t native, int64_t s, int64_t e, int64_t corr, model::CollectiveId c = kNone) {
    model::Kernel k;
    k.start_ns = s, k.end_ns = e, k.device = dev[r], k.stream = Stream(r, native);
    k.correlation_id = corr, k.collective = c;
    k.name = b.Intern(c == kNone ? "gemm" : "ncclDevKernel_AllGather_RING_LL");
    b.data().kernels.push_back(k);
  }
  void Copy(int r, int64_t native, int64_t s, int64_t e, int64_t corr, model::CollectiveId c = kNone) {
    model::Memcpy m;
    m.start_ns = s, m.end_ns = e, m.device = dev[r], m.stream = Stream(r, native);
    m.correlation_id = corr, m.collective = c, m.kind = model::MemcpyKind::kPtoP, m.bytes = 500;
    b.data().memcpys.push_back(m);
  }
  void Memset(int r, int64_t native, int64_t s, int64_t e, int64_t corr) {
    model::Memset m;
    m.start_ns = s, m.end_ns = e, m.device = dev[r], m.stream = Stream(r, native), m.correlation_id = corr;
    b.data().memsets.push_back(m);
  }
  // cudaStreamWaitEvent at host time s: stream `native` waits for the event recorded by the call
  // with correlation `record_corr` on stream `on_native` (-1: unknown, as Kineto writes it).
  // With own_corr false the wait record has no correlation id (and no call in the trace).
  void Wait(int r, int64_t native, int64_t on_native, int64_t record_corr, int64_t s, bool own_corr = true) {
    model::Sync y;
    y.kind = model::SyncKind::kStreamWaitEvent;
    y.start_ns = s, y.end_ns = s + 1, y.device = dev[r], y.stream = Stream(r, native);
    y.wait_on_stream = on_native >= 0 ? Stream(r, on_native) : kNone;
    y.event_record_correlation_id = record_corr;
    y.correlation_id = own_corr ? Api(r, "cudaStreamWaitEvent", s) : model::kNoCorrelation;
    b.data().syncs.push_back(y);
  }
  model::Trace Finish() {
    auto t = std::move(b).Finalize();
    EXPECT_TRUE(t.ok()) << t.status();
    return std::move(t).value();
  }
};

TEST(CollectiveArrival, ArrivalOfAnIdleStreamIsWhenTheRankCalledNccl) {
  // As below, with NCCL's NVTX ranges: rank 0 called ncclAllGather at 40 (range [40, 130) on its
  // thread); NCCL enqueued the copies at 100, inside it. Rank 1's range [90, 130) starts after
  // an earlier range [10, 20) that ended before its call (not around it), and a range on another
  // thread [0, 200) must not count. Rank 1's stream is busy until 550.
  //   rank 0: arrival = (a) range start 40 (its stream is idle)
  //   rank 1: arrival = max((a) 90, (b) 550) = 550
  // skew = 550 - 40 = 510; without the ranges it is 450 (the next test).
  Ranks f;
  const model::StringId nccl = f.b.Intern("NCCL");
  auto range = [&](model::ThreadId th, int64_t s, int64_t e) {
    f.b.data().ranges.push_back(
        {s, e, model::RangeKind::kNvtx, th, model::kNoCorrelation, f.b.Intern("ncclAllGather"), nccl});
  };
  range(f.thread[0], 40, 130);
  range(f.thread[1], 10, 20);
  range(f.thread[1], 90, 130);
  range(f.b.GetOrAddThread(f.proc[0], 2), 0, 200);
  const int64_t spin = f.Api(1, "cudaLaunchKernel", 0);
  f.Kernel(1, 20, 0, 550, spin);
  for (int r = 0; r < 2; ++r) {
    const model::CollectiveId c = f.Coll("AllGather", 1);
    const int64_t call = f.Api(r, "cudaMemcpyBatchAsync", 100);
    f.Copy(r, 20, 600, 650, call, c);
    f.Copy(r, 20, 650, 700, call, c);
  }
  model::Trace t = f.Finish();
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  const CollectiveInstance& ci = x.instances[0];
  ASSERT_EQ(ci.ranks.size(), 2u);
  EXPECT_EQ(ci.ranks[0].arrival_ns, 40);
  EXPECT_EQ(ci.ranks[0].arrival_source, ArrivalSource::kApiCall);
  EXPECT_EQ(ci.ranks[1].arrival_ns, 550);
  EXPECT_EQ(ci.ranks[1].arrival_source, ArrivalSource::kStreamPredecessor);
  EXPECT_EQ(ci.skew_ns, 510);
}

TEST(CollectiveArrival, CopyEngineCollectiveArrivesWhenItsStreamIsFree) {
  // Copy-engine all-gather (no kernel) on stream 20 of both ranks; NCCL's barrier with the peer
  // is invisible, so both ranks' copies start only once both have arrived: 600-700.
  //   rank 0: stream idle; cudaMemcpyBatchAsync at 100          -> arrival = (a) 100
  //   rank 1: spin kernel 0-550 on the stream, launched at 0;
  //           cudaMemcpyBatchAsync at 100                      -> arrival = max(100, (b) 550) = 550
  // skew = 550 - 100 = 450 (old rule: starts 600 / 600 -> 0); rank 0 waits 450, rank 1 is last.
  // bus time (from starts, METRICS §6) = min(700 - 600, 700 - 600) = 100.
  Ranks f;
  const int64_t spin = f.Api(1, "cudaLaunchKernel", 0);
  f.Kernel(1, 20, 0, 550, spin);
  for (int r = 0; r < 2; ++r) {
    const model::CollectiveId c = f.Coll("AllGather", 1);
    const int64_t call = f.Api(r, "cudaMemcpyBatchAsync", 100);
    f.Copy(r, 20, 600, 650, call, c);
    f.Copy(r, 20, 650, 700, call, c);
  }
  model::Trace t = f.Finish();
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  const CollectiveInstance& ci = x.instances[0];
  ASSERT_EQ(ci.ranks.size(), 2u);
  EXPECT_EQ(ci.ranks[0].start_ns, 600);
  EXPECT_EQ(ci.ranks[1].start_ns, 600);
  EXPECT_EQ(ci.ranks[0].arrival_ns, 100);
  EXPECT_EQ(ci.ranks[0].arrival_source, ArrivalSource::kApiCall);
  EXPECT_EQ(ci.ranks[1].arrival_ns, 550);
  EXPECT_EQ(ci.ranks[1].arrival_source, ArrivalSource::kStreamPredecessor);
  EXPECT_EQ(ci.skew_ns, 450);
  EXPECT_EQ(ci.last_rank, 1);
  EXPECT_EQ(ci.ranks[0].wait_ns, 450);
  EXPECT_EQ(ci.ranks[1].wait_ns, 0);
  EXPECT_EQ(ci.bus_time_ns, 100);
  EXPECT_EQ(ci.first_start_ns, 600);  // still the first start: instances stay ordered by it
  EXPECT_EQ(x.arrival_fallbacks, 0);
  EXPECT_EQ(x.max_skew_ns, 450);
}

TEST(CollectiveArrival, KernelHeldBackByAGemmArrivedWhenItsOwnStreamWasFree) {
  // rank 0: memset on NCCL stream 17 [100, 350) (call at 50); GEMM on stream 7 [120, 1000)
  //         holds every SM (call at 60); the all-gather is launched at 300 but its kernel runs
  //         [1000, 1100)                       -> arrival = max((a) 300, (b) 350) = 350
  // rank 1: no GEMM; launched at 400, kernel [420, 1100) -> arrival = (a) 400
  // skew = 400 - 350 = 50, rank 1 last, rank 0 waits 50 (old rule: 1000 - 420 = 580 with
  // rank 0 "last"); bus time from the last start = min(1100 - 1000, 1100 - 1000) = 100.
  Ranks f;
  f.Memset(0, 17, 100, 350, f.Api(0, "cudaMemsetAsync", 50));
  f.Kernel(0, 7, 120, 1000, f.Api(0, "cudaLaunchKernel", 60));
  f.Kernel(0, 17, 1000, 1100, f.Api(0, "cuLaunchKernelEx", 300), f.Coll("_allgather_base", 4));
  f.Kernel(1, 17, 420, 1100, f.Api(1, "cuLaunchKernelEx", 400), f.Coll("_allgather_base", 4));
  model::Trace t = f.Finish();
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  const CollectiveInstance& ci = x.instances[0];
  EXPECT_EQ(ci.ranks[0].arrival_ns, 350);
  EXPECT_EQ(ci.ranks[0].arrival_source, ArrivalSource::kStreamPredecessor);
  EXPECT_EQ(ci.ranks[1].arrival_ns, 400);
  EXPECT_EQ(ci.ranks[1].arrival_source, ArrivalSource::kApiCall);
  EXPECT_EQ(ci.skew_ns, 50);
  EXPECT_EQ(ci.last_rank, 1);
  EXPECT_EQ(ci.ranks[0].wait_ns, 50);
  EXPECT_EQ(ci.bus_time_ns, 100);
  ASSERT_EQ(x.ranks.size(), 2u);
  EXPECT_EQ(x.ranks[1].times_last, 1);
  EXPECT_EQ(x.ranks[1].others_wait_ns, 50);
}

TEST(CollectiveArrival, StreamWaitEventResolvedToTheProducersEnd) {
  // rank 0: producer kernel on stream 7 [100, 800), launched at 10 (corr 1); cudaEventRecord
  //         at 20 (corr 2) on stream 7; stream 17 waits for it at 30 (corr 3); all-gather
  //         launched at 40 (corr 4), kernel [810, 900). A second kernel on stream 7 launched
  //         after the record (at 50, corr 5) runs [800, 1200): not waited for.
  //         -> arrival = max((a) 40, (c) end of the last stream-7 activity with corr < 2 = 800) = 800
  //            (had the corr-5 kernel counted it would be 1200, clamped to the start 810)
  // rank 1: launched at 500, kernel [510, 900)  -> arrival 500
  // skew = 800 - 500 = 300, rank 0 last; rank 1 waits 300 (old rule: 810 - 510 = 300 too);
  // bus time from the last start = min(900 - 810, 900 - 810) = 90.
  Ranks f;
  f.Kernel(0, 7, 100, 800, f.Api(0, "cudaLaunchKernel", 10));
  const int64_t rec = f.Api(0, "cudaEventRecord", 20);
  f.Wait(0, 17, 7, rec, 30);
  const int64_t launch = f.Api(0, "cuLaunchKernelEx", 40);
  f.Kernel(0, 7, 800, 1200, f.Api(0, "cudaLaunchKernel", 50));
  f.Kernel(0, 17, 810, 900, launch, f.Coll("allreduce", 9));
  f.Kernel(1, 17, 510, 900, f.Api(1, "cuLaunchKernelEx", 500), f.Coll("allreduce", 9));
  model::Trace t = f.Finish();
  ArrivalEstimator est(t);
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  const CollectiveInstance& ci = x.instances[0];
  EXPECT_EQ(ci.ranks[0].start_ns, 810);
  EXPECT_EQ(ci.ranks[0].arrival_ns, 800);
  EXPECT_EQ(ci.ranks[0].arrival_source, ArrivalSource::kEventWait);
  EXPECT_EQ(est.Of(ci.ranks[0].collective).arrival_ns, 800);
  EXPECT_EQ(ci.ranks[1].arrival_ns, 500);
  EXPECT_EQ(ci.skew_ns, 300);
  EXPECT_EQ(ci.last_rank, 0);
  EXPECT_EQ(ci.ranks[1].wait_ns, 300);
  EXPECT_EQ(ci.bus_time_ns, 90);
  EXPECT_EQ(x.arrival_fallbacks, 0);
}

TEST(CollectiveArrival, UnresolvedWaitFallsBackToStartAndIsCounted) {
  // rank 0: as above but the wait names neither the recording stream nor the record (Kineto):
  //         launched at 40, kernel [810, 900), wait at 30 in the window -> fallback, arrival = 810
  // rank 1: an unresolved wait at 10 (corr 1) on stream 17, then a kernel on stream 17 [100, 200)
  //         launched at 20 (corr 2), then the collective launched at 300 (corr 3), kernel
  //         [310, 900). The wait was enqueued before (b) (corr 1 < 2): outside the window, so
  //         arrival = max((a) 300, (b) 200) = 300, no fallback.
  // skew = 810 - 300 = 510, rank 0 last; arrival_fallbacks = 1.
  Ranks f;
  f.Wait(0, 17, -1, model::kNoCorrelation, 30);
  f.Kernel(0, 17, 810, 900, f.Api(0, "cuLaunchKernelEx", 40), f.Coll("allreduce", 2));
  f.Wait(1, 17, -1, model::kNoCorrelation, 10);
  f.Kernel(1, 17, 100, 200, f.Api(1, "cudaLaunchKernel", 20));
  f.Kernel(1, 17, 310, 900, f.Api(1, "cuLaunchKernelEx", 300), f.Coll("allreduce", 2));
  model::Trace t = f.Finish();
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  const CollectiveInstance& ci = x.instances[0];
  EXPECT_EQ(ci.ranks[0].arrival_ns, 810);
  EXPECT_EQ(ci.ranks[0].arrival_source, ArrivalSource::kFallbackUnresolvedWait);
  EXPECT_EQ(ci.ranks[1].arrival_ns, 300);
  EXPECT_EQ(ci.ranks[1].arrival_source, ArrivalSource::kApiCall);
  EXPECT_EQ(ci.skew_ns, 510);
  EXPECT_EQ(ci.last_rank, 0);
  EXPECT_EQ(x.arrival_fallbacks, 1);
}

TEST(CollectiveArrival, WaitsWithoutCorrelationArePlacedByHostTime) {
  // rank 0: producer on stream 7 launched at 5 (corr 1), runs [100, 650); cudaEventRecord at 8
  //         (corr 2); kernel on stream 17 launched at 20 (corr 3), runs [100, 200) = (b);
  //         two wait records without a correlation id on stream 17: one at host 10, before (b)'s
  //         call at 20 (outside the window, unresolved: must not cause a fallback), one at host
  //         30 on the corr-2 record of stream 7 (inside [20, 50)); collective launched at 50
  //         (corr 4), kernel [700, 800).
  //         -> arrival = max((a) 50, (b) 200, (c) 650) = 650
  // rank 1: launched at 600, kernel [610, 800) -> arrival 600. skew 50, rank 0 last, no fallback.
  Ranks f;
  f.Kernel(0, 7, 100, 650, f.Api(0, "cudaLaunchKernel", 5));
  const int64_t rec = f.Api(0, "cudaEventRecord", 8);
  f.Kernel(0, 17, 100, 200, f.Api(0, "cudaLaunchKernel", 20));
  f.Wait(0, 17, -1, model::kNoCorrelation, 10, false);
  f.Wait(0, 17, 7, rec, 30, false);
  f.Kernel(0, 17, 700, 800, f.Api(0, "cuLaunchKernelEx", 50), f.Coll("allreduce", 5));
  f.Kernel(1, 17, 610, 800, f.Api(1, "cuLaunchKernelEx", 600), f.Coll("allreduce", 5));
  model::Trace t = f.Finish();
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  const CollectiveInstance& ci = x.instances[0];
  EXPECT_EQ(ci.ranks[0].arrival_ns, 650);
  EXPECT_EQ(ci.ranks[0].arrival_source, ArrivalSource::kEventWait);
  EXPECT_EQ(ci.skew_ns, 50);
  EXPECT_EQ(ci.last_rank, 0);
  EXPECT_EQ(x.arrival_fallbacks, 0);
}

TEST(CollectiveArrival, NoCallMeansStartAndAClampedEstimateIsTheStart) {
  // rank 0: collective kernel [500, 600) without a correlation id -> fallback, arrival 500.
  // rank 1: launch call at 700 but the kernel "starts" at 650 (clocks off by a little):
  //         the estimate 700 is clamped to the start 650, not a fallback.
  // skew = 650 - 500 = 150; one fallback.
  Ranks f;
  f.Kernel(0, 17, 500, 600, model::kNoCorrelation, f.Coll("allreduce", 3));
  f.Kernel(1, 17, 650, 800, f.Api(1, "cuLaunchKernelEx", 700), f.Coll("allreduce", 3));
  model::Trace t = f.Finish();
  CrossRankResult x = AnalyzeCrossRank(t);
  ASSERT_EQ(x.instances.size(), 1u);
  EXPECT_EQ(x.instances[0].ranks[0].arrival_source, ArrivalSource::kFallbackNoCall);
  EXPECT_EQ(x.instances[0].ranks[0].arrival_ns, 500);
  EXPECT_EQ(x.instances[0].ranks[1].arrival_source, ArrivalSource::kStart);
  EXPECT_EQ(x.instances[0].ranks[1].arrival_ns, 650);
  EXPECT_EQ(x.instances[0].skew_ns, 150);
  EXPECT_EQ(x.arrival_fallbacks, 1);
  EXPECT_EQ(ToString(ArrivalSource::kFallbackUnresolvedWait), "fallback-unresolved-wait");
}

}  // namespace
}  // namespace overlapscope::analyze
