// all-to-all on the local GPUs (label gpu): every all-to-all is validated on the device; the
// async mode should beat sync, and the analysis must find hidden communication only in async.
#include "workload_util.h"
#include "workloads/all_to_all.h"

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadAllToAll, AsyncBeatsSyncAndOnlyAsyncHidesCommunication) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::AllToAllOptions o;  // 4 layers of 8192x8192x2048 fp16, 128 MiB resharded per layer
  o.run.iters = 10;
  o.run.warmup = 3;
  Collector c;
  auto r = workloads::RunAllToAll(o, c.Hooks(3));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  std::printf("%s\n", r->table.c_str());
  ASSERT_GT(r->Get("sync_ms"), 0);
  ASSERT_GT(r->Get("async_ms"), 0);
  EXPECT_LT(r->Get("async_ms"), r->Get("sync_ms"));
  ASSERT_EQ(c.modes.count("sync"), 1u);
  ASSERT_EQ(c.modes.count("async"), 1u);
  EXPECT_GT(CommNs(c.modes["sync"].analysis), 0);
  EXPECT_EQ(HiddenCommNs(c.modes["sync"].analysis), 0);
  EXPECT_GT(HiddenCommNs(c.modes["async"].analysis), 0);
}

}  // namespace
}  // namespace overlapscope::workloads_test
