// The report's sections on what bounds the step (METRICS §8-9; report/report_paths.h): built from
// an analysis of a straggler trace with an injected spin of known size, rendered as JSON, text,
// Markdown and gates; and a hand-filled Report rendered. Figures worked out by hand below.
#include <string>

#include "analyze/analysis.h"
#include "analyze/multi_synth.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/gates.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

using nlohmann::json;

// Four ranks, two steps (analyze/multi_synth.h DelayedStep): rank 2 spins 400 ns before
// all-reduce B in step 1 and 300 ns in step 2. B's arrivals: 505 on time, 905 / 805 on rank 2;
// the median of four arrivals is the lower middle pair's mean, 505: lateness 400 and 300. A
// arrives at its launch call on every rank (no skew). So rank 2 is last in 2 of the 4
// all-reduces it took part in (share 0.5), lateness Σ 700 = its lead over the median rank, all
// of it SpinKernelImpl, which the median rank never ran (analyze/straggler_causes_test.cc works
// out the per-instance figures).
Report StragglerReport() {
  analyze::testing::MultiSynth s(4);
  analyze::testing::DelayedStep(s, 4, 0, 1, 2, 400);
  analyze::testing::DelayedStep(s, 4, 2000, 2, 2, 300);
  model::Trace t = s.Finish();
  auto r = analyze::AnalyzeAll(t, analyze::AnalyzeOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  return BuildReport(t, *r, ReportInfo{});
}

TEST(PathsReport, InjectedSpinNamedInJsonTextMarkdownAndGates) {
  const Report rep = StragglerReport();
  ASSERT_EQ(rep.ranks.size(), 4u);
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(rep.ranks[k].summary.straggler_lateness_ns, k == 2 ? 700 : 0) << rep.ranks[k].label;

  json j = json::parse(RenderJson(rep));
  const json& sums = j["straggler_causes"]["summaries"];
  ASSERT_EQ(sums.size(), 1u);  // only rank 2 was ever last
  EXPECT_EQ(sums[0]["label"], "rank 2");
  EXPECT_EQ(sums[0]["rank"], 2);
  EXPECT_EQ(sums[0]["op"], "allreduce");
  EXPECT_EQ(sums[0]["instances"], 4);
  EXPECT_EQ(sums[0]["times_last"], 2);
  EXPECT_DOUBLE_EQ(sums[0]["times_last_share"].get<double>(), 0.5);
  EXPECT_EQ(sums[0]["lateness_ns"], 700);
  EXPECT_EQ(sums[0]["behind_median_ns"], 700);
  EXPECT_EQ(sums[0]["category_delta"]["compute_ns"], 700);  // the spin is a compute kernel
  EXPECT_EQ(sums[0]["names"][0]["name"], "SpinKernelImpl");
  EXPECT_EQ(sums[0]["names"][0]["delta_ns"], 700);
  EXPECT_DOUBLE_EQ(sums[0]["names"][0]["share_of_behind"].get<double>(), 1.0);
  EXPECT_TRUE(sums[0]["names"][0]["slower"].is_null());  // the median rank ran none
  const json& inst = j["straggler_causes"]["instances"];
  ASSERT_EQ(inst.size(), 2u);
  EXPECT_EQ(inst[0]["late"], "rank 2");
  EXPECT_EQ(inst[0]["lateness_ns"], 400);
  EXPECT_EQ(inst[1]["lateness_ns"], 300);
  EXPECT_EQ(j["ranks"][2]["summary"]["straggler_lateness_ns"], 700);

  // Every path's parts add up to its length; the rank's summary is its own paths summed.
  const json& cp = j["critical_path"];
  EXPECT_EQ(cp["iterations"], 2);
  int64_t own2 = 0;
  for (const json& it : cp["per_iteration"]) {
    int64_t parts = 0;
    for (const auto& [key, v] : it["composition"].items())
      if (key != "length_ns") parts += v.get<int64_t>();
    EXPECT_EQ(parts, it["composition"]["length_ns"].get<int64_t>());
    for (const json& o : it["own"])
      if (o["rank"] == 2) own2 += o["composition"]["length_ns"].get<int64_t>();
  }
  EXPECT_GT(own2, 0);
  EXPECT_EQ(j["ranks"][2]["summary"]["critical_path_ns"], own2);

  const std::string text = RenderText(rep);
  EXPECT_NE(text.find("rank 2 arrives last in 50.0% of allreduce (2 of 4); lateness 700 ns in all; 100.0% of its "
                      "lead over the median rank is `SpinKernelImpl`, which the median rank did not run (+700 ns)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("late minus median rank, summed: compute +700 ns"), std::string::npos) << text;
  EXPECT_NE(RenderMarkdown(rep).find("- rank 2 arrives last in 50.0% of allreduce"), std::string::npos);

  GateResult g = EvaluateGates(rep, {*ParseGate("straggler_lateness_ns<=500")});
  EXPECT_FALSE(g.passed);
  ASSERT_EQ(g.lines.size(), 4u);
  EXPECT_EQ(g.lines[2], "FAIL rank 2: straggler_lateness_ns<=500 (value 700)");
}

// A hand-filled Report: a path of 1000 ns (compute 600, host work 300, GPU gaps 100), one
// stream pair that never ran together (share absent), a group pair.
TEST(PathsReport, HandFilledSectionsRender) {
  Report rep;
  PathComposition c;
  c.length_ns = 1000;
  for (const char* k : {"compute", "comm", "memory", "host_launch", "host_untraced", "host_blocked", "gpu_wait_host",
                        "gpu_gap", "wait_peers"})
    c.categories.push_back({k, 0});
  c.categories[0].ns = 600, c.categories[3].ns = 300, c.categories[7].ns = 100;
  rep.critical_path.iterations = 1;
  rep.critical_path.total = c;
  rep.critical_path.top.push_back({std::nullopt, "host_untraced", 0, 0});
  rep.critical_path.top.push_back({"gemm", "compute", 600, 2});
  IterationCriticalPath it;
  it.iteration = 7, it.start_ns = 0, it.end_ns = 1000, it.stop = "reached-start", it.ends_on = "rank 0";
  it.composition = c;
  rep.critical_path.per_iteration.push_back(it);
  DeviceConcurrency d;
  d.rank = 0, d.label = "rank 0", d.device = 3;
  d.whole.streams.push_back({7, 21, {0, 0, 500, std::nullopt}});
  d.whole.groups.push_back({"opt", "emb", {250, 1000, 500, 0.5}});
  rep.stream_concurrency.groups = {{"opt", "optimizer", 4}, {"emb", "embedding", 2}};
  rep.stream_concurrency.devices.push_back(d);

  const std::string text = RenderText(rep);
  EXPECT_NE(text.find("on them: compute 60.0%, host 30.0%, GPU gaps 10.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("(no recorded op)"), std::string::npos);
  // iteration 7: compute 60%, comm/memory 0, host 30%, blocked 0, GPU wait 10%, peers 0.
  EXPECT_NE(text.find("60.0%     0.0%     0.0%    30.0%     0.0%    10.0%     0.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("streams 7 & 21: 0 ns together, n/a of the shorter (0 ns, 500 ns)"), std::string::npos) << text;
  EXPECT_NE(text.find("groups opt & emb: 250 ns together, 50.0% of the shorter (1.0 µs, 500 ns)"), std::string::npos)
      << text;
  EXPECT_NE(RenderMarkdown(rep).find("| rank 0 | 3 | opt & emb | 250 ns | 50.0% |"), std::string::npos);

  json j = json::parse(RenderJson(rep));
  EXPECT_EQ(j["critical_path"]["total"]["length_ns"], 1000);
  EXPECT_EQ(j["critical_path"]["total"]["host_launch_ns"], 300);
  EXPECT_TRUE(j["critical_path"]["top"][0]["name"].is_null());
  EXPECT_EQ(j["critical_path"]["per_iteration"][0]["iteration"], 7);
  EXPECT_TRUE(j["stream_concurrency"]["devices"][0]["whole"]["streams"][0]["share"].is_null());
  EXPECT_EQ(j["stream_concurrency"]["devices"][0]["whole"]["groups"][0]["a"], "opt");
  EXPECT_EQ(j["stream_concurrency"]["groups"][1]["activities"], 2);
  // A summary without a path: the share metrics are absent (null), never NaN.
  RankSummary s;
  s.critical_path_shares.push_back({"compute", std::nullopt});
  for (const Metric& m : SummaryMetrics(s))
    if (m.name == "critical_path_compute_share") EXPECT_FALSE(m.ratio.has_value());
}

}  // namespace
}  // namespace overlapscope::report
