// The typed report, its renderers and --require gates (report/), on synthetic traces whose
// figures are computed by hand in the comments.
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

using nlohmann::json;

// One rank, one GPU: gemm [0,100) on stream 7; with comm, an NCCL kernel [50,250) on stream 17.
// M = [50,250) = 200, hidden = [50,100) = 50 -> overlap_ratio 0.25.
model::Trace MakeTrace(bool with_comm) {
  model::TraceBuilder b;
  model::Process p;
  p.pid = 42;
  p.rank = 0;
  model::ProcessId pid = b.AddProcess(p);
  model::DeviceId dev = b.GetOrAddDevice(pid, 0);
  auto kernel = [&](const char* name, int64_t stream, int64_t s, int64_t e) {
    model::Kernel k;
    k.start_ns = s;
    k.end_ns = e;
    k.device = dev;
    k.stream = b.GetOrAddStream(dev, stream);
    k.name = b.Intern(name);
    b.data().kernels.push_back(k);
  };
  kernel("gemm", 7, 0, 100);
  if (with_comm) kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 17, 50, 250);
  auto t = std::move(b).Finalize();
  EXPECT_TRUE(t.ok());
  return std::move(t).value();
}

analyze::AnalysisResult Analyze(const model::Trace& t) {
  auto r = analyze::AnalyzeAll(t, analyze::AnalyzeOptions{});
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

TEST(ReportJson, SchemaSummaryKeysAndNoNaN) {
  for (bool with_comm : {true, false}) {
    model::Trace t = MakeTrace(with_comm);
    auto r = Analyze(t);
    std::string text = RenderJson(BuildReport(t, r, ReportInfo{}));
    EXPECT_EQ(text.find("NaN"), std::string::npos);
    json j = json::parse(text);
    EXPECT_EQ(j["schema"], "overlapscope.report/1");
    ASSERT_EQ(j["ranks"].size(), 1u);
    const json& s = j["ranks"][0]["summary"];
    for (const std::string& k : GateMetricNames()) EXPECT_TRUE(s.contains(k)) << k;
    EXPECT_EQ(s.size(), GateMetricNames().size());
    if (with_comm) {
      EXPECT_DOUBLE_EQ(s["overlap_ratio"].get<double>(), 0.25);
      EXPECT_EQ(s["exposed_comm_ns"].get<int64_t>(), 150);
      EXPECT_FALSE(j["ranks"][0]["devices"][0]["overlap"]["no_communication"].get<bool>());
    } else {
      EXPECT_TRUE(s["overlap_ratio"].is_null());
      EXPECT_TRUE(s["hta_compat_overlap_pct"].is_null());
      EXPECT_TRUE(j["ranks"][0]["devices"][0]["overlap"]["no_communication"].get<bool>());
    }
  }
}

TEST(ReportText, SummaryFirstAndNoCommunicationSaidSo) {
  model::Trace t = MakeTrace(false);
  auto r = Analyze(t);
  std::string text = RenderText(BuildReport(t, r, ReportInfo{}));
  EXPECT_EQ(text.rfind("overlapscope analyze:", 0), 0u);
  EXPECT_NE(text.find("no communication"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  model::Trace t2 = MakeTrace(true);
  auto r2 = Analyze(t2);
  std::string text2 = RenderText(BuildReport(t2, r2, ReportInfo{}));
  EXPECT_NE(text2.find("25.0% of communication hidden"), std::string::npos) << text2;
  std::string md = RenderMarkdown(BuildReport(t2, r2, ReportInfo{}));
  EXPECT_NE(md.find("| rank | overlap |"), std::string::npos);
  EXPECT_NE(md.find("| 0 | 25.0% |"), std::string::npos) << md;
  std::string ex = RenderExplainClasses(BuildClassExplanations(t2, r2.classes));
  EXPECT_NE(ex.find("comm prefix ncclDevKernel"), std::string::npos) << ex;
  EXPECT_NE(ex.find("gemm"), std::string::npos);
}

TEST(Gates, ParseForms) {
  auto g = ParseGate("overlap_ratio>=0.6");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->metric, "overlap_ratio");
  EXPECT_EQ(g->op, ">=");
  EXPECT_DOUBLE_EQ(g->threshold, 0.6);
  g = ParseGate(" blocked_share < 5e-2 ");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->op, "<");
  EXPECT_DOUBLE_EQ(g->threshold, 0.05);
  EXPECT_TRUE(ParseGate("findings==0").ok());
  EXPECT_FALSE(ParseGate("overlap_ratio=0.6").ok());
  EXPECT_FALSE(ParseGate("overlap_ratio>=abc").ok());
  EXPECT_FALSE(ParseGate(">=0.5").ok());
  EXPECT_FALSE(ParseGate("overlap_ratio").ok());
  // Regression (issue 11): strtod read these, and a gate against NaN or inf checks nothing.
  for (const char* e : {"overlap_ratio>=nan", "overlap_ratio>=NAN", "blocked_share<=inf", "blocked_share<-infinity",
                        "findings<=1e999"}) {
    auto bad = ParseGate(e);
    ASSERT_FALSE(bad.ok()) << e;
    EXPECT_NE(bad.status().message().find("is not a finite number"), std::string::npos) << bad.status();
  }
}

TEST(Gates, PassFailAbsentAndUnknown) {
  model::Trace t = MakeTrace(true);
  auto r = Analyze(t);
  const Report rep = BuildReport(t, r, ReportInfo{});
  // overlap_ratio = 0.25: passes >= 0.2, fails >= 0.6.
  GateResult ok = EvaluateGates(rep, {*ParseGate("overlap_ratio>=0.2"), *ParseGate("exposed_comm_ns<=150")});
  EXPECT_TRUE(ok.passed);
  // The checks are the lines structured: rank 0, gate by gate, with the summary's values.
  ASSERT_EQ(ok.checks.size(), 2u);
  ASSERT_EQ(ok.lines.size(), 2u);
  EXPECT_EQ(ok.checks[1].rank, 0u);
  EXPECT_EQ(ok.checks[1].gate, 1u);
  ASSERT_TRUE(ok.checks[0].value && ok.checks[0].value->ratio);
  EXPECT_EQ(ok.checks[0].value->name, "overlap_ratio");
  EXPECT_DOUBLE_EQ(*ok.checks[0].value->ratio, 0.25);
  ASSERT_TRUE(ok.checks[1].value.has_value());
  EXPECT_FALSE(ok.checks[1].value->is_ratio);
  EXPECT_EQ(ok.checks[1].value->integer, rep.ranks[0].summary.exposed_comm_ns);
  EXPECT_TRUE(ok.checks[0].passed && ok.checks[1].passed);
  GateResult bad = EvaluateGates(rep, {*ParseGate("overlap_ratio>=0.6")});
  EXPECT_FALSE(bad.passed);
  ASSERT_EQ(bad.lines.size(), 1u);
  ASSERT_EQ(bad.checks.size(), 1u);
  EXPECT_FALSE(bad.checks[0].passed);
  EXPECT_NE(bad.lines[0].find("FAIL rank 0"), std::string::npos) << bad.lines[0];
  EXPECT_NE(bad.lines[0].find("0.25"), std::string::npos) << bad.lines[0];
  // Without communication the metric is absent: the gate fails and says why.
  model::Trace t2 = MakeTrace(false);
  auto r2 = Analyze(t2);
  GateResult absent = EvaluateGates(BuildReport(t2, r2, ReportInfo{}), {*ParseGate("overlap_ratio>=0.6")});
  EXPECT_FALSE(absent.passed);
  EXPECT_NE(absent.lines[0].find("no communication"), std::string::npos) << absent.lines[0];
  ASSERT_EQ(absent.checks.size(), 1u);
  ASSERT_TRUE(absent.checks[0].value.has_value());  // the metric exists, its ratio is absent
  EXPECT_FALSE(absent.checks[0].value->ratio.has_value());
  EXPECT_FALSE(absent.checks[0].passed);
  // A name no summary has fails (callers check names first: engine::CheckGate).
  GateResult unknown = EvaluateGates(rep, {*ParseGate("overlap>=0.6")});
  EXPECT_FALSE(unknown.passed);
  EXPECT_NE(unknown.lines[0].find("not in the summary"), std::string::npos) << unknown.lines[0];
  ASSERT_EQ(unknown.checks.size(), 1u);
  EXPECT_FALSE(unknown.checks[0].value.has_value());
  EXPECT_FALSE(unknown.checks[0].passed);
}

}  // namespace
}  // namespace overlapscope::report
namespace overlapscope::report {
namespace {

// Capture windows (analyze/windows.h) reach the JSON (ranks[].windows) and the text report.
// gemm [1000,1100) launched at 900 inside a whole-program window [0, 2000): start-up 900 ns.
TEST(ReportWindows, StartupExcludedIsReported) {
  model::TraceBuilder b;
  model::Process p;
  p.pid = 42;
  const model::ProcessId pid = b.AddProcess(p);
  const model::DeviceId dev = b.GetOrAddDevice(pid, 0);
  model::ApiCall a;
  a.start_ns = 900, a.end_ns = 910, a.thread = b.GetOrAddThread(pid, 1), a.correlation_id = 1;
  a.name = b.Intern("cudaLaunchKernel");
  b.data().api_calls.push_back(a);
  model::Kernel k;
  k.start_ns = 1000, k.end_ns = 1100, k.device = dev, k.stream = b.GetOrAddStream(dev, 7), k.correlation_id = 1;
  k.name = b.Intern("gemm");
  b.data().kernels.push_back(k);
  b.data().windows.push_back({pid, 1, 0, 2000, model::WindowTrigger::kProcess, 0});
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  const analyze::AnalysisResult r = Analyze(*t);
  const Report rep = BuildReport(*t, r, ReportInfo{});
  ASSERT_EQ(rep.ranks.size(), 1u);
  ASSERT_EQ(rep.ranks[0].windows.size(), 1u);
  EXPECT_EQ(rep.ranks[0].windows[0].trigger, "process");
  EXPECT_EQ(rep.ranks[0].windows[0].startup_excluded_ns, 900);
  json j = json::parse(RenderJson(rep));
  ASSERT_EQ(j["ranks"][0]["windows"].size(), 1u);
  const json& w = j["ranks"][0]["windows"][0];
  EXPECT_EQ(w["trigger"], "process");
  EXPECT_EQ(w["startup_excluded_ns"], 900);
  EXPECT_EQ(w["start_ns"], 900);
  EXPECT_EQ(w["kernels"], 1);
  EXPECT_EQ(w["gpu_busy_ns"], 100);
  const std::string text = RenderText(rep);
  EXPECT_NE(text.find("start-up before the first kernel excluded (900 ns)"), std::string::npos) << text;
  // Imported traces have no windows: an empty list, no line.
  model::Trace plain = MakeTrace(false);
  json jp = json::parse(RenderJson(BuildReport(plain, Analyze(plain), ReportInfo{})));
  EXPECT_TRUE(jp["ranks"][0]["windows"].empty());
}

}  // namespace
}  // namespace overlapscope::report
