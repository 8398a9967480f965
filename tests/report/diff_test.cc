// Report comparison (report/diff.h) on hand-made reports whose answers are computed by hand.
#include "report/diff.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace overlapscope::report {
namespace {

// One rank, one GPU; iteration i runs on the GPU from starts[i] for spans[i] ns; per iteration
// kernel "k1" takes k1[i] ns and "k2" 400 ns.
Report MakeReport(const std::vector<int64_t>& starts, const std::vector<int64_t>& spans, const std::vector<int64_t>& k1,
                  double overlap) {
  Report r;
  r.inputs = {"synthetic"};
  r.options.top_n = 10;
  r.iterations.count = static_cast<int64_t>(starts.size());
  RankReport rk;
  rk.label = "rank 0";
  rk.rank = 0;
  rk.summary.overlap_ratio = overlap;
  rk.summary.exposed_comm_ns = 1000;
  DeviceReport d;
  for (size_t i = 0; i < starts.size(); ++i) {
    IterationOverlap it;
    it.iteration = static_cast<int64_t>(i) + 1;
    it.gpu_start_ns = starts[i];
    it.gpu_end_ns = starts[i] + spans[i];
    d.iterations.push_back(it);
  }
  rk.devices.push_back(d);
  r.ranks.push_back(rk);
  KernelTotal a{"compute", "kernel", "k1", static_cast<int64_t>(k1.size()), 0, 0, 0, {}};
  KernelTotal b{"compute", "kernel", "k2", static_cast<int64_t>(k1.size()), 0, 400, 400, {}};
  for (size_t i = 0; i < k1.size(); ++i) {
    a.total_ns += k1[i];
    a.per_iteration.push_back({static_cast<int64_t>(i) + 1, k1[i]});
    b.total_ns += 400;
    b.per_iteration.push_back({static_cast<int64_t>(i) + 1, 400});
  }
  r.top_kernels = {a, b};
  return r;
}

TEST(Diff, StepTimesByHand) {
  RankReport rk;
  DeviceReport d;
  // (0,100), (90,200): starts under the previous end -> 200-100; (250,300) -> 50.
  for (auto [s, e] : std::vector<std::pair<int64_t, int64_t>>{{0, 100}, {90, 200}, {250, 300}}) {
    IterationOverlap it;
    it.iteration = static_cast<int64_t>(d.iterations.size());
    it.gpu_start_ns = s;
    it.gpu_end_ns = e;
    d.iterations.push_back(it);
  }
  rk.devices.push_back(d);
  EXPECT_EQ(StepTimes(rk), (std::vector<double>{100, 100, 50}));
}

TEST(Diff, VerdictNamesTheSlowedKernelAndJudgesIt) {
  // Base steps 1000..1050 ns (median 1025), test 1100..1150 (median 1125): exact p = 2/924.
  const std::vector<int64_t> starts = {0, 10000, 20000, 30000, 40000, 50000};
  const Report base = MakeReport(starts, {1000, 1010, 1020, 1030, 1040, 1050}, {500, 500, 500, 500, 500, 500}, 0.5);
  const Report test = MakeReport(starts, {1100, 1110, 1120, 1130, 1140, 1150}, {600, 600, 600, 600, 600, 600}, 0.4);
  const ReportDiff d = DiffReports(base, test);
  ASSERT_EQ(d.verdict.step_time.size(), 1u);
  const Judgement& step = d.verdict.step_time[0].judged;
  EXPECT_DOUBLE_EQ(step.base_median, 1025);
  EXPECT_DOUBLE_EQ(step.test_median, 1125);
  EXPECT_NEAR(step.p, 2.0 / 924, 1e-12);
  EXPECT_EQ(step.verdict, Significance::kSignificant);
  ASSERT_FALSE(d.verdict.changes.empty());
  const Change& first = d.verdict.changes[0];
  EXPECT_EQ(first.what, "kernel k1");
  EXPECT_DOUBLE_EQ(first.delta_ns(), 100);
  EXPECT_EQ(first.judged.verdict, Significance::kSignificant);  // 500 x6 vs 600 x6: ties, p = 0.0013
  EXPECT_LT(first.judged.p, 0.01);
  // k2 and exposed communication did not move: not in the verdict.
  EXPECT_EQ(d.verdict.changes.size(), 1u);
  ASSERT_EQ(d.kernels.size(), 2u);
  EXPECT_EQ(d.kernels[0].name, "k1");
  EXPECT_EQ(d.kernels[0].status, "changed");
  EXPECT_EQ(d.kernels[1].status, "same");
  EXPECT_DOUBLE_EQ(*d.kernels[0].total_ns.delta(), 600);
  // Text and JSON say the same.
  const std::string text = RenderDiffText(d);
  EXPECT_NE(text.find("rank 0: step time 1.0 µs -> 1.1 µs (+100 ns, +9.8%), significant (p=0.0022)"), std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(RenderDiffJson(d));
  EXPECT_EQ(j["schema"], kDiffSchema);
  EXPECT_EQ(j["verdict"]["changes"][0]["what"], "kernel k1");
  EXPECT_EQ(j["verdict"]["ranks"][0]["step_time_ns"]["significance"], "significant");
  EXPECT_EQ(j["ranks"][0]["summary"]["step_time_ns"]["delta"], 100);
}

TEST(Diff, FewIterationsAreNotJudged) {
  const Report base = MakeReport({0, 5000, 10000}, {1000, 1000, 1000}, {500, 500, 500}, 0.5);
  const Report test = MakeReport({0, 5000, 10000}, {2000, 2000, 2000}, {500, 500, 500}, 0.5);
  const ReportDiff d = DiffReports(base, test);
  EXPECT_EQ(d.verdict.step_time[0].judged.verdict, Significance::kNotJudged);
  EXPECT_NE(RenderDiffText(d).find("not judged (3 vs 3 iterations; 5 a side needed)"), std::string::npos);
}

TEST(Diff, GatesOnDeltas) {
  const std::vector<int64_t> starts = {0, 10000, 20000, 30000, 40000, 50000};
  const Report base = MakeReport(starts, {1000, 1010, 1020, 1030, 1040, 1050}, {500, 500, 500, 500, 500, 500}, 0.5);
  const Report test = MakeReport(starts, {1100, 1110, 1120, 1130, 1140, 1150}, {500, 500, 500, 500, 500, 500}, 0.4);
  const ReportDiff d = DiffReports(base, test);
  auto gate = [](const char* e) { return *ParseDiffGate(e); };
  const DiffGate g = gate("step_time_ns > +5%");
  EXPECT_EQ(g.metric, "step_time_ns");
  EXPECT_EQ(g.op, '>');
  EXPECT_TRUE(g.relative);
  EXPECT_DOUBLE_EQ(g.threshold, 5);
  DiffGateResult r = EvaluateDiffGates(d, {g});  // +9.76 % > 5 %
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_NE(r.lines[0].find("FAIL rank 0: step_time_ns 1.0 µs -> 1.1 µs (+100 ns (+9.8%))"), std::string::npos)
      << r.lines[0];
  EXPECT_TRUE(EvaluateDiffGates(d, {gate("step_time_ns>+10%")}).passed);
  EXPECT_FALSE(EvaluateDiffGates(d, {gate("overlap_ratio<-0.05")}).passed);  // -0.1
  EXPECT_TRUE(EvaluateDiffGates(d, {gate("overlap_ratio<-0.2")}).passed);
  EXPECT_FALSE(EvaluateDiffGates(d, {gate("step_time_ns>99")}).passed);   // absolute: +100 ns
  EXPECT_TRUE(EvaluateDiffGates(d, {gate("exposed_comm_ns>0")}).passed);  // unchanged: strict
  EXPECT_FALSE(EvaluateDiffGates(d, {gate("no_such_metric>0")}).passed);
  EXPECT_FALSE(ParseDiffGate("step_time_ns>=5%").ok());
  EXPECT_FALSE(ParseDiffGate("step_time_ns").ok());
  EXPECT_FALSE(ParseDiffGate("step_time_ns>five").ok());
}

TEST(Diff, RanksMatchedByRankThenOnlyOneSide) {
  Report base = MakeReport({0}, {10}, {1}, 0.5), test = base;
  test.ranks[0].rank = 1;
  test.ranks[0].label = "rank 1";
  const ReportDiff d = DiffReports(base, test);
  EXPECT_TRUE(d.ranks.empty());
  EXPECT_EQ(d.only_in_base, std::vector<std::string>{"rank 0"});
  EXPECT_EQ(d.only_in_test, std::vector<std::string>{"rank 1"});
}

// Idle by cause per iteration (schema 1.7): host-blocked gaps of 100 ns in each of 6 base
// iterations, 300 ns in each of 6 test iterations (all ties within a side: the normal
// approximation with tie correction gives p = 0.0013 < 0.01, and 300 is > 1 % from 100). The
// verdict names "GPU idle (host_blocked)" first (+200 ns per iteration; k1 moves +100 ns).
TEST(Diff, IdleByCauseIsJudgedPerIteration) {
  const std::vector<int64_t> starts = {0, 10000, 20000, 30000, 40000, 50000};
  Report base = MakeReport(starts, {1000, 1000, 1000, 1000, 1000, 1000}, {500, 500, 500, 500, 500, 500}, 0.5);
  Report test = MakeReport(starts, {1000, 1000, 1000, 1000, 1000, 1000}, {600, 600, 600, 600, 600, 600}, 0.5);
  auto set_gaps = [](Report* r, int64_t host_blocked) {
    for (IterationOverlap& it : r->ranks[0].devices[0].iterations)
      it.gap_ns = {{"host_blocked", host_blocked}, {"launch_bound", 0}, {"dependency", 0}, {"unknown", 0}};
    r->ranks[0].summary.gap_ns = {{"host_blocked", 6 * host_blocked}};
  };
  set_gaps(&base, 100);
  set_gaps(&test, 300);
  const ReportDiff d = DiffReports(base, test);
  ASSERT_GE(d.verdict.changes.size(), 2u);
  const Change& first = d.verdict.changes[0];
  EXPECT_EQ(first.what, "GPU idle (host_blocked)");
  EXPECT_EQ(first.where, "rank 0");
  EXPECT_TRUE(first.per_iteration_values);
  EXPECT_DOUBLE_EQ(first.base_ns, 100);
  EXPECT_DOUBLE_EQ(first.test_ns, 300);
  EXPECT_EQ(first.judged.verdict, Significance::kSignificant);
  EXPECT_NEAR(first.judged.p, 0.0013, 0.0001);
  EXPECT_EQ(d.verdict.changes[1].what, "kernel k1");
  // The rank's series: gap_host_blocked_ns among them, in the report's cause order.
  std::vector<std::string> metrics;
  for (const SeriesDelta& s : d.ranks[0].per_iteration) metrics.push_back(s.metric);
  EXPECT_EQ(metrics, (std::vector<std::string>{"step_time_ns", "comm_ns", "hidden_comm_ns", "exposed_comm_ns",
                                               "overlap_ratio", "compute_ns", "contention_ns", "gap_host_blocked_ns",
                                               "gap_launch_bound_ns", "gap_dependency_ns", "gap_unknown_ns"}));
  EXPECT_NE(RenderDiffText(d).find("GPU idle (host_blocked) (rank 0): 100 ns -> 300 ns per iteration, significant"),
            std::string::npos)
      << RenderDiffText(d);
  // A report before 1.7 (no per-iteration gaps) on one side: the total over the iterations,
  // 600 / 6 = 100 ns, and not judged.
  Report old = base;
  for (IterationOverlap& it : old.ranks[0].devices[0].iterations) it.gap_ns.clear();
  const ReportDiff o = DiffReports(old, test);
  const Change* idle = nullptr;
  for (const Change& c : o.verdict.changes)
    if (c.what == "GPU idle (host_blocked)") idle = &c;
  ASSERT_NE(idle, nullptr);
  EXPECT_FALSE(idle->per_iteration_values);
  EXPECT_DOUBLE_EQ(idle->base_ns, 100);
  EXPECT_DOUBLE_EQ(idle->test_ns, 300);
  EXPECT_EQ(idle->judged.verdict, Significance::kNotJudged);
}

// Collectives by (op, communicator, size): medians over instances; exposed: per instance the
// mean over its ranks. Base allreduce/pg0/1 KiB: instances with exposed {100, 300} and {400, 600}
// (means 200, 500: median 350), bus time 1000 and 3000 (median 2000); test: {50, 50}, {100, 100},
// {60, 80} (means 50, 100, 70: median 70), bus 900, 1000, 1100 (median 1000). Deltas −280, −1000.
TEST(Diff, CollectivesCompareExposedTime) {
  auto instance = [](int64_t bus, int64_t e0, int64_t e1) {
    Instance ci;
    ci.op = "allreduce";
    ci.communicator = "pg0";
    ci.size_bytes = 1024;
    ci.bus_time_ns = bus;
    ci.skew_ns = 10;
    for (int64_t e : {e0, e1}) {
      InstanceRank r;
      r.exposed_ns = e;
      ci.ranks.push_back(r);
    }
    return ci;
  };
  Report base = MakeReport({0}, {10}, {1}, 0.5), test = base;
  base.collectives_across_ranks.instances = {instance(1000, 100, 300), instance(3000, 400, 600)};
  test.collectives_across_ranks.instances = {instance(900, 50, 50), instance(1000, 100, 100), instance(1100, 60, 80)};
  const ReportDiff d = DiffReports(base, test);
  ASSERT_EQ(d.collectives.size(), 1u);
  const CollectiveDiff& c = d.collectives[0];
  EXPECT_EQ(c.size_bytes, 1024);
  EXPECT_DOUBLE_EQ(*c.instances.delta(), 1);
  EXPECT_DOUBLE_EQ(*c.exposed_ns.base, 350);
  EXPECT_DOUBLE_EQ(*c.exposed_ns.test, 70);
  EXPECT_DOUBLE_EQ(*c.exposed_ns.delta(), -280);
  EXPECT_DOUBLE_EQ(*c.bus_time_ns.delta(), -1000);
  EXPECT_DOUBLE_EQ(*c.skew_ns.delta(), 0);
  const nlohmann::json j = nlohmann::json::parse(RenderDiffJson(d));
  EXPECT_EQ(j["collectives"][0]["exposed_ns"]["delta"], -280);
  EXPECT_NE(RenderDiffText(d).find("exposed 350 ns -> 70 ns"), std::string::npos) << RenderDiffText(d);
  EXPECT_NE(RenderDiffMarkdown(d).find("| allreduce | pg0 | 1.0 kB | 2 → 3 | 2.0 µs → 1.0 µs | 350 ns → 70 ns |"),
            std::string::npos)
      << RenderDiffMarkdown(d);
  // A report before 1.7 has no per-rank exposed times: absent, not 0.
  for (Instance& ci : base.collectives_across_ranks.instances)
    for (InstanceRank& r : ci.ranks) r.exposed_ns.reset();
  EXPECT_FALSE(DiffReports(base, test).collectives[0].exposed_ns.base.has_value());
}

// The rank's own critical path per iteration (METRICS §8): base 1000, 1010, ..., 1050 (median
// 1025), test 2000 ... 2050 (median 2025): significant (no ties: exact p = 2/924).
TEST(Diff, CriticalPathPerIteration) {
  const std::vector<int64_t> starts = {0, 10000, 20000, 30000, 40000, 50000};
  Report base = MakeReport(starts, {1000, 1000, 1000, 1000, 1000, 1000}, {500, 500, 500, 500, 500, 500}, 0.5);
  Report test = base;
  auto set_paths = [](Report* r, int64_t from) {
    for (int64_t i = 0; i < 6; ++i) {
      IterationCriticalPath it;
      it.iteration = i + 1;
      RankPath own;
      own.rank = 0;
      own.label = "rank 0";
      own.composition.length_ns = from + 10 * i;
      it.own.push_back(own);
      RankPath other = own;  // another rank's path is not this rank's
      other.rank = 1;
      other.label = "rank 1";
      other.composition.length_ns = 99999;
      it.own.push_back(other);
      r->critical_path.per_iteration.push_back(it);
    }
  };
  set_paths(&base, 1000);
  set_paths(&test, 2000);
  const ReportDiff d = DiffReports(base, test);
  const SeriesDelta* cp = nullptr;
  for (const SeriesDelta& s : d.ranks[0].per_iteration)
    if (s.metric == "critical_path_ns") cp = &s;
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->base, (std::vector<double>{1000, 1010, 1020, 1030, 1040, 1050}));
  EXPECT_DOUBLE_EQ(cp->judged.base_median, 1025);
  EXPECT_DOUBLE_EQ(cp->judged.test_median, 2025);
  EXPECT_NEAR(cp->judged.p, 2.0 / 924, 1e-12);
  EXPECT_EQ(cp->judged.verdict, Significance::kSignificant);
}

// Without rank ids the ranks are matched by their first GPU, whatever the order and the pids.
TEST(Diff, RanksWithoutRankIdsMatchByGpu) {
  auto two = [](int64_t first_gpu, int64_t first_pid) {
    Report r = MakeReport({0}, {10}, {1}, 0.5);
    RankReport a = r.ranks[0], b = r.ranks[0];
    a.rank.reset();
    b.rank.reset();
    a.devices[0].device = first_gpu;
    b.devices[0].device = 1 - first_gpu;
    a.pid = first_pid;
    b.pid = first_pid + 1;
    a.label = "pid " + std::to_string(a.pid) + " (GPU " + std::to_string(first_gpu) + ")";
    b.label = "pid " + std::to_string(b.pid) + " (GPU " + std::to_string(1 - first_gpu) + ")";
    a.summary.exposed_comm_ns = 100 * (first_gpu + 1);  // GPU 0: 100, GPU 1: 200
    b.summary.exposed_comm_ns = 100 * (2 - first_gpu);
    r.ranks = {a, b};
    return r;
  };
  const ReportDiff d = DiffReports(two(0, 10), two(1, 20));  // test lists GPU 1 first
  ASSERT_EQ(d.ranks.size(), 2u);
  for (const RankDiff& r : d.ranks) {
    EXPECT_EQ(r.matched_by, "gpu") << r.label;
    for (const MetricDelta& m : r.summary)
      if (m.metric == "exposed_comm_ns") EXPECT_DOUBLE_EQ(*m.value.delta(), 0) << r.label;
  }
  EXPECT_EQ(d.ranks[0].label, "pid 20 (GPU 1)");
  EXPECT_TRUE(d.only_in_base.empty());
  EXPECT_TRUE(d.only_in_test.empty());
}

// Kernels by name: k2 only in BASE is "gone", k3 only in TEST is "new" (its base values absent,
// not 0); classes sum both sides' class totals as given.
TEST(Diff, KernelsNewAndGoneAndClasses) {
  Report base = MakeReport({0}, {10}, {100}, 0.5), test = base;
  test.top_kernels[1].name = "k3";
  test.top_kernels[1].total_ns = 700;
  base.classes.totals = {{"compute", 2, 500}, {"comm", 1, 50}};
  test.classes.totals = {{"compute", 2, 800}, {"comm", 0, 0}};
  const ReportDiff d = DiffReports(base, test);
  ASSERT_EQ(d.kernels.size(), 3u);
  // |total delta|: k3 +700, k2 -400, k1 0.
  EXPECT_EQ(d.kernels[0].name, "k3");
  EXPECT_EQ(d.kernels[0].status, "new");
  EXPECT_FALSE(d.kernels[0].total_ns.base.has_value());
  EXPECT_EQ(d.kernels[1].name, "k2");
  EXPECT_EQ(d.kernels[1].status, "gone");
  EXPECT_FALSE(d.kernels[1].count.test.has_value());
  EXPECT_EQ(d.kernels[2].status, "same");
  ASSERT_EQ(d.classes.size(), 2u);
  EXPECT_EQ(d.classes[0].cls, "compute");
  EXPECT_DOUBLE_EQ(*d.classes[0].total_ns.delta(), 300);
  EXPECT_DOUBLE_EQ(*d.classes[1].count.delta(), -1);
  EXPECT_DOUBLE_EQ(*d.classes[1].total_ns.relative(), -1);
}

}  // namespace
}  // namespace overlapscope::report
