// The forward simulation on hand-built graphs (answers computed by hand) and change parsing.
#include "analyze/replay/sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "analyze/replay/replay.h"
#include "analyze/replay/sim_plan.h"
#include "analyze/replay/zeroed.h"

namespace overlapscope::analyze::replay {
namespace {

// Node v: recorded [start, end), duration end - start.
void SetNode(SimGraph& g, int32_t v, int64_t start, int64_t end) {
  g.rec_start[v] = start;
  g.rec_dur[v] = end - start;
  g.dur[v] = end - start;
}

TEST(Simulate, ChainKeepsLagsAndDurations) {
  // Host calls 2 -> 3 (program order, 5 ns of host work between); call 2 launches GPU 0 with
  // 10 ns latency, call 3 launches GPU 1 (queued behind 0 on the stream).
  SimGraph g;
  g.Resize(4, 2);
  SetNode(g, 0, 110, 200);
  SetNode(g, 1, 200, 260);
  SetNode(g, 2, 100, 120);
  SetNode(g, 3, 125, 140);
  EdgeRows rows;
  rows.Add(3, {2, Dep::kAfterEnd, 5});
  rows.Add(0, {2, Dep::kAfterStart, 10});
  rows.Add(1, {3, Dep::kAfterStart, 10});
  rows.Add(1, {0, Dep::kAfterEnd, 0});
  rows.Finish(g);
  Schedule s = Simulate(g);
  EXPECT_EQ(s.start[0], 110);
  EXPECT_EQ(s.end[0], 200);
  EXPECT_EQ(s.start[1], 200);
  EXPECT_EQ(s.end[1], 260);
  EXPECT_EQ(s.bind_start[1], 0);
  EXPECT_EQ(s.start[3], 125);
  // Halve GPU 0: GPU 1 now starts at its launch (125 + 10 = 135) ... no: at max(110 + 45, 135).
  g.dur[0] = 45;
  s = Simulate(g);
  EXPECT_EQ(s.end[0], 155);
  EXPECT_EQ(s.start[1], 155);
  g.dur[0] = 10;  // GPU 0 ends at 120; GPU 1 waits for its launch: 125 + 10
  s = Simulate(g);
  EXPECT_EQ(s.start[1], 135);
  EXPECT_EQ(s.bind_start[1], 3);
}

TEST(Simulate, LagsBeyond32BitsAreKept) {
  // The plan keeps lags in 32 bits and the others apart (sim_plan.h): host call 2 follows call
  // 1 after 3 s of host work, call 3 starts 2.5 s after call 1's start and launches GPU 0 5 s
  // later; host call 4 blocks on GPU 0 and returns 2.2 s after it; GPU 5 follows GPU 0 3 s
  // before its end (a negative lag beyond 32 bits).
  const int64_t s1 = 1'000'000'000;
  SimGraph g;
  g.Resize(6, 1);
  SetNode(g, 0, 9 * s1, 10 * s1);
  SetNode(g, 1, 0, 10);
  SetNode(g, 2, 3 * s1 + 10, 3 * s1 + 20);
  SetNode(g, 3, 2'500'000'000, 2'500'000'010);
  SetNode(g, 4, 5 * s1, 10 * s1 + 2'200'000'000);
  SetNode(g, 5, 7 * s1, 7 * s1 + 5);
  g.num_gpu = 1;
  EdgeRows rows;
  rows.Add(2, {1, Dep::kAfterEnd, 3 * s1});
  rows.Add(3, {1, Dep::kAfterStart, 2'500'000'000});
  rows.Add(0, {3, Dep::kAfterStart, 6'500'000'000});
  rows.Add(4, {0, Dep::kRelease, 2'200'000'000});
  rows.Add(5, {0, Dep::kAfterEnd, -3 * s1});
  rows.Finish(g);
  g.SetReleaseTail(4, 0);
  Schedule s = Simulate(g);
  EXPECT_EQ(s.start[2], 3 * s1 + 10);
  EXPECT_EQ(s.start[3], 2'500'000'000);
  EXPECT_EQ(s.start[0], 9 * s1);
  EXPECT_EQ(s.end[4], 12 * s1 + 200'000'000);
  EXPECT_EQ(s.bind_end[4], 0);
  EXPECT_EQ(s.start[5], 7 * s1);
  EXPECT_EQ(s.bind_start[5], 0);
  // GPU 0 half as long: everything after it moves by the same 0.5 s.
  g.dur[0] = s1 / 2;
  s = Simulate(g);
  EXPECT_EQ(s.end[4], 11 * s1 + 700'000'000);
  EXPECT_EQ(s.start[5], 6 * s1 + 500'000'000);
}

TEST(EdgeRows, LagsBeyond32BitsMoveWithTheirRows) {
  // In-order rows with a 3 s lag (node 2's) and a -4 s one (node 3's), then an Add()ed edge to
  // node 1 that Finish() merges in front of them: every lag reads back as given.
  const int64_t s1 = 1'000'000'000;
  SimGraph g;
  g.Resize(4, 0);
  EdgeRows rows;
  rows.Add(1, {0, Dep::kAfterEnd, 5 * s1});
  rows.Next(0);
  rows.Next(1);
  rows.Append({0, Dep::kAfterEnd, 7});
  rows.Next(2);
  rows.Append({1, Dep::kAfterStart, 3 * s1});
  rows.Next(3);
  rows.Append({2, Dep::kAfterEnd, 11});
  rows.Append({0, Dep::kAfterEnd, -4 * s1});
  rows.Finish(g);
  ASSERT_EQ(g.num_edges(), 5);
  EXPECT_EQ(g.pred_off, (std::vector<RowOffset>{0, 0, 2, 3, 5}));
  std::vector<int64_t> lags;
  for (int64_t i = 0; i < g.num_edges(); ++i) lags.push_back(g.Lag(i));
  EXPECT_EQ(lags, (std::vector<int64_t>{7, 5 * s1, 3 * s1, 11, -4 * s1}));
  EXPECT_EQ(g.pred_dep[2], Dep::kAfterStart);
}

TEST(Simulate, BlockingCallEndsWhenItsGpuWorkEnds) {
  // GPU 0 [0, 100); host call 1 blocks on it from 10, returns 3 ns after the release: [10, 103).
  // Host call 2 follows after 4 ns of host work.
  SimGraph g;
  g.Resize(3, 1);
  SetNode(g, 0, 0, 100);
  SetNode(g, 1, 10, 103);
  SetNode(g, 2, 107, 110);
  EdgeRows rows;
  rows.Add(1, {0, Dep::kRelease, 3});
  rows.Add(2, {1, Dep::kAfterEnd, 4});
  rows.Finish(g);
  g.SetReleaseTail(1, 3);
  Schedule s = Simulate(g);
  EXPECT_EQ(s.end[1], 103);
  EXPECT_EQ(s.start[2], 107);
  g.dur[0] = 40;  // the GPU work is shorter: the host is released at 40 + 3
  s = Simulate(g);
  EXPECT_EQ(s.end[1], 43);
  EXPECT_EQ(s.start[2], 47);
  EXPECT_EQ(s.bind_end[1], 0);
}

TEST(Simulate, CollectiveWaitIsRecomputedFromArrivals) {
  // Two ranks' collective kernels 1 and 3 (one group), behind compute 0 and 2.
  // Rank 0: compute [0, 50), collective [50, 120): it waited 30 for rank 1 and transferred 40.
  // Rank 1: compute [0, 80), collective [80, 120).
  SimGraph g;
  g.Resize(4, 4);
  SetNode(g, 0, 0, 50);
  SetNode(g, 1, 50, 120);
  SetNode(g, 2, 0, 80);
  SetNode(g, 3, 80, 120);
  g.num_groups = 1;
  g.group[1] = g.group[3] = 0;
  g.transfer[1] = g.transfer[3] = 40;
  EdgeRows rows;
  rows.Add(1, {0, Dep::kAfterEnd, 0});
  rows.Add(3, {2, Dep::kAfterEnd, 0});
  rows.Finish(g);
  Schedule s = Simulate(g);
  EXPECT_EQ(s.end[1], 120);
  EXPECT_EQ(s.end[3], 120);
  EXPECT_EQ(s.bind_end[1], 3);
  g.dur[2] = 20;  // rank 1's compute 4x faster: rank 0 arrives last now, at 50
  s = Simulate(g);
  EXPECT_EQ(s.start[3], 20);
  EXPECT_EQ(s.end[3], 90);
  EXPECT_EQ(s.end[1], 90);
  EXPECT_EQ(s.bind_end[3], 1);
}

TEST(Simulate, CycleIsBrokenAndCounted) {
  SimGraph g;
  g.Resize(2, 2);
  SetNode(g, 0, 0, 10);
  SetNode(g, 1, 10, 20);
  EdgeRows rows;
  rows.Add(1, {0, Dep::kAfterEnd, 0});
  rows.Add(0, {1, Dep::kAfterEnd, 0});
  rows.Finish(g);
  Schedule s = Simulate(g);
  EXPECT_GE(s.cycles_broken, 1);
  EXPECT_EQ(s.start[0], 0);
  EXPECT_EQ(s.end[1], 20);
}

TEST(EdgeRows, AddedEdgesFollowTheInOrderRowsInTheOrderAdded) {
  // Rows appended in node order (0: from 10; 1: from 11, 12; 3: from 13) and edges added for
  // nodes 1, 3, 0, 1 (from 20, 21, 22, 23): each node's added edges after its own, in order.
  SimGraph g;
  g.Resize(4, 4);
  EdgeRows rows;
  rows.Next(0);
  rows.Append({10, Dep::kAfterEnd, 0});
  rows.Next(1);
  rows.Append({11, Dep::kAfterEnd, 0});
  rows.Append({12, Dep::kAfterStart, 0});
  rows.Next(2);
  rows.Next(3);
  rows.Append({13, Dep::kAfterEnd, 0});
  rows.Add(1, {20, Dep::kAfterEnd, 0});
  rows.Add(3, {21, Dep::kAfterEnd, 0});
  rows.Add(0, {22, Dep::kRelease, 0});
  rows.Add(1, {23, Dep::kAfterEnd, 0});
  rows.Finish(g);
  EXPECT_EQ(g.pred_off, (std::vector<RowOffset>{0, 2, 6, 6, 8}));
  EXPECT_EQ(g.pred_from, (std::vector<int32_t>{10, 22, 11, 12, 20, 23, 13, 21}));
  EXPECT_EQ(g.pred_dep[1], Dep::kRelease);
}

// The rows of `in_order` (per node, the sources appended in order) with the edges `added` (target,
// source) added: after the rows (Finish() merges them), or before them (InlineAdded(), then
// AppendAdded() after each node's own).
SimGraph RowsOf(const std::vector<std::vector<int32_t>>& in_order,
                const std::vector<std::pair<int32_t, int32_t>>& added, bool added_first) {
  SimGraph g;
  const int32_t n = static_cast<int32_t>(in_order.size());
  g.Resize(n, n);
  EdgeRows rows;
  auto add = [&] {
    for (const auto& [to, from] : added) rows.Add(to, {from, Dep::kAfterEnd, 0});
  };
  if (added_first) {
    add();
    rows.InlineAdded();
  }
  for (int32_t v = 0; v < n; ++v) {
    rows.Next(v);
    for (int32_t from : in_order[v]) rows.Append({from, Dep::kAfterStart, 0});
    rows.AppendAdded(v);
  }
  if (!added_first) add();
  rows.Finish(g);
  return g;
}

std::vector<int32_t> Sources(const SimGraph& g) { return g.pred_from; }

TEST(EdgeRows, AddedBeforeTheRowsGiveTheSameRows) {
  const std::vector<std::vector<int32_t>> in_order = {{10}, {11, 12}, {}, {13}};
  // Two runs of rising targets (1, 3 | 0, 1): taken inline; each node's added edges after its
  // own, in the order added, as the merge puts them.
  const std::vector<std::pair<int32_t, int32_t>> two_runs = {{1, 20}, {3, 21}, {0, 22}, {1, 23}};
  const SimGraph merged = RowsOf(in_order, two_runs, false), first = RowsOf(in_order, two_runs, true);
  EXPECT_EQ(first.pred_off, (std::vector<RowOffset>{0, 2, 6, 6, 8}));
  EXPECT_EQ(Sources(first), (std::vector<int32_t>{10, 22, 11, 12, 20, 23, 13, 21}));
  EXPECT_EQ(first.pred_off, merged.pred_off);
  EXPECT_EQ(Sources(first), Sources(merged));
  // Falling targets: one run per edge, more than are checked per node: merged by Finish(), same
  // rows.
  std::vector<std::pair<int32_t, int32_t>> many_runs;
  for (int32_t k = 0; k < 12; ++k) many_runs.push_back({3 - k % 4, 30 + k});
  const SimGraph merged2 = RowsOf(in_order, many_runs, false), first2 = RowsOf(in_order, many_runs, true);
  EXPECT_EQ(first2.pred_off, (std::vector<RowOffset>{0, 4, 9, 12, 16}));
  EXPECT_EQ(Sources(first2), (std::vector<int32_t>{10, 33, 37, 41, 11, 12, 32, 36, 40, 31, 35, 39, 13, 30, 34, 38}));
  EXPECT_EQ(first2.pred_off, merged2.pred_off);
  EXPECT_EQ(Sources(first2), Sources(merged2));
}

TEST(Simulate, ManyReadyAtOnce) {
  // 5000 independent activities (all ready at the start: more than the ready ring first holds)
  // and one that waits for all of them: it starts at the last end, 4999 + 10.
  constexpr int32_t kN = 5000;
  SimGraph g;
  g.Resize(kN + 1, kN + 1);
  EdgeRows rows;
  for (int32_t v = 0; v < kN; ++v) {
    SetNode(g, v, v, v + 10);
    rows.Add(kN, {v, Dep::kAfterEnd, 0});
  }
  SetNode(g, kN, 0, 1);
  rows.Finish(g);
  const Schedule s = Simulate(g);
  for (int32_t v = 0; v < kN; ++v) ASSERT_EQ(s.start[v], v);
  EXPECT_EQ(s.start[kN], 5009);
  EXPECT_EQ(s.bind_start[kN], kN - 1);
  EXPECT_EQ(s.cycles_broken, 0);
}

TEST(Simulate, RunsAgainWithOtherDurations) {
  // Chain 0 -> 1 -> 2 (10 ns each, 5 ns apart): each run counts the constraints afresh.
  SimGraph g;
  g.Resize(3, 3);
  SetNode(g, 0, 0, 10);
  SetNode(g, 1, 15, 25);
  SetNode(g, 2, 30, 40);
  EdgeRows rows;
  rows.Add(1, {0, Dep::kAfterEnd, 5});
  rows.Add(2, {1, Dep::kAfterEnd, 5});
  rows.Finish(g);
  const Simulation sim(g);
  EXPECT_EQ(sim.Run(g.dur).end[2], 40);
  EXPECT_EQ(sim.Run({20, 20, 20}).end[2], 70);
  EXPECT_EQ(sim.Run(g.dur).end[2], 40);
}

void ExpectSameSchedule(const Schedule& a, const Schedule& b) {
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.bind_start, b.bind_start);
  EXPECT_EQ(a.bind_dep, b.bind_dep);
  EXPECT_EQ(a.bind_end, b.bind_end);
  EXPECT_EQ(a.cycles_broken, b.cycles_broken);
}

TEST(Simulate, ScheduleFromRowsRunsAsAFreshOne) {
  // Two ranks' collectives 1 and 3 (one group) behind compute 0 and 2; host call 4 launches 0
  // and blocks until 1 ends (release, 2 ns after); a big negative lag that binds nothing. The
  // rows give their arrays to the first schedule; a later run counts from the successors alone.
  const int64_t s1 = 1'000'000'000;
  SimGraph g;
  g.Resize(5, 4);
  SetNode(g, 0, 5, 50);
  SetNode(g, 1, 50, 120);
  SetNode(g, 2, 0, 80);
  SetNode(g, 3, 80, 120);
  SetNode(g, 4, 0, 122);
  g.num_groups = 1;
  g.group[1] = g.group[3] = 0;
  g.transfer[1] = g.transfer[3] = 40;
  g.SetReleaseTail(4, 1);
  EdgeRows rows;
  rows.Add(0, {4, Dep::kAfterStart, 5});
  rows.Add(1, {0, Dep::kAfterEnd, 0});
  rows.Add(3, {2, Dep::kAfterEnd, 0});
  rows.Add(3, {0, Dep::kAfterEnd, -3 * s1});
  rows.Add(4, {1, Dep::kRelease, 2});
  rows.Finish(g);
  const Schedule fresh = Simulate(g);
  EXPECT_EQ(fresh.end[4], 122);
  EXPECT_EQ(fresh.bind_end[4], 1);
  // Times made ahead or not; the plan's start counts in the row offsets or not, its other arrays
  // made ahead (PlanBuffersFor: no start counts) or not.
  for (int variant = 0; variant < 8; ++variant) {
    const bool times_ahead = variant & 1, offsets = variant & 2, buffers = variant & 4;
    SimGraph h = g;
    PlanBuffers made = PlanBuffersFor(h.num_nodes);
    const Simulation sim(h, buffers ? &made : nullptr, offsets ? &h.pred_off : nullptr);
    EXPECT_EQ(h.pred_off.empty(), offsets);
    Schedule initial = ScheduleFromRows(h, times_ahead ? InitialTimes(h.num_nodes) : Schedule{});
    EXPECT_TRUE(h.pred_from.empty() && h.pred_off.empty());  // given to the schedule
    ExpectSameSchedule(sim.Run(h.dur, nullptr, &initial), fresh);
    ExpectSameSchedule(sim.Run(h.dur), fresh);  // counted again without the rows
    std::vector<int64_t> dur = h.dur;
    dur[2] = 20;  // rank 1 arrives first now: rank 0 (at 50) binds both ends
    const Schedule faster = sim.Run(dur);
    EXPECT_EQ(faster.end[3], 90);
    EXPECT_EQ(faster.bind_end[3], 1);
  }
}

TEST(ReleaseIndex, TailsByRankAcrossWords) {
  // Calls with releases at the ends of 64-bit words and beyond: each finds its own tail.
  const std::vector<int32_t> calls = {0, 1, 63, 64, 65, 127, 128, 200};
  ReleaseIndex r;
  r.Reset(201);
  for (const int32_t v : calls) r.Add(v, 1000 + v);
  r.Finish();
  for (int32_t v = 0; v < 201; ++v) {
    const bool has = std::find(calls.begin(), calls.end(), v) != calls.end();
    EXPECT_EQ(r.Has(v), has) << v;
    if (has) EXPECT_EQ(r.Tail(v), 1000 + v) << v;
  }
}

TEST(SimGraph, ReleaseTailsSetInAnyOrderReadBack) {
  SimGraph g;
  g.Resize(10, 0);
  g.SetReleaseTail(7, 70);
  g.SetReleaseTail(2, 20);
  g.SetReleaseTail(9, 90);
  g.SetReleaseTail(2, 21);  // replaced
  EXPECT_EQ(g.release_tails, (std::vector<std::pair<int32_t, int64_t>>{{2, 21}, {7, 70}, {9, 90}}));
  EXPECT_EQ(g.ReleaseTail(2), 21);
  EXPECT_EQ(g.ReleaseTail(3), 0);  // none: no tail
}

TEST(ZeroedVector, FreshVectorsAreZeroAndWritable) {
  ZeroedVector<int64_t> v(1 << 20);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[(1 << 20) - 1], 0);
  v[12345] = 7;
  v.push_back(9);
  EXPECT_EQ(v[12345], 7);
  EXPECT_EQ(v.back(), 9);
  EXPECT_EQ(v[12346], 0);
  v.assign(3, 4);
  EXPECT_EQ(v, (ZeroedVector<int64_t>{4, 4, 4}));
}

TEST(ParseChange, Forms) {
  auto c = ParseChange("scale:comm=0.5");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->kind, ChangeKind::kScaleClass);
  EXPECT_EQ(c->cls, GpuClass::kComm);
  EXPECT_DOUBLE_EQ(c->factor, 0.5);
  c = ParseChange("scale:/gemm|sm90/=2");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ChangeKind::kScaleName);
  EXPECT_EQ(c->regex, "gemm|sm90");
  c = ParseChange("async:/AllGather/@/Kernel_2/");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ChangeKind::kAsync);
  EXPECT_EQ(c->join_regex, "Kernel_2");
  c = ParseChange("nosync:/cudaStreamSynchronize/");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ChangeKind::kNoSync);
  c = ParseChange("remove:/a\\/b/");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->regex, "a/b");
  EXPECT_EQ(ParseChange("ce:/AllGather/")->kind, ChangeKind::kCopyEngine);
  c = ParseChange("prefetch:/AllGather/@/gemm/");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ChangeKind::kAsync);
  EXPECT_TRUE(c->prefetch);
  EXPECT_EQ(c->join_regex, "gemm");
  EXPECT_FALSE(ParseChange("async:/AllGather/")->prefetch);
  c = ParseChange("defer:/FinitePoison|Sampled/");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ChangeKind::kDefer);
  EXPECT_EQ(c->regex, "FinitePoison|Sampled");
  for (const char* bad : {"scale:comm=0", "scale:gpu=2", "scale:comm=x", "async:AllGather", "async:/x/@y", "ce:/(/",
                          "frob:/x/", "remove:/x/trailing", "nosync://", "noconst", "prefetch:x"}) {
    auto b = ParseChange(bad);
    EXPECT_FALSE(b.ok()) << bad;
    if (!b.ok()) EXPECT_NE(b.status().message().find("--change '"), std::string_view::npos);
  }
}

}  // namespace
}  // namespace overlapscope::analyze::replay
