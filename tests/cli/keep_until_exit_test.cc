// The front end's results kept until the process ends (cli/keep_until_exit.h): a kept handle
// outlives its last copy only once main() turned keeping on. (The heap policy, cli/heap_policy.h,
// changes no result: the goldens and tools/threads_check.sh cover it; its effect, page faults
// and peak memory, is measured in docs/PERFORMANCE.md.)
#include "cli/keep_until_exit.h"

#include <memory>

#include "gtest/gtest.h"

namespace overlapscope::cli {
namespace {

// One test for both states: keeping cannot be turned off again (it lasts until exit).
TEST(KeepUntilExit, OffThenKeptUntilTheEnd) {
  std::weak_ptr<const int> weak;
  {
    auto state = std::make_shared<const int>(7);
    weak = state;
    KeepUntilExit(state);  // off: nothing kept
  }
  EXPECT_TRUE(weak.expired());
  KeepResultsUntilExit();
  {
    auto state = std::make_shared<const int>(8);
    weak = state;
    KeepUntilExit(state);
    KeepUntilExit(nullptr);  // ignored
  }
  ASSERT_FALSE(weak.expired());
  EXPECT_EQ(*weak.lock(), 8);
}

}  // namespace
}  // namespace overlapscope::cli
