// Handoff (analyze/replay/both.h): buffers one thread makes for another.
#include "analyze/replay/both.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <vector>

namespace overlapscope::analyze::replay {
namespace {

TEST(Handoff, TakerGetsWhatWasOfferedOnce) {
  Handoff<std::vector<int>> h;
  h.Offer([] { return std::vector<int>{1, 2, 3}; });
  std::optional<std::vector<int>> got = h.Take();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(h.Take().has_value());  // a second call: nothing left (not an error)
}

TEST(Handoff, TakerFirstMakesItsOwnAndTheOfferIsNotMade) {
  Handoff<std::vector<int>> h;
  EXPECT_FALSE(h.Take().has_value());
  bool made = false;
  h.Offer([&] {
    made = true;
    return std::vector<int>{1};
  });
  EXPECT_FALSE(made);
  EXPECT_FALSE(h.Take().has_value());
}

TEST(Handoff, AcrossThreadsTheTakerGetsTheOfferExactlyWhenItWasMade) {
  for (int round = 0; round < 50; ++round) {
    Handoff<std::vector<int>> h;
    std::atomic<bool> made{false};
    std::optional<std::vector<int>> got;
    BothAtOnce(
        [&] {
          h.Offer([&] {
            made = true;
            return std::vector<int>(1000, 7);
          });
        },
        [&] { got = h.Take(); });
    ASSERT_EQ(got.has_value(), made.load());
    if (got.has_value()) EXPECT_EQ(*got, std::vector<int>(1000, 7));
  }
}

}  // namespace
}  // namespace overlapscope::analyze::replay
