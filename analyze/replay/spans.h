// Internal to analyze/replay: half-open [start, end) ns intervals as (start, end) pairs, merged
// into sorted disjoint lists. (analyze/interval_set.h does the same for the analyses, but replay
// may see only analyze/graph, model and base.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace overlapscope::analyze::replay {

using Span = std::pair<int64_t, int64_t>;

// Sorted, disjoint, non-empty spans covering the same time as `v`.
inline std::vector<Span> MergeSpans(std::vector<Span> v) {
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());  // often sorted already
  std::vector<Span> out;
  for (const Span& s : v) {
    if (s.second <= s.first) continue;
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

// Whether merged list u meets [lo, hi) (an instant when lo == hi). Queries in rising `lo` (a
// stream's kernels in node order) move `at` forward; a query below the last one searches again.
class MeetsCursor {
 public:
  explicit MeetsCursor(const std::vector<Span>& u) : u_(u) {}
  bool Meets(int64_t lo, int64_t hi) {
    if (lo < last_lo_) {
      at_ = std::upper_bound(u_.begin(), u_.end(), lo, [](int64_t x, const Span& s) { return x < s.second; }) -
            u_.begin();
    } else {
      while (at_ < u_.size() && u_[at_].second <= lo) ++at_;  // the first span ending after lo
    }
    last_lo_ = lo;
    return at_ < u_.size() && u_[at_].first <= std::max(lo, hi - 1);
  }

 private:
  const std::vector<Span>& u_;
  size_t at_ = 0;
  int64_t last_lo_ = INT64_MIN;
};

}  // namespace overlapscope::analyze::replay
