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

}  // namespace
}  // namespace overlapscope::report
