// Report 1.9: processes without GPU work listed apart (not ranks) in every rendering, and the
// transfer/wait split of communication (METRICS §2) in the summary, devices, text, Markdown, HTML,
// gates, diff and the JSON read back. Figures by hand in the comments.
#include <string>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "model/trace_builder.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/diff.h"
#include "report/gates.h"
#include "report/html.h"
#include "report/read_json.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

using nlohmann::json;

// A launcher (pid 1467 "torchrun", no GPU activity) and two ranks. Each rank: gemm [0, 2500) on
// stream 1 (rank 0 only) and one all-reduce (seq 0) on stream 7 without launch calls (arrival =
// start): rank 0 [1000, 3000), rank 1 [1800, 3100). Last arrival 1800 (rank 1): rank 0 waits
// [1000, 1800) = 800, all hidden under its gemm; rank 1 waits 0.
model::Trace Job(bool with_launcher) {
  model::TraceBuilder b;
  if (with_launcher) {
    model::Process l;
    l.pid = 1467;
    l.name = b.Intern("torchrun");
    const model::ProcessId lp = b.AddProcess(l);
    model::ApiCall a;  // host work only
    a.start_ns = 0, a.end_ns = 10, a.thread = b.GetOrAddThread(lp, 1), a.name = b.Intern("cudaGetDeviceCount");
    b.data().api_calls.push_back(a);
  }
  for (int r = 0; r < 2; ++r) {
    const model::ProcessId p = b.AddProcess(model::Process{2000 + r, r, 2});
    const model::DeviceId d = b.GetOrAddDevice(p, r);
    model::Collective c;
    c.op = b.Intern("allreduce"), c.communicator = b.Intern("pg"), c.sequence = 0, c.nranks = 2, c.rank = r;
    b.data().collectives.push_back(c);
    auto kernel = [&](const char* name, int64_t stream, int64_t s, int64_t e, model::CollectiveId coll) {
      model::Kernel k;
      k.start_ns = s, k.end_ns = e, k.device = d, k.stream = b.GetOrAddStream(d, stream), k.name = b.Intern(name);
      k.collective = coll;
      b.data().kernels.push_back(k);
    };
    if (r == 0) kernel("gemm", 1, 0, 2500, model::kNone);
    kernel("ncclDevKernel_AllReduce_Sum_f32", 7, r == 0 ? 1000 : 1800, r == 0 ? 3000 : 3100,
           static_cast<model::CollectiveId>(b.data().collectives.size() - 1));
  }
  auto t = std::move(b).Finalize();
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(t).value();
}

Report Build(const model::Trace& t) {
  auto r = analyze::AnalyzeAll(t, analyze::AnalyzeOptions{});
  EXPECT_TRUE(r.ok());
  return BuildReport(t, *r, ReportInfo{});
}

TEST(ProcessesWithoutGpu, ListedApartInEveryRendering) {
  const model::Trace t = Job(true);
  const Report rep = Build(t);
  ASSERT_EQ(rep.ranks.size(), 2u);  // the launcher is no rank
  EXPECT_EQ(rep.ranks[0].label, "rank 0");
  ASSERT_EQ(rep.processes_without_gpu_work.size(), 1u);
  EXPECT_EQ(rep.processes_without_gpu_work[0].pid, 1467);
  EXPECT_EQ(rep.processes_without_gpu_work[0].name, "torchrun");
  const std::string line = "also captured: pid 1467 `torchrun` \u2014 no GPU work";
  EXPECT_NE(RenderText(rep).find(line), std::string::npos) << RenderText(rep);
  EXPECT_NE(RenderMarkdown(rep).find(line), std::string::npos);
  EXPECT_NE(RenderHtml(rep, {}).find("pid 1467 <code>torchrun</code> \u2014 no GPU work"), std::string::npos);
  EXPECT_EQ(RenderText(rep).find("pid 1467 ("), std::string::npos);  // no rank block for it
  const json j = json::parse(RenderJson(rep));
  EXPECT_EQ(j["schema_version"], "1.11");
  ASSERT_EQ(j["ranks"].size(), 2u);
  ASSERT_EQ(j["processes_without_gpu_work"].size(), 1u);
  EXPECT_EQ(j["processes_without_gpu_work"][0]["pid"], 1467);
  EXPECT_EQ(j["processes_without_gpu_work"][0]["name"], "torchrun");
  EXPECT_TRUE(j["processes_without_gpu_work"][0]["rank"].is_null());
  auto back = ReadReportJson(RenderJson(rep), "t.json");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->processes_without_gpu_work.size(), 1u);
  EXPECT_EQ(back->processes_without_gpu_work[0].name, "torchrun");
}

TEST(ProcessesWithoutGpu, NoLineWithoutThem) {
  const Report rep = Build(Job(false));
  EXPECT_TRUE(rep.processes_without_gpu_work.empty());
  EXPECT_EQ(RenderText(rep).find("also captured"), std::string::npos);
  EXPECT_TRUE(json::parse(RenderJson(rep))["processes_without_gpu_work"].empty());
}

