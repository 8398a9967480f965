// Lines that explain a figure rather than print it bare (issue 11 item 6): where the host was in
// host-blocked gaps, a negative contention, and a multi-rank trace with nothing matched across
// ranks. Figures are computed by hand in the comments.
#include <string>

#include "../analyze/synth.h"
#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

using nlohmann::json;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The trace of IdleHostSplit.BlockedLaunchOtherCallsAndOutsideAddUpToTheGap (analyze tests): one
// host-blocked gap [1000,10000) = 9000 ns: blocked 1000, launch 1000, other calls 500, outside 6500.
Report HostBlockedReport() {
  analyze::testing::Synth s;
  s.Kernel("A", 7, 100, 1000, 0);
  s.Api("cudaStreamSynchronize", 1500, 2500);
  s.Api("cudaFuncGetAttributes", 2400, 2600);
  s.Api("cudaEventRecord", 3000, 3400);
  s.Kernel("B", 7, 10000, 11000, 9000);
  model::Trace t = s.Finish();
  analyze::AnalyzeOptions o;
  o.min_gap_ns = 100;
  auto r = analyze::AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok());
  return BuildReport(t, *r, ReportInfo{});
}

TEST(Readability, HostBlockedGapSaysWhereTheHostWas) {
  const Report r = HostBlockedReport();
  const json j = json::parse(RenderJson(r));
  const json& idle = j["ranks"][0]["devices"][0]["idle"];
  EXPECT_EQ(idle["causes"]["host_blocked"]["ns"].get<int64_t>(), 9000);
  EXPECT_EQ(idle["host_blocked_split"]["blocked_ns"].get<int64_t>(), 1000);
  EXPECT_EQ(idle["host_blocked_split"]["launch_ns"].get<int64_t>(), 1000);
  EXPECT_EQ(idle["host_blocked_split"]["other_calls_ns"].get<int64_t>(), 500);
  EXPECT_EQ(idle["host_blocked_split"]["outside_ns"].get<int64_t>(), 6500);
  const json& gap = j["ranks"][0]["devices"][0]["top_gaps"][0];
  EXPECT_EQ(gap["cause"], "host-blocked");
  EXPECT_EQ(gap["host"]["outside_ns"].get<int64_t>(), 6500);
  const std::string text = RenderText(r);
  const std::string split =
      "in blocking calls 1.0 µs, launching the work that ended the gap 1.0 µs, in other runtime calls 500 ns, in "
      "no traced call 6.5 µs";
  EXPECT_TRUE(Has(text, "in host-blocked gaps the launching thread was " + split)) << text;
  EXPECT_TRUE(Has(text, " host-blocked ")) << text;
  EXPECT_TRUE(Has(text, "host " + split)) << text;
  const std::string md = RenderMarkdown(r);
  EXPECT_TRUE(Has(md,
                  "9.0 µs of GPU idle ended by a launch from a thread that blocked in it; the thread was in "
                  "blocking calls 1.0 µs, launching the ending work 1.0 µs, in other runtime calls 500 ns, in no "
                  "traced call 6.5 µs."))
      << md;
}

TEST(Readability, NoHostBlockedGapNoSplit) {
  Report r;
  r.ranks.emplace_back();
  r.ranks[0].devices.emplace_back();
  r.ranks[0].devices[0].top_gaps.push_back(
      IdleGap{0, 100, "launch-bound", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  const json j = json::parse(RenderJson(r));
  EXPECT_TRUE(j["ranks"][0]["devices"][0]["idle"]["host_blocked_split"].is_null());
  EXPECT_TRUE(j["ranks"][0]["devices"][0]["top_gaps"][0]["host"].is_null());
  EXPECT_FALSE(Has(RenderText(r), "launching thread was"));
  EXPECT_FALSE(Has(RenderMarkdown(r), "Host-blocked GPU idle"));
}

TEST(Readability, NegativeContentionIsNoSlowdown) {
  // 600 ns hidden; overlapped kernels ran 1500 ns shorter than their medians alone:
  // contention -1500, net gain = 600 - (-1500) = 2100 (METRICS.md §2, signed).
  Report r;
  r.ranks.emplace_back();
  RankSummary& s = r.ranks[0].summary;
  s.comm_ns = 1000;
  s.hidden_comm_ns = 600;
  s.contention_ns = -1500;
  s.net_overlap_gain_ns = 2100;
  std::string text = RenderText(r);
  EXPECT_TRUE(Has(text,
                  "contention    no compute slowdown: overlapped compute ran 1.5 µs faster than alone (contention "
                  "-1.5 µs); net overlap gain 2.1 µs"))
      << text;
  EXPECT_FALSE(Has(text, "compute slowdown while overlapped"));
  EXPECT_EQ(json::parse(RenderJson(r))["ranks"][0]["summary"]["contention_ns"].get<int64_t>(), -1500);
  s.contention_ns = 0;
  s.net_overlap_gain_ns = 600;
  EXPECT_TRUE(Has(RenderText(r), "contention    0 ns compute slowdown while overlapped; net overlap gain 600 ns"));
}

TEST(Readability, MultiRankWithoutCollectivesSaysWhy) {
  Report r;
  EXPECT_FALSE(Has(RenderText(r), "collectives across ranks"));
  r.ranks.resize(1);
  EXPECT_FALSE(Has(RenderText(r), "collectives across ranks"));  // one rank: nothing to match
  r.ranks.resize(2);
  std::string text = RenderText(r);
  EXPECT_TRUE(Has(text, "== collectives across ranks ==\n  2 ranks, but no collective records")) << text;
  EXPECT_TRUE(Has(text, "so no skew, wait or bandwidth across ranks")) << text;
  EXPECT_TRUE(Has(RenderMarkdown(r), "Collectives across ranks: 2 ranks, but no collective records"));
  r.collectives_across_ranks.unmatched = 3;
  text = RenderText(r);
  EXPECT_TRUE(Has(text, "2 ranks, no collective matched across them: 3 collectives were seen on one rank only"))
      << text;
  EXPECT_TRUE(Has(RenderMarkdown(r), "Collectives across ranks: 2 ranks, no collective matched across them"));
}

}  // namespace
}  // namespace overlapscope::report
