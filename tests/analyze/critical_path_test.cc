// Critical path (analyze/critical_path.h) on hand-made traces whose paths are worked out by hand
// in the comments. Times in ns. Unless said otherwise: one rank, one host thread, stream 7, a
// `ProfilerStep#1` range delimiting the iteration (it names nothing: host time outside any other
// range is host_untraced).
#include "analyze/critical_path.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "multi_synth.h"
#include "path_fixture.h"

namespace overlapscope::analyze {
namespace {

using testing::MultiSynth;
using testing::Prepared;
using C = PathCategory;

CriticalPathResult RunPath(const model::Trace& t, bool keep = true) {
  Prepared p(t);
  CriticalPathOptions o;
  o.keep_segments = keep;
  return AnalyzeCriticalPath(t, p.in(), o);
}

// Expected composition as {category, ns} pairs; every other category must be 0.
void ExpectComposition(const PathComposition& got, std::vector<std::pair<C, int64_t>> want) {
  PathComposition w;
  for (auto [c, ns] : want) w.ns[static_cast<int>(c)] = ns;
  for (int i = 0; i < kPathCategories; ++i) EXPECT_EQ(got.ns[i], w.ns[i]) << "category " << ToString(static_cast<C>(i));
}

std::string Describe(const model::Trace& t, const std::vector<PathSegment>& segs) {
  std::string s;
  for (const PathSegment& x : segs) {
    s.append(ToString(x.category)).append("[").append(std::to_string(x.start_ns)).append(",");
    s.append(std::to_string(x.end_ns)).append(") ").append(t.str(x.name)).append("\n");
  }
  return s;
}

TEST(CriticalPath, HostBoundStep) {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 745);
  s.Launch(0, "k1", 7, 100, 115, 135);
  s.Launch(0, "k2", 7, 400, 415, 435);
  s.Launch(0, "k3", 7, 700, 715, 735);
  s.Api(0, "cudaDeviceSynchronize", 710, 740);
  model::Trace t = s.Finish();
  CriticalPathResult r = RunPath(t);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  // The step ends on the host at 745 (after the GPU's last end, 735). Backwards: host [740,745)
  // outside any op (5); blocked in the sync until k3 released it, [735,740) (5); k3 [715,735)
  // (20); k3 waited for its launch (k2 ended at 435, before the launch began at 700): launch
  // latency [700,715) (15); then the host back to the step start: the calls [400,410) and
  // [100,110) (20 of launch work), the rest untraced (700 - 20 = 680).
  // Total 5+5+20+15+20+680 = 745 = the step.
  ExpectComposition(
      ip.total,
      {{C::kHostUntraced, 685}, {C::kHostBlocked, 5}, {C::kCompute, 20}, {C::kGpuWaitHost, 15}, {C::kHostLaunch, 20}});
  EXPECT_EQ(ip.start_ns, 0);
  EXPECT_EQ(ip.end_ns, 745);
  EXPECT_EQ(ip.stop, PathStop::kReachedStart);
  EXPECT_EQ(ip.total.Total(), ip.length_ns()) << Describe(t, ip.segments);
  // k1 and k2 ran while the host was busy: not on the path.
  for (const PathSegment& x : ip.segments) {
    if (x.category == C::kCompute) {
      EXPECT_EQ(t.str(x.name), "k3");
    }
  }
  ASSERT_FALSE(ip.top.empty());
  EXPECT_EQ(ip.top[0].category, C::kHostUntraced);
  EXPECT_EQ(ip.top[0].ns, 685);
}

// An own capture without iterations: start-up (cudaSetDevice [0, 1000)) before the capture
// window, which starts at the first launch, 1100 (analyze/windows.h). Then k1 launched [1100,
// 1110) runs [1115, 1215), and a sync [1120, 1220) waits for it. Backwards from the host's end,
// 1220: blocked [1215, 1220) (5), k1 (100), launch latency [1100, 1115) (15): the window's start.
// Without the window the walk would go on into the start-up: untraced [1000, 1100) and
// cudaSetDevice (1000).
TEST(CriticalPath, WholeTraceStartsAtTheCaptureWindow) {
  MultiSynth s(1);
  s.Api(0, "cudaSetDevice", 0, 1000);
  s.Launch(0, "k1", 7, 1100, 1115, 1215);
  s.Api(0, "cudaDeviceSynchronize", 1120, 1220);
  model::Trace t = s.Finish();
  Prepared p(t);
  PathInputs in = p.in();
  std::vector<WindowFigures> w(1);
  w[0].process = 0, w[0].start_ns = 1100, w[0].end_ns = 1220;
  in.windows = w;
  CriticalPathResult r = AnalyzeCriticalPath(t, in, CriticalPathOptions{});
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  EXPECT_EQ(ip.number, -1);
  EXPECT_EQ(ip.start_ns, 1100);
  EXPECT_EQ(ip.end_ns, 1220);
  ExpectComposition(ip.total, {{C::kHostBlocked, 5}, {C::kCompute, 100}, {C::kGpuWaitHost, 15}});
  // The same trace read as recorded throughout: the start-up is on the path.
  CriticalPathResult all = AnalyzeCriticalPath(t, p.in(), CriticalPathOptions{});
  ASSERT_EQ(all.iterations.size(), 1u);
  EXPECT_EQ(all.iterations[0].start_ns, 0);
  ExpectComposition(all.iterations[0].total, {{C::kHostBlocked, 5},
                                              {C::kCompute, 100},
                                              {C::kGpuWaitHost, 15},
                                              {C::kHostUntraced, 100},
                                              {C::kHostLaunch, 1000}});
}

TEST(CriticalPath, ComputeBoundStep) {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 645);
  s.Launch(0, "k1", 7, 10, 25, 225);
  s.Launch(0, "k2", 7, 30, 225, 425);
  s.Launch(0, "k3", 7, 50, 430, 630);
  s.Api(0, "cudaStreamSynchronize", 70, 640);
  model::Trace t = s.Finish();
  CriticalPathResult r = RunPath(t);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  // Host [640,645) untraced 5; blocked [630,640) until k3 ended, 10; k3 [430,630) 200; k2 had
  // ended at 425, long after k3's launch (50): stream-bound, a 5 ns gap [425,430); k2 [225,425)
  // 200; k1 ended exactly at 225 (gap 0); k1 [25,225) 200; k1 had no predecessor on the stream:
  // its launch [10,..) -> launch latency [10,25) 15; host [0,10) untraced 10.
  ExpectComposition(
      ip.total,
      {{C::kHostUntraced, 15}, {C::kHostBlocked, 10}, {C::kCompute, 600}, {C::kGpuGap, 5}, {C::kGpuWaitHost, 15}});
  EXPECT_EQ(ip.total.Total(), 645) << Describe(t, ip.segments);
  ASSERT_EQ(ip.own.size(), 1u);  // one rank: its own path is the job path
  ExpectComposition(
      ip.own[0].composition,
      {{C::kHostUntraced, 15}, {C::kHostBlocked, 10}, {C::kCompute, 600}, {C::kGpuGap, 5}, {C::kGpuWaitHost, 15}});
}

