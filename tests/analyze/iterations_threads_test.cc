// The iterations are the same at any thread count (AssignIterations' threads: the calls' and the
// activities' iterations found in ranges at once). Real traces, min_chunk 1 so that they split.
#include <string>
#include <vector>

#include "analyze/iterations.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

TEST(IterationsThreads, SameAssignmentAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w4_default/dtensor_a2a_compiled",
                        "torch_diag/w2_default/mm_ag_overlap", "kineto/a2a_async"};
  int64_t iterations = 0, by_launch = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    auto t = import::ImportTraces({path + "/rank0.json.gz", path + "/rank1.json.gz"});
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    const IterationAssignment one = AssignIterations(*t, "ProfilerStep#");
    iterations += static_cast<int64_t>(one.iterations.size());
    by_launch += one.by_launch_call;
    for (int threads : {2, 3, 16}) {
      const IterationAssignment n = AssignIterations(*t, "ProfilerStep#", threads, 1);
      const std::string what = std::string(dir) + " threads " + std::to_string(threads);
      EXPECT_EQ(one.iterations.size(), n.iterations.size()) << what;
      EXPECT_EQ(one.kernel_iteration, n.kernel_iteration) << what;
      EXPECT_EQ(one.memcpy_iteration, n.memcpy_iteration) << what;
      EXPECT_EQ(one.memset_iteration, n.memset_iteration) << what;
      EXPECT_EQ(one.by_launch_call, n.by_launch_call) << what;
      EXPECT_EQ(one.by_own_start, n.by_own_start) << what;
      EXPECT_EQ(one.outside, n.outside) << what;
    }
  }
  // The traces have steps, and activities placed through their launch calls' iterations.
  EXPECT_GT(iterations, 4);
  EXPECT_GT(by_launch, 100);
}

}  // namespace
}  // namespace overlapscope::analyze
