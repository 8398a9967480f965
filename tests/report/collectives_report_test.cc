// Multi-rank report sections (report/report_collectives.cc): every matched collective
// with its bytes, sequence and per-rank start/wait/duration; GPU labels when no rank is known;
// the clock-alignment line. Figures worked out by hand in the comments.
#include <string>

#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "gtest/gtest.h"
#include "model/trace_builder.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/gates.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

using nlohmann::json;

// One process (pid 42, no rank), GPUs 0 and 1, `n` all-gathers of 1 MiB each: instance k runs on
// GPU 0 over [1000k+100, 1000k+500) and on GPU 1 over [1000k+250, 1000k+520) (k = 1..n). Plugin
// fields (RING/SIMPLE, 4 channels, channel span 300 ns) on GPU 0's records.
// `align`: clocks aligned while the trace is built (analyze::ClockAlignmentShift), the
// estimate stored there.
model::Trace OneProcessTwoGpus(int n, const char* host0 = "", const char* host1 = nullptr,
                               analyze::ClockAlignment* align = nullptr) {
  model::TraceBuilder b;
  model::Process p;
  p.pid = 42;
  p.host = b.Intern(host0);
  model::ProcessId procs[2];
  procs[0] = b.AddProcess(p);
  if (host1 != nullptr) {  // a second process on another host drives GPU 1
    p.pid = 43;
    p.host = b.Intern(host1);
    procs[1] = b.AddProcess(p);
  } else {
    procs[1] = procs[0];
  }
  model::DeviceId dev[2] = {b.GetOrAddDevice(procs[0], 0), b.GetOrAddDevice(procs[1], 1)};
  for (int k = 1; k <= n; ++k) {
    for (int g = 0; g < 2; ++g) {
      model::Collective c;
      c.op = b.Intern("AllGather");
      c.communicator = b.Intern("0xc0ffee");
      c.bytes = 1 << 20;
      if (g == 0) {
        c.algorithm = b.Intern("RING");
        c.protocol = b.Intern("SIMPLE");
        c.channels = 4;
        c.channel_span_ns = 300;
      }
      b.data().collectives.push_back(c);
      model::Kernel kern;
      kern.start_ns = 1000 * k + (g == 0 ? 100 : 250);
      kern.end_ns = 1000 * k + (g == 0 ? 500 : 520);
      kern.device = dev[g];
      kern.stream = b.GetOrAddStream(dev[g], 13);
      kern.name = b.Intern("ncclDevKernel_AllGather_RING_SIMPLE");
      kern.collective = static_cast<model::CollectiveId>(b.data().collectives.size() - 1);
      b.data().kernels.push_back(kern);
    }
  }
  model::FinalizeOptions options;
  if (align != nullptr) options.clock_shift = analyze::ClockAlignmentShift(analyze::ClockAlignMode::kAuto, align);
  auto t = std::move(b).Finalize(options);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(t).value();
}

