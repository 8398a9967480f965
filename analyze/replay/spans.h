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
  std::sort(v.begin(), v.end());
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

}  // namespace overlapscope::analyze::replay