TEST(CommWaitReport, SummaryDevicesTextAndReadBack) {
  const Report rep = Build(Job(true));
  ASSERT_EQ(rep.ranks.size(), 2u);
  const RankSummary& s0 = rep.ranks[0].summary;
  EXPECT_EQ(s0.comm_ns, 2000);
  EXPECT_EQ(s0.hidden_comm_ns, 1500);  // [1000, 2500)
  ASSERT_TRUE(s0.comm_wait_ns.has_value());
  EXPECT_EQ(*s0.comm_wait_ns, 800);
  EXPECT_EQ(*s0.hidden_wait_ns, 800);
  EXPECT_EQ(*s0.exposed_wait_ns, 0);
  ASSERT_TRUE(rep.ranks[0].waited_for_most.has_value());
  EXPECT_EQ(rep.ranks[0].waited_for_most->label, "rank 1");
  EXPECT_EQ(rep.ranks[0].waited_for_most->wait_ns, 800);
  EXPECT_EQ(*rep.ranks[1].summary.comm_wait_ns, 0);
  EXPECT_FALSE(rep.ranks[1].waited_for_most.has_value());
  ASSERT_EQ(rep.ranks[0].devices.size(), 1u);
  ASSERT_TRUE(rep.ranks[0].devices[0].comm_wait.has_value());
  EXPECT_EQ(rep.ranks[0].devices[0].comm_wait->hidden_wait_ns, 800);

  const std::string text = RenderText(rep);
  EXPECT_NE(
      text.find("0.001 ms of the communication was waiting for the last peer (hidden 0.001 ms, exposed 0.000 ms); "
                "waited for rank 1 most"),
      std::string::npos)
      << text;
  EXPECT_NE(RenderMarkdown(rep).find("| 800 ns (800 ns, 0 ns) for rank 1 |"), std::string::npos) << RenderMarkdown(rep);
  EXPECT_NE(RenderHtml(rep, {}).find("communication waiting for the last peer"), std::string::npos);

  const std::string js = RenderJson(rep);
  const json j = json::parse(js);
  EXPECT_EQ(j["ranks"][0]["summary"]["comm_wait_ns"], 800);
  EXPECT_EQ(j["ranks"][0]["summary"]["hidden_wait_ns"], 800);
  EXPECT_EQ(j["ranks"][0]["waited_for_most"]["label"], "rank 1");
  EXPECT_EQ(j["ranks"][0]["devices"][0]["comm_wait"]["waited_for"][0]["wait_ns"], 800);
  auto back = ReadReportJson(js, "t.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ranks[0].summary.comm_wait_ns, 800);
  EXPECT_EQ(back->ranks[0].waited_for_most->label, "rank 1");
  EXPECT_EQ(back->ranks[0].devices[0].comm_wait->comm_wait_ns, 800);
  EXPECT_EQ(RenderJson(*back), js);  // round trip
}

TEST(CommWaitReport, UnknownIsNullAndGatesSayWhy) {
  // One rank: its collective is matched with nobody, arrivals unknown.
  model::TraceBuilder b;
  const model::ProcessId p = b.AddProcess(model::Process{7, 0, 1});
  const model::DeviceId d = b.GetOrAddDevice(p, 0);
  model::Kernel k;
  k.start_ns = 0, k.end_ns = 100, k.device = d, k.stream = b.GetOrAddStream(d, 7);
  k.name = b.Intern("ncclDevKernel_AllReduce_Sum_f32");
  b.data().kernels.push_back(k);
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  const Report rep = Build(*t);
  EXPECT_FALSE(rep.ranks[0].summary.comm_wait_ns.has_value());
  const json j = json::parse(RenderJson(rep));
  EXPECT_TRUE(j["ranks"][0]["summary"]["comm_wait_ns"].is_null());
  EXPECT_TRUE(j["ranks"][0]["devices"][0]["comm_wait"].is_null());
  EXPECT_NE(RenderMarkdown(rep).find("| n/a |"), std::string::npos);
  auto gate = ParseGate("comm_wait_ns <= 10");
  ASSERT_TRUE(gate.ok());
  const GateResult g = EvaluateGates(rep, {*gate});
  EXPECT_FALSE(g.passed);
  ASSERT_EQ(g.lines.size(), 1u);
  EXPECT_NE(g.lines[0].find("arrivals unknown"), std::string::npos) << g.lines[0];
}

// The new finding kind in the Markdown and HTML findings and in diff's per-kind summary deltas.
TEST(CollectiveWaitedAtOnceReport, MarkdownHtmlAndDiffByKind) {
  const Report base = Build(Job(false));
  Report test = base;
  RankReport& rk = test.ranks[0];
  Finding f;
  f.kind = "collective-waited-at-once";
  f.time_ns = 1000, f.end_ns = 3000, f.cost_ns = 500;
  f.message = "allreduce at +0.001 ms runs on stream 7, but stream 1 waits for it";
  f.advice = "issue the next independent matmul before calling wait()";
  rk.findings.items.push_back(f);
  bool listed = false;
  for (KindFigures& k : rk.findings.by_kind)
    if (k.kind == f.kind) k.count = 1, k.ns = 500, listed = true;
  ASSERT_TRUE(listed);  // every kind of the rules is listed, with a count of 0 when none
  for (NamedValue& v : rk.summary.findings)
    if (v.name == "collective_waited_at_once") v.value = 1;
  EXPECT_NE(RenderMarkdown(test).find("- `collective-waited-at-once` x1, cost 500 ns"), std::string::npos)
      << RenderMarkdown(test);
  EXPECT_NE(RenderHtml(test, {}).find("<td>collective-waited-at-once</td><td>1</td>"), std::string::npos);
  const ReportDiff d = DiffReports(base, test);
  ASSERT_FALSE(d.ranks.empty());
  bool found = false;
  for (const MetricDelta& m : d.ranks[0].summary)
    if (m.metric == "finding_collective_waited_at_once") {
      found = true;
      EXPECT_EQ(m.value.base, 0);
      EXPECT_EQ(m.value.test, 1);
    }
  EXPECT_TRUE(found);
  EXPECT_NE(RenderDiffText(d).find("finding_collective_waited_at_once"), std::string::npos) << RenderDiffText(d);
}

}  // namespace
}  // namespace overlapscope::report
