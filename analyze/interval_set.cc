#include "analyze/interval_set.h"

#include <algorithm>
#include <cassert>

namespace overlapscope::analyze {

IntervalSet IntervalSet::FromUnsorted(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
  return FromSortedByStart(v);
}

IntervalSet IntervalSet::FromSortedByStart(const Interval* begin, const Interval* end) {
  IntervalSet s;
  s.v_.reserve(static_cast<size_t>(end - begin));
  for (const Interval* p = begin; p != end; ++p) {
    const Interval& i = *p;
    if (i.end_ns <= i.start_ns) continue;  // empty: covers nothing
    assert(s.v_.empty() || s.v_.back().start_ns <= i.start_ns);
    // Touching (start == previous end) merges too: the set has no zero-length holes.
    if (!s.v_.empty() && i.start_ns <= s.v_.back().end_ns) {
      s.v_.back().end_ns = std::max(s.v_.back().end_ns, i.end_ns);
    } else {
      s.v_.push_back(i);
    }
  }
  return s;
}

int64_t IntervalSet::Length() const {
  int64_t n = 0;
  for (const Interval& i : v_) n += i.end_ns - i.start_ns;
  return n;
}

IntervalSet IntervalSet::Union(const IntervalSet& o) const {
  // Merge of two sorted lists, then one coalescing pass.
  std::vector<Interval> all;
  all.reserve(v_.size() + o.v_.size());
  std::merge(v_.begin(), v_.end(), o.v_.begin(), o.v_.end(), std::back_inserter(all),
             [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  return FromSortedByStart(all);
}

IntervalSet IntervalSet::Intersect(const IntervalSet& o) const {
  IntervalSet r;
  size_t i = 0, j = 0;
  while (i < v_.size() && j < o.v_.size()) {
    int64_t lo = std::max(v_[i].start_ns, o.v_[j].start_ns);
    int64_t hi = std::min(v_[i].end_ns, o.v_[j].end_ns);
    if (lo < hi) r.v_.push_back({lo, hi});
    // Advance whichever ends first; both sides are disjoint, so nothing is skipped.
    if (v_[i].end_ns < o.v_[j].end_ns)
      ++i;
    else
      ++j;
  }
  return r;
}

int64_t IntervalSet::IntersectLength(const IntervalSet& o) const {
  int64_t n = 0;
  size_t i = 0, j = 0;
  while (i < v_.size() && j < o.v_.size()) {
    int64_t lo = std::max(v_[i].start_ns, o.v_[j].start_ns);
    int64_t hi = std::min(v_[i].end_ns, o.v_[j].end_ns);
    if (lo < hi) n += hi - lo;
    if (v_[i].end_ns < o.v_[j].end_ns)
      ++i;
    else
      ++j;
  }
  return n;
}

IntervalSet IntervalSet::Subtract(const IntervalSet& o) const {
  IntervalSet r;
  size_t j = 0;
  for (const Interval& a : v_) {
    int64_t cur = a.start_ns;
    while (j < o.v_.size() && o.v_[j].end_ns <= cur) ++j;
    size_t k = j;
    while (k < o.v_.size() && o.v_[k].start_ns < a.end_ns) {
      if (o.v_[k].start_ns > cur) r.v_.push_back({cur, o.v_[k].start_ns});
      cur = std::max(cur, o.v_[k].end_ns);
      if (o.v_[k].end_ns >= a.end_ns) break;
      ++k;
    }
    if (cur < a.end_ns) r.v_.push_back({cur, a.end_ns});
    // o's interval k may reach into the next interval of this set: keep j at k.
    j = k;
  }
  return r;
}

int64_t IntervalSet::CoveredIn(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  // First interval ending after start_ns.
  auto it = std::upper_bound(v_.begin(), v_.end(), start_ns, [](int64_t t, const Interval& i) { return t < i.end_ns; });
  int64_t n = 0;
  for (; it != v_.end() && it->start_ns < end_ns; ++it)
    n += std::min(end_ns, it->end_ns) - std::max(start_ns, it->start_ns);
  return n;
}

bool IntervalSet::Intersects(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return false;
  auto it = std::upper_bound(v_.begin(), v_.end(), start_ns, [](int64_t t, const Interval& i) { return t < i.end_ns; });
  return it != v_.end() && it->start_ns < end_ns;
}

IntervalSet IntervalSet::Clip(int64_t start_ns, int64_t end_ns) const {
  IntervalSet r;
  if (end_ns <= start_ns) return r;
  auto it = std::upper_bound(v_.begin(), v_.end(), start_ns, [](int64_t t, const Interval& i) { return t < i.end_ns; });
  for (; it != v_.end() && it->start_ns < end_ns; ++it)
    r.v_.push_back({std::max(start_ns, it->start_ns), std::min(end_ns, it->end_ns)});
  return r;
}

}  // namespace overlapscope::analyze