analyze::AnalysisResult Analyze(const model::Trace& t) {
  auto r = analyze::AnalyzeAll(t, analyze::AnalyzeOptions{});
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

TEST(CollectivesReport, EveryInstanceWithBytesAndPerGpuTimesInJson) {
  model::Trace t = OneProcessTwoGpus(3);
  auto r = Analyze(t);
  json j = json::parse(RenderJson(BuildReport(t, r, ReportInfo{})));
  EXPECT_EQ(j["schema"], "overlapscope.report/1");
  EXPECT_EQ(j["schema_version"], "1.11");
  const json& x = j["collectives_across_ranks"];
  EXPECT_EQ(x["identified_by"], "gpu");
  EXPECT_EQ(x["matched_by"], "order");
  ASSERT_EQ(x["instances"].size(), 3u);
  const json& i1 = x["instances"][0];
  EXPECT_EQ(i1["op"], "AllGather");
  EXPECT_EQ(i1["communicator"], "0xc0ffee");
  EXPECT_TRUE(i1["sequence"].is_null());
  EXPECT_EQ(i1["order"], 1);
  EXPECT_EQ(i1["bytes"], 1048576);
  EXPECT_EQ(i1["size_bytes"], 1048576);
  EXPECT_EQ(i1["algorithm"], "RING");
  EXPECT_EQ(i1["protocol"], "SIMPLE");
  EXPECT_EQ(i1["channels"], 4);
  // Instance 1: starts 1100 / 1250 -> skew 150, GPU 1 last; GPU 0 waits 150, runs 400 ns.
  EXPECT_EQ(i1["skew_ns"], 150);
  EXPECT_EQ(i1["last"], "GPU 1");
  ASSERT_EQ(i1["ranks"].size(), 2u);
  EXPECT_EQ(i1["ranks"][0]["label"], "GPU 0");
  EXPECT_TRUE(i1["ranks"][0]["rank"].is_null());
  EXPECT_EQ(i1["ranks"][0]["start_ns"], 1100);
  // No launch calls in this trace: arrival falls back to the start for all 3 x 2 participants.
  EXPECT_EQ(i1["ranks"][0]["arrival_ns"], 1100);
  EXPECT_EQ(i1["ranks"][0]["arrival_source"], "fallback-no-call");
  EXPECT_EQ(x["skew_from"], "arrival");
  EXPECT_EQ(x["arrival_fallbacks"], 6);
  EXPECT_EQ(i1["ranks"][0]["wait_ns"], 150);
  EXPECT_EQ(i1["ranks"][0]["duration_ns"], 400);
  EXPECT_EQ(i1["ranks"][0]["channel_span_ns"], 300);
  EXPECT_EQ(i1["ranks"][1]["duration_ns"], 270);
  EXPECT_TRUE(i1["ranks"][1]["channel_span_ns"].is_null());
  // The one process sums both GPUs' waits: 3 instances x 150 ns.
  EXPECT_EQ(j["ranks"][0]["summary"]["collective_wait_ns"], 450);
  EXPECT_EQ(j["ranks"][0]["label"], "pid 42 (GPU 0, GPU 1)");
  // Gates name the process the same way. 3 x 150 ns of waiting fails a 400 ns ceiling.
  GateResult g = EvaluateGates(BuildReport(t, r, ReportInfo{}), {*ParseGate("collective_wait_ns<=400")});
  EXPECT_FALSE(g.passed);
  ASSERT_EQ(g.lines.size(), 1u);
  EXPECT_EQ(g.lines[0], "FAIL pid 42 (GPU 0, GPU 1): collective_wait_ns<=400 (value 450)");
}

TEST(CollectivesReport, TextNamesGpusNeverRankQuestionMarkAndCutsLongLists) {
  model::Trace t = OneProcessTwoGpus(3);
  auto r = Analyze(t);
  TextOptions shown;
  shown.collectives_shown = 2;
  const Report rep = BuildReport(t, r, ReportInfo{});
  std::string text = RenderText(rep, shown);
  EXPECT_EQ(text.find("rank ?"), std::string::npos) << text;
  EXPECT_NE(text.find("== pid 42 (GPU 0, GPU 1) =="), std::string::npos) << text;
  EXPECT_NE(
      text.find("#1    AllGather  comm 0xc0ffee  #1 by order | 1.05 MB  RING/SIMPLE 4 ch | skew 150 ns (last: GPU 1), "
                "bus time 250 ns"),
      std::string::npos)
      << text;
  // Instance 2: GPU 0 starts 2100, 1000 ns after the trace start (1100); bus time
  // min(500-250, 520-250) = 250 ns.
  EXPECT_NE(text.find("GPU 0          start  0.001000 ms  arrival  0.001000 ms  wait     150 ns  duration     400 ns  "
                      "channels span 300 ns"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("skew and wait are measured from arrival (when the stream reached the collective); 6 of 6 "
                      "arrivals fell back to the start"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("first 2 of 3"), std::string::npos);
  EXPECT_NE(text.find("... 1 more collectives"), std::string::npos);
  EXPECT_EQ(text.find("#3 "), std::string::npos);
  std::string md = RenderMarkdown(rep, shown);
  EXPECT_EQ(md.find("?"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | `AllGather  comm 0xc0ffee  #2 by order` | 1.05 MB | RING/SIMPLE 4 ch |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("1 more collectives"), std::string::npos);
}

TEST(CollectivesReport, ClockAlignmentInJsonAndText) {
  // Two hosts, one process each. Same ends relative to each host would need a clock offset;
  // here the clocks agree, so the estimated offset is the median of the end differences:
  // end(GPU 0) - end(GPU 1) = 500 - 520 = -20 ns for every instance.
  analyze::ClockAlignment a;
  const model::Trace aligned = OneProcessTwoGpus(4, "a", "b", &a);
  ASSERT_EQ(a.status, analyze::ClockAlignStatus::kAligned);
  const model::Trace* shifted = &aligned;
  auto r = Analyze(*shifted);
  ReportInfo info;
  info.clock_alignment = a;
  const Report rep = BuildReport(*shifted, r, info);
  json j = json::parse(RenderJson(rep));
  const json& c = j["clock_alignment"];
  EXPECT_EQ(c["status"], "aligned");
  EXPECT_EQ(c["reference_host"], "a");
  EXPECT_EQ(c["matched_instances_used"], 4);
  EXPECT_EQ(c["residual_spread_ns"], 0);
  ASSERT_EQ(c["hosts"].size(), 2u);
  EXPECT_EQ(c["hosts"][1]["host"], "b");
  EXPECT_EQ(c["hosts"][1]["offset_ns"], -20);
  // After the shift GPU 1 starts at 1000k+230: skew 130.
  EXPECT_EQ(j["collectives_across_ranks"]["instances"][0]["skew_ns"], 130);
  EXPECT_EQ(j["collectives_across_ranks"]["identified_by"], "gpu");
  std::string text = RenderText(rep);
  EXPECT_NE(
      text.find("clocks: clocks of 2 hosts aligned by 4 matched collectives (reference host a); host b shifted by "
                "-0.020 µs"),
      std::string::npos)
      << text;
  ReportInfo one;
  one.clock_alignment = analyze::EstimateClockAlignment(OneProcessTwoGpus(1, "a"), analyze::ClockAlignMode::kAuto);
  EXPECT_NE(RenderText(BuildReport(*shifted, r, one)).find("clocks: one host: clocks shared, not aligned"),
            std::string::npos);
}

}  // namespace
}  // namespace overlapscope::report
