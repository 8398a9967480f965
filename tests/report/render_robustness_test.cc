// A deliberately broken report cannot crash a renderer or a gate: NaN and infinite ratios,
// absent optionals, extreme and negative times, empty lists, counts that disagree with their
// lists, a negative top_n, invalid UTF-8. And the builder never reads out of bounds when the
// analysis results it is given hold ids of another trace.
#include <cmath>
#include <limits>
#include <string>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "model/trace_builder.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/gates.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Report Broken() {
  Report r;
  r.time_span = {kMax, kMin};  // end before start, at the limits
  r.options.top_n = -5;
  r.options.min_gap_ns = kMin;
  r.clock_alignment.status = "aligned";
  r.clock_alignment.summary = "bad \xff\xfe utf-8";
  r.iterations.count = -1;
  r.iterations.assigned_by_own_start = kMax;
  RankReport rk;
  rk.label = "rank \xc3";  // truncated UTF-8
  rk.rank = kMin;
  rk.summary.comm_ns = 10;
  rk.summary.overlap_ratio = kNaN;
  rk.summary.blocked_share = kInf;
  rk.summary.gpu_idle_share = -kInf;
  rk.summary.hta_compat_overlap_pct = kNaN;
  rk.summary.findings = {{"a", kMax}, {"b", kMax}};  // their total overflows: saturates
  DeviceReport d;
  d.collectives.count = -3;  // and top_exposed empty
  d.collectives.top_exposed.push_back({"x", std::nullopt, kMax, kMin, kMin, kMax, kNaN});
  IterationOverlap it;
  it.stats.overlap_ratio = kNaN;
  for (int i = 0; i < 30; ++i) d.iterations.push_back(it);  // more than 2 x top_n
  d.slowdowns.push_back({"", kMin, kMax, kMin, kMax, kNaN});
  d.idle.idle_share = kNaN;
  d.top_gaps.push_back({kMax, kMin, "", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  d.launch_delay.push_back({std::nullopt, {}, kMin, kMax});
  rk.devices.push_back(d);
  rk.threads.push_back({});        // thread absent, no calls
  rk.blocked_intervals.count = 0;  // but one listed
  rk.blocked_intervals.top.push_back({"", "", std::nullopt, kMin, kMax, std::nullopt, std::nullopt, 0, 0, {}, true});
  for (int i = 0; i < 3; ++i) rk.findings.items.push_back({"k", kMin, kMax, {}, {}, "", {}, kMin, "", ""});
  rk.findings.by_kind.push_back({"k", kMax, kMin});
  rk.sync_points.by_kind.push_back({"", -1, -1});
  rk.launch_calls.push_back({});
  r.ranks.push_back(rk);
  r.ranks.push_back(RankReport{});  // an empty rank
  CrossRank& x = r.collectives_across_ranks;
  x.matched_instances = 5;  // but one instance, with no ranks
  Instance ci;
  ci.algbw_gbps = kNaN;
  ci.busbw_gbps = kInf;
  ci.size_bytes = kMin;
  x.instances.push_back(ci);
  Instance ci2;
  InstanceRank ir;
  ir.ref.label = "p";
  ir.start_ns = kMin;
  ir.arrival_ns = kMax;
  ir.end_ns = kMax;
  ir.wait_ns = kMin;
  ir.channel_span_ns = kMin;
  ci2.ranks.push_back(ir);
  x.instances.push_back(ci2);
  x.ranks.push_back({{"", {}, {}, {}}, kMax, kMin, kMax});
  x.top_skew.push_back({});
  x.top_skew.back().algbw_gbps = kNaN;
  return r;
}

TEST(RenderRobustness, BrokenFieldsRenderAsWhatTheyAre) {
  const Report r = Broken();
  const std::string json = RenderJson(r);
  // Valid JSON (invalid UTF-8 replaced), NaN and infinities as null, never "nan".
  nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_TRUE(j["ranks"][0]["summary"]["overlap_ratio"].is_null());
  EXPECT_TRUE(j["ranks"][0]["summary"]["blocked_share"].is_null());
  EXPECT_EQ(j["ranks"][0]["summary"]["findings"].get<int64_t>(), kMax);  // saturated, not wrapped
  EXPECT_EQ(j["time_span"]["duration_ns"].get<int64_t>(), kMin);         // saturated
  EXPECT_EQ(json.find("NaN"), std::string::npos);
  for (size_t shown : {size_t{0}, size_t{1}, std::numeric_limits<size_t>::max()}) {
    TextOptions o;
    o.collectives_shown = shown;
    const std::string text = RenderText(r, o);
    EXPECT_NE(text.find("nan%"), std::string::npos);  // a NaN ratio says so, it is not hidden
    EXPECT_NE(text.find("== rank"), std::string::npos);
    EXPECT_NE(text.find("== collectives across ranks =="), std::string::npos);
    const std::string md = RenderMarkdown(r, o);
    EXPECT_NE(md.find("| rank |"), std::string::npos);
  }
  // Gates: a NaN value fails every comparison; an absent one fails and says so.
  auto g = ParseGate("overlap_ratio>=0");
  ASSERT_TRUE(g.ok());
  GateResult res = EvaluateGates(r, {*g});
  EXPECT_FALSE(res.passed);
  ASSERT_EQ(res.lines.size(), 2u);
  EXPECT_EQ(res.lines[0].rfind("FAIL", 0), 0u) << res.lines[0];
  EXPECT_NE(res.lines[1].find("absent"), std::string::npos) << res.lines[1];
  EXPECT_EQ(Diff(kMin, 1), kMin);
  EXPECT_EQ(Diff(kMax, -1), kMax);
  EXPECT_EQ(Sum(kMax, 1), kMax);
  EXPECT_EQ(Short("abcdef", 2), "abcdef");  // too short a limit to cut: left whole
}

TEST(RenderRobustness, EmptyReportRenders) {
  const Report r;
  EXPECT_NO_THROW(nlohmann::json::parse(RenderJson(r)));
  EXPECT_EQ(RenderText(r).rfind("overlapscope analyze: 0 rank(s)", 0), 0u);
  EXPECT_NE(RenderMarkdown(r).find("0 rank(s)"), std::string::npos);
  EXPECT_TRUE(EvaluateGates(r, {}).passed);
}

// Results that name ids the trace does not have (an analysis of another trace, corrupted
// memory): the builder renders them absent instead of reading out of bounds.
TEST(RenderRobustness, BuilderIgnoresIdsOutOfRange) {
  model::TraceBuilder b;
  model::Process p;
  p.pid = 7;
  p.rank = 0;
  const model::ProcessId pid = b.AddProcess(p);
  const model::DeviceId dev = b.GetOrAddDevice(pid, 0);
  model::Kernel k;
  k.start_ns = 0;
  k.end_ns = 100;
  k.device = dev;
  k.stream = b.GetOrAddStream(dev, 7);
  b.data().kernels.push_back(k);
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  auto a = analyze::AnalyzeAll(*t, analyze::AnalyzeOptions{});
  ASSERT_TRUE(a.ok());
  analyze::AnalysisResult r = *a;
  ASSERT_EQ(r.ranks.size(), 1u);
  r.ranks[0].devices.push_back(99);  // no such device result
  r.ranks[0].process = 5;            // no such process
  analyze::IdleGap gap;
  gap.device = r.overlap[0].device;
  gap.ended_by = {model::GpuKind::kMemcpy, 1234};
  gap.launch_call = 777;
  gap.thread = 55;
  gap.iteration = 3;
  r.gaps.push_back(gap);
  r.overlap[0].iterations.push_back({42, 9, 0, 10, {}});
  analyze::Finding f;
  f.process = 5;
  f.thread = 12;
  f.stream = 13;
  f.call = 99999;
  f.iteration = -7;
  r.sync.findings.push_back(f);
  analyze::CollectiveInstance ci;
  ci.ranks.push_back({1234, 0, 0, 10, 0, 77, 0, {}});
  ci.last = 88;
  r.cross_rank.instances.push_back(ci);
  r.cross_rank.ranks.push_back({66, 0, 1, 2, 3});
  const Report rep = BuildReport(*t, r, ReportInfo{});
  ASSERT_EQ(rep.ranks.size(), 1u);
  EXPECT_EQ(rep.ranks[0].devices.size(), 1u);  // device result 99 left out
  EXPECT_EQ(rep.ranks[0].host, "");
  ASSERT_EQ(rep.ranks[0].devices[0].top_gaps.size(), 1u);
  const IdleGap& g = rep.ranks[0].devices[0].top_gaps[0];
  EXPECT_FALSE(g.ended_by.has_value());
  EXPECT_FALSE(g.launch_call.has_value());
  EXPECT_FALSE(g.thread.has_value());
  EXPECT_FALSE(g.iteration.has_value());
  EXPECT_EQ(rep.ranks[0].devices[0].iterations.back().cpu_start_ns, 0);  // iteration 42 unknown
  ASSERT_EQ(rep.ranks[0].findings.items.size(), 1u);
  EXPECT_EQ(rep.ranks[0].findings.items[0].call, "");
  EXPECT_FALSE(rep.ranks[0].findings.items[0].thread.has_value());
  ASSERT_EQ(rep.collectives_across_ranks.instances.size(), 1u);
  EXPECT_FALSE(rep.collectives_across_ranks.instances[0].last.has_value());
  EXPECT_EQ(rep.collectives_across_ranks.instances[0].ranks[0].ref.label, "?");
  EXPECT_NO_THROW(nlohmann::json::parse(RenderJson(rep)));
  EXPECT_FALSE(RenderText(rep).empty());
}

}  // namespace
}  // namespace overlapscope::report
