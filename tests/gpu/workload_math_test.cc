// Host-side arithmetic of the workloads (no GPU needed): METRICS.md §7 efficiency, nccl-tests
// bandwidths, the GEMM data scale and medians. Expected values computed by hand below.
#include "gtest/gtest.h"
#include "workloads/allgather.h"
#include "workloads/gemm.h"
#include "workloads/kernels.h"
#include "workloads/timing.h"
#include "workloads/workload.h"

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadMath, OverlapEfficiency) {
  // (1.668 - 1.484) / (1.668 - 1.369) = 0.184 / 0.299 = 0.615385 (2xH200 run, docs/RESULTS.md).
  auto e = workloads::OverlapEfficiency(1.668, 1.484, 1.369);
  ASSERT_TRUE(e.has_value());
  EXPECT_NEAR(*e, 0.184 / 0.299, 1e-12);
  // Perfect overlap reaches the ideal: (2 - 1.5) / (2 - 1.5) = 1.
  EXPECT_DOUBLE_EQ(*workloads::OverlapEfficiency(2.0, 1.5, 1.5), 1.0);
  // Sequential not slower than the ideal: undefined, never a division by zero.
  EXPECT_FALSE(workloads::OverlapEfficiency(1.0, 0.9, 1.2).has_value());
  EXPECT_FALSE(workloads::OverlapEfficiency(1.2, 0.9, 1.2).has_value());
  EXPECT_EQ(workloads::FormatEfficiency(0.5), "0.500");
}

TEST(WorkloadMath, NcclTestsBandwidth) {
  // 128 MiB = 134217728 bytes in 0.5 ms: 134217728 / 0.0005 s = 268.435456e9 B/s.
  EXPECT_NEAR(workloads::AlgBwGBps(134217728, 0.5), 268.435456, 1e-9);
  // busbw = algbw * (n-1)/n: n=2 -> 134.217728, n=4 -> 201.326592, n=1 -> 0.
  EXPECT_NEAR(workloads::BusBwGBps(134217728, 0.5, 2), 134.217728, 1e-9);
  EXPECT_NEAR(workloads::BusBwGBps(134217728, 0.5, 4), 201.326592, 1e-9);
  EXPECT_EQ(workloads::BusBwGBps(134217728, 0.5, 1), 0.0);
  EXPECT_EQ(workloads::AlgBwGBps(134217728, 0.0), 0.0);  // no time measured: 0, not inf
}

TEST(WorkloadMath, GemmScaleKeepsOutputsExactInFp16) {
  // Smallest e with 4k / 4^e <= 16384: k=2048 -> 8192 (e=0); k=8192 -> 32768, 8192 (e=1);
  // k=65536 -> 262144, 65536, 16384 (e=2).
  EXPECT_EQ(workloads::GemmScaleExp(2048), 0);
  EXPECT_EQ(workloads::GemmScaleExp(4096), 0);  // 16384 exactly
  EXPECT_EQ(workloads::GemmScaleExp(8192), 1);
  EXPECT_EQ(workloads::GemmScaleExp(65536), 2);
  EXPECT_EQ(workloads::DTypeBytes(workloads::DType::kF16), 2);
  EXPECT_EQ(workloads::DTypeBytes(workloads::DType::kF32), 4);
}

TEST(WorkloadMath, Median) {
  EXPECT_EQ(workloads::Median({3, 1, 2}), 2);
  EXPECT_EQ(workloads::Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(workloads::Median({}), 0);
}

}  // namespace
}  // namespace overlapscope::workloads_test

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadMath, GemmDataNames) {
  auto r = workloads::ParseGemmData("random");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, workloads::GemmData::kRandom);
  r = workloads::ParseGemmData("structured");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, workloads::GemmData::kStructured);
  EXPECT_EQ(workloads::ParseGemmData("randn").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(workloads::GemmDataName(workloads::GemmData::kStructured), "structured");
  workloads::GemmShape s;  // the default is what users run: random data
  EXPECT_EQ(s.data, workloads::GemmData::kRandom);
  EXPECT_NE(workloads::GemmDataDescription(s).find("torch.randn"), std::string::npos);
}

}  // namespace
}  // namespace overlapscope::workloads_test
