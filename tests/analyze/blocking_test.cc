#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze {
namespace {

using model::MemcpyKind;
using model::MemoryKind;
using model::SyncKind;
using testing::Synth;

AnalysisResult Analyze(const model::Trace& t, AnalyzeOptions o = {}) {
  auto r = AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

TEST(Blocking, StreamSyncIsBlockedEventQueryIsNot) {
  // gemm [500,1550) on stream 7 launched at [0,10). cudaStreamSynchronize [1000,1600):
  // released by gemm (last to end on stream 7 before 1600); device busy [1000,1550) = 550,
  // idle 50. A watchdog thread's cudaEventQuery [1100,1102) has an "Event Sync" record: it
  // does not block. Main thread span: [0,1600) -> blocked_share = 600/1600.
  Synth s;
  s.Kernel("gemm", 7, 500, 1550, 0);
  int64_t c = s.Api("cudaStreamSynchronize", 1000, 1600);
  s.SyncRecord(SyncKind::kStreamSync, 1001, 1599, c, 7);
  model::ThreadId watchdog = s.Thread(2);
  int64_t q = s.Api("cudaEventQuery", 1100, 1102, watchdog);
  s.SyncRecord(SyncKind::kEventSync, 1100, 1101, q);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.blocking.intervals.size(), 1u);
  const BlockedInterval& b = r.blocking.intervals[0];
  EXPECT_EQ(b.reason, BlockReason::kStreamSync);
  EXPECT_EQ(b.duration_ns(), 600);
  ASSERT_TRUE(b.released_by.has_value());
  EXPECT_EQ(b.released_by->kind, model::GpuKind::kKernel);
  EXPECT_EQ(b.device_busy_ns, 550);
  EXPECT_EQ(b.device_idle_ns, 50);
  EXPECT_NE(b.sync, model::kNone);
  EXPECT_EQ(r.blocking.nonblocking_sync_records, 1);
  EXPECT_EQ(r.blocking.sync_records_without_call, 0);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].blocked_ns, 600);
  EXPECT_DOUBLE_EQ(*r.ranks[0].blocked_share, 600.0 / 1600.0);
}

TEST(Blocking, PageableVersusPinnedCopies) {
  // cudaMemcpyAsync from pageable memory [0,300): blocks. From pinned [400,410): does not.
  // Synchronous cudaMemcpy DtoD [500,520): no host wait. Synchronous cudaMemcpy DtoH [600,700): blocks.
  Synth s;
  s.Memcpy("cudaMemcpyAsync", 0, 300, 7, 100, 290, MemcpyKind::kHtoD, MemoryKind::kPageable, MemoryKind::kDevice);
  s.Memcpy("cudaMemcpyAsync", 400, 410, 7, 420, 450, MemcpyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice);
  s.Memcpy("cudaMemcpy", 500, 520, 7, 505, 515, MemcpyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice);
  s.Memcpy("cudaMemcpy", 600, 700, 7, 610, 690, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable);
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.blocking.intervals.size(), 2u);
  EXPECT_EQ(r.blocking.intervals[0].reason, BlockReason::kPageableCopy);
  EXPECT_EQ(r.blocking.intervals[1].reason, BlockReason::kSyncMemcpy);
  EXPECT_EQ(r.sync.Count("pageable-async-copy"), 1);
  EXPECT_EQ(r.sync.CostNs("pageable-async-copy"), 300);
}

TEST(Blocking, SyncRecordWithoutCall) {
  // A stream sync record with a thread but no API call in the trace blocks; an event sync
  // record without call does not (could be a query). Both are counted.
  Synth s;
  s.Kernel("gemm", 7, 0, 100, 0);
  s.SyncRecord(SyncKind::kStreamSync, 50, 120, 999, 7, s.thread());
  s.SyncRecord(SyncKind::kEventSync, 200, 220, 998, -1, s.thread());
  auto r = Analyze(s.Finish());
  EXPECT_EQ(r.blocking.sync_records_without_call, 2);
  ASSERT_EQ(r.blocking.intervals.size(), 1u);
  EXPECT_EQ(r.blocking.intervals[0].reason, BlockReason::kSyncRecordOnly);
  EXPECT_EQ(r.blocking.intervals[0].duration_ns(), 70);
}

