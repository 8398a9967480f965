// The kernels of one device as the contention model places them (internal to analyze/replay,
// contention.cc): start, end, the SMs a collective holds, and the searches for those meeting an
// interval, over lists sorted by start.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "analyze/replay/residency.h"

namespace overlapscope::analyze::replay::placed {

// A kernel on one device, where the model places it.
struct Placed {
  int32_t v = -1;
  // A collective's footprint. A compute kernel's is read where the model needs it (DeviceModel::
  // Footprint): most placed kernels meet no collective, and reading each one's launch record
  // from the trace was a cache miss per kernel.
  BlockFootprint fp;
  int64_t start = 0, end = 0;
  bool holds = true;  // takes SMs while it runs (false: a copy-engine collective)
  // A collective placed in a persistent GEMM's last tile round: its blocks sit on the SMs the
  // GEMM's blocks without a last tile freed, so it holds none of that GEMM's.
  bool in_last_round = false;
};

inline bool StartsBefore(const Placed& p, int64_t x) { return p.start < x; }

// Kernels of `list` (sorted by start) that start before list[at] (the first starting at or after
// hi) and end after lo, through the prefix maximum of their ends: those meeting [lo, hi).
template <typename F>
void MeetingBelow(const std::vector<Placed>& list, const std::vector<int64_t>& max_end, size_t at, int64_t lo, F f) {
  for (auto j = static_cast<int64_t>(at) - 1; j >= 0 && max_end[j] > lo; --j)
    if (list[j].end > lo) f(list[j]);
}

template <typename F>
void Meeting(const std::vector<Placed>& list, const std::vector<int64_t>& max_end, int64_t lo, int64_t hi, F f) {
  MeetingBelow(list, max_end, std::lower_bound(list.begin(), list.end(), hi, StartsBefore) - list.begin(), lo, f);
}

// Meeting() with the position of the last query kept: queries in about the list's order
// (kernels taken by start) step a few places forward instead of searching the whole list, whose
// binary searches over 10^5 kernels missed the cache at most steps. The same kernels in the same
// order as Meeting(); a query far away (or behind) searches as Meeting() does.
class MeetingCursor {
 public:
  MeetingCursor(const std::vector<Placed>& list, const std::vector<int64_t>& max_end)
      : list_(list), max_end_(max_end) {}
  template <typename F>
  void Each(int64_t lo, int64_t hi, F f) {
    const auto begin = list_.begin();
    if (at_ > 0 && list_[at_ - 1].start >= hi) {
      at_ = std::lower_bound(begin, begin + at_, hi, StartsBefore) - begin;
    } else {
      for (int step = 0; step < 8 && at_ < list_.size() && list_[at_].start < hi; ++step) ++at_;
      if (at_ < list_.size() && list_[at_].start < hi)
        at_ = std::lower_bound(begin + at_, list_.end(), hi, StartsBefore) - begin;
    }
    MeetingBelow(list_, max_end_, at_, lo, f);
  }

 private:
  const std::vector<Placed>& list_;
  const std::vector<int64_t>& max_end_;
  size_t at_ = 0;  // the first kernel starting at or after the last query's hi
};

inline std::vector<int64_t> PrefixMaxEnd(const std::vector<Placed>& list) {
  std::vector<int64_t> m(list.size());
  int64_t x = INT64_MIN;
  for (size_t i = 0; i < list.size(); ++i) m[i] = x = std::max(x, list[i].end);
  return m;
}

// By (start, node): a total order, so a list already in it (a device's kernels in node order,
// one stream) is left as sorting it would leave it.
inline void SortByStart(std::vector<Placed>& list) {
  const auto before = [](const Placed& x, const Placed& y) {
    return std::make_pair(x.start, x.v) < std::make_pair(y.start, y.v);
  };
  if (!std::is_sorted(list.begin(), list.end(), before)) std::sort(list.begin(), list.end(), before);
}

}  // namespace overlapscope::analyze::replay::placed
