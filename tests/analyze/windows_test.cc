// Capture windows in the analyses (analyze/windows.h): GPU idle, gaps and host blocking count
// only recorded time; without a range the start-up before the first GPU activity is excluded.
// Every expected number is worked out by hand from the events written here.
#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze {
namespace {

using testing::Synth;

void Window(Synth& s, int32_t index, int64_t start, int64_t end, model::WindowTrigger trigger) {
  model::CaptureWindow w;
  w.process = s.proc(), w.index = index, w.start_ns = start, w.end_ns = end, w.trigger = trigger;
  s.builder().data().windows.push_back(w);
}

// Two kernels in each of two windows, 3 µs of unrecorded time between the windows.
void TwoWindowWork(Synth& s) {
  s.Kernel("k1", 7, 1100, 1200, 1000);
  s.Kernel("k2", 7, 1400, 1500, 1300);
  s.Kernel("k3", 7, 5100, 5300, 5000);
  s.Kernel("k4", 7, 5500, 5600, 5400);
}

AnalysisResult Analyze(const model::Trace& t) {
  AnalyzeOptions o;
  o.min_gap_ns = 100;
  auto r = AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

TEST(Windows, WithoutWindowsTheWholeTraceCounts) {
  Synth s;
  TwoWindowWork(s);
  const model::Trace t = s.Finish();
  const AnalysisResult r = Analyze(t);
  EXPECT_TRUE(r.windows.empty());
  ASSERT_EQ(r.idle.size(), 1u);
  EXPECT_EQ(r.idle[0].span_ns, 4500);  // 1100 .. 5600
  EXPECT_EQ(r.idle[0].busy_ns, 500);
  EXPECT_EQ(r.idle[0].gaps, 3);  // 200, 3600, 200
  EXPECT_EQ(r.idle[0].gap_ns, 4000);
}

TEST(Windows, IdleAndGapsOnlyInsideWindows) {
  Synth s;
  TwoWindowWork(s);
  Window(s, 1, 1000, 2000, model::WindowTrigger::kCudaProfilerApi);
  Window(s, 2, 5000, 6000, model::WindowTrigger::kCudaProfilerApi);
  const model::Trace t = s.Finish();
  const AnalysisResult r = Analyze(t);
  ASSERT_EQ(r.idle.size(), 1u);
  // Window 1: busy [1100,1200) [1400,1500): span 400, busy 200; window 2: [5100,5300)
  // [5500,5600): span 500, busy 300. The 3600 ns between the windows is not idle time.
  EXPECT_EQ(r.idle[0].span_ns, 900);
  EXPECT_EQ(r.idle[0].busy_ns, 500);
  EXPECT_EQ(r.idle[0].idle_ns, 400);
  EXPECT_EQ(r.idle[0].gaps, 2);
  EXPECT_EQ(r.idle[0].gap_ns, 400);
  for (const IdleGap& g : r.gaps) EXPECT_EQ(g.duration_ns(), 200);
  ASSERT_EQ(r.windows.size(), 2u);
  EXPECT_EQ(r.windows[0].kernels, 2);
  EXPECT_EQ(r.windows[0].gpu_span_ns, 400);
  EXPECT_EQ(r.windows[0].gpu_idle_ns, 200);
  EXPECT_EQ(r.windows[0].gaps, 1);
  EXPECT_EQ(r.windows[1].gpu_busy_ns, 300);
  EXPECT_EQ(r.windows[1].start_ns, 5000);
  EXPECT_EQ(r.windows[1].end_ns, 6000);
  EXPECT_EQ(r.windows[1].startup_excluded_ns, 0);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].gpu_span_ns, 900);
  ASSERT_TRUE(r.ranks[0].gpu_idle_share.has_value());
  EXPECT_DOUBLE_EQ(*r.ranks[0].gpu_idle_share, 400.0 / 900.0);
}

TEST(Windows, WorkLaunchedInsideRunsPastTheEnd) {
  Synth s;
  s.Kernel("k1", 7, 1100, 1200, 1000);
  s.Kernel("long", 7, 1900, 2600, 1800);  // launched inside, ends after the window closed at 2000
  Window(s, 1, 1000, 2000, model::WindowTrigger::kNvtx);
  const model::Trace t = s.Finish();
  const AnalysisResult r = Analyze(t);
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].end_ns, 2600);
  EXPECT_EQ(r.windows[0].gpu_busy_ns, 800);
  EXPECT_EQ(r.windows[0].gpu_span_ns, 1500);  // 1100 .. 2600
}

