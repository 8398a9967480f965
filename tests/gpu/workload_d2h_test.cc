// d2h on one GPU (label gpu): deferring the wait with an event must block the host less than a
// blocking cudaMemcpy, the no-sync mode must read stale flags, and the analysis must report
// unsynchronized-d2h in the no-sync mode only.
#include "workload_util.h"
#include "workloads/d2h.h"

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadD2H, EventBlocksLessThanBlockingAndOnlyNoSyncIsUnsynchronized) {
  WORKLOAD_REQUIRE_GPUS(1);
  workloads::D2HOptions o;  // producer 2000 us, irrelevant 500 us, host work 1000 us per step
  o.run.gpus = 1;
  o.run.iters = 20;
  o.run.warmup = 3;
  Collector c;
  auto r = workloads::RunD2H(o, c.Hooks(5));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  std::printf("%s\n", r->table.c_str());
  // Expected: blocking waits ~ the whole producer (2000 us); the event mode only what is left
  // of it after 1000 us of host work plus the queue ahead of it, which is far less.
  EXPECT_LT(r->Get("nonblocking-event_blocked_us"), r->Get("blocking_blocked_us"));
  EXPECT_LT(r->Get("nonblocking-event_wall_ms"), r->Get("blocking_wall_ms"));
  EXPECT_GT(r->Get("nonblocking-nosync_stale"), 0);
  EXPECT_EQ(r->Get("blocking_stale"), 0);
  EXPECT_EQ(r->Get("nonblocking-event_stale"), 0);
  for (const char* m : {"blocking", "nonblocking-nosync", "nonblocking-event"}) ASSERT_EQ(c.modes.count(m), 1u) << m;
  EXPECT_GT(Findings(c.modes["nonblocking-nosync"].analysis, "unsynchronized-d2h"), 0);
  EXPECT_EQ(Findings(c.modes["blocking"].analysis, "unsynchronized-d2h"), 0);
  EXPECT_EQ(Findings(c.modes["nonblocking-event"].analysis, "unsynchronized-d2h"), 0);
  // The blocking copy holds back the irrelevant compute: the analysis should say so.
  EXPECT_GT(Findings(c.modes["blocking"].analysis, "blocking-d2h-before-independent-work"), 0);
}

}  // namespace
}  // namespace overlapscope::workloads_test
