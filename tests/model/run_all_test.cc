// base::ParallelAppend (base/run_all.h): the ranges' outputs appended in range order give the
// one-thread vector at every thread count and chunk size, including the edges (n = 0, n smaller
// than the thread count, ranges that emit nothing or several elements).
#include "base/run_all.h"

#include <cstddef>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::base {
namespace {

// Element i emits i % 3 copies of "i" (0, 1 or 2 elements): uneven output per range.
void Emit(size_t lo, size_t hi, std::vector<std::string>* out) {
  for (size_t i = lo; i < hi; ++i)
    for (size_t k = 0; k < i % 3; ++k) out->push_back(std::to_string(i));
}

TEST(ParallelAppend, SameVectorAtEveryThreadCount) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{17}, size_t{1000}}) {
    std::vector<std::string> one;
    Emit(0, n, &one);
    for (int threads : {1, 2, 3, 4, 7, 16, 64})
      for (size_t min_chunk : {size_t{0}, size_t{1}, size_t{3}, size_t{100}}) {
        std::vector<std::string> got = {"before"};
        ParallelAppend(threads, n, min_chunk, &got, Emit);
        ASSERT_FALSE(got.empty());
        EXPECT_EQ(got.front(), "before");
        got.erase(got.begin());
        EXPECT_EQ(got, one) << "n " << n << " threads " << threads << " min_chunk " << min_chunk;
      }
  }
}

TEST(ParallelAppend, EveryElementVisitedOnce) {
  const size_t n = 4099;
  std::vector<int> seen(n, 0);
  std::vector<size_t> got;
  ParallelAppend(16, n, 1, &got, [&](size_t lo, size_t hi, std::vector<size_t>* out) {
    for (size_t i = lo; i < hi; ++i) {
      ++seen[i];
      out->push_back(i);
    }
  });
  ASSERT_EQ(got.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i], i);
    EXPECT_EQ(seen[i], 1) << i;
  }
}

}  // namespace
}  // namespace overlapscope::base
