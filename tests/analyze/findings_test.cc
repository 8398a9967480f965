#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze {
namespace {

using model::MemcpyKind;
using model::MemoryKind;
using model::SyncKind;
using testing::Synth;

AnalysisResult Analyze(const model::Trace& t) {
  auto r = AnalyzeAll(t, AnalyzeOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

int64_t Count(const AnalysisResult& r, FindingKind k) { return r.sync.finding_count[static_cast<int>(k)]; }

const char* kNccl = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

TEST(Findings, UnsynchronizedD2HOnlyWithoutLaterSyncInItsIteration) {
  // Step 1 [0,1000): async D2H into pinned memory, no sync afterwards -> finding.
  // Step 2 [1000,2000): async D2H, then cudaStreamSynchronize on its stream -> covered.
  // Step 3 [2000,3000): async D2H, then cudaEventSynchronize -> covered.
  // A final cudaDeviceSynchronize after the last launch (the profiler's) covers nothing.
  Synth s;
  for (int i = 0; i < 3; ++i) s.Range("ProfilerStep#" + std::to_string(i + 1), 1000 * i, 1000 * i + 1000);
  s.Memcpy("cudaMemcpyAsync", 100, 110, 7, 120, 130, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned);
  s.Memcpy("cudaMemcpyAsync", 1100, 1110, 7, 1120, 1130, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned);
  int64_t c = s.Api("cudaStreamSynchronize", 1200, 1300);
  s.SyncRecord(SyncKind::kStreamSync, 1200, 1300, c, 7);
  s.Memcpy("cudaMemcpyAsync", 2100, 2110, 7, 2120, 2130, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned);
  s.Api("cudaEventSynchronize", 2500, 2600);
  s.Api("cudaDeviceSynchronize", 3100, 3200);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(Count(r, FindingKind::kUnsynchronizedD2H), 1);
  const Finding* f = nullptr;
  for (const Finding& x : r.sync.findings)
    if (x.kind == FindingKind::kUnsynchronizedD2H) f = &x;
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->time_ns, 100);
  EXPECT_EQ(f->iteration, 0);
  EXPECT_FALSE(f->advice.empty());
  // The final device sync is trailing: no device-wide-sync-in-loop either.
  EXPECT_EQ(Count(r, FindingKind::kDeviceWideSyncInLoop), 0);
}

TEST(Findings, BlockingD2HBeforeIndependentWork) {
  // Step 1: D2H copy, stream sync (blocked 300), then two more kernels launched in the step
  // -> finding with cost 300. Step 2: D2H copy and stream sync at the end -> none.
  Synth s;
  s.Range("ProfilerStep#1", 0, 1000);
  s.Range("ProfilerStep#2", 1000, 2000);
  s.Memcpy("cudaMemcpyAsync", 100, 110, 7, 120, 400, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned);
  s.Api("cudaStreamSynchronize", 110, 410);
  s.Kernel("gemm", 7, 450, 600, 420);
  s.Kernel("gemm", 7, 600, 750, 430);
  s.Kernel("gemm", 7, 1050, 1200, 1010);
  s.Memcpy("cudaMemcpyAsync", 1020, 1030, 7, 1200, 1210, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPinned);
  s.Api("cudaStreamSynchronize", 1030, 1220);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(Count(r, FindingKind::kBlockingD2HBeforeIndependentWork), 1);
  EXPECT_EQ(r.sync.finding_cost_ns[static_cast<int>(FindingKind::kBlockingD2HBeforeIndependentWork)], 300);
  EXPECT_EQ(Count(r, FindingKind::kUnsynchronizedD2H), 0);
}

TEST(Findings, CollectiveOnComputeStream) {
  // Device A: nccl on the compute stream 7 -> finding, cost = its exposed time 100.
  Synth a;
  a.Kernel("gemm", 7, 0, 100, 0);
  a.Kernel(kNccl, 7, 100, 200, 5);
  auto r = Analyze(a.Finish());
  EXPECT_EQ(Count(r, FindingKind::kCollectiveOnComputeStream), 1);
  EXPECT_EQ(r.sync.finding_cost_ns[static_cast<int>(FindingKind::kCollectiveOnComputeStream)], 100);
  // Device B: nccl on its own stream 17 -> none.
  Synth b;
  b.Kernel("gemm", 7, 0, 100, 0);
  b.Kernel(kNccl, 17, 50, 200, 5);
  r = Analyze(b.Finish());
  EXPECT_EQ(Count(r, FindingKind::kCollectiveOnComputeStream), 0);
}

TEST(Findings, DeviceWideSyncInEveryIteration) {
  // cudaDeviceSynchronize in both steps -> 2 findings; not when only one step has one.
  for (bool both : {true, false}) {
    Synth s;
    s.Range("ProfilerStep#1", 0, 1000);
    s.Range("ProfilerStep#2", 1000, 2000);
    s.Kernel("gemm", 7, 10, 300, 0);
    s.Api("cudaDeviceSynchronize", 20, 310);
    s.Kernel("gemm", 7, 1010, 1300, 1000);
    if (both) s.Api("cudaDeviceSynchronize", 1020, 1310);
    s.Kernel("gemm", 7, 1400, 1500, 1350);  // launched after: the syncs are not trailing
    auto r = Analyze(s.Finish());
    EXPECT_EQ(Count(r, FindingKind::kDeviceWideSyncInLoop), both ? 2 : 0);
  }
}

TEST(Findings, SyncPointsListWaitEdgesAndAllocations) {
  Synth s;
  s.Kernel("gemm", 7, 0, 100, 0);
  int64_t c = s.Api("cudaStreamWaitEvent", 20, 25);
  s.SyncRecord(SyncKind::kStreamWaitEvent, 100, 101, c, 17);
  s.builder().data().syncs.back().wait_on_stream = s.Stream(7);
  s.Api("cudaMalloc", 200, 300);
  s.Api("cudaFree", 400, 450);
  s.Api("cudaMallocAsync", 500, 510);  // stream-ordered: not a sync point
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.sync.points.size(), 3u);
  EXPECT_EQ(r.sync.points[0].kind, SyncPointKind::kStreamWaitEvent);
  EXPECT_EQ(r.sync.points[0].thread, s.thread());
  EXPECT_EQ(r.sync.points[1].kind, SyncPointKind::kMalloc);
  EXPECT_EQ(r.sync.points[1].blocked_ns, 100);
  EXPECT_EQ(r.sync.points[2].kind, SyncPointKind::kFree);
}

}  // namespace
}  // namespace overlapscope::analyze
