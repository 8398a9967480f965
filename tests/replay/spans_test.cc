// MeetsCursor (analyze/replay/spans.h): the contention scan's forward walk over merged spans
// answers every query as a fresh binary search would, in rising order and after a step back.
#include "analyze/replay/spans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace overlapscope::analyze::replay {
namespace {

// The search MeetsCursor replaces: the first span ending after lo, meeting [lo, hi).
bool MeetsBySearch(const std::vector<Span>& u, int64_t lo, int64_t hi) {
  auto it = std::upper_bound(u.begin(), u.end(), lo, [](int64_t x, const Span& s) { return x < s.second; });
  return it != u.end() && it->first <= std::max(lo, hi - 1);
}

TEST(MeetsCursor, AnswersAsTheSearchInRisingOrder) {
  // Spans [10, 20), [30, 40), [40, 50) merge into [10, 20), [30, 50).
  const std::vector<Span> u = MergeSpans({{30, 40}, {10, 20}, {40, 50}});
  ASSERT_EQ(u, (std::vector<Span>{{10, 20}, {30, 50}}));
  MeetsCursor c(u);
  EXPECT_FALSE(c.Meets(0, 10));   // ends where the first span starts
  EXPECT_TRUE(c.Meets(5, 11));    // overlaps its first nanosecond
  EXPECT_TRUE(c.Meets(15, 15));   // an instant inside
  EXPECT_FALSE(c.Meets(20, 30));  // the gap between them, exactly
  EXPECT_TRUE(c.Meets(45, 60));
  EXPECT_FALSE(c.Meets(50, 70));  // after the last span
  EXPECT_FALSE(c.Meets(80, 90));
}

TEST(MeetsCursor, AStepBackSearchesAgain) {
  const std::vector<Span> u = MergeSpans({{10, 20}, {30, 50}, {70, 80}});
  MeetsCursor c(u);
  // Queries out of order (the predicted starts of a stream need not rise): every answer is the
  // search's.
  const std::vector<Span> q = {{75, 76}, {12, 13}, {60, 65}, {0, 5}, {49, 49}, {20, 30}, {79, 100}, {31, 31}};
  for (const Span& x : q) EXPECT_EQ(c.Meets(x.first, x.second), MeetsBySearch(u, x.first, x.second)) << x.first;
}

TEST(MeetsCursor, NoSpansMeetsNothing) {
  const std::vector<Span> none;
  MeetsCursor c(none);
  EXPECT_FALSE(c.Meets(0, 100));
  EXPECT_FALSE(c.Meets(-5, -5));
}

}  // namespace
}  // namespace overlapscope::analyze::replay
