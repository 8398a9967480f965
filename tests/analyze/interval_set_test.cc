#include "analyze/interval_set.h"

#include "gtest/gtest.h"

namespace overlapscope::analyze {
namespace {

using V = std::vector<Interval>;

TEST(IntervalSet, MergesNestedTouchingAndDropsEmpty) {
  // [0,100) contains [20,30); [100,120) touches it; [130,130) is empty; [125,140) stands apart.
  IntervalSet s = IntervalSet::FromUnsorted({{100, 120}, {20, 30}, {0, 100}, {130, 130}, {125, 140}});
  EXPECT_EQ(s.intervals(), (V{{0, 120}, {125, 140}}));
  EXPECT_EQ(s.Length(), 120 + 15);
}

TEST(IntervalSet, UnionIntersectSubtract) {
  IntervalSet a = IntervalSet::FromUnsorted({{0, 100}, {150, 250}});
  IntervalSet b = IntervalSet::FromUnsorted({{50, 200}, {300, 310}});
  EXPECT_EQ(a.Union(b).intervals(), (V{{0, 250}, {300, 310}}));
  // a ∩ b = [50,100) + [150,200) = 100 ns.
  EXPECT_EQ(a.Intersect(b).intervals(), (V{{50, 100}, {150, 200}}));
  EXPECT_EQ(a.IntersectLength(b), 100);
  // b \ a = [100,150) + [300,310); a \ b = [0,50) + [200,250).
  EXPECT_EQ(b.Subtract(a).intervals(), (V{{100, 150}, {300, 310}}));
  EXPECT_EQ(a.Subtract(b).intervals(), (V{{0, 50}, {200, 250}}));
}

TEST(IntervalSet, SubtractOneIntervalSpanningSeveral) {
  // One long subtrahend covering the end of the first and the start of the second interval.
  IntervalSet a = IntervalSet::FromUnsorted({{0, 10}, {20, 30}, {40, 50}});
  IntervalSet b = IntervalSet::FromUnsorted({{5, 25}, {45, 100}});
  EXPECT_EQ(a.Subtract(b).intervals(), (V{{0, 5}, {25, 30}, {40, 45}}));
  EXPECT_EQ(a.Subtract(IntervalSet()).intervals(), a.intervals());
  EXPECT_TRUE(IntervalSet().Subtract(a).empty());
}

TEST(IntervalSet, CoveredInIntersectsClip) {
  IntervalSet a = IntervalSet::FromUnsorted({{0, 10}, {20, 30}});
  EXPECT_EQ(a.CoveredIn(5, 25), 5 + 5);
  EXPECT_EQ(a.CoveredIn(10, 20), 0);
  EXPECT_TRUE(a.Intersects(9, 11));
  EXPECT_FALSE(a.Intersects(10, 20));  // touching is not intersecting
  EXPECT_FALSE(a.Intersects(5, 5));    // empty query
  EXPECT_EQ(a.Clip(5, 25).intervals(), (V{{5, 10}, {20, 25}}));
}

}  // namespace
}  // namespace overlapscope::analyze
