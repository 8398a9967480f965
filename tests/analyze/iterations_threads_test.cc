// The iterations are the same at any thread count (AssignIterations' threads: the calls' and the
// activities' iterations found in ranges at once, the stream-order clamp's slots gathered, merged
// and clamped in ranges). Real traces and a synthetic one, small min_chunk so that they split.
#include <string>
#include <vector>

#include "analyze/iterations.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "synth.h"

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
      ASSERT_EQ(one.iterations.size(), n.iterations.size()) << what;
      for (size_t i = 0; i < n.iterations.size(); ++i) {
        const Iteration &x = one.iterations[i], &y = n.iterations[i];
        EXPECT_TRUE(x.index == y.index && x.number == y.number && x.name == y.name && x.process == y.process &&
                    x.thread == y.thread && x.start_ns == y.start_ns && x.end_ns == y.end_ns)
            << what << " iteration " << i;
      }
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

// Three streams, each with three runs of twenty activities without a launch call (kernels and
// memsets, tied in pairs) between launched ones, longer than the ranges: the first run predates
// the steps (before the stream's first launched activity, itself launched in the first step),
// the second is clamped to the launched activity after it, the third lies between two steps and
// takes the step of the launched activities around it; a memset tied with a launched kernel
// comes after it. The clamp's ranges (down to one slot, so that ranges' seeds come from ranges
// further away) give the one-thread assignment.
TEST(IterationsThreads, StreamClampSameAtEveryRangeSize) {
  testing::Synth s;
  for (int k = 0; k < 3; ++k) s.Range("ProfilerStep#" + std::to_string(k), 1000 + k * 2000, 2000 + k * 2000);
  auto memset = [&](int64_t native, int64_t at) {
    model::Memset m;
    m.start_ns = at, m.end_ns = at + 5, m.device = s.dev(), m.stream = s.Stream(native);
    s.builder().data().memsets.push_back(m);  // no launch call
  };
  auto unlaunched = [&](int64_t native, int64_t from) {
    for (int j = 0; j < 20; ++j) {
      const int64_t at = from + (j / 2) * 10;
      if (j % 2 == 0)
        s.Kernel("u", native, at, at + 5);
      else
        memset(native, at);
    }
  };
  for (int64_t native : {7, 8, 9}) {
    unlaunched(native, 1000);  // step 0's start, before any launched activity: none
    s.Kernel("a", native, 1200, 1205, 1000);
    memset(native, 1200);      // after the launched kernel it ties with: step 0
    unlaunched(native, 3010);  // step 1's start, the next launched in step 0: step 0
    s.Kernel("b", native, 3300, 3305, 1300);
    s.Kernel("c", native, 3400, 3405, 3400);
    unlaunched(native, 4100);  // between steps 1 and 2, launched in step 1 around: step 1
    s.Memcpy("cudaMemcpyAsync", 3500, 3505, native, 4300, 4305, model::MemcpyKind::kHtoD, model::MemoryKind::kPinned,
             model::MemoryKind::kDevice);
  }
  const model::Trace t = s.Finish();
  const IterationAssignment one = AssignIterations(t, "ProfilerStep#");
  ASSERT_EQ(one.iterations.size(), 3u);
  ASSERT_EQ(one.by_own_start, 3 * 61);
  // The one-thread clamp as described above, by start.
  auto expected = [](int64_t start) { return start < 1200 ? model::kNone : start < 4000 ? 0 : 1; };
  for (size_t i = 0; i < t.kernels().size(); ++i)
    if (t.kernel_launches()[i] == model::kNone) {
      EXPECT_EQ(one.kernel_iteration[i], expected(t.kernels()[i].start_ns)) << t.kernels()[i].start_ns;
    }
  for (size_t i = 0; i < t.memsets().size(); ++i)
    EXPECT_EQ(one.memset_iteration[i], expected(t.memsets()[i].start_ns)) << t.memsets()[i].start_ns;
  for (int threads : {2, 3, 16})
    for (size_t min_chunk : {1, 2, 3, 64}) {
      const IterationAssignment n = AssignIterations(t, "ProfilerStep#", threads, min_chunk);
      const std::string what = "threads " + std::to_string(threads) + " min_chunk " + std::to_string(min_chunk);
      EXPECT_EQ(one.kernel_iteration, n.kernel_iteration) << what;
      EXPECT_EQ(one.memcpy_iteration, n.memcpy_iteration) << what;
      EXPECT_EQ(one.memset_iteration, n.memset_iteration) << what;
      EXPECT_EQ(one.outside, n.outside) << what;
    }
}

}  // namespace
}  // namespace overlapscope::analyze
