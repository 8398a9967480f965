// Collective skew as the ranks time it (workloads/skew.h), the straggler options, MPI launch
// detection, and (label gpu, 2 GPUs) the straggler's skew from CUDA events against the skew the
// capture analysis finds (analyze/cross_rank: instances' skew_ns).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workload_util.h"
#include "workloads/matmul_allgather.h"
#include "workloads/mpi_world.h"
#include "workloads/skew.h"

namespace overlapscope::workloads_test {
namespace {

using workloads::ComputeSkew;

TEST(WorkloadSkew, TwoRanksByHand) {
  // Instance durations (ms): rank 0 {1.0, 2.0, 3.0}, rank 1 {1.5, 2.0, 1.0}.
  // skew = max - min per instance = {0.5, 0.0, 2.0} -> median 0.5, max 2.0.
  // wait = own - min: rank 0 {0, 0, 2.0} -> median 0; rank 1 {0.5, 0, 0} -> median 0.
  auto s = ComputeSkew({{1.0, 2.0, 3.0}, {1.5, 2.0, 1.0}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->instances, 3);
  EXPECT_DOUBLE_EQ(s->median_skew_ms, 0.5);
  EXPECT_DOUBLE_EQ(s->max_skew_ms, 2.0);
  ASSERT_EQ(s->median_wait_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(s->median_wait_ms[0], 0.0);
  EXPECT_DOUBLE_EQ(s->median_wait_ms[1], 0.0);
}

TEST(WorkloadSkew, ThreeRanksAndEvenMedian) {
  // Rank 1 arrives last in both instances (shortest duration).
  // Instance 0: {4.0, 1.0, 2.5} -> skew 3.0, waits {3.0, 0, 1.5}.
  // Instance 1: {3.0, 2.0, 2.0} -> skew 1.0, waits {1.0, 0, 0}.
  // Medians of two values are their mean: skew 2.0; waits {2.0, 0, 0.75}.
  auto s = ComputeSkew({{4.0, 3.0}, {1.0, 2.0}, {2.5, 2.0}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->median_skew_ms, 2.0);
  EXPECT_DOUBLE_EQ(s->max_skew_ms, 3.0);
  EXPECT_DOUBLE_EQ(s->median_wait_ms[0], 2.0);
  EXPECT_DOUBLE_EQ(s->median_wait_ms[1], 0.0);
  EXPECT_DOUBLE_EQ(s->median_wait_ms[2], 0.75);
}

TEST(WorkloadSkew, RejectsUnequalCountsAndOneRank) {
  auto s = ComputeSkew({{1.0, 2.0}, {1.0}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("rank 0 timed 2 collectives but rank 1 timed 1"), std::string::npos)
      << s.status();
  EXPECT_FALSE(ComputeSkew({{1.0}}).ok());
  EXPECT_FALSE(ComputeSkew({{}, {}}).ok());
}

TEST(WorkloadSkew, FiguresAndTable) {
  // overlap: rank 0 {0.6, 0.7}, rank 1 {0.1, 0.2}: skew {0.5, 0.5}; waits rank 0 0.5, rank 1 0.
  std::vector<workloads::Series> by_rank = {{{"overlap", {0.6, 0.7}}}, {{"overlap", {0.1, 0.2}}}};
  std::map<std::string, double> fig;
  ASSERT_TRUE(workloads::AddSkewFigures(by_rank, "captured_", fig).ok());
  EXPECT_DOUBLE_EQ(fig["captured_overlap_skew_median_ms"], 0.5);
  EXPECT_DOUBLE_EQ(fig["captured_overlap_skew_instances"], 2);
  EXPECT_DOUBLE_EQ(fig["captured_overlap_wait_rank0_median_ms"], 0.5);
  EXPECT_DOUBLE_EQ(fig["captured_overlap_wait_rank1_median_ms"], 0.0);
  const std::string t = workloads::RenderSkew(fig, 2);
  EXPECT_NE(t.find("captured_overlap"), std::string::npos) << t;
  EXPECT_NE(t.find("median    0.500 ms"), std::string::npos) << t;
  EXPECT_NE(t.find("r0 0.500 r1 0.000"), std::string::npos) << t;
  // A series one rank lacks is an error, not a silent zero.
  by_rank[1].clear();
  EXPECT_FALSE(workloads::AddSkewFigures(by_rank, "", fig).ok());
}

TEST(WorkloadSkew, SeriesTextRoundTripAndErrors) {
  workloads::Series s = {{"a2a", {0.1, 1e-9, 12345.678}}, {"sync", {}}};
  auto back = workloads::ParseSeries(workloads::SerializeSeries(s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->at("a2a"), s["a2a"]);  // %.17g round-trips doubles exactly
  auto bad = workloads::ParseSeries("ok\t1,2\nx\t1,abc\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("line 2: bad number 'abc'"), std::string::npos) << bad.status();
  EXPECT_FALSE(workloads::ParseSeries("no tab here\n").ok());
}

TEST(WorkloadSkew, DelayOptionsChecked) {
  workloads::RunParams p;
  EXPECT_TRUE(workloads::CheckDelay(p, 2).ok());
  p.delay_rank = 1;
  EXPECT_FALSE(workloads::CheckDelay(p, 2).ok());  // rank without microseconds
  p.delay_us = 500;
  EXPECT_TRUE(workloads::CheckDelay(p, 2).ok());
  EXPECT_FALSE(workloads::CheckDelay(p, 1).ok());  // rank 1 of a one-rank run
  p.delay_rank = -1;
  EXPECT_FALSE(workloads::CheckDelay(p, 2).ok());  // microseconds without a rank
}

TEST(WorkloadSkew, MpiLaunchDetectedFromEnvironment) {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  auto none = workloads::mpi::DetectLaunch(env({{"RANK", "0"}}));  // torchrun's RANK is not MPI
  EXPECT_FALSE(none.launched);
  auto ompi = workloads::mpi::DetectLaunch(env({{"OMPI_COMM_WORLD_SIZE", "4"}, {"PMIX_RANK", "1"}}));
  EXPECT_TRUE(ompi.launched);
  EXPECT_EQ(ompi.evidence, "OMPI_COMM_WORLD_SIZE=4");
  EXPECT_EQ(ompi.world_size, 4);
  auto hydra = workloads::mpi::DetectLaunch(env({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  EXPECT_TRUE(hydra.launched);
  EXPECT_EQ(hydra.world_size, 2);
}

double MedianNs(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Rank 1 spins 500 µs before every all-gather. The ranks' own CUDA events give each rank's
// duration of the collective (own arrival to own end); the event skew is max - min of those,
// which is max(arrival) - min(arrival) only when all ranks end together. The trace gives both
// arrivals and ends, so it is checked twice: the same durations-based figure must agree within
// 5 %, and the METRICS §6 skew within 5 % plus the median spread of the ranks' end times (with 2
// ranks the ends agree; with 4 on a ring they came out ~33 µs apart on 4 x H200).
TEST(WorkloadSkew, StragglerSkewFromEventsMatchesCaptureAnalysis) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::MatmulAllGatherOptions o;
  o.run.gpus = 2;
  o.run.iters = 5;
  o.run.warmup = 2;
  o.run.burn_in_ms = 100;
  o.run.delay_rank = 1;
  o.run.delay_us = 500;
  // Sequential: the all-gather follows the GEMM on one stream, so its kernel starts right after
  // the begin event (in the overlap mode it may wait for SMs the GEMM holds, after the event).
  o.modes = {"sequential"};
  Collector c;
  auto r = workloads::RunMatmulAllGather(o, c.Hooks(10));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  std::printf("%s\n", r->table.c_str());
  const double events_ms = r->Get("captured_sequential_skew_median_ms");
  ASSERT_GT(events_ms, 0) << "no event-derived skew of the captured runs";
  ASSERT_EQ(c.modes.count("sequential"), 1u);
  const auto& x = c.modes["sequential"].analysis.cross_rank;
  ASSERT_FALSE(x.instances.empty())
      << "the cross-rank analysis matched no all-gather across the 2 GPUs of this process (unmatched " << x.unmatched
      << ", without rank " << x.without_rank << "): single-process collectives must be matched per GPU";
  // The capture window also holds one warm-up iteration, which the events do not time: the
  // first instance is left out (instances are sorted by first start).
  std::vector<int64_t> skew, dur_skew, end_spread;
  for (size_t k = 1; k < x.instances.size(); ++k) {
    const auto& i = x.instances[k];
    int64_t dmin = INT64_MAX, dmax = INT64_MIN, emin = INT64_MAX, emax = INT64_MIN;
    for (const auto& p : i.ranks) {
      dmin = std::min(dmin, p.end_ns - p.arrival_ns), dmax = std::max(dmax, p.end_ns - p.arrival_ns);
      emin = std::min(emin, p.end_ns), emax = std::max(emax, p.end_ns);
    }
    skew.push_back(i.skew_ns);
    dur_skew.push_back(dmax - dmin);
    end_spread.push_back(emax - emin);
  }
  ASSERT_FALSE(skew.empty());
  const double analysis_ms = MedianNs(skew) / 1e6, dur_ms = MedianNs(dur_skew) / 1e6;
  const double spread_ms = MedianNs(end_spread) / 1e6;
  std::printf(
      "median skew: CUDA events %.4f ms; capture: durations-based %.4f ms, METRICS skew %.4f ms, "
      "end spread %.4f ms, over %zu instances\n",
      events_ms, dur_ms, analysis_ms, spread_ms, skew.size());
  EXPECT_NEAR(dur_ms, events_ms, 0.05 * events_ms);
  EXPECT_NEAR(analysis_ms, events_ms, 0.05 * events_ms + spread_ms);
  // The 0.5 ms straggler dominates, but the GEMMs before the all-gather do not end together on
  // the two GPUs: on 2 x H200 the median came out 0.51 ms in one run and 0.39 ms in another
  // (rank 0's GEMMs ~0.1 ms slower while the capture ran). Only the direction and rough size are
  // fixed; the agreement above is the check.
  EXPECT_GT(events_ms, 0.25);
  EXPECT_LT(events_ms, 0.75);
  EXPECT_GT(r->Get("captured_sequential_wait_rank0_median_ms"), 0.25);
  EXPECT_LT(r->Get("captured_sequential_wait_rank1_median_ms"), 0.05);
}

}  // namespace
}  // namespace overlapscope::workloads_test
