// ParallelSort: sorts a vector on up to `threads` threads (the model's indexes, built after the
// parse while few other steps run). Ranges of at least `min_chunk` elements are sorted at once
// (std::sort), then merged pairwise in rounds; each merge is cut into pieces merged at once
// (each piece's start in both runs found by a binary search along the merge's diagonal), so
// that no round ends in one thread's merge of the whole vector.
//
// The result is sorted by `less`; for orders under which no two elements are equivalent
// (unique keys: what the callers sort by), it is the one std::sort gives, at any thread count.
// Equivalent elements may otherwise come in any order, as with std::sort. Uses a second buffer
// of v.size() elements while it runs (T must be default-constructible and movable).
//
// The buffer is a vector of v's allocator: one that leaves elements uninitialized spares the
// zeroing of the buffer (and the faulting in of its pages) on the calling thread.
//
// Failure modes: RunAll's (std::bad_alloc for the buffer, rethrown on the calling thread).
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

#include "base/run_all.h"

namespace overlapscope::base {

namespace parallel_sort {

// How many elements of a (of na) are among the first d of merge(a, b) (std::merge's order:
// a's element first between equivalent ones).
template <typename It, typename Less>
size_t SplitAt(It a, size_t na, It b, size_t nb, size_t d, Less& less) {
  size_t lo = d > nb ? d - nb : 0, hi = std::min(d, na);
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (less(b[d - mid - 1], a[mid]))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace parallel_sort

// Merges the sorted runs [runs[k], runs[k + 1]) of v (runs: ascending bounds, runs.front() = 0,
// runs.back() = v.size()) pairwise in rounds, each merge cut into up to `threads` pieces of at
// least `min_chunk` elements merged at once: the bytes of the same pairwise rounds of std::merge
// (the earlier run's element first between equivalent ones), so stable where the runs are in
// order, at any thread count.
template <typename T, typename A, typename Less>
void ParallelMergeRuns(int threads, std::vector<T, A>& v, std::vector<size_t> runs, Less less,
                       size_t min_chunk = size_t{1} << 14) {
  if (runs.size() <= 2) return;
  const size_t pieces_per_merge = static_cast<size_t>(std::max(threads, 1));
  std::vector<T, A> buf(v.size());
  std::vector<T, A>*from = &v, *to = &buf;
  struct Piece {
    size_t a, na, b, nb, out;
  };
  while (runs.size() > 2) {
    // This round's merges: runs 2m and 2m + 1 into one (a last run without a partner is copied),
    // each cut into pieces of the output.
    std::vector<Piece> pieces;
    std::vector<size_t> next = {0};
    for (size_t m = 0; m + 1 < runs.size(); m += 2) {
      const size_t a0 = runs[m], b0 = runs[m + 1], end = m + 2 < runs.size() ? runs[m + 2] : b0;
      const size_t na = b0 - a0, nb = end - b0, n = na + nb;
      const size_t p = std::max<size_t>(1, std::min(pieces_per_merge, n / std::max<size_t>(min_chunk, 1)));
      size_t prev_d = 0, prev_i = 0;
      for (size_t j = 1; j <= p; ++j) {
        const size_t d = n * j / p;
        const size_t i = j == p ? na
                                : parallel_sort::SplitAt(from->begin() + static_cast<std::ptrdiff_t>(a0), na,
                                                         from->begin() + static_cast<std::ptrdiff_t>(b0), nb, d, less);
        pieces.push_back({a0 + prev_i, i - prev_i, b0 + (prev_d - prev_i), (d - i) - (prev_d - prev_i), a0 + prev_d});
        prev_d = d, prev_i = i;
      }
      next.push_back(end);
    }
    ParallelFor(threads, pieces.size(), 1, [&](size_t k0, size_t k1) {
      for (size_t k = k0; k < k1; ++k) {
        const Piece& q = pieces[k];
        auto a = std::make_move_iterator(from->begin() + static_cast<std::ptrdiff_t>(q.a));
        auto b = std::make_move_iterator(from->begin() + static_cast<std::ptrdiff_t>(q.b));
        std::merge(a, a + static_cast<std::ptrdiff_t>(q.na), b, b + static_cast<std::ptrdiff_t>(q.nb),
                   to->begin() + static_cast<std::ptrdiff_t>(q.out), less);
      }
    });
    runs = std::move(next);
    std::swap(from, to);
  }
  if (from != &v) v = std::move(*from);
}

template <typename T, typename A, typename Less>
void ParallelSort(int threads, std::vector<T, A>& v, Less less, size_t min_chunk = size_t{1} << 14) {
  std::vector<size_t> runs = RangeBounds(threads, v.size(), min_chunk);
  if (runs.size() <= 2) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  ParallelFor(threads, runs.size() - 1, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      std::sort(v.begin() + static_cast<std::ptrdiff_t>(runs[k]), v.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                less);
  });
  ParallelMergeRuns(threads, v, std::move(runs), less, min_chunk);
}

}  // namespace overlapscope::base
