// SM residency and the fluid slowdown of the contention model (analyze/replay/residency.h), with
// the footprints of real kernels (Kineto traces of tests/data/kineto: cuBLAS' nvjet GEMM and
// NCCL's all-gather on H200), and extra start constraints of the simulation (the waits for SMs).
#include "analyze/replay/residency.h"

#include <gtest/gtest.h>

#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {
namespace {

// nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT: grid 2x66, 384 threads, 168 registers,
// 213,188 bytes of shared memory; ncclDevKernel_AllGather_RING_LL: 24 x 544 threads, 96
// registers, 103,808 bytes.
const BlockFootprint kGemm{132, 384, 168, 213188};
const BlockFootprint kNccl{24, 544, 96, 103808};

TEST(Residency, RealKernelsFillTheirSms) {
  EXPECT_EQ(BlocksPerSm(kGemm), 1);  // 168 x 384 = 64,512 of 65,536 registers
  EXPECT_EQ(BlocksPerSm(kNccl), 1);  // 96 x 544 = 52,224 registers
  EXPECT_EQ(SmsOccupied(kGemm, 132), 132);
  EXPECT_EQ(SmsOccupied(kNccl, 132), 24);
  // Registers: 64,512 + 52,224 > 65,536; shared memory 213,188 + 103,808 > 233,472.
  EXPECT_FALSE(FitsBeside(kGemm, kNccl));
  EXPECT_FALSE(FitsBeside(kNccl, kGemm));
  // A small kernel (64 threads x 32 registers, no shared memory) fits beside one NCCL block:
  // 1,088 threads, 54,272 registers, 103,808 bytes.
  EXPECT_TRUE(FitsBeside(kNccl, BlockFootprint{1000, 64, 32, 0}));
  // Unknown footprints fit nowhere; an unknown grid occupies every SM.
  EXPECT_FALSE(FitsBeside(kNccl, BlockFootprint{}));
  EXPECT_EQ(SmsOccupied(BlockFootprint{}, 132), 132);
  // 4,096 blocks of 256 threads x 32 registers: 8 per SM (threads and registers), 132 SMs.
  EXPECT_EQ(BlocksPerSm(BlockFootprint{4096, 256, 32, 0}), 8);
  EXPECT_EQ(SmsOccupied(BlockFootprint{4096, 256, 32, 0}, 132), 132);
  EXPECT_EQ(SmsOccupied(BlockFootprint{40, 256, 32, 0}, 132), 5);
}

TEST(Residency, FluidEndOnTheSmsLeft) {
  // The GEMM (357 us alone on 132 SMs) starts while the all-gather holds 24 SMs for 428 us: at
  // 108/132 of its speed it does 428 x 108 / 132 = 350.18 us of work by then, the last 6.82 us
  // at full speed: it ends at 434.82 us (the measured run on rank 0 of
  // tests/data/kineto_nosync/ag_overlap: 466 us).
  const HoldSteps holds = {{0, 24}, {428000, -24}};
  EXPECT_NEAR(FluidEnd(0, 357000, 132, 132, holds), 434818, 1);
  EXPECT_NEAR(FluidWork(0, 434818, 132, 132, holds), 357000, 1);
  // Nothing held: full speed; a kernel wanting 100 SMs is not slowed by 24 held ones (108 free).
  EXPECT_EQ(FluidEnd(5, 1000, 132, 132, {}), 1005);
  EXPECT_EQ(FluidEnd(0, 1000, 100, 132, holds), 1000);
  // Two holders at once (24 + 32 SMs) from 0 to 100: 76/132 of the speed.
  const HoldSteps two = {{0, 24}, {0, 32}, {100, -24}, {100, -32}};
  EXPECT_NEAR(FluidWork(0, 100, 132, 132, two), 58, 1);  // 100 x 76 / 132 = 57.6
}

TEST(Simulate, ExtraEdgesWaitForAnotherKernel) {
  // GPU 0 [0, 100) and GPU 1 [10, 50) on two streams, no edge between them. An extra kAfterEnd
  // edge 0 -> 1 (1 waits for 0's SMs) starts 1 at 100; kAfterStart with lag 30 at 30.
  SimGraph g;
  g.Resize(2, 2);
  g.rec_start = {0, 10}, g.rec_dur = {100, 40}, g.dur = {100, 40};
  EdgeRows rows;
  rows.Finish(g);
  const Simulation sim(g);
  Schedule s = sim.Run(g.dur);
  EXPECT_EQ(s.start[1], 10);
  std::vector<ExtraEdge> after_end = {{0, 1, Dep::kAfterEnd, 0}};
  s = sim.Run(g.dur, &after_end);
  EXPECT_EQ(s.start[1], 100);
  EXPECT_EQ(s.end[1], 140);
  EXPECT_EQ(s.bind_start[1], 0);
  std::vector<ExtraEdge> after_start = {{0, 1, Dep::kAfterStart, 30}};
  s = sim.Run(g.dur, &after_start);
  EXPECT_EQ(s.start[1], 30);
  s = sim.Run(g.dur);  // the plan is unchanged by the extra edges
  EXPECT_EQ(s.start[1], 10);
}

}  // namespace
}  // namespace overlapscope::analyze::replay