// Two ranks: rank 1's first kernel runs 1000 ns instead of rank 0's 500, so the all-reduce that
// follows it on the same stream waits for rank 1 on both ranks.
TEST(CriticalPath, CollectiveHeldBackByOneRanksSlowKernel) {
  MultiSynth s(2);
  for (int r = 0; r < 2; ++r) {
    s.Range(r, "ProfilerStep#1", 0, 1220);
    s.Launch(r, "gemm", 7, 10, 30, r == 0 ? 530 : 1030);
    const model::CollectiveId c = s.Collective("allreduce", 0, 2);
    s.Launch(r, "ncclDevKernel_AllReduce", 7, 40, r == 0 ? 535 : 1035, 1200, c);
    s.Api(r, "cudaStreamSynchronize", 60, 1210);
  }
  model::Trace t = s.Finish();
  Prepared p(t);
  // Arrivals: rank 0 at 530 (its gemm's end), rank 1 at 1030: rank 1 is last.
  ASSERT_EQ(p.cross().instances.size(), 1u);
  EXPECT_EQ(p.cross().instances[0].last_rank, 1);
  CriticalPathOptions o;
  o.keep_segments = true;
  CriticalPathResult r = AnalyzeCriticalPath(t, p.in(), o);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  // Both steps end at 1220 on the host; the walk starts on rank 0 (the first of equals): host
  // [1210,1220) 10, blocked [1200,1210) 10, rank 0's all-reduce from the last arrival (1030) to
  // its end, 170 of comm; then to rank 1's arrival: its gemm ended at 1030 (stream-bound, gap
  // 0), gemm [30,1030) 1000; launch latency [10,30) 20; rank 1's host [0,10) 10.
  ExpectComposition(
      ip.total,
      {{C::kHostUntraced, 20}, {C::kHostBlocked, 10}, {C::kComm, 170}, {C::kCompute, 1000}, {C::kGpuWaitHost, 20}});
  EXPECT_EQ(ip.total.Total(), 1220) << Describe(t, ip.segments);
  ASSERT_EQ(ip.on_rank.size(), 2u);
  EXPECT_EQ(ip.on_rank[0].composition.Total(), 190);   // rank 0: 10 + 10 + 170
  EXPECT_EQ(ip.on_rank[1].composition.Total(), 1030);  // rank 1: 1000 + 20 + 10
  EXPECT_EQ(ip.on_rank[1].composition[C::kCompute], 1000);
  // Rank 0's own path does not cross: its all-reduce waited [535,1030) for rank 1 (495), and
  // before that it is 10+10+170, gap [530,535) 5, gemm 500, latency 20, host 10 = 1220.
  ASSERT_EQ(ip.own.size(), 2u);
  ExpectComposition(ip.own[0].composition, {{C::kHostUntraced, 20},
                                            {C::kHostBlocked, 10},
                                            {C::kComm, 170},
                                            {C::kWaitPeers, 495},
                                            {C::kGpuGap, 5},
                                            {C::kCompute, 500},
                                            {C::kGpuWaitHost, 20}});
  // Rank 1 arrived last: nothing to wait for; its all-reduce [1035,1200) is 165 of comm.
  ExpectComposition(ip.own[1].composition, {{C::kHostUntraced, 20},
                                            {C::kHostBlocked, 10},
                                            {C::kComm, 165},
                                            {C::kGpuGap, 5},
                                            {C::kCompute, 1000},
                                            {C::kGpuWaitHost, 20}});
  ASSERT_FALSE(ip.top.empty());
  EXPECT_EQ(t.str(ip.top[0].name), "gemm");
  EXPECT_EQ(ip.top[0].ns, 1000);
}

