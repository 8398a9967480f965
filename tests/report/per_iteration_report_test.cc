// Report schema 1.7, what `overlapscope diff` compares per iteration and per collective: idle
// time by cause per iteration (devices[].iterations[].gap_ns) and each rank's exposed time in a
// matched collective (collectives_across_ranks.instances[].ranks[].exposed_ns), on synthetic
// traces whose figures are computed by hand in the comments; both survive the JSON round trip.
#include <string>

#include "analyze/analysis.h"
#include "analyze/multi_synth.h"
#include "analyze/synth.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/read_json.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

using analyze::testing::MultiSynth;
using analyze::testing::Synth;

analyze::AnalysisResult AnalyzeWithMinGap(const model::Trace& t, int64_t min_gap_ns) {
  analyze::AnalyzeOptions o;
  o.min_gap_ns = min_gap_ns;
  auto r = analyze::AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

int64_t Gap(const IterationOverlap& it, const std::string& cause) {
  for (const NamedValue& g : it.gap_ns)
    if (g.name == cause) return g.value;
  ADD_FAILURE() << "no cause " << cause;
  return -1;
}

// Three steps [0,1000), [1000,2000), [2000,3000); min gap 100 ns. Kernels (launch call):
//   A [0,100) (0)            iteration 1
//   B [300,400) (250)        gap [100,300) = 200 launch-bound (launched inside the gap), iteration 1
//   C [1100,1200) (1050)     gap [400,1100) = 700 launch-bound, iteration 2
//   D [1500,1600) (1010)     gap [1200,1500) = 300 dependency (launched before the gap), iteration 2
//   E [1900,2000) (none)     gap [1600,1900) = 300 unknown; iteration 2 by its own start
//   F [2700,2800) (2600)     gap [2000,2700) = 700 host-blocked (cudaStreamSynchronize
//                            [2050,2500) in the gap), iteration 3
//   G [2850,2900) (2820)     [2800,2850) = 50 < 100: no gap
// Per iteration: 1 {launch_bound 200}; 2 {launch_bound 700, dependency 300, unknown 300};
// 3 {host_blocked 700}. They add up to the device's causes: 700 / 900 / 300 / 300.
TEST(PerIterationReport, IdleByCausePerIterationByHand) {
  Synth s;
  for (int i = 0; i < 3; ++i) s.Range("ProfilerStep#" + std::to_string(i + 1), 1000 * i, 1000 * (i + 1));
  s.Kernel("A", 7, 0, 100, 0);
  s.Kernel("B", 7, 300, 400, 250);
  s.Kernel("C", 7, 1100, 1200, 1050);
  s.Kernel("D", 8, 1500, 1600, 1010);
  s.Kernel("E", 7, 1900, 2000);
  s.Api("cudaStreamSynchronize", 2050, 2500);
  s.Kernel("F", 7, 2700, 2800, 2600);
  s.Kernel("G", 7, 2850, 2900, 2820);
  const model::Trace t = s.Finish();
  const Report rep = BuildReport(t, AnalyzeWithMinGap(t, 100), ReportInfo{});
  ASSERT_EQ(rep.ranks.size(), 1u);
  ASSERT_EQ(rep.ranks[0].devices.size(), 1u);
  const DeviceReport& d = rep.ranks[0].devices[0];
  ASSERT_EQ(d.iterations.size(), 3u);
  const std::vector<std::vector<int64_t>> want = {{0, 200, 0, 0}, {0, 700, 300, 300}, {700, 0, 0, 0}};
  const char* causes[] = {"host_blocked", "launch_bound", "dependency", "unknown"};
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(d.iterations[i].gap_ns.size(), 4u);
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(d.iterations[i].gap_ns[c].name, causes[c]);
      EXPECT_EQ(d.iterations[i].gap_ns[c].value, want[i][c]) << "iteration " << i + 1 << " " << causes[c];
    }
  }
  for (size_t c = 0; c < 4; ++c) {
    int64_t sum = 0;
    for (const IterationOverlap& it : d.iterations) sum += Gap(it, causes[c]);
    EXPECT_EQ(sum, d.idle.causes[c].ns) << causes[c];
  }
  // JSON: an object per iteration; read back unchanged.
  const std::string text = RenderJson(rep);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["schema_version"], "1.11");
  EXPECT_EQ(j["ranks"][0]["devices"][0]["iterations"][1]["gap_ns"]["dependency"], 300);
  std::string version;
  auto back = ReadReportJson(text, "mem", &version);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Gap(back->ranks[0].devices[0].iterations[1], "unknown"), 300);
  const std::string again = RenderJson(*back);
  size_t at = 0;
  while (at < again.size() && at < text.size() && again[at] == text[at]) ++at;
  EXPECT_TRUE(again == text) << "differs at byte " << at << ": \"" << text.substr(at > 80 ? at - 80 : 0, 160)
                             << "\" read back \"" << again.substr(at > 80 ? at - 80 : 0, 160) << "\"";
}

// Two ranks, one all-reduce (sequence 1) at [100,300) on stream 17 of each; a gemm on stream 7
// covers [0,150) on rank 0 and [0,250) on rank 1: hidden 50 and 150, exposed 200 − 50 = 150 and
// 200 − 150 = 50. A second all-reduce (sequence 2) at [1000,1200) with nothing beside it: 200 each.
TEST(PerIterationReport, ExposedTimePerRankOfAMatchedCollective) {
  MultiSynth s(2);
  for (int r = 0; r < 2; ++r) {
    s.Launch(r, "gemm", 7, 0, 0, r == 0 ? 150 : 250);
    s.Launch(r, "ncclDevKernel_AllReduce_Sum_f32", 17, 20, 100, 300, s.Collective("allreduce", 1, 2));
    s.Launch(r, "ncclDevKernel_AllReduce_Sum_f32", 17, 40, 1000, 1200, s.Collective("allreduce", 2, 2));
  }
  const model::Trace t = s.Finish();
  const Report rep = BuildReport(t, AnalyzeWithMinGap(t, 5000), ReportInfo{});
  const CrossRank& x = rep.collectives_across_ranks;
  ASSERT_EQ(x.instances.size(), 2u);
  const std::vector<std::vector<int64_t>> want = {{150, 50}, {200, 200}};
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(x.instances[i].ranks.size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      ASSERT_TRUE(x.instances[i].ranks[r].exposed_ns.has_value());
      EXPECT_EQ(*x.instances[i].ranks[r].exposed_ns, want[i][r]) << "instance " << i + 1 << " rank " << r;
    }
  }
  const std::string text = RenderJson(rep);
  EXPECT_EQ(nlohmann::json::parse(text)["collectives_across_ranks"]["instances"][0]["ranks"][1]["exposed_ns"], 50);
  std::string version;
  auto back = ReadReportJson(text, "mem", &version);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->collectives_across_ranks.instances[0].ranks[0].exposed_ns, 150);
}

}  // namespace
}  // namespace overlapscope::report
