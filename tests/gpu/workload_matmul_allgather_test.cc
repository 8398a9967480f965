// matmul-allgather on the local GPUs (label gpu): the workload validates itself, overlap must
// beat sequential, and the captured overlap mode must show communication hidden under compute.
#include "workload_util.h"
#include "workloads/matmul_allgather.h"

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadMatmulAllGather, OverlapBeatsSequentialAndValidates) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::MatmulAllGatherOptions o;  // 8192^3 fp16 GEMM, 64 MiB all-gather per rank
  o.run.iters = 10;
  o.run.warmup = 3;
  o.modes = {"sequential", "overlap"};
  Collector c;
  auto r = workloads::RunMatmulAllGather(o, c.Hooks(3));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  std::printf("%s\n", r->table.c_str());
  ASSERT_GT(r->Get("sequential_ms"), 0);
  ASSERT_GT(r->Get("overlap_ms"), 0);
  EXPECT_LT(r->Get("overlap_ms"), r->Get("sequential_ms"));
  // Sequential is at least the sum of its parts minus noise; the ideal is below both.
  EXPECT_LE(r->Get("ideal_ms"), r->Get("overlap_ms") * 1.02);
  ASSERT_EQ(c.modes.count("overlap"), 1u);
  ASSERT_EQ(c.modes.count("sequential"), 1u);
  EXPECT_GT(CommNs(c.modes["overlap"].analysis), 0);
  EXPECT_GT(HiddenCommNs(c.modes["overlap"].analysis), 0);
  // On one stream nothing can hide the all-gather.
  EXPECT_EQ(HiddenCommNs(c.modes["sequential"].analysis), 0);
}

// Copy-engine all-gather (NCCL zero-CTA policy, symmetric windows): no NCCL kernel runs, the
// data moves as cudaMemcpyBatchAsync copies. Attributed by NCCL's ncclAllGather NVTX range,
// the copies must count as communication, and most of it must hide under the GEMM.
TEST(WorkloadMatmulAllGather, CopyEngineAllGatherCountsAsCommunication) {
  WORKLOAD_REQUIRE_GPUS(2);
  workloads::MatmulAllGatherOptions o;
  o.run.iters = 10;
  o.run.warmup = 3;
  o.modes = {"overlap-ce"};
  Collector c;
  auto r = workloads::RunMatmulAllGather(o, c.Hooks(3));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& e : r->errors) ADD_FAILURE() << e;
  ASSERT_EQ(c.modes.count("overlap-ce"), 1u);
  const auto& a = c.modes["overlap-ce"].analysis;
  std::printf("overlap-ce: comm %lld ns, hidden %lld ns\n", static_cast<long long>(CommNs(a)),
              static_cast<long long>(HiddenCommNs(a)));
  EXPECT_GT(CommNs(a), 0);
  EXPECT_GT(HiddenCommNs(a), CommNs(a) / 2);
}

}  // namespace
}  // namespace overlapscope::workloads_test