// A CUDA graph launch: three kernels share the cudaGraphLaunch's correlation id.
TEST(CriticalPath, GraphLaunch) {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 460);
  const int64_t g = s.Api(0, "cudaGraphLaunch", 100, 120);
  s.Kernel(0, "g1", 7, 130, 230, g);
  s.Kernel(0, "g2", 7, 235, 335, g);
  s.Kernel(0, "g3", 7, 340, 440, g);
  s.Api(0, "cudaStreamSynchronize", 125, 450);
  model::Trace t = s.Finish();
  CriticalPathResult r = RunPath(t);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  // Host [450,460) 10; blocked [440,450) 10; g3, g2, g1 100 each with 5 ns gaps before g3 and g2
  // (their stream predecessors ended after the graph launch began); g1 waited for the graph
  // launch [100,130) 30; host [0,100) 100.
  ExpectComposition(
      ip.total,
      {{C::kHostUntraced, 110}, {C::kHostBlocked, 10}, {C::kCompute, 300}, {C::kGpuGap, 10}, {C::kGpuWaitHost, 30}});
  EXPECT_EQ(r.counts.gpu_without_launch, 0);  // every graph kernel found its launch
  bool launch_named = false;
  for (const PathSegment& x : ip.segments)
    if (x.category == C::kGpuWaitHost) launch_named = t.str(x.name) == "cudaGraphLaunch";
  EXPECT_TRUE(launch_named) << Describe(t, ip.segments);
}

// Stream 13's kernel waits (cudaStreamWaitEvent) for an event recorded on stream 7 after k1.
TEST(CriticalPath, EventWaitAcrossStreams) {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 650);
  s.Launch(0, "k1", 7, 10, 30, 530);                             // corr 1
  const int64_t rec = s.Api(0, "cudaEventRecord", 25, 28);       // corr 2
  const int64_t wait = s.Api(0, "cudaStreamWaitEvent", 30, 33);  // corr 3
  s.StreamWait(0, 13, 7, rec, wait, 30);
  s.Launch(0, "k2", 13, 40, 535, 635);  // corr 4
  s.Api(0, "cudaDeviceSynchronize", 60, 645);
  model::Trace t = s.Finish();
  CriticalPathResult r = RunPath(t);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  // Host [645,650) 5; blocked [635,645) 10; k2 [535,635) 100; k2's launch began at 40, its
  // stream had nothing before it, but the event it waited for completed when k1 ended (530):
  // gap [530,535) 5; k1 [30,530) 500; launch latency [10,30) 20; host [0,10) 10.
  ExpectComposition(
      ip.total,
      {{C::kHostUntraced, 15}, {C::kHostBlocked, 10}, {C::kCompute, 600}, {C::kGpuGap, 5}, {C::kGpuWaitHost, 20}});
  EXPECT_EQ(r.counts.unresolved_waits, 0);
  std::vector<std::string> kernels;
  for (const PathSegment& x : ip.segments)
    if (x.category == C::kCompute) kernels.push_back(std::string(t.str(x.name)));
  EXPECT_EQ(kernels, (std::vector<std::string>{"k1", "k2"})) << Describe(t, ip.segments);
}

