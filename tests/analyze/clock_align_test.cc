// Clock alignment of multi-host traces (analyze/clock_align.h), on synthetic traces whose
// offsets, medians and residuals are worked out by hand in the comments.
#include "analyze/clock_align.h"

#include <string>
#include <vector>

#include "analyze/cross_rank.h"
#include "gtest/gtest.h"
#include "model/trace_builder.h"

namespace overlapscope::analyze {
namespace {

using model::TraceBuilder;

constexpr int64_t kOffset = 1234567;  // host b's clock runs 1.234567 ms ahead of host a's

// Rank 0 on host `h0`, rank 1 on host `h1` (empty: host unknown), one GPU each. Collective k
// (k = 0..n-1) runs on rank 0 over [10000(k+1), 10000(k+1)+5000) and on rank 1 from 1000 ns
// later to the same true end plus jitter[k], recorded on b's clock (+kOffset).
struct TwoHosts {
  TraceBuilder b;
  model::ProcessId proc[2];
  model::DeviceId dev[2];
  model::StreamId st[2];
  model::ThreadId th[2];
  TwoHosts(const char* h0, const char* h1) {
    const char* hosts[2] = {h0, h1};
    for (int r = 0; r < 2; ++r) {
      model::Process p{1000 + r, r, 2};
      p.host = b.Intern(hosts[r]);
      proc[r] = b.AddProcess(p);
      dev[r] = b.GetOrAddDevice(proc[r], 0);
      st[r] = b.GetOrAddStream(dev[r], 7);
      th[r] = b.GetOrAddThread(proc[r], 1);
    }
  }
  void Coll(int rank, int64_t s, int64_t e) {
    model::Collective c;
    c.op = b.Intern("allgather");
    c.communicator = b.Intern("0");
    b.data().collectives.push_back(c);
    model::Kernel k;
    k.start_ns = s;
    k.end_ns = e;
    k.device = dev[rank];
    k.stream = st[rank];
    k.collective = static_cast<model::CollectiveId>(b.data().collectives.size() - 1);
    b.data().kernels.push_back(k);
  }
  void Collectives(const std::vector<int64_t>& jitter, int64_t offset = kOffset) {
    for (size_t k = 0; k < jitter.size(); ++k) {
      const int64_t s = 10000 * static_cast<int64_t>(k + 1), e = s + 5000;
      Coll(0, s, e);
      Coll(1, s + 1000 + offset, e + jitter[k] + offset);
    }
  }
  model::Trace Finish(const model::FinalizeOptions& options = {}) {
    auto t = std::move(b).Finalize(options);
    EXPECT_TRUE(t.ok()) << t.status();
    return std::move(t).value();
  }
  // Finalized with the clocks aligned while the trace is built (the engine's path).
  model::Trace FinishAligned(ClockAlignMode mode, ClockAlignment* a) {
    model::FinalizeOptions o;
    o.clock_shift = ClockAlignmentShift(mode, a);
    return Finish(o);
  }
};

TEST(ClockAlign, TwoHostsKnownOffsetWithJitteredEnds) {
  TwoHosts f("a", "b");
  // end_a - end_b = -1234567 - jitter = -1234867, -1234367, -1234667, -1234517, -1234567;
  // sorted the middle one is -1234567: the offset exactly. Residual = max |jitter| = 300.
  f.Collectives({300, -200, 100, -50, 0});
  model::Trace t = f.Finish();
  ClockAlignment a = EstimateClockAlignment(t, ClockAlignMode::kAuto);
  EXPECT_EQ(a.status, ClockAlignStatus::kAligned);
  ASSERT_EQ(a.hosts.size(), 2u);
  EXPECT_EQ(a.hosts[0].host, "a");
  EXPECT_TRUE(a.hosts[0].reference);
  EXPECT_EQ(a.hosts[1].host, "b");
  EXPECT_TRUE(a.hosts[1].aligned);
  EXPECT_EQ(a.hosts[1].offset_ns, -kOffset);
  EXPECT_EQ(a.hosts[1].instances, 5);
  EXPECT_EQ(a.hosts[1].residual_spread_ns, 300);
  EXPECT_EQ(a.matched_instances_used, 5);
  EXPECT_EQ(a.residual_spread_ns, 300);
  EXPECT_TRUE(a.applied());
  EXPECT_EQ(DescribeClockAlignment(a),
            "clocks of 2 hosts aligned by 5 matched collectives (reference host a); host b shifted by -1234.567 µs "
            "(residual spread 0.300 µs)");

  // Before alignment every instance looks 1.235567 ms skewed; after, rank 1 starts 1000 ns late.
  EXPECT_EQ(AnalyzeCrossRank(t).max_skew_ns, 1000 + kOffset);
  TwoHosts g("a", "b");
  g.Collectives({300, -200, 100, -50, 0});
  ClockAlignment built;
  model::Trace aligned = g.FinishAligned(ClockAlignMode::kAuto, &built);
  EXPECT_EQ(built.hosts[1].offset_ns, -kOffset);  // the same estimate, made while finalizing
  EXPECT_EQ(built.residual_spread_ns, 300);
  CrossRankResult x = AnalyzeCrossRank(aligned);
  ASSERT_EQ(x.instances.size(), 5u);
  EXPECT_EQ(x.max_skew_ns, 1000);
  EXPECT_EQ(x.total_skew_ns, 5000);
  EXPECT_EQ(x.instances[0].last_rank, 1);
  EXPECT_EQ(aligned.end_ns(), 55000);  // last collective: rank 0 ends at 55000, rank 1 at 55000 + 0
}

TEST(ClockAlign, EvenCountTakesTheFloorOfTheMiddleMean) {
  TwoHosts f("a", "b");
  // diffs -1234867, -1234367, -1234668, -1234517 -> middle -1234668, -1234517; sum -2469185,
  // half -1234592.5, floor -1234593. Residual: |(-1234867) - (-1234593)| = 274.
  f.Collectives({300, -200, 101, -50});
  ClockAlignment a = EstimateClockAlignment(f.Finish(), ClockAlignMode::kAuto);
  ASSERT_EQ(a.hosts.size(), 2u);
  EXPECT_EQ(a.hosts[1].offset_ns, -1234593);
  EXPECT_EQ(a.hosts[1].residual_spread_ns, 274);
}

TEST(ClockAlign, TooFewMatchedCollectives) {
  TwoHosts f("a", "b");
  f.Collectives({0, 0});  // two instances < 3
  model::Trace t = f.Finish();
  ClockAlignment a = EstimateClockAlignment(t, ClockAlignMode::kAuto);
  EXPECT_EQ(a.status, ClockAlignStatus::kNotAligned);
  EXPECT_FALSE(a.applied());
  ASSERT_EQ(a.hosts.size(), 2u);
  EXPECT_EQ(a.hosts[1].instances, 2);
  EXPECT_FALSE(a.hosts[1].aligned);
  EXPECT_EQ(a.hosts[1].offset_ns, 0);
  EXPECT_EQ(DescribeClockAlignment(a),
            "not aligned: too few matched collectives; host b not aligned: too few matched collectives (2 with host "
            "a, need 3)");
}

TEST(ClockAlign, OneHostIsNotAligned) {
  TwoHosts f("a", "a");
  f.Collectives({0, 0, 0}, 5000);  // a real skew of 6 µs on one clock must stay a skew
  model::Trace t = f.Finish();
  for (ClockAlignMode m : {ClockAlignMode::kAuto, ClockAlignMode::kOn}) {
    ClockAlignment a = EstimateClockAlignment(t, m);
    EXPECT_EQ(a.status, ClockAlignStatus::kOneHost);
    EXPECT_FALSE(a.applied());
    EXPECT_EQ(DescribeClockAlignment(a), "one host: clocks shared, not aligned");
  }
}

TEST(ClockAlign, UnknownHostsOnlyWhenForced) {
  TwoHosts f("", "");
  f.Collectives({300, -200, 100, -50, 0});
  model::Trace t = f.Finish();
  EXPECT_EQ(EstimateClockAlignment(t, ClockAlignMode::kAuto).status, ClockAlignStatus::kHostsUnknown);
  EXPECT_EQ(EstimateClockAlignment(t, ClockAlignMode::kOff).status, ClockAlignStatus::kOff);
  ClockAlignment a = EstimateClockAlignment(t, ClockAlignMode::kOn);
  EXPECT_EQ(a.status, ClockAlignStatus::kAligned);
  ASSERT_EQ(a.hosts.size(), 2u);
  EXPECT_EQ(a.hosts[0].host, "pid 1000");  // each process is its own clock domain
  EXPECT_EQ(a.hosts[1].host, "pid 1001");
  EXPECT_EQ(a.hosts[1].offset_ns, -kOffset);  // same median as with named hosts
  EXPECT_EQ(DescribeClockAlignment(a).rfind("clocks of 2 clock domains aligned by 5 matched collectives (reference "
                                            "pid 1000); pid 1001 shifted by -1234.567 µs",
                                            0),
            0u)
      << DescribeClockAlignment(a);
}

TEST(ClockAlign, ApplyShiftsEveryEventOfTheHostAndNothingElse) {
  TwoHosts f("a", "b");
  f.Collectives({0, 0, 0});
  // Host b: a launch call, an NVTX range, a D2H copy and a stream sync, all on b's clock.
  f.b.data().api_calls.push_back({kOffset + 500, kOffset + 600, f.th[1], 9, model::kNoCorrelation, f.b.Intern("x")});
  model::Range rg;
  rg.start_ns = kOffset + 400;
  rg.end_ns = kOffset + 900;
  rg.thread = f.th[1];
  f.b.data().ranges.push_back(rg);
  model::Memcpy m;
  m.start_ns = kOffset + 700;
  m.end_ns = kOffset + 800;
  m.device = f.dev[1];
  m.stream = f.st[1];
  f.b.data().memcpys.push_back(m);
  model::Sync y;
  y.start_ns = kOffset + 650;
  y.end_ns = kOffset + 850;
  y.thread = f.th[1];
  f.b.data().syncs.push_back(y);
  // Host a: one launch call that must not move.
  f.b.data().api_calls.push_back({200, 300, f.th[0], 1, model::kNoCorrelation, f.b.Intern("y")});
  ClockAlignment a;
  const model::Trace aligned = f.FinishAligned(ClockAlignMode::kAuto, &a);
  ASSERT_EQ(a.hosts[1].offset_ns, -kOffset);  // all three ends equal: diffs exactly -kOffset
  const model::Trace* s = &aligned;
  ASSERT_EQ(s->api_calls().size(), 2u);
  EXPECT_EQ(s->api_calls()[0].start_ns, 200);  // host a, unchanged
  EXPECT_EQ(s->api_calls()[1].start_ns, 500);
  EXPECT_EQ(s->api_calls()[1].end_ns, 600);
  EXPECT_EQ(s->ranges()[0].start_ns, 400);
  EXPECT_EQ(s->memcpys()[0].start_ns, 700);
  EXPECT_EQ(s->syncs()[0].end_ns, 850);
  // Collective spans follow their kernels: rank 1's first one ran [11000, 15000) on a's clock.
  int found = 0;
  for (const model::Collective& c : s->collectives())
    if (c.process == f.proc[1] && c.start_ns == 11000 && c.end_ns == 15000) ++found;
  EXPECT_EQ(found, 1);
  // Every collective is still carried by its own process's kernels (ids survive the re-sort).
  ASSERT_EQ(s->collectives().size(), 6u);
  for (size_t c = 0; c < s->collectives().size(); ++c) {
    auto refs = s->CollectiveActivities(static_cast<model::CollectiveId>(c));
    ASSERT_EQ(refs.size(), 1u);
    EXPECT_EQ(s->ProcessOfDevice(s->kernels()[refs[0].index].device), s->collectives()[c].process);
    EXPECT_EQ(s->kernels()[refs[0].index].start_ns, s->collectives()[c].start_ns);
  }
  EXPECT_EQ(s->start_ns(), 200);
  EXPECT_EQ(s->str(s->processes()[1].host), "b");
  EXPECT_NE(s->clock_note().find("host b shifted by -1234567 ns to host a"), std::string::npos) << s->clock_note();
}

TEST(ClockAlign, ThirdHostWithTooFewInstancesLeavesAPartialAlignment) {
  TwoHosts f("a", "b");
  f.Collectives({0, 0, 0, 0});  // a-b: 4 shared instances, diffs exactly -kOffset
  // Rank 2 on host c (clock 5 µs behind a) took part in the first two instances only.
  model::Process p{1002, 2, 3};
  p.host = f.b.Intern("c");
  model::ProcessId pc = f.b.AddProcess(p);
  model::DeviceId dc = f.b.GetOrAddDevice(pc, 0);
  model::StreamId sc = f.b.GetOrAddStream(dc, 7);
  for (int k = 0; k < 2; ++k) {
    model::Collective c;
    c.op = f.b.Intern("allgather");
    c.communicator = f.b.Intern("0");
    f.b.data().collectives.push_back(c);
    model::Kernel kern;
    kern.start_ns = 10000 * (k + 1) - 5000;
    kern.end_ns = 10000 * (k + 1) + 5000 - 5000;
    kern.device = dc;
    kern.stream = sc;
    kern.collective = static_cast<model::CollectiveId>(f.b.data().collectives.size() - 1);
    f.b.data().kernels.push_back(kern);
  }
  ClockAlignment a = EstimateClockAlignment(f.Finish(), ClockAlignMode::kAuto);
  EXPECT_EQ(a.status, ClockAlignStatus::kPartial);
  ASSERT_EQ(a.hosts.size(), 3u);
  EXPECT_EQ(a.hosts[1].offset_ns, -kOffset);
  EXPECT_EQ(a.hosts[2].host, "c");
  EXPECT_EQ(a.hosts[2].instances, 2);
  EXPECT_FALSE(a.hosts[2].aligned);
  EXPECT_EQ(a.matched_instances_used, 4);
  EXPECT_EQ(DescribeClockAlignment(a),
            "clocks of 2 hosts aligned by 4 matched collectives (reference host a); host b shifted by -1234.567 µs "
            "(residual spread 0.000 µs); host c not aligned: too few matched collectives (2 with host a, need 3)");
}

TEST(ClockAlign, ParseMode) {
  EXPECT_EQ(*ParseClockAlignMode("on"), ClockAlignMode::kOn);
  EXPECT_EQ(*ParseClockAlignMode("off"), ClockAlignMode::kOff);
  EXPECT_EQ(*ParseClockAlignMode("auto"), ClockAlignMode::kAuto);
  EXPECT_FALSE(ParseClockAlignMode("yes").ok());
}

}  // namespace
}  // namespace overlapscope::analyze
