// Rank-sum test (report/rank_sum.h).
#include "report/rank_sum.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace overlapscope::report {
namespace {

// Ranks 1..n of the pooled sample (ties get their mean rank); sets the tie term sum(t^3 - t).
std::vector<double> PooledRanks(const std::vector<double>& a, const std::vector<double>& b, double* tie_term,
                                bool* ties) {
  std::vector<std::pair<double, size_t>> v;
  for (size_t i = 0; i < a.size(); ++i) v.push_back({a[i], i});
  for (size_t i = 0; i < b.size(); ++i) v.push_back({b[i], a.size() + i});
  std::sort(v.begin(), v.end());
  std::vector<double> rank(v.size());
  *tie_term = 0;
  *ties = false;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j].first == v[i].first) ++j;
    const double t = static_cast<double>(j - i);
    if (j - i > 1) *ties = true;
    *tie_term += t * t * t - t;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) rank[v[k].second] = mean_rank;
    i = j;
  }
  return rank;
}

// P(U <= u) under the null for sizes m, n without ties: counts of arrangements by U.
double ExactCdf(int m, int n, int u) {
  // f[i][j][k]: arrangements of i a's and j b's with U = k; rolled over i.
  const int max_u = m * n;
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>(max_u + 1, 0)), cur = prev;
  for (int j = 0; j <= n; ++j) prev[j][0] = 1;  // i = 0: U = 0
  for (int i = 1; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      std::fill(cur[j].begin(), cur[j].end(), 0);
      for (int k = 0; k <= i * j; ++k) {
        // The largest value is an a (beats all j b's: U grows by j) or a b.
        double c = (k >= j) ? prev[j][k - j] : 0;
        if (j > 0) c += cur[j - 1][k];
        cur[j][k] = c;
      }
    }
    std::swap(prev, cur);
  }
  double total = 0, below = 0;
  for (int k = 0; k <= max_u; ++k) {
    total += prev[n][k];
    if (k <= u) below += prev[n][k];
  }
  return below / total;
}

}  // namespace

RankSumResult RankSumTest(const std::vector<double>& a, const std::vector<double>& b) {
  RankSumResult r;
  if (a.empty() || b.empty()) return r;
  double tie_term = 0;
  bool ties = false;
  const std::vector<double> rank = PooledRanks(a, b, &tie_term, &ties);
  const double m = static_cast<double>(a.size()), n = static_cast<double>(b.size());
  double r1 = 0;
  for (size_t i = 0; i < a.size(); ++i) r1 += rank[i];
  r.u = r1 - m * (m + 1) / 2;
  if (!ties && a.size() + b.size() <= static_cast<size_t>(kExactMaxN)) {
    r.exact = true;
    // U is symmetric about mn/2: P(U >= u) = P(U <= mn - u).
    const int u = static_cast<int>(std::lround(r.u));
    const int mi = static_cast<int>(a.size()), ni = static_cast<int>(b.size());
    const double lo = ExactCdf(mi, ni, u), hi = ExactCdf(mi, ni, mi * ni - u);
    r.p = std::min(1.0, 2 * std::min(lo, hi));
    return r;
  }
  const double total = m + n;
  const double var = m * n / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (var <= 0) return r;  // every value tied: no evidence of a change
  const double z = std::max(0.0, std::fabs(r.u - m * n / 2) - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

Judgement Judge(const std::vector<double>& base, const std::vector<double>& test) {
  Judgement j;
  j.base_median = MedianOf(base);
  j.test_median = MedianOf(test);
  if (base.size() < static_cast<size_t>(kMinIterations) || test.size() < static_cast<size_t>(kMinIterations)) return j;
  const RankSumResult t = RankSumTest(base, test);
  j.p = t.p;
  j.exact = t.exact;
  const double diff = std::fabs(j.test_median - j.base_median);
  const bool moved = j.base_median == 0 ? diff > 0 : diff > kMinRelativeChange * std::fabs(j.base_median);
  j.verdict = (t.p < kMaxP && moved) ? Significance::kSignificant : Significance::kWithinNoise;
  return j;
}

const char* ToString(Significance s) {
  switch (s) {
    case Significance::kSignificant: return "significant";
    case Significance::kWithinNoise: return "within noise";
    case Significance::kNotJudged: return "not judged";
  }
  return "not judged";
}

}  // namespace overlapscope::report
