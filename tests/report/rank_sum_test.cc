// The rank-sum test (report/rank_sum.h) against values computed by hand and by the reference
// (tools/rank_sum_reference.py: scipy.stats.mannwhitneyu, two-sided; printed values copied here).
#include "report/rank_sum.h"

#include "gtest/gtest.h"

namespace overlapscope::report {
namespace {

TEST(RankSum, ExactByHand) {
  // Complete separation of 3 vs 3: U = 0, P(U <= 0) = 1 / C(6,3) = 1/20; two-sided 2/20.
  RankSumResult r = RankSumTest({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p, 0.1, 1e-12);
  // 5 vs 5 separated: 2 / C(10,5) = 2/252; the other direction gives U = 25, the same p.
  r = RankSumTest({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u, 25);
  EXPECT_NEAR(r.p, 2.0 / 252, 1e-12);
  // 2 vs 2, U = 1 ({1,3} vs {2,4}: 3 > 2): counts of U over the 6 arrangements are 1,1,2,1,1,
  // P(U <= 1) = 2/6, two-sided 4/6.
  r = RankSumTest({1, 3}, {2, 4});
  EXPECT_DOUBLE_EQ(r.u, 1);
  EXPECT_NEAR(r.p, 4.0 / 6, 1e-12);
}

TEST(RankSum, MatchesReference) {
  RankSumResult r = RankSumTest({1.1, 2.3, 3.7, 4.2, 5.9}, {6.1, 7.4, 3.9, 8.8, 9.2, 10.5});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 2);
  EXPECT_NEAR(r.p, 0.017316017316017316, 1e-12);
  r = RankSumTest({10, 12, 14, 16, 18, 20, 22}, {11, 13, 15, 17, 19, 21, 23, 25});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 21);
  EXPECT_NEAR(r.p, 0.46340326340326343, 1e-12);
  // Ties: normal approximation with tie and continuity correction.
  r = RankSumTest({1, 2, 2, 3, 4, 5, 5, 6}, {3, 4, 5, 5, 6, 7, 8, 8, 9});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 12.5);
  EXPECT_NEAR(r.p, 0.025496068631499585, 1e-12);
  std::vector<double> a, b;
  for (int v = 0; v < 60; v += 2) a.push_back(v);
  for (int v = 1; v < 30; ++v) b.push_back(v);
  b.push_back(100.5);
  b.push_back(101.5);
  r = RankSumTest(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 638);
  EXPECT_NEAR(r.p, 0.012810729400581198, 1e-12);
}

TEST(RankSum, DegenerateSamples) {
  EXPECT_DOUBLE_EQ(RankSumTest({}, {1, 2}).p, 1);
  RankSumResult r = RankSumTest({5, 5, 5, 5, 5}, {5, 5, 5, 5, 5});  // all tied: no evidence
  EXPECT_DOUBLE_EQ(r.p, 1);
}

TEST(RankSum, JudgeFollowsMetrics10) {
  // 5 vs 5 separated (p = 2/252 < 0.01), medians 102 -> 112 (+9.8 %): significant.
  Judgement j = Judge({100, 101, 102, 103, 104}, {110, 111, 112, 113, 114});
  EXPECT_EQ(j.verdict, Significance::kSignificant);
  EXPECT_DOUBLE_EQ(j.base_median, 102);
  EXPECT_DOUBLE_EQ(j.test_median, 112);
  // Separated but medians only 0.5 % apart: within noise.
  j = Judge({1000, 1001, 1002, 1003, 1004}, {1005, 1006, 1007, 1008, 1009});
  EXPECT_LT(j.p, 0.01);
  EXPECT_EQ(j.verdict, Significance::kWithinNoise);
  // Interleaved: p large.
  EXPECT_EQ(Judge({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}).verdict, Significance::kWithinNoise);
  // Fewer than 5 a side: not judged, medians still given.
  j = Judge({1, 2, 3, 4}, {10, 20, 30, 40, 50});
  EXPECT_EQ(j.verdict, Significance::kNotJudged);
  EXPECT_DOUBLE_EQ(j.base_median, 2.5);
  EXPECT_DOUBLE_EQ(j.test_median, 30);
}

}  // namespace
}  // namespace overlapscope::report