// Nodes that cannot be joined are counted and the walk stops there, never guesses.
TEST(CriticalPath, UnjoinableNodesAreCountedNotGuessed) {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 300);
  // k1 starts (5) before its launch call (10): a backward edge, not taken; nothing else before it.
  s.Kernel(0, "k1", 7, 5, 100, s.Api(0, "cudaLaunchKernel", 10, 20));
  s.Kernel(0, "k2", 7, 105, 200, model::kNoCorrelation);  // no launch call in the trace
  model::Trace t = s.Finish();
  CriticalPathResult r = RunPath(t);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  // The step ends on the host at 300; nothing blocks, so the host [0,300) is the path (the
  // cudaLaunchKernel [10,20) 10 of it) and the GPU never binds. The GPU's own nodes are then
  // checked through rank paths below.
  ExpectComposition(ip.total, {{C::kHostUntraced, 290}, {C::kHostLaunch, 10}});
  // A step ending on the GPU: drop the range, walk the whole trace from k2's end (200).
  MultiSynth s2(1);
  s2.Api(0, "cudaGetDevice", 0, 2);  // the trace (and the whole-trace walk's floor) starts at 0
  s2.Kernel(0, "k1", 7, 5, 100, s2.Api(0, "cudaLaunchKernel", 10, 20));
  s2.Kernel(0, "k2", 7, 105, 200, model::kNoCorrelation);
  model::Trace t2 = s2.Finish();
  CriticalPathResult r2 = RunPath(t2);
  ASSERT_EQ(r2.iterations.size(), 1u);
  const IterationPath& w = r2.iterations[0];
  EXPECT_EQ(w.number, -1);  // whole trace
  // k2 [105,200) 95, gap [100,105) 5 after k1 (k2 has no launch: counted), k1 [5,100) 95; k1's
  // launch started after k1 (backward edge, counted) and no predecessor: the walk stops at 5.
  ExpectComposition(w.total, {{C::kCompute, 190}, {C::kGpuGap, 5}});
  EXPECT_EQ(w.stop, PathStop::kNoPredecessor);
  EXPECT_EQ(w.start_ns, 5);
  EXPECT_GE(r2.counts.gpu_without_launch, 1);
  EXPECT_GE(r2.counts.backward_edges, 1);
  EXPECT_GE(r2.counts.no_predecessor_stops, 1);
}

// An all-gather kernel on its own stream, launched at 2000 with nothing before it, starts only at
// 95000, 10 us before the GEMM of stream 7 ends: the GEMM's grid (132 blocks, one per SM of an
// H100) held every SM until its last wave. Backwards from the all-gather's end: comm [95000,
// 155000) (60000); it could have started at its launch, 93 us earlier, while the GEMM filled the
// device: the path goes on through the GEMM, compute [5000, 95000) (90000); the GEMM waited for
// its launch at 1000: GPU waits for host [1000, 5000) (4000); the host before it, untraced
// [0, 1000). Total 155000. With a GEMM of 64 blocks nothing held the SMs: no compute on the path.
model::Trace HeldByGemm(int32_t gemm_blocks) {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 150'000);
  s.Launch(0, "gemm", 7, 1'000, 5'000, 105'000);
  s.builder().data().kernels.back().grid = {gemm_blocks, 1, 1};
  s.Launch(0, "ncclDevKernel_AllGather_RING_LL", 19, 2'000, 95'000, 155'000);
  s.builder().data().kernels.back().grid = {24, 1, 1};
  return s.Finish();
}

TEST(CriticalPath, KernelHeldBySmsOfAnotherStreamsFullGridGoesThroughIt) {
  const model::Trace t = HeldByGemm(132);
  const CriticalPathResult r = RunPath(t);
  ASSERT_EQ(r.iterations.size(), 1u);
  const IterationPath& ip = r.iterations[0];
  ExpectComposition(ip.total,
                    {{C::kComm, 60'000}, {C::kCompute, 90'000}, {C::kGpuWaitHost, 4'000}, {C::kHostUntraced, 1'000}});
  EXPECT_EQ(ip.total.Total(), ip.length_ns()) << Describe(t, ip.segments);
  EXPECT_EQ(r.counts.sm_holders, 2);  // on the job's path and on the rank's own path

  const model::Trace small = HeldByGemm(64);
  const CriticalPathResult r2 = RunPath(small);
  ASSERT_EQ(r2.iterations.size(), 1u);
  EXPECT_EQ(r2.iterations[0].total.ns[static_cast<int>(C::kCompute)], 0) << Describe(small, r2.iterations[0].segments);
  EXPECT_EQ(r2.counts.sm_holders, 0);
}

}  // namespace
}  // namespace overlapscope::analyze
