// base::ParallelAppend (base/run_all.h): the ranges' outputs appended in range order give the
// one-thread vector at every thread count and chunk size, including the edges (n = 0, n smaller
// than the thread count, ranges that emit nothing or several elements).
#include "base/run_all.h"

#include <algorithm>
#include <cstddef>
#include <functional>
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

// The *On forms run their ranges through the runner given (here one that runs the tasks in
// reverse order on this thread, and counts its calls): the same ranges, the same vector.
TEST(ParallelAppend, OnARunnerOfItsOwn) {
  const size_t n = 1000;
  int calls = 0;
  auto reverse = [&calls](const std::vector<std::function<void()>>& tasks) {
    ++calls;
    for (size_t k = tasks.size(); k-- > 0;) tasks[k]();
  };
  for (int threads : {1, 2, 3, 16}) {
    calls = 0;
    std::vector<size_t> got;
    ParallelAppendOn(reverse, threads, n, 1, &got, [](size_t lo, size_t hi, std::vector<size_t>* out) {
      for (size_t i = lo; i < hi; ++i) out->push_back(i);
    });
    ASSERT_EQ(got.size(), n) << threads;
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(got[i], i);
    EXPECT_EQ(calls, threads > 1 ? 1 : 0) << threads;  // one thread: fn(0, n) directly
    std::vector<int> seen(n, 0);
    ParallelForOn(reverse, threads, n, 1, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) ++seen[i];
    });
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<ptrdiff_t>(n)) << threads;
  }
}

}  // namespace
}  // namespace overlapscope::base
