// IntervalSet — a sorted list of disjoint, non-touching, non-empty half-open intervals [start, end)
// in ns, with the set operations every analysis uses (union, intersection, difference, length).
//
// All operations are linear sweeps over sorted inputs. Building from unsorted intervals sorts
// once (O(n log n)). Empty intervals (end <= start) are dropped: they have no length and cover
// nothing. Touching intervals ([0,5) and [5,9)) are merged into one ([0,9)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace overlapscope::analyze {

struct Interval {
  int64_t start_ns = 0, end_ns = 0;
  int64_t length() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  bool operator==(const Interval& o) const { return start_ns == o.start_ns && end_ns == o.end_ns; }
};

class IntervalSet {
 public:
  IntervalSet() = default;
  // Sorts and merges arbitrary intervals.
  static IntervalSet FromUnsorted(std::vector<Interval> v);
  // Merges intervals already sorted by start (checked only in debug builds); O(n).
  static IntervalSet FromSortedByStart(const std::vector<Interval>& v) {
    return FromSortedByStart(v.data(), v.data() + v.size());
  }
  static IntervalSet FromSortedByStart(const Interval* begin, const Interval* end);

  const std::vector<Interval>& intervals() const { return v_; }
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  // Total covered length in ns.
  int64_t Length() const;

  IntervalSet Union(const IntervalSet& o) const;
  IntervalSet Intersect(const IntervalSet& o) const;
  IntervalSet Subtract(const IntervalSet& o) const;  // this \ o
  // Length of this ∩ o without building it.
  int64_t IntersectLength(const IntervalSet& o) const;
  // Length of this ∩ [start, end); O(log n + k).
  int64_t CoveredIn(int64_t start_ns, int64_t end_ns) const;
  // True when [start, end) shares a positive length with the set; O(log n).
  bool Intersects(int64_t start_ns, int64_t end_ns) const;
  // Restricts the set to [start, end).
  IntervalSet Clip(int64_t start_ns, int64_t end_ns) const;

 private:
  std::vector<Interval> v_;
};

}  // namespace overlapscope::analyze
