// METRICS §2 "Transfer and waiting": each collective activity splits at the last participant's
// arrival into wait (before) and transfer (after); the wait part of comm/hidden/exposed per device
// and rank, and whom the rank waited for. Figures computed by hand below.
#include "analyze/comm_wait.h"

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "multi_synth.h"

namespace overlapscope::analyze {
namespace {

using testing::MultiSynth;

// Two ranks, kernels without launch calls (arrival = start, the fallback):
//   A (seq 0): rank 0 comm [1000, 3000) under gemm [0, 2500); rank 1 comm [1800, 3100), no compute.
//              Last arrival 1800 (rank 1). Rank 0 waits [1000, 1800) = 800, all under the gemm.
//   B (seq 1): rank 0 comm [5000, 6000), no compute; rank 1 comm [4000, 6100) with gemm
//              [4000, 4300). Last arrival 5000 (rank 0). Rank 1 waits [4000, 5000) = 1000:
//              300 hidden under the gemm, 700 exposed.
model::Trace TwoRankTrace() {
  MultiSynth s(2);
  const auto a = s.Collective("allreduce", 0, 2);
  const auto a1 = s.Collective("allreduce", 0, 2);
  const auto b = s.Collective("allreduce", 1, 2);
  const auto b1 = s.Collective("allreduce", 1, 2);
  const char* k = "ncclDevKernel_AllReduce_Sum_f32";
  s.Kernel(0, "gemm", 1, 0, 2500, model::kNoCorrelation);
  s.Kernel(0, k, 7, 1000, 3000, model::kNoCorrelation, a);
  s.Kernel(1, k, 7, 1800, 3100, model::kNoCorrelation, a1);
  s.Kernel(0, k, 7, 5000, 6000, model::kNoCorrelation, b);
  s.Kernel(1, "gemm", 1, 4000, 4300, model::kNoCorrelation);
  s.Kernel(1, k, 7, 4000, 6100, model::kNoCorrelation, b1);
  auto& c = s.builder().data().collectives;
  for (size_t i = 0; i < c.size(); ++i) c[i].rank = static_cast<int32_t>(i % 2);
  return s.Finish();
}

TEST(CommWait, SplitAtTheLastArrivalByHand) {
  const model::Trace t = TwoRankTrace();
  AnalyzeOptions o;
  o.threads = 1;
  auto r = AnalyzeAll(t, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->cross_rank.instances.size(), 2u);
  ASSERT_EQ(r->ranks.size(), 2u);
  const RankSummary& r0 = r->ranks[0];
  const RankSummary& r1 = r->ranks[1];
  // Totals keep their definitions.
  EXPECT_EQ(r0.comm_ns, 3000);
  EXPECT_EQ(r0.hidden_comm_ns, 1500);
  EXPECT_EQ(r0.exposed_comm_ns, 1500);
  EXPECT_EQ(r1.comm_ns, 3400);
  EXPECT_EQ(r1.hidden_comm_ns, 300);
  EXPECT_EQ(r1.exposed_comm_ns, 3100);
  // The wait parts.
  EXPECT_TRUE(r0.wait_known);
  EXPECT_EQ(r0.comm_wait_ns, 800);
  EXPECT_EQ(r0.hidden_wait_ns, 800);
  EXPECT_EQ(r0.exposed_wait_ns, 0);
  EXPECT_TRUE(r1.wait_known);
  EXPECT_EQ(r1.comm_wait_ns, 1000);
  EXPECT_EQ(r1.hidden_wait_ns, 300);
  EXPECT_EQ(r1.exposed_wait_ns, 700);
  // Whom each waited for: the other rank.
  ASSERT_NE(r0.waited_for, model::kNone);
  EXPECT_EQ(r->cross_rank.participants[r0.waited_for].rank, 1);
  EXPECT_EQ(r0.waited_for_ns, 800);
  ASSERT_NE(r1.waited_for, model::kNone);
  EXPECT_EQ(r->cross_rank.participants[r1.waited_for].rank, 0);
  EXPECT_EQ(r1.waited_for_ns, 1000);
}

TEST(CommWait, UnknownWithoutMatchedCollectives) {
  MultiSynth s(1);
  const auto a = s.Collective("allreduce", 0, 2);
  s.Kernel(0, "ncclDevKernel_AllReduce_Sum_f32", 7, 1000, 3000, model::kNoCorrelation, a);
  const model::Trace t = s.Finish();
  AnalyzeOptions o;
  o.threads = 1;
  auto r = AnalyzeAll(t, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranks.size(), 1u);
  EXPECT_EQ(r->ranks[0].comm_ns, 2000);
  EXPECT_FALSE(r->ranks[0].wait_known);  // one rank: arrivals of the others unknown
  EXPECT_EQ(r->ranks[0].comm_wait_ns, 0);
  EXPECT_EQ(r->ranks[0].waited_for, model::kNone);
}

// Two activities of one device waiting at once count once (the split is measured on M).
TEST(CommWait, OverlappingWaitsOfOneDeviceCountOnce) {
  MultiSynth s(2);
  const char* k = "ncclDevKernel_AllGather";
  std::vector<model::CollectiveId> c;
  for (int i = 0; i < 4; ++i) c.push_back(s.Collective(i < 2 ? "allgather" : "reducescatter", 0, 2));
  // Rank 0: all-gather [0, 1000) on stream 7 and reduce-scatter [200, 900) on stream 8; rank 1
  // arrives at 600 for both. Rank 0 waits [0, 600) and [200, 600): 600 in all, exposed.
  s.Kernel(0, k, 7, 0, 1000, model::kNoCorrelation, c[0]);
  s.Kernel(1, k, 7, 600, 1000, model::kNoCorrelation, c[1]);
  s.Kernel(0, "ncclDevKernel_ReduceScatter", 8, 200, 900, model::kNoCorrelation, c[2]);
  s.Kernel(1, "ncclDevKernel_ReduceScatter", 8, 600, 900, model::kNoCorrelation, c[3]);
  auto& cs = s.builder().data().collectives;
  for (size_t i = 0; i < cs.size(); ++i) cs[i].rank = static_cast<int32_t>(i % 2);
  const model::Trace t = s.Finish();
  AnalyzeOptions o;
  o.threads = 1;
  auto r = AnalyzeAll(t, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->cross_rank.instances.size(), 2u);
  EXPECT_EQ(r->ranks[0].comm_ns, 1000);
  EXPECT_EQ(r->ranks[0].comm_wait_ns, 600);
  EXPECT_EQ(r->ranks[0].exposed_wait_ns, 600);
  EXPECT_EQ(r->ranks[0].hidden_wait_ns, 0);
  // Waiting for rank 1, merged like the total: 600, not 600 + 400.
  EXPECT_EQ(r->ranks[0].waited_for_ns, 600);
  EXPECT_EQ(r->ranks[1].comm_wait_ns, 0);
}

}  // namespace
}  // namespace overlapscope::analyze
