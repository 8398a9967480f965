// base/parallel_sort.h: the same order as std::sort for unique keys at 1, 2, 3, 5 and 16
// threads, with runs small enough that every round merges several pieces and odd run counts
// leave a run without a partner; sorted and reversed inputs, empty and one-element vectors.
#include "base/parallel_sort.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::base {
namespace {

// Unique (key, position) pairs with many equal keys: the order is decided by both.
std::vector<std::pair<int64_t, uint32_t>> Input(size_t n, int shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::pair<int64_t, uint32_t>> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = {static_cast<int64_t>(rng() % (n / 4 + 1)), static_cast<uint32_t>(i)};
  if (shape == 1) std::sort(v.begin(), v.end());
  if (shape == 2) std::sort(v.rbegin(), v.rend());
  return v;
}

TEST(ParallelSort, SameOrderAsStdSortAtEveryThreadCount) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{4099}})
    for (int shape : {0, 1, 2}) {
      const auto input = Input(n, shape, static_cast<uint32_t>(n * 3 + shape));
      auto want = input;
      std::sort(want.begin(), want.end());
      for (int threads : {1, 2, 3, 5, 16})
        for (size_t min_chunk : {size_t{1}, size_t{64}}) {
          auto got = input;
          ParallelSort(threads, got, std::less<std::pair<int64_t, uint32_t>>(), min_chunk);
          EXPECT_EQ(want, got) << "n " << n << " shape " << shape << " threads " << threads << " chunk " << min_chunk;
        }
    }
}

// Runs merged by the first member only (many equal keys): the bytes of serial pairwise rounds
// of std::merge, whose ties keep the earlier run's element first.
TEST(ParallelMergeRuns, SameBytesAsSerialPairwiseMerges) {
  auto by_key = [](const std::pair<int64_t, uint32_t>& a, const std::pair<int64_t, uint32_t>& b) {
    return a.first < b.first;
  };
  for (size_t runs_n : {size_t{2}, size_t{3}, size_t{5}, size_t{8}}) {
    auto v = Input(5000, 0, static_cast<uint32_t>(runs_n));
    std::vector<size_t> runs;
    for (size_t k = 0; k <= runs_n; ++k) runs.push_back(v.size() * k * k / (runs_n * runs_n));  // unequal runs
    for (size_t k = 0; k < runs_n; ++k)
      std::stable_sort(v.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                       v.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]), by_key);
    auto want = v;
    {
      std::vector<size_t> r = runs;
      std::vector<std::pair<int64_t, uint32_t>> buf(want.size());
      while (r.size() > 2) {
        std::vector<size_t> next = {0};
        for (size_t m = 0; m + 1 < r.size(); m += 2) {
          const size_t lo = r[m], mid = r[m + 1], hi = m + 2 < r.size() ? r[m + 2] : mid;
          std::merge(want.begin() + static_cast<std::ptrdiff_t>(lo), want.begin() + static_cast<std::ptrdiff_t>(mid),
                     want.begin() + static_cast<std::ptrdiff_t>(mid), want.begin() + static_cast<std::ptrdiff_t>(hi),
                     buf.begin() + static_cast<std::ptrdiff_t>(lo), by_key);
          next.push_back(hi);
        }
        r = std::move(next);
        want.swap(buf);
      }
    }
    for (int threads : {1, 2, 3, 16}) {
      auto got = v;
      ParallelMergeRuns(threads, got, runs, by_key, 1);
      EXPECT_EQ(want, got) << "runs " << runs_n << " threads " << threads;
    }
  }
}

TEST(ParallelSort, ByAGivenOrder) {
  auto v = Input(3001, 0, 7);
  auto want = v;
  auto greater = [](const auto& a, const auto& b) { return a > b; };
  std::sort(want.begin(), want.end(), greater);
  ParallelSort(3, v, greater, 100);
  EXPECT_EQ(want, v);
}

}  // namespace
}  // namespace overlapscope::base
