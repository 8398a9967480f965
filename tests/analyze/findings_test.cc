#include "analyze/analysis.h"
#include "analyze/findings/finding_rule.h"
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

int64_t Count(const AnalysisResult& r, std::string_view kind) { return r.sync.Count(kind); }

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
  ASSERT_EQ(Count(r, "unsynchronized-d2h"), 1);
  const Finding* f = nullptr;
  for (const Finding& x : r.sync.findings)
    if (x.kind == "unsynchronized-d2h") f = &x;
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->time_ns, 100);
  EXPECT_EQ(f->iteration, 0);
  EXPECT_FALSE(f->advice.empty());
  // The final device sync is trailing: no device-wide-sync-in-loop either.
  EXPECT_EQ(Count(r, "device-wide-sync-in-loop"), 0);
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
  ASSERT_EQ(Count(r, "blocking-d2h-before-independent-work"), 1);
  EXPECT_EQ(r.sync.CostNs("blocking-d2h-before-independent-work"), 300);
  EXPECT_EQ(Count(r, "unsynchronized-d2h"), 0);
}

TEST(Findings, CollectiveOnComputeStream) {
  // Device A: nccl on the compute stream 7 -> finding, cost = its exposed time 100.
  Synth a;
  a.Kernel("gemm", 7, 0, 100, 0);
  a.Kernel(kNccl, 7, 100, 200, 5);
  auto r = Analyze(a.Finish());
  EXPECT_EQ(Count(r, "collective-on-compute-stream"), 1);
  EXPECT_EQ(r.sync.CostNs("collective-on-compute-stream"), 100);
  // Device B: nccl on its own stream 17 -> none.
  Synth b;
  b.Kernel("gemm", 7, 0, 100, 0);
  b.Kernel(kNccl, 17, 50, 200, 5);
  r = Analyze(b.Finish());
  EXPECT_EQ(Count(r, "collective-on-compute-stream"), 0);
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
    EXPECT_EQ(Count(r, "device-wide-sync-in-loop"), both ? 2 : 0);
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

// The registry holds one rule per file, in file-name order, which is the report order of the
// kinds (reports print every kind in this order, also with a count of 0).
TEST(FindingRules, RegistryIsTheReportOrder) {
  const std::vector<std::string_view> want = {
      "pageable-async-copy",          "unsynchronized-d2h",       "blocking-d2h-before-independent-work",
      "collective-on-compute-stream", "device-wide-sync-in-loop", "collective-waited-at-once",
      "collective-starved-of-sms"};
  EXPECT_EQ(FindingKinds(), want);
  ASSERT_EQ(findings::Rules().size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(FindingKindIndex(findings::Rules()[k]->kind()), int32_t(k));
  EXPECT_EQ(FindingKindIndex("no-such-finding"), -1);
}

// A rule runs on its own over FindingInputs and says which blocked interval its finding is about
// (the sync point that carries it).
TEST(FindingRules, OneRuleAloneOnItsInputs) {
  Synth s;
  // cudaMemcpyAsync from pageable memory [0, 300): the host blocked for the whole call.
  s.Memcpy("cudaMemcpyAsync", 0, 300, 7, 100, 290, model::MemcpyKind::kHtoD, model::MemoryKind::kPageable,
           model::MemoryKind::kDevice);
  model::Trace t = s.Finish();
  auto r = Analyze(t);
  ASSERT_EQ(r.blocking.intervals.size(), 1u);
  std::vector<std::vector<int32_t>> launches(t.threads().size());
  std::vector<int64_t> compute(t.streams().size(), 0);
  const std::vector<SyncPoint> points = {findings::SyncPointOfBlocked(t, r.blocking.intervals[0])};
  EXPECT_EQ(points[0].kind, SyncPointKind::kPageableCopy);
  findings::FindingInputs in{t, r.iterations, r.blocking, r.overlap, launches, compute, points, {}};
  in.blocked_by_thread.assign(t.threads().size(), {});
  const findings::FindingRule* rule = findings::Rules()[FindingKindIndex("pageable-async-copy")];
  std::vector<findings::Emitted> out;
  rule->Find(in, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].finding.kind, "pageable-async-copy");
  EXPECT_EQ(out[0].blocked_interval, 0);
  EXPECT_EQ(out[0].finding.cost_ns, 300);
  EXPECT_NE(out[0].finding.message.find("copies pageable host memory"), std::string::npos) << out[0].finding.message;
}

}  // namespace
}  // namespace overlapscope::analyze
