// Where the launching host thread was during a host-blocked GPU idle gap (analyze/gpu_idle.h
// HostSplit), on synthetic traces whose parts are computed by hand in the comments.
#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze {
namespace {

using testing::Synth;

AnalysisResult Analyze(const model::Trace& t) {
  AnalyzeOptions o;
  o.min_gap_ns = 100;
  auto r = AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

TEST(IdleHostSplit, BlockedLaunchOtherCallsAndOutsideAddUpToTheGap) {
  // A [100,1000) launched at [0,10); B [10000,11000) launched at [9000,9010): gap [1000,10000) =
  // 9000 ns, host-blocked (cudaStreamSynchronize [1500,2500) of the launching thread lies in it).
  //   blocked      = [1500,2500)                                   = 1000
  //   launch       = [9000,10000) (launch call start to gap end)   = 1000
  //   other calls  = cudaFuncGetAttributes [2400,2600) less blocked = [2500,2600) = 100,
  //                  cudaEventRecord [3000,3400) = 400              -> 500
  //   outside      = 9000 - 1000 - 1000 - 500                       = 6500
  // A call of another thread in the gap ([4000,5000)) is not the launching thread's: outside.
  Synth s;
  s.Kernel("A", 7, 100, 1000, 0);
  s.Api("cudaStreamSynchronize", 1500, 2500);
  s.Api("cudaFuncGetAttributes", 2400, 2600);
  s.Api("cudaEventRecord", 3000, 3400);
  s.Api("cudaEventRecord", 4000, 5000, s.Thread(2));
  s.Kernel("B", 7, 10000, 11000, 9000);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.gaps.size(), 1u);
  const IdleGap& g = r.gaps[0];
  EXPECT_EQ(g.cause, GapCause::kHostBlocked);
  EXPECT_EQ(g.duration_ns(), 9000);
  EXPECT_EQ(g.host.blocked_ns, 1000);
  EXPECT_EQ(g.host.launch_ns, 1000);
  EXPECT_EQ(g.host.other_calls_ns, 500);
  EXPECT_EQ(g.host.outside_ns, 6500);
  ASSERT_EQ(r.idle.size(), 1u);
  EXPECT_EQ(r.idle[0].host_blocked_split.blocked_ns, 1000);
  EXPECT_EQ(r.idle[0].host_blocked_split.outside_ns, 6500);
}

TEST(IdleHostSplit, BlockedTimeAfterTheLaunchStartCountsAsBlockedOnce) {
  // A [0,500) launched at [0,10); B [3000,3500) launched by a call at [1000,1010), then the thread
  // blocks in cudaDeviceSynchronize [2000,2800) (B waits, e.g. behind another stream's event).
  // Gap [500,3000) = 2500: blocked = 800; launch = [1000,3000) less blocked = 2000 - 800 = 1200;
  // other calls before 1000: none; outside = [500,1000) = 500. A second host-blocked gap sums in:
  // C [6000,6100) launched at [5000,5010) with cudaStreamSynchronize [4000,4200): gap
  // [3500,6000) = 2500: blocked 200, launch 1000, outside 1300. Device sums: 1000/2200/0/1800.
  Synth s;
  s.Kernel("A", 7, 0, 500, 0);
  s.Kernel("B", 7, 3000, 3500, 1000);
  s.Api("cudaDeviceSynchronize", 2000, 2800);
  s.Api("cudaStreamSynchronize", 4000, 4200);
  s.Kernel("C", 7, 6000, 6100, 5000);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.gaps.size(), 2u);
  EXPECT_EQ(r.gaps[0].cause, GapCause::kHostBlocked);
  EXPECT_EQ(r.gaps[0].host.blocked_ns, 800);
  EXPECT_EQ(r.gaps[0].host.launch_ns, 1200);
  EXPECT_EQ(r.gaps[0].host.other_calls_ns, 0);
  EXPECT_EQ(r.gaps[0].host.outside_ns, 500);
  EXPECT_EQ(r.gaps[1].cause, GapCause::kHostBlocked);
  EXPECT_EQ(r.gaps[1].host.blocked_ns, 200);
  EXPECT_EQ(r.gaps[1].host.outside_ns, 1300);
  ASSERT_EQ(r.idle.size(), 1u);
  const HostSplit& d = r.idle[0].host_blocked_split;
  EXPECT_EQ(d.blocked_ns, 1000);
  EXPECT_EQ(d.launch_ns, 2200);
  EXPECT_EQ(d.other_calls_ns, 0);
  EXPECT_EQ(d.outside_ns, 1800);
}

TEST(IdleHostSplit, OnlyHostBlockedGapsAreSplit) {
  // A [0,500) at [0,10); B [2000,2500) launched at [1500,1510), no blocking call: launch-bound,
  // split left at zero (and the device sum too).
  Synth s;
  s.Kernel("A", 7, 0, 500, 0);
  s.Kernel("B", 7, 2000, 2500, 1500);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].cause, GapCause::kLaunchBound);
  EXPECT_EQ(r.gaps[0].host.launch_ns, 0);
  EXPECT_EQ(r.gaps[0].host.outside_ns, 0);
  EXPECT_EQ(r.idle[0].host_blocked_split.launch_ns, 0);
}

}  // namespace
}  // namespace overlapscope::analyze
