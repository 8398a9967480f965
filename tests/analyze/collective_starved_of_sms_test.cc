// collective-starved-of-sms: a synthetic program of the BACKGROUND §3 pattern on H100 (a
// persistent GEMM that fills every SM, an all-gather on its own stream that could start but gets
// no SM until the GEMM's last wave), its negatives, and the real torch.profiler traces of the
// matmul + all-gather program (tests/data/torch_diag), where the all-gather started in the GEMM's
// last tile round in most iterations (tools/replay_pairs.py --race).
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "multi_synth.h"
#include "torch_diag.h"

namespace overlapscope::analyze {
namespace {

using testing::AnalyzeOneThread;
using testing::MultiSynth;

constexpr char kKind[] = "collective-starved-of-sms";
constexpr char kAg[] = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

std::vector<Finding> Of(const AnalysisResult& r) {
  std::vector<Finding> v;
  for (const Finding& f : r.sync.findings)
    if (f.kind == kKind) v.push_back(f);
  return v;
}

// Rank 0 (ns): gemm on compute stream 7 launched at 1000, runs [5000, 305000) with `blocks`
// blocks; the all-gather on stream 19 launched at 2000 (`on_compute`: on stream 7, after the
// gemm) runs [`ag_start`, ag_start + 100000).
model::Trace Program(int32_t blocks, int64_t ag_start, bool on_compute = false) {
  MultiSynth s(1);
  s.Launch(0, "gemm", 7, 1'000, 5'000, 305'000);
  s.builder().data().kernels.back().grid = {blocks, 1, 1};
  const model::CollectiveId c = s.Collective("all_gather", 0, 2);
  s.Launch(0, kAg, on_compute ? 7 : 19, 2'000, ag_start, ag_start + 100'000, c);
  s.builder().data().kernels.back().grid = {24, 1, 1};
  return s.Finish();
}

TEST(CollectiveStarvedOfSms, FiresWhenAFullGridGemmHoldsTheSms) {
  // Ready at its launch (2000), started at 295000 in the gemm's last 10 us: held from the gemm's
  // start (5000) to its own start, 290000 ns; it overlapped the gemm for 10000 of its 100000,
  // 90000 exposed: the cost is the lesser, 90000.
  const AnalysisResult r = AnalyzeOneThread(Program(132, 295'000));
  const std::vector<Finding> f = Of(r);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].time_ns, 295'000);
  EXPECT_EQ(f[0].cost_ns, 90'000);
  EXPECT_NE(f[0].message.find("(132 blocks: every SM of the GPU) reached its last wave"), std::string::npos)
      << f[0].message;
  EXPECT_NE(f[0].message.find("waited 290.0 µs for SMs"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].advice.find("copy engines"), std::string::npos);
  // Started right after the gemm ended (within 20 us): held for the gemm's whole 300 us; all
  // 100 us exposed.
  const std::vector<Finding> g = Of(AnalyzeOneThread(Program(132, 310'000)));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].cost_ns, 100'000);
  EXPECT_NE(g[0].message.find(") ended: it waited 300.0 µs"), std::string::npos) << g[0].message;
}

TEST(CollectiveStarvedOfSms, SilentWhenNothingHeldTheSms) {
  // A 64-block gemm leaves SMs free: whatever delayed the all-gather, it was not this.
  EXPECT_TRUE(Of(AnalyzeOneThread(Program(64, 295'000))).empty());
  // Started 40 us after the gemm ended: beyond the scheduler's 20 us, not held by it.
  EXPECT_TRUE(Of(AnalyzeOneThread(Program(132, 345'000))).empty());
  // Started 30 us after it could: launch and scheduling noise, not a wait for SMs.
  EXPECT_TRUE(Of(AnalyzeOneThread(Program(132, 32'000))).empty());
  // On the compute stream itself: collective-on-compute-stream's, stream order holds it there.
  EXPECT_TRUE(Of(AnalyzeOneThread(Program(132, 305'000, true))).empty());
}

// The overlapped matmul + all-gather on 4 and 2 x H100, profiler defaults and cuda_sync events: a
// finding on every rank, each held by the persistent GEMM (nvjet, 132 blocks) for over 1 ms of
// its 1.46 ms; the sequential program (all-gather on the compute stream) has none.
TEST(CollectiveStarvedOfSms, RealMatmulAllGatherProgram) {
  for (const char* v : {"w4_default", "w4_sync", "w2_default", "w2_sync"}) {
    const model::Trace t = testing::LoadTorchDiag(v, "mm_ag_overlap");
    const AnalysisResult r = AnalyzeOneThread(t);
    std::vector<int> per_rank(t.processes().size(), 0);
    for (const Finding& f : Of(r)) {
      ++per_rank[f.process];
      EXPECT_NE(f.message.find("nvjet_sm90"), std::string::npos) << v << ": " << f.message;
      EXPECT_NE(f.message.find("132 blocks"), std::string::npos) << v << ": " << f.message;
      EXPECT_GT(f.cost_ns, 100'000) << v << ": " << f.message;
    }
    for (size_t p = 0; p < per_rank.size(); ++p) EXPECT_GE(per_rank[p], 2) << v << " rank " << p;
    EXPECT_TRUE(Of(AnalyzeOneThread(testing::LoadTorchDiag(v, "mm_ag_sequential"))).empty()) << v;
  }
}

}  // namespace
}  // namespace overlapscope::analyze