TEST(Idle, GapsAttributedByTheActivityThatEndsThem) {
  // A [1000,2000) launched at [100,110).
  // B [3000,4000) launched at [2950,2960): gap [2000,3000) launch-bound (call after gap start,
  //   thread not blocked).
  // cudaStreamSynchronize [3500,4010); C [4100,5000) launched at [4020,4030): gap [4000,4100)
  //   host-blocked (thread blocked in [4000,4010)).
  // D [8000,8500) launched at [4040,4050): gap [5000,8000) dependency (launched before the gap).
  // E [9000,9100) without launch call: gap [8500,9000) unknown.
  Synth s;
  s.Kernel("A", 7, 1000, 2000, 100);
  s.Kernel("B", 7, 3000, 4000, 2950);
  s.Api("cudaStreamSynchronize", 3500, 4010);
  s.Kernel("C", 7, 4100, 5000, 4020);
  s.Kernel("D", 8, 8000, 8500, 4040);
  s.Kernel("E", 7, 9000, 9100);
  AnalyzeOptions o;
  o.min_gap_ns = 100;
  auto r = Analyze(s.Finish(), o);
  ASSERT_EQ(r.gaps.size(), 4u);
  EXPECT_EQ(r.gaps[0].cause, GapCause::kLaunchBound);
  EXPECT_EQ(r.gaps[0].duration_ns(), 1000);
  EXPECT_EQ(r.gaps[1].cause, GapCause::kHostBlocked);
  EXPECT_EQ(r.gaps[1].duration_ns(), 100);
  EXPECT_NE(r.gaps[1].blocked_interval, model::kNone);
  EXPECT_EQ(r.gaps[2].cause, GapCause::kDependency);
  EXPECT_EQ(r.gaps[2].duration_ns(), 3000);
  EXPECT_EQ(r.gaps[3].cause, GapCause::kUnknown);
  // span [1000,9100) = 8100; busy = 1000+1000+900+500+100 = 3500; idle = 4600 = all in gaps.
  ASSERT_EQ(r.idle.size(), 1u);
  EXPECT_EQ(r.idle[0].span_ns, 8100);
  EXPECT_EQ(r.idle[0].busy_ns, 3500);
  EXPECT_EQ(r.idle[0].idle_ns, 4600);
  EXPECT_EQ(r.idle[0].gap_ns, 4600);
  // With the default 5 µs minimum, no gap qualifies.
  auto r2 = Analyze([&] {
    Synth t;
    t.Kernel("A", 7, 1000, 2000, 100);
    t.Kernel("B", 7, 3000, 4000, 2950);
    return t.Finish();
  }());
  EXPECT_TRUE(r2.gaps.empty());
}

TEST(LaunchStats, DelaysPercentilesAndShortKernels) {
  // Launch calls [0,10), [100,110), [200,210), [300,360); kernels start 10 (delay 0), 130 (20),
  // 250 (40), 400 (40). HTA clips negative delays at 0: a kernel starting at 205 before its
  // call ends at 210 gives 0. Short kernels: call <= 50 µs and kernel shorter than call.
  Synth s;
  s.Kernel("k", 7, 10, 12, 0);  // gpu 2 < cpu 10: short
  s.Kernel("k", 7, 130, 200, 100);
  s.Kernel("k", 7, 250, 300, 200);
  s.Kernel("k", 7, 400, 500, 300, model::kNone, 360);
  s.Kernel("j", 8, 505, 506, 500, model::kNone, 510);  // delay 505-510 < 0 -> 0; short
  auto r = Analyze(s.Finish());
  ASSERT_EQ(r.launch.streams.size(), 2u);
  const Percentiles& p = r.launch.streams[0].launch_delay;
  EXPECT_EQ(p.count, 4);
  EXPECT_EQ(p.min_ns, 0);
  EXPECT_EQ(p.p50_ns, 20);  // nearest rank: ceil(0.5*4)=2nd of {0,20,40,40}
  EXPECT_EQ(p.max_ns, 40);
  EXPECT_EQ(r.launch.streams[1].launch_delay.max_ns, 0);
  EXPECT_EQ(r.launch.short_kernel_count, 2);
}

}  // namespace
}  // namespace overlapscope::analyze
