// collective-waited-at-once (METRICS §5): synthetic programs of the BACKGROUND §4 pattern, with
// the cross-stream waits recorded (cuda_sync "Stream Wait Event" with the record's correlation),
// and the real torch.profiler traces of that program (tests/data/torch_diag), with and without
// cuda_sync events (the waits then come from the graph's inferred edges).
#include <set>
#include <string>
#include <utility>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "multi_synth.h"
#include "torch_diag.h"

namespace overlapscope::analyze {
namespace {

using testing::AnalyzeOneThread;
using testing::MultiSynth;

constexpr char kKind[] = "collective-waited-at-once";
constexpr char kA2a[] = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";

int Count(const AnalysisResult& r, std::string_view kind) {
  int n = 0;
  for (const Finding& f : r.sync.findings) n += f.kind == kind ? 1 : 0;
  return n;
}

// Rank 0, compute stream 7, NCCL stream 17 (host times in ns):
//   0  launch gemm1 on 7 -> [100, 600)
//   20 cudaEventRecord on 7; 25 cudaStreamWaitEvent: 17 waits for 7 (the collective's input)
//   40 launch all_to_all on 17 -> [600, 1600)
//   60 cudaEventRecord on 17; 65 cudaStreamWaitEvent: 7 waits for 17 (wait())
//   `overlapped`: 50 launch gemm2 on 7 -> [600, 1100), enqueued after the collective and before
//   the wait: independent work the wait does not hold back.
//   80 launch gemm3 on 7 -> [1600, 2100)
model::Trace Program(bool overlapped) {
  MultiSynth s(1);
  s.Launch(0, "gemm1", 7, 0, 100, 600);
  const int64_t rec1 = s.Api(0, "cudaEventRecord", 20, 22);
  const int64_t w1 = s.Api(0, "cudaStreamWaitEvent", 25, 27);
  s.StreamWait(0, 17, 7, rec1, w1, 600);
  const model::CollectiveId c = s.Collective("all_to_all", 0, 2);
  s.Launch(0, kA2a, 17, 40, 600, 1600, c);
  if (overlapped) s.Launch(0, "gemm2", 7, 50, 600, 1100);
  const int64_t rec2 = s.Api(0, "cudaEventRecord", 60, 62);
  const int64_t w2 = s.Api(0, "cudaStreamWaitEvent", 65, 67);
  s.StreamWait(0, 7, 17, rec2, w2, 1600);
  s.Launch(0, "gemm3", 7, 80, 1600, 2100);
  return s.Finish();
}

// Two ranks of Program(false), rank 1's gemm1 ending at 1300 instead of 600: its all_to_all
// arrives at 1300, so rank 0's [600, 1600) spends [600, 1300) waiting for rank 1 with nothing
// beside it. That 700 ns is rank 1's straggling (METRICS §2, §6); the finding's cost is the
// collective's exposed transfer, 300 ns on both ranks, and rank 0's message names the wait.
TEST(CollectiveWaitedAtOnce, CostLeavesOutTheWaitForALatePeer) {
  MultiSynth s(2);
  for (int r = 0; r < 2; ++r) {
    const int64_t ready = r == 1 ? 1300 : 600;
    s.Launch(r, "gemm1", 7, 0, 100, ready);
    const int64_t rec1 = s.Api(r, "cudaEventRecord", 20, 22);
    const int64_t w1 = s.Api(r, "cudaStreamWaitEvent", 25, 27);
    s.StreamWait(r, 17, 7, rec1, w1, ready);
    const model::CollectiveId c = s.Collective("all_to_all", 0, 2);
    s.Launch(r, kA2a, 17, 40, ready, 1600, c);
    const int64_t rec2 = s.Api(r, "cudaEventRecord", 60, 62);
    const int64_t w2 = s.Api(r, "cudaStreamWaitEvent", 65, 67);
    s.StreamWait(r, 7, 17, rec2, w2, 1600);
    s.Launch(r, "gemm3", 7, 80, 1600, 2100);
  }
  const model::Trace t = s.Finish();
  const AnalysisResult r = AnalyzeOneThread(t);
  ASSERT_EQ(Count(r, kKind), 2);
  for (const Finding& f : r.sync.findings) {
    if (f.kind != kKind) continue;
    EXPECT_EQ(f.cost_ns, 300) << f.message;
    const bool rank0 = t.processes()[f.process].rank == 0;
    EXPECT_EQ(f.time_ns, rank0 ? 600 : 1300);
    const bool names_wait = f.message.find("a further 0.7 µs exposed was waiting for rank 1") != std::string::npos;
    EXPECT_EQ(names_wait, rank0) << f.message;
  }
}

TEST(CollectiveWaitedAtOnce, FiresWhenTheIssuingStreamWaitsBeforeAnyOtherWork) {
  const model::Trace t = Program(false);
  const AnalysisResult r = AnalyzeOneThread(t);
  ASSERT_EQ(Count(r, kKind), 1);
  for (const Finding& f : r.sync.findings) {
    if (f.kind != kKind) continue;
    EXPECT_EQ(f.time_ns, 600);
    EXPECT_EQ(f.end_ns, 1600);
    EXPECT_EQ(f.cost_ns, 1000);  // nothing runs beside it: all exposed
    EXPECT_NE(f.message.find("cannot overlap"), std::string::npos) << f.message;
    EXPECT_NE(f.advice.find("before calling wait()"), std::string::npos) << f.advice;
  }
  EXPECT_EQ(Count(r, "collective-on-compute-stream"), 0);  // its own stream: not that rule's
}

TEST(CollectiveWaitedAtOnce, SilentWhenIndependentWorkWasEnqueuedBeforeTheWait) {
  const AnalysisResult r = AnalyzeOneThread(Program(true));
  EXPECT_EQ(Count(r, kKind), 0);
}

// A collective on the compute stream is collective-on-compute-stream's, never both.
TEST(CollectiveWaitedAtOnce, NotTogetherWithCollectiveOnComputeStream) {
  MultiSynth s(1);
  s.Launch(0, "gemm1", 7, 0, 100, 600);
  const model::CollectiveId c = s.Collective("all_to_all", 0, 2);
  s.Launch(0, kA2a, 7, 40, 600, 1600, c);
  const int64_t rec = s.Api(0, "cudaEventRecord", 60, 62);
  const int64_t w = s.Api(0, "cudaStreamWaitEvent", 65, 67);
  s.StreamWait(0, 17, 7, rec, w, 1600);
  s.Launch(0, "gemm3", 17, 80, 1600, 2100);
  const AnalysisResult r = AnalyzeOneThread(s.Finish());
  EXPECT_EQ(Count(r, "collective-on-compute-stream"), 1);
  EXPECT_EQ(Count(r, kKind), 0);
}

// The real BACKGROUND §4 traces (torch 2.11, 2 and 4 x H100): every all_to_all fires, with the
// waits recorded (w*_sync: cuda_sync events) and inferred (w*_default: torch.profiler's defaults).
// The waits that did not delay their activity (a host-bound rank: the all_to_all was done before
// the next kernel was launched) are placed by the host's call order (graph_infer.cc).
TEST(CollectiveWaitedAtOnce, EveryAllToAllOfTheRealTraces) {
  for (const char* variant : {"w4_sync", "w4_default", "w2_sync", "w2_default"}) {
    for (const char* scenario : {"dtensor_a2a_eager", "dtensor_a2a_compiled"}) {
      const std::string dir = std::string(variant) + "/" + scenario;
      const model::Trace t = testing::LoadTorchDiag(variant, scenario);
      const AnalysisResult r = AnalyzeOneThread(t);
      // Every all_to_all collective that ran on the GPU has its finding (same process and start);
      // other findings of the kind only on NCCL kernels without a collective record.
      std::set<std::pair<model::ProcessId, int64_t>> fired;
      int a2a = 0, missed = 0;
      for (const Finding& f : r.sync.findings) {
        EXPECT_NE(f.kind, "collective-on-compute-stream") << dir;
        if (f.kind != kKind) continue;
        fired.insert({f.process, f.time_ns});
        EXPECT_NE(t.str(f.call).find("all_to_all") == std::string_view::npos &&
                      t.str(f.call).find("nccl") == std::string_view::npos,
                  true)
            << dir << ": " << t.str(f.call);
      }
      for (size_t c = 0; c < t.collectives().size(); ++c) {
        const model::Collective& col = t.collectives()[c];
        if (t.str(col.op).find("all_to_all") == std::string_view::npos ||
            t.CollectiveActivities(static_cast<model::CollectiveId>(c)).empty())
          continue;
        ++a2a;
        if (!fired.count({col.process, col.start_ns})) ++missed;
      }
      EXPECT_GT(a2a, 0) << dir;
      EXPECT_EQ(missed, 0) << dir << ": " << missed << " of " << a2a << " all_to_all without the finding";
    }
  }
}

// What holds today on those traces: the rule fires on them, only on NCCL all_to_all activities,
// and never beside collective-on-compute-stream.
TEST(CollectiveWaitedAtOnce, FiresOnTheRealTracesAndOnlyThere) {
  for (const char* variant : {"w4_sync", "w4_default", "w2_sync", "w2_default"}) {
    for (const char* scenario : {"dtensor_a2a_eager", "dtensor_a2a_compiled"}) {
      const model::Trace t = testing::LoadTorchDiag(variant, scenario);
      const AnalysisResult r = AnalyzeOneThread(t);
      int n = 0;
      for (const Finding& f : r.sync.findings) {
        EXPECT_NE(f.kind, "collective-on-compute-stream") << variant << "/" << scenario;
        if (f.kind != kKind) continue;
        ++n;
        const std::string call(t.str(f.call));
        EXPECT_TRUE(call.find("all_to_all") != std::string::npos || call.rfind("ncclDevKernel_SendRecv", 0) == 0)
            << call;
        EXPECT_GT(f.cost_ns, 0);
      }
      EXPECT_GE(n, 16) << variant << "/" << scenario;  // half of one rank's 32 all_to_all, at least
    }
  }
}

// Programs that overlap as written: no finding of any kind but collective-starved-of-sms, which
// the matmul + all-gather program does earn (its all-gather waits for the GEMM's SMs:
// collective_starved_of_sms_test.cc) — its waits and streams are clean; on fsdp2 the rule fires on a few collectives
// (the first all-gather of a step, which nothing precedes, and reduce-scatters the compute stream waits for at the end
// of backward): exposed collectives that the report should name, left out of this test.
TEST(CollectiveWaitedAtOnce, NoFindingOnOverlappedRealTraces) {
  for (const char* variant : {"w4_sync", "w4_default", "w2_sync", "w2_default"}) {
    for (const char* scenario : {"mm_ag_overlap"}) {
      const std::string dir = std::string(variant) + "/" + scenario;
      const AnalysisResult r = AnalyzeOneThread(testing::LoadTorchDiag(variant, scenario));
      for (const Finding& f : r.sync.findings)
        if (f.kind != "collective-starved-of-sms") ADD_FAILURE() << dir << ": " << f.kind << ": " << f.message;
    }
  }
}

// FSDP2 (implicit prefetch, torch.profiler defaults and with cuda_sync events, 2 and 4 x H100):
// the rule fires only where the program really leaves the compute stream idle for a
// collective: the step's first all-gather (nothing precedes it to overlap with), the step's
// last reduce-scatter (waited at the end of backward), or where the host enqueued the next work
// only after the collective ended (a host-bound rank: the message says so).
TEST(CollectiveWaitedAtOnce, OnFsdp2OnlyStepEndsOrHostBound) {
  for (const char* variant : {"w4_sync", "w4_default", "w2_sync", "w2_default"}) {
    for (const char* scenario : {"fsdp2", "fsdp2_straggler"}) {
      const std::string dir = std::string(variant) + "/" + scenario;
      const model::Trace t = testing::LoadTorchDiag(variant, scenario);
      const AnalysisResult r = AnalyzeOneThread(t);
      std::vector<std::pair<int64_t, int64_t>> steps;  // host spans of ProfilerStep#N, any process
      std::vector<model::ProcessId> step_proc;
      for (const model::Range& g : t.ranges())
        if (t.str(g.name).rfind("ProfilerStep#", 0) == 0 && g.thread != model::kNone) {
          steps.push_back({g.start_ns, g.end_ns});
          step_proc.push_back(t.threads()[g.thread].process);
        }
      auto launched = [&](size_t c) {
        const auto acts = t.CollectiveActivities(static_cast<model::CollectiveId>(c));
        const int32_t call = acts.empty() ? model::kNone : t.LaunchOf(acts.front());
        return call == model::kNone ? int64_t{-1} : t.api_calls()[call].start_ns;
      };
      int fired = 0, step_ends = 0;
      for (const Finding& f : r.sync.findings) {
        if (f.kind != kKind) continue;
        ++fired;
        if (f.message.find("host-bound") != std::string::npos) continue;
        size_t c = 0;
        while (c < t.collectives().size() &&
               !(t.collectives()[c].process == f.process && t.collectives()[c].start_ns == f.time_ns))
          ++c;
        ASSERT_LT(c, t.collectives().size()) << dir << ": " << f.message;
        const int64_t at = launched(c);
        const std::string op(t.str(t.collectives()[c].op));
        const bool ag = op.find("allgather") != std::string::npos;
        ASSERT_TRUE(ag || op.find("reduce_scatter") != std::string::npos) << dir << ": " << op;
        size_t k = 0;
        while (k < steps.size() && !(step_proc[k] == f.process && steps[k].first <= at && at < steps[k].second)) ++k;
        ASSERT_LT(k, steps.size()) << dir << ": " << f.message;
        bool other = false;  // another collective of the kind before (all-gather) / after (reduce-scatter) in the step
        for (size_t o = 0; o < t.collectives().size(); ++o) {
          if (o == c || t.collectives()[o].process != f.process || t.str(t.collectives()[o].op) != op) continue;
          const int64_t lo = launched(o);
          if (lo < steps[k].first || lo >= steps[k].second) continue;
          other |= ag ? lo < at : lo > at;
        }
        EXPECT_FALSE(other) << dir
                            << ": neither the step's first all-gather nor its last reduce-scatter: " << f.message;
        ++step_ends;
      }
      EXPECT_GT(fired, 0) << dir;  // the step's first all-gather, at least
      EXPECT_GT(step_ends, 0) << dir;
    }
  }
}

// fsdp2_straggler (one rank sleeps ~0.45-0.58 s before some all-gathers): the other ranks'
// all-gathers spin that long for it. Before the wait was left out, collective-waited-at-once
// priced three of them at 1.46 s on every on-time rank of w4_default; the cost is the exposed
// transfer now (each well under 10 ms), and the messages that name a wait name a rank.
TEST(CollectiveWaitedAtOnce, OnTheStragglerTheWaitIsNotTheCost) {
  for (const char* variant : {"w4_sync", "w4_default", "w2_sync", "w2_default"}) {
    const AnalysisResult r = AnalyzeOneThread(testing::LoadTorchDiag(variant, "fsdp2_straggler"));
    int named = 0;
    for (const Finding& f : r.sync.findings) {
      if (f.kind != kKind) continue;
      EXPECT_LT(f.cost_ns, 10'000'000) << variant << ": " << f.message;
      if (f.message.find("was waiting for rank ") != std::string::npos) ++named;
    }
    EXPECT_GT(named, 0) << variant;
  }
}

}  // namespace
}  // namespace overlapscope::analyze
