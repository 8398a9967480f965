// Straggler causes (analyze/straggler_causes.h) on synthetic multi-rank traces with an injected
// delay of known size, the way `overlapscope run ... --delay-rank R --delay-us US` injects one (a
// spin kernel on the collective's stream right before the collective, on rank R only). Every
// expected number is worked out by hand in the comments. Times in ns.
#include "analyze/straggler_causes.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "multi_synth.h"
#include "path_fixture.h"

namespace overlapscope::analyze {
namespace {

using testing::MultiSynth;
using testing::Prepared;

// DelayedStep (multi_synth.h): all-reduce A, gemm, the late rank's spin, all-reduce B.
void Step(MultiSynth& s, int ranks, int64_t t0, int step, int late, int64_t spin, int64_t slow_gemm = 0) {
  testing::DelayedStep(s, ranks, t0, step, late, spin, slow_gemm);
}

TEST(StragglerCauses, InjectedSpinIsTheCauseAndItsShareMatchesTheDelay) {
  MultiSynth s(4);
  Step(s, 4, 0, 1, 2, 400);     // rank 2 spins 400 ns before B in step 1
  Step(s, 4, 2000, 2, 2, 300);  // and 300 ns in step 2
  model::Trace t = s.Finish();
  Prepared p(t);
  StragglerResult r = AnalyzeStragglerCauses(t, p.in(), StragglerOptions{});
  // A arrives at its launch call (t0+50) on every rank: no skew, no cause. B: arrivals
  // t0+505 on ranks 0, 1, 3 and t0+905 / t0+805 on rank 2.
  ASSERT_EQ(r.causes.size(), 2u);
  const StragglerCause& c = r.causes[0];
  EXPECT_EQ(c.late_rank, 2);
  EXPECT_EQ(c.late_arrival_ns, 905);
  // Median of {505, 505, 505, 905} = 505: lateness 400 = the injected spin.
  EXPECT_EQ(c.lateness_ns, 400);
  EXPECT_EQ(c.median_rank, 1);  // lower middle of the arrivals sorted by (arrival, participant)
  EXPECT_EQ(c.behind_ns, 400);
  // Both windows start when A ended (200). Late path: spin [505,905) 400, gemm [205,505) 300,
  // the gap [200,205) 5 after A; median path: gemm 300 + gap 5. Difference 400, all the spin.
  EXPECT_EQ(c.late_window_start_ns, 200);
  EXPECT_EQ(c.median_window_start_ns, 200);
  EXPECT_EQ(c.started_later_ns, 0);
  EXPECT_EQ(c.unexplained_ns, 0);
  EXPECT_EQ(c.late_path.Total(), 705);
  EXPECT_EQ(c.median_path.Total(), 305);
  ASSERT_FALSE(c.names.empty());
  EXPECT_EQ(t.str(c.names[0].name), "SpinKernelImpl");
  EXPECT_EQ(c.names[0].delta_ns(), 400);
  EXPECT_EQ(c.names[0].median_count, 0);  // the median rank never ran it
  for (size_t i = 1; i < c.names.size(); ++i) EXPECT_EQ(c.names[i].delta_ns(), 0) << t.str(c.names[i].name);
  EXPECT_EQ(r.causes[1].lateness_ns, 300);

  // Rank 2 arrives last in 2 of the 4 all-reduces it took part in; Σ behind 700, of which the
  // spin's Σ delta is 700: a share of 100 %.
  ASSERT_FALSE(r.summaries.empty());
  const StragglerSummary& sum = r.summaries[0];
  EXPECT_EQ(sum.rank, 2);
  EXPECT_EQ(t.str(sum.op), "allreduce");
  EXPECT_EQ(sum.instances, 4);
  EXPECT_EQ(sum.times_last, 2);
  EXPECT_EQ(sum.lateness_ns, 700);
  EXPECT_EQ(sum.behind_ns, 700);
  ASSERT_FALSE(sum.names.empty());
  EXPECT_EQ(t.str(sum.names[0].name), "SpinKernelImpl");
  EXPECT_EQ(sum.names[0].delta_ns(), sum.behind_ns);
  EXPECT_EQ(sum.names[0].median_ns, 0);
}

TEST(StragglerCauses, SlowerKernelNamedWithItsSlowdown) {
  MultiSynth s(3);
  Step(s, 3, 0, 1, 1, 0, 60);  // rank 1's gemm runs 360 instead of 300 (20 % slower)
  model::Trace t = s.Finish();
  Prepared p(t);
  StragglerResult r = AnalyzeStragglerCauses(t, p.in(), StragglerOptions{});
  ASSERT_EQ(r.causes.size(), 1u);
  const StragglerCause& c = r.causes[0];
  // Arrivals {505, 565, 505}: median 505, lateness 60 (odd count: behind = lateness).
  EXPECT_EQ(c.late_rank, 1);
  EXPECT_EQ(c.lateness_ns, 60);
  EXPECT_EQ(c.behind_ns, 60);
  ASSERT_FALSE(c.names.empty());
  EXPECT_EQ(t.str(c.names[0].name), "gemm");
  EXPECT_EQ(c.names[0].late_ns, 360);
  EXPECT_EQ(c.names[0].median_ns, 300);
  EXPECT_EQ(c.names[0].delta_ns(), 60);
  // Σ late / Σ median − 1 = 0.2: "gemm running 20 % slower than the median rank".
  EXPECT_DOUBLE_EQ(static_cast<double>(c.names[0].late_ns) / static_cast<double>(c.names[0].median_ns) - 1, 0.2);
}

// Own captures, no iterations, no previous collective: the windows start at the capture window
// (1100 on both ranks, the first launch), not in the start-up before it (cudaSetDevice [0, 300)
// on rank 0, [0, 1000) on rank 1). Each rank: gemm launched [1100, 1110), runs [1115, 1415);
// rank 1 then spins [1415, 1815); the all-reduce, launched next, arrives when the stream is free:
// 1415 and 1815. Behind 400 (lateness 200: the mean of two arrivals is the median). Late path
// from 1100: spin 400 + gemm 300 + launch latency [1100, 1115) 15 = 715; median path 315.
TEST(StragglerCauses, WindowWithoutPreviousCollectiveStartsAtTheCaptureWindow) {
  MultiSynth s(2);
  for (int r = 0; r < 2; ++r) {
    s.Api(r, "cudaSetDevice", 0, r == 1 ? 1000 : 300);
    s.Launch(r, "gemm", 7, 1100, 1115, 1415);
    int64_t ready = 1415, ls = 1110;
    if (r == 1) {
      s.Launch(r, "SpinKernelImpl", 7, 1110, 1415, 1815);
      ready = 1815, ls = 1120;
    }
    s.Launch(r, "ncclDevKernel_AllReduce_Sum_f32", 7, ls, ready + 5, 3000, s.Collective("allreduce", 1, 2));
  }
  model::Trace t = s.Finish();
  Prepared p(t, "no-such-marker");
  PathInputs in = p.in();
  std::vector<WindowFigures> w(2);
  w[0].process = 0, w[1].process = 1;
  w[0].start_ns = w[1].start_ns = 1100;
  w[0].end_ns = w[1].end_ns = 3000;
  in.windows = w;
  StragglerResult r = AnalyzeStragglerCauses(t, in, StragglerOptions{});
  ASSERT_EQ(r.causes.size(), 1u);
  const StragglerCause& c = r.causes[0];
  EXPECT_EQ(c.late_rank, 1);
  EXPECT_EQ(c.lateness_ns, 200);
  EXPECT_EQ(c.behind_ns, 400);
  EXPECT_EQ(c.late_window_start_ns, 1100);
  EXPECT_EQ(c.median_window_start_ns, 1100);
  EXPECT_EQ(c.late_path.Total(), 715);
  EXPECT_EQ(c.median_path.Total(), 315);
  EXPECT_EQ(c.unexplained_ns, 0);
  ASSERT_FALSE(c.names.empty());
  EXPECT_EQ(t.str(c.names[0].name), "SpinKernelImpl");
  EXPECT_EQ(c.names[0].delta_ns(), 400);
  // Read as recorded throughout, both windows reach back to the trace's start (0).
  StragglerResult all = AnalyzeStragglerCauses(t, p.in(), StragglerOptions{});
  ASSERT_EQ(all.causes.size(), 1u);
  EXPECT_EQ(all.causes[0].late_window_start_ns, 0);
  EXPECT_EQ(all.causes[0].late_path.Total(), 1815);
}

TEST(StragglerCauses, NoSkewNoCause) {
  MultiSynth s(2);
  Step(s, 2, 0, 1, -1, 0);
  model::Trace t = s.Finish();
  Prepared p(t);
  StragglerResult r = AnalyzeStragglerCauses(t, p.in(), StragglerOptions{});
  EXPECT_TRUE(r.causes.empty());
  ASSERT_EQ(r.summaries.size(), 2u);  // both ranks took part in 2 all-reduces, last in none
  EXPECT_EQ(r.summaries[0].instances, 2);
  EXPECT_EQ(r.summaries[0].times_last, 0);
}

}  // namespace
}  // namespace overlapscope::analyze
