#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze {
namespace {

using testing::Synth;

AnalysisResult Analyze(const model::Trace& t, AnalyzeOptions o = {}) {
  auto r = AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

const char* kNccl = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

TEST(Overlap, PartialOverlap) {
  // compute [0,100) [150,250) on stream 7; comm [50,200) on stream 17.
  // M = [50,200) = 150; C ∩ M = [50,100) + [150,200) = 100; exposed = 50.
  // overlap_ratio = 100/150; compute_ns = 200; compute_share_overlapped = 100/200.
  Synth s;
  s.Kernel("gemm", 7, 0, 100);
  s.Kernel("gemm", 7, 150, 250);
  s.Kernel(kNccl, 17, 50, 200);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.overlap.size(), 1u);
  const OverlapStats& w = r.overlap[0].whole;
  EXPECT_EQ(w.comm_ns, 150);
  EXPECT_EQ(w.hidden_comm_ns, 100);
  EXPECT_EQ(w.exposed_comm_ns, 50);
  EXPECT_EQ(w.compute_ns, 200);
  ASSERT_TRUE(w.overlap_ratio.has_value());
  EXPECT_DOUBLE_EQ(*w.overlap_ratio, 100.0 / 150.0);
  EXPECT_DOUBLE_EQ(*w.compute_share_overlapped, 0.5);
  EXPECT_EQ(r.overlap[0].exposed_comm, (std::vector<Interval>{{100, 150}}));
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.ranks[0].overlap_ratio, 100.0 / 150.0);
}

TEST(Overlap, TwoCommStreamsCountOnceNestedAndTouchingCompute) {
  // comm A [0,100) on 17, comm B [50,150) on 18: M = [0,150) = 150 (not 200).
  // compute [100,200), nested [120,130), touching [200,220): C = [100,220) = 120.
  // hidden = [100,150) = 50, exposed = 100.
  Synth s;
  s.Kernel(kNccl, 17, 0, 100);
  s.Kernel(kNccl, 18, 50, 150);
  s.Kernel("gemm", 7, 100, 200);
  s.Kernel("add", 8, 120, 130);
  s.Kernel("gemm", 7, 200, 220);
  auto r = Analyze(s.Finish());
  const OverlapStats& w = r.overlap[0].whole;
  EXPECT_EQ(w.comm_ns, 150);
  EXPECT_EQ(w.compute_ns, 120);
  EXPECT_EQ(w.hidden_comm_ns, 50);
  EXPECT_EQ(w.exposed_comm_ns, 100);
  // Per collective instance (no collective records: one per comm kernel):
  // A [0,100) has no compute under it; B [50,150) has [100,150) = 50 of 100.
  ASSERT_EQ(r.overlap[0].collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.overlap[0].collectives[0].overlap_ratio, 0.0);
  EXPECT_EQ(r.overlap[0].collectives[1].hidden_ns, 50);
  EXPECT_DOUBLE_EQ(*r.overlap[0].collectives[1].overlap_ratio, 0.5);
}

TEST(Overlap, CommWithoutComputeAndNoCommAtAll) {
  Synth a;
  a.Kernel(kNccl, 17, 0, 100);
  auto r = Analyze(a.Finish());
  EXPECT_EQ(r.overlap[0].whole.comm_ns, 100);
  EXPECT_DOUBLE_EQ(*r.overlap[0].whole.overlap_ratio, 0.0);
  EXPECT_FALSE(r.overlap[0].whole.compute_share_overlapped.has_value());  // no compute: absent

  Synth b;
  b.Kernel("gemm", 7, 0, 100);
  b.Kernel(kNccl, 17, 50, 50);  // zero-length comm kernel: no communication time at all
  r = Analyze(b.Finish());
  EXPECT_EQ(r.overlap[0].whole.comm_ns, 0);
  EXPECT_FALSE(r.overlap[0].whole.overlap_ratio.has_value());
  EXPECT_FALSE(r.ranks[0].overlap_ratio.has_value());
  EXPECT_FALSE(r.hta[0].overlap_pct.has_value());
  EXPECT_DOUBLE_EQ(*r.overlap[0].whole.compute_share_overlapped, 0.0);
  // The zero-length collective instance has no ratio either.
  ASSERT_EQ(r.overlap[0].collectives.size(), 1u);
  EXPECT_FALSE(r.overlap[0].collectives[0].overlap_ratio.has_value());
}