TEST(Windows, StartupBeforeTheFirstKernelIsExcluded) {
  Synth s;
  // The whole program (no capture range) from CUDA init at 0. Start-up: a device-wide sync
  // [200, 900) and a stream sync before any GPU work was launched.
  s.Api("cudaDeviceSynchronize", 200, 900);
  s.Api("cudaStreamSynchronize", 910, 950);
  s.Kernel("k1", 7, 1100, 1200, 1000);
  s.Kernel("k2", 7, 1400, 1500, 1300);
  s.Api("cudaStreamSynchronize", 1310, 1500);  // waits for k2: host-blocked, counted
  s.Kernel("k3", 7, 1600, 1700, 1550);
  Window(s, 1, 0, 2000, model::WindowTrigger::kProcess);
  const model::Trace t = s.Finish();
  const AnalysisResult r = Analyze(t);
  ASSERT_EQ(r.windows.size(), 1u);
  const WindowFigures& w = r.windows[0];
  EXPECT_EQ(w.start_ns, 1000);  // k1's launch call
  EXPECT_EQ(w.startup_excluded_ns, 1000);
  EXPECT_EQ(w.end_ns, 2000);
  EXPECT_EQ(w.kernels, 3);
  // Blocking: only the sync inside the window counts (190 ns); the two start-up syncs do not.
  ASSERT_EQ(r.blocking.threads.size(), 1u);
  EXPECT_EQ(r.blocking.threads[0].blocked_ns, 190);
  // Active span from the first call inside the window (1000) to the last one's end (1560).
  EXPECT_EQ(r.blocking.threads[0].active_span_ns, 560);
  for (const BlockedInterval& b : r.blocking.intervals) EXPECT_GE(b.start_ns, 1000);
  // GPU idle starts at the first activity: span 1100 .. 1700.
  EXPECT_EQ(r.idle[0].span_ns, 600);
  EXPECT_EQ(r.idle[0].gaps, 2);  // [1200, 1400) and [1500, 1600) (exactly --min-gap long)
  EXPECT_EQ(r.idle[0].gap_ns, 300);
}

}  // namespace
}  // namespace overlapscope::analyze

namespace overlapscope::analyze {
namespace {

using testing::Synth;

// A PyTorch-like start: weight uploads (pageable copies that block the host), a long pause
// (module loading, building the model), then compute. Start-up ends at the first kernel's launch.
TEST(Windows, StartupLastsUntilTheFirstKernel) {
  Synth s;
  using MK = model::MemcpyKind;
  using MemK = model::MemoryKind;
  s.Memcpy("cudaMemcpyAsync", 100, 300, 7, 150, 250, MK::kHtoD, MemK::kPageable, MemK::kDevice);
  s.Memcpy("cudaMemcpyAsync", 400, 600, 7, 450, 550, MK::kHtoD, MemK::kPageable, MemK::kDevice);
  s.Api("cudaStreamSynchronize", 700, 710);   // a sync of nothing during the pause
  s.Kernel("first", 7, 10100, 10200, 10000);  // compute begins; gap [550, 10100) is start-up
  s.Kernel("second", 7, 10400, 10500, 10300);
  model::CaptureWindow w;
  w.process = s.proc(), w.index = 1, w.start_ns = 0, w.end_ns = 11000;
  s.builder().data().windows.push_back(w);
  const model::Trace t = s.Finish();
  AnalyzeOptions o;
  o.min_gap_ns = 100;
  auto r = AnalyzeAll(t, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->windows.size(), 1u);
  EXPECT_EQ(r->windows[0].start_ns, 10000);
  EXPECT_EQ(r->windows[0].startup_excluded_ns, 10000);
  EXPECT_EQ(r->windows[0].kernels, 2);
  EXPECT_EQ(r->windows[0].memcpys, 0);
  // GPU idle from the first kernel: span 10100 .. 10500, one gap of 200 ns, launch-bound.
  EXPECT_EQ(r->idle[0].span_ns, 400);
  ASSERT_EQ(r->gaps.size(), 1u);
  EXPECT_EQ(r->gaps[0].cause, GapCause::kLaunchBound);
  for (const IdleGap& g : r->gaps) EXPECT_NE(g.cause, GapCause::kHostBlocked);
  // The uploads' blocking is start-up: not counted.
  EXPECT_EQ(r->ranks[0].blocked_ns, 0);
}

}  // namespace
}  // namespace overlapscope::analyze
