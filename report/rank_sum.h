// The two-sided Wilcoxon rank-sum (Mann–Whitney U) test that decides whether a run-to-run change
// is significant (METRICS.md §10): no distribution assumed, robust to outlier iterations.
//
// Exact null distribution of U when neither sample has ties and n1 + n2 <= kExactMaxN (counted
// by dynamic programming); otherwise the normal approximation with tie correction and continuity
// correction. p is two-sided and clipped to 1. Empty samples give p = 1 (nothing to judge);
// callers judge significance only with >= 5 values a side.
#pragma once

#include <cstdint>
#include <vector>

namespace overlapscope::report {

inline constexpr int kExactMaxN = 40;

struct RankSumResult {
  double u = 0;  // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double p = 1;  // two-sided p-value
  bool exact = false;
};

RankSumResult RankSumTest(const std::vector<double>& a, const std::vector<double>& b);

// METRICS §10: significant when p < 0.01 and the medians differ by more than 1 % of base's median
// (of its absolute value; a base median of 0 with a non-zero test median differs by more).
inline constexpr int kMinIterations = 5;
inline constexpr double kMaxP = 0.01;
inline constexpr double kMinRelativeChange = 0.01;

double MedianOf(std::vector<double> v);  // 0 for an empty sample

enum class Significance { kSignificant, kWithinNoise, kNotJudged };
struct Judgement {
  Significance verdict = Significance::kNotJudged;
  double p = 1;
  bool exact = false;
  double base_median = 0, test_median = 0;
};
Judgement Judge(const std::vector<double>& base, const std::vector<double>& test);
const char* ToString(Significance s);  // "significant", "within noise", "not judged"

}  // namespace overlapscope::report