TEST(Overlap, IterationsFollowTheLaunchCall) {
  // ProfilerStep#1 [0,1000), ProfilerStep#2 [1000,2000) on the CPU.
  // gemm launched at 900 (step 1) runs [1200,1500) — after step 1's CPU range ended.
  // nccl launched at 1100 (step 2) runs [1400,1800). A kernel without a launch call at
  // [100,200) runs before gemm on its stream, and gemm was launched in the first step: it was
  // launched before the recorded steps (warm-up), in no iteration.
  // Step 1: C = [1200,1500), M = {} -> no communication.
  // Step 2: M = [1400,1800) = 400, C = {} -> hidden 0.
  Synth s;
  s.Range("ProfilerStep#1", 0, 1000);
  s.Range("ProfilerStep#2", 1000, 2000);
  s.Kernel("gemm", 7, 1200, 1500, 900);
  s.Kernel(kNccl, 17, 1400, 1800, 1100);
  s.Kernel("warmup_kernel", 7, 100, 200);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.iterations.iterations.size(), 2u);
  EXPECT_EQ(r.iterations.iterations[0].number, 1);
  EXPECT_EQ(r.iterations.by_launch_call, 2);
  EXPECT_EQ(r.iterations.by_own_start, 1);
  EXPECT_EQ(r.iterations.outside, 1);
  const auto& its = r.overlap[0].iterations;
  ASSERT_EQ(its.size(), 2u);
  EXPECT_EQ(its[0].number, 1);
  EXPECT_EQ(its[0].stats.compute_ns, 300);
  EXPECT_FALSE(its[0].stats.overlap_ratio.has_value());
  EXPECT_EQ(its[0].gpu_end_ns, 1500);  // past the CPU range end (1000)
  EXPECT_EQ(its[1].stats.comm_ns, 400);
  EXPECT_EQ(its[1].stats.hidden_comm_ns, 0);
  // The whole trace still sees gemm [1200,1500) under nccl [1400,1800): 100 hidden.
  EXPECT_EQ(r.overlap[0].whole.hidden_comm_ns, 100);
}

TEST(Overlap, UnlaunchedActivitiesStayInTheirStreamsOrder) {
  // The host runs ahead of the GPU: steps #1 [0,100), #2 [100,200), #3 [200,2000) on the CPU.
  // Stream 7: a warm-up backlog kernel without launch call [50,450) (its own start lies in step 1,
  // but gemm_a after it was launched in step 1: it predates the recorded steps), gemm_a launched at
  // 10 runs [450,850), a kernel without launch call [850,900) (own start in step 3, but gemm_b
  // after it was launched in step 2: step 2 at the latest), gemm_b launched at 110 [900,1300),
  // gemm_c launched at 210 [1300,1700), and one more without launch call [1700,1750) (own start
  // in step 3, after gemm_c of step 3: step 3).
  Synth s;
  s.Range("ProfilerStep#1", 0, 100);
  s.Range("ProfilerStep#2", 100, 200);
  s.Range("ProfilerStep#3", 200, 2000);
  s.Kernel("backlog", 7, 50, 450);
  s.Kernel("gemm_a", 7, 450, 850, 10);
  s.Kernel("between", 7, 850, 900);
  s.Kernel("gemm_b", 7, 900, 1300, 110);
  s.Kernel("gemm_c", 7, 1300, 1700, 210);
  s.Kernel("tail", 7, 1700, 1750);
  const model::Trace t = s.Finish();
  auto r = Analyze(t);
  ASSERT_EQ(r.iterations.iterations.size(), 3u);
  auto it_of = [&](const std::string& name) {
    for (size_t i = 0; i < t.kernels().size(); ++i)
      if (t.str(t.kernels()[i].name) == name) return r.iterations.kernel_iteration[i];
    return -2;
  };
  EXPECT_EQ(it_of("backlog"), model::kNone);
  EXPECT_EQ(it_of("gemm_a"), 0);
  EXPECT_EQ(it_of("between"), 1);
  EXPECT_EQ(it_of("gemm_b"), 1);
  EXPECT_EQ(it_of("tail"), 2);
  EXPECT_EQ(r.iterations.by_own_start, 3);
  EXPECT_EQ(r.iterations.outside, 1);
  // Step 1 is gemm_a alone: 400 ns of compute, not the backlog's 400 more.
  ASSERT_EQ(r.overlap[0].iterations.size(), 3u);
  EXPECT_EQ(r.overlap[0].iterations[0].stats.compute_ns, 400);
}

TEST(Overlap, UserIterationMarker) {
  Synth s;
  s.Range("train_step", 0, 100, model::RangeKind::kNvtx);
  s.Range("train_step", 100, 200, model::RangeKind::kNvtx);
  s.Kernel("gemm", 7, 50, 60, 10);
  AnalyzeOptions o;
  o.iteration_marker = "train_step";
  auto r = Analyze(s.Finish(), o);
  ASSERT_EQ(r.iterations.iterations.size(), 2u);
  EXPECT_EQ(r.iterations.iterations[1].number, 1);  // ordinal when the name has no number
}

