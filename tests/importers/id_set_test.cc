// IdSet (importers/kineto/id_set.h): the same answers as a plain set, whether an id lands in
// the bits or in the hash set, including ids that came before the bits covered them.
#include "importers/kineto/id_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>

namespace overlapscope::import {
namespace {

TEST(IdSet, DuplicatesAndLookupsAsASet) {
  IdSet s;
  EXPECT_FALSE(s.Contains(7));
  EXPECT_TRUE(s.Insert(100));  // the first id starts the bits
  EXPECT_FALSE(s.Insert(100));
  EXPECT_TRUE(s.Insert(99));  // below the first id: the hash set
  EXPECT_FALSE(s.Insert(99));
  EXPECT_TRUE(s.Insert(INT64_MAX));  // far above: the hash set
  EXPECT_FALSE(s.Insert(INT64_MAX));
  EXPECT_TRUE(s.Insert(INT64_MIN));
  EXPECT_TRUE(s.Contains(100) && s.Contains(99) && s.Contains(INT64_MAX) && s.Contains(INT64_MIN));
  EXPECT_FALSE(s.Contains(101) || s.Contains(98) || s.Contains(INT64_MAX - 1));
  EXPECT_EQ(s.size(), 4u);
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_FALSE(s.Contains(100));
}

TEST(IdSet, AnIdFirstTooFarAboveIsStillADuplicateOnceTheBitsReachIt) {
  IdSet s;
  ASSERT_TRUE(s.Insert(0));
  // 2^24 is beyond the first budget (2^23 bits + 256 per id): it goes to the hash set.
  const int64_t far = int64_t{1} << 24;
  ASSERT_TRUE(s.Insert(far));
  // Enough ids for the budget to cover `far`; the bits then grow past it.
  for (int64_t i = 1; i <= 40000; ++i) ASSERT_TRUE(s.Insert(i * 400));
  ASSERT_TRUE(s.Insert(far + 1));  // in the bits now
  EXPECT_FALSE(s.Insert(far));     // still known: a duplicate
  EXPECT_TRUE(s.Contains(far));
  EXPECT_TRUE(s.Contains(far + 1));
}

TEST(IdSet, RandomIdsAgreeWithStdSet) {
  std::mt19937_64 rng(26);
  for (int round = 0; round < 4; ++round) {
    IdSet s;
    std::set<int64_t> want;
    const int64_t base = static_cast<int64_t>(rng() % 1000000) - 500000;
    for (int i = 0; i < 20000; ++i) {
      int64_t id;
      switch (rng() % 4) {
        case 0: id = base + static_cast<int64_t>(rng() % 5000); break;      // dense, many repeats
        case 1: id = base + static_cast<int64_t>(rng() % 50000000); break;  // sparse, above
        case 2: id = base - static_cast<int64_t>(rng() % 1000); break;      // below the first
        default: id = static_cast<int64_t>(rng()); break;                   // anywhere
      }
      ASSERT_EQ(s.Insert(id), want.insert(id).second) << id;
    }
    EXPECT_EQ(s.size(), want.size());
    for (int i = 0; i < 20000; ++i) {
      const int64_t id = base + static_cast<int64_t>(rng() % 60000000) - 1000;
      ASSERT_EQ(s.Contains(id), want.count(id) == 1) << id;
    }
  }
}

TEST(IdSet, ReserveForChangesNoAnswer) {
  // Room made after the first ids (as the importer does after its first window), with factors
  // from none to far too many: the same answers as a set, before and after the bits grow.
  for (double factor : {0.0, 1.0, 1.5, 40.0, 1e4}) {
    IdSet s;
    std::set<int64_t> want;
    EXPECT_EQ(s.Insert(5), want.insert(5).second);
    s.ReserveFor(factor);  // few ids: the budget bounds the room
    for (int64_t i = 0; i < 30000; ++i) {
      const int64_t id = 5 + i * 37 % 100003;
      ASSERT_EQ(s.Insert(id), want.insert(id).second) << factor << " " << id;
      if (i == 1000) s.ReserveFor(factor);
    }
    EXPECT_EQ(s.Insert(-3), want.insert(-3).second);  // below the first id, after the room
    EXPECT_EQ(s.size(), want.size());
    for (int64_t id = -10; id < 110000; ++id) ASSERT_EQ(s.Contains(id), want.count(id) == 1) << factor << " " << id;
  }
  IdSet empty;
  empty.ReserveFor(100.0);  // nothing inserted: nothing to extrapolate
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.Contains(0));
}

TEST(IdSet, GrowsUpToTheRoomThenBeyond) {
  // Increasing ids, as Kineto writes them, with room for 1.5 times the first 1,000: the bits
  // grow to the room (not past it while it suffices), then past it; the answers stay a set's.
  IdSet s;
  std::set<int64_t> want;
  for (int64_t i = 0; i < 300000; ++i) {
    const int64_t id = 1000 + i * 3;
    ASSERT_EQ(s.Insert(id), want.insert(id).second) << id;
    if (i == 1000) s.ReserveFor(1.5);
    if (i % 7 == 0) ASSERT_FALSE(s.Insert(id)) << id;  // already there
  }
  EXPECT_EQ(s.size(), want.size());
  for (int64_t id = 990; id < 1000 + 300000 * 3 + 10; ++id) ASSERT_EQ(s.Contains(id), want.count(id) == 1) << id;
}

}  // namespace
}  // namespace overlapscope::import