TEST(Overlap, ContentionFromMedianAloneDuration) {
  // gemm alone: 100, 100, 120 -> median alone 100. gemm under comm [1000,2000): 150 and 170.
  // contention = (150-100) + (170-100) = 120; slowdown = median(150,170)=160 / 100 = 1.6.
  // "other" runs only overlapped: counted as unknown, contributes nothing.
  // hidden = 150 + 170 + 50 = 370 -> net_overlap_gain = 370 - 120 = 250.
  Synth s;
  s.Kernel("gemm", 7, 0, 100);
  s.Kernel("gemm", 7, 200, 300);
  s.Kernel("gemm", 7, 400, 520);
  s.Kernel(kNccl, 17, 1000, 2000);
  s.Kernel("gemm", 7, 1000, 1150);
  s.Kernel("gemm", 7, 1200, 1370);
  s.Kernel("other", 7, 1400, 1450);
  auto r = Analyze(s.Finish());
  const OverlapStats& w = r.overlap[0].whole;
  EXPECT_EQ(w.hidden_comm_ns, 370);
  EXPECT_EQ(w.contention_ns, 120);
  EXPECT_EQ(w.net_overlap_gain_ns, 250);
  EXPECT_EQ(w.overlapped_compute_instances, 3);
  EXPECT_EQ(w.contention_unknown_instances, 1);
  ASSERT_EQ(r.overlap[0].slowdowns.size(), 1u);
  EXPECT_EQ(r.overlap[0].slowdowns[0].median_overlapped_ns, 160);
  EXPECT_EQ(r.overlap[0].slowdowns[0].median_alone_ns, 100);
  EXPECT_DOUBLE_EQ(r.overlap[0].slowdowns[0].slowdown, 1.6);
}

TEST(Overlap, HtaCompatibleRoundsToMicroseconds) {
  // comm [1500,10500) ns -> HTA µs [2,10) = 8 µs. compute [5200,20000) -> [6,20).
  // overlap [6,10) = 4 µs -> 50.00 %. A sub-µs comm kernel [30100,30900) -> [31,30): dropped.
  // Our own: M = [1500,10500) + [30100,30900) = 9800; hidden = [5200,10500) = 5300.
  Synth s;
  s.Kernel(kNccl, 17, 1500, 10500);
  s.Kernel("gemm", 7, 5200, 20000);
  s.Kernel(kNccl, 17, 30100, 30900);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.hta.size(), 1u);
  EXPECT_EQ(r.hta[0].comm_us, 8);
  EXPECT_EQ(r.hta[0].overlap_us, 4);
  EXPECT_EQ(r.hta[0].dropped_sub_us, 1);
  EXPECT_DOUBLE_EQ(*r.hta[0].overlap_pct, 50.0);
  EXPECT_EQ(r.overlap[0].whole.comm_ns, 9800);
  EXPECT_EQ(r.overlap[0].whole.hidden_comm_ns, 5300);
}

TEST(Overlap, HtaUsesItsOwnNameRules) {
  // A user rule makes "my_allreduce" comm for us; HTA counts it as compute, so HTA sees no
  // communication at all while we see 100 µs exposed.
  Synth s;
  s.Kernel("my_allreduce", 17, 0, 100000);
  AnalyzeOptions o;
  ASSERT_TRUE(o.rules.AddUserRule(ActivityClass::kComm, MatchKind::kPrefix, "my_allreduce", "test").ok());
  auto r = Analyze(s.Finish(), o);
  EXPECT_EQ(r.overlap[0].whole.exposed_comm_ns, 100000);
  EXPECT_FALSE(r.hta[0].overlap_pct.has_value());
}

TEST(Overlap, ExplainClassesCountsAndTimes) {
  Synth s;
  s.Kernel(kNccl, 17, 0, 100);
  s.Kernel(kNccl, 17, 200, 250);
  s.Kernel("gemm", 7, 0, 30);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.classes.names.size(), 2u);
  EXPECT_EQ(r.classes.names[0].count, 2);
  EXPECT_EQ(r.classes.names[0].total_ns, 150);
  EXPECT_EQ(r.classes.names[0].cls, ActivityClass::kComm);
  EXPECT_EQ(r.classes.rules[r.classes.names[0].rule].pattern, "ncclDevKernel");
  EXPECT_EQ(r.classes.count[static_cast<int>(ActivityClass::kCompute)], 1);
}

}  // namespace
}  // namespace overlapscope::analyze

namespace overlapscope::analyze {
namespace {

TEST(Overlap, EmptyAndCpuOnlyTraces) {
  // An empty trace and one with host calls only: no devices, no ratios, nothing to divide.
  model::TraceBuilder empty;
  auto t0 = std::move(empty).Finalize();
  ASSERT_TRUE(t0.ok());
  auto r0 = AnalyzeAll(*t0, AnalyzeOptions{});
  ASSERT_TRUE(r0.ok());
  EXPECT_TRUE(r0->overlap.empty());
  EXPECT_TRUE(r0->ranks.empty());

  testing::Synth s;
  s.Api("cudaGetDevice", 0, 10);
  s.Range("ProfilerStep#0", 0, 100);
  model::Trace t = s.Finish();
  auto r = AnalyzeAll(t, AnalyzeOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->overlap.empty());
  ASSERT_EQ(r->ranks.size(), 1u);
  EXPECT_FALSE(r->ranks[0].overlap_ratio.has_value());
  EXPECT_FALSE(r->ranks[0].gpu_idle_share.has_value());
  EXPECT_DOUBLE_EQ(r->ranks[0].blocked_share.value_or(-1), 0.0);
}

}  // namespace
}  // namespace overlapscope::analyze
