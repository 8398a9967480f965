// The job overview's figures and outlier rule (report/overview.h), computed by hand on small
// reports.
#include "report/overview.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report/diff.h"
#include "report/html.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

Report Job(const std::vector<int64_t>& blocked_ns) {
  Report r;
  for (size_t i = 0; i < blocked_ns.size(); ++i) {
    RankReport rk;
    rk.rank = static_cast<int64_t>(i);
    rk.label = "rank " + std::to_string(i);
    rk.summary.blocked_ns = blocked_ns[i];
    rk.summary.step_time_ns = 1000000;
    rk.summary.comm_ns = 100;
    rk.summary.overlap_ratio = 0.5;
    r.ranks.push_back(rk);
  }
  return r;
}

size_t Column(const std::string& key) {
  for (size_t c = 0; c < OverviewColumns().size(); ++c)
    if (OverviewColumns()[c].key == key) return c;
  return SIZE_MAX;
}

TEST(Overview, MedianMadAndThresholdByHand) {
  // blocked: 10, 11, 12, 13, 50 ms. Median 12 ms; |x - 12|: 2, 1, 0, 1, 38 -> MAD 1 ms;
  // spread 1.4826 ms; threshold max(3 x 1.4826 = 4.4478 ms, 10% x 12 = 1.2 ms, 100 µs).
  const Report r = Job({10000000, 11000000, 12000000, 13000000, 50000000});
  ASSERT_EQ(r.ranks.size(), 5u);
  const JobOverview o = BuildOverview(r);
  ASSERT_EQ(o.rows.size(), 5u);
  const size_t c = Column("blocked_ns");
  ASSERT_LT(c, OverviewColumns().size());
  EXPECT_DOUBLE_EQ(o.stats[c].median, 12e6);
  EXPECT_NEAR(o.stats[c].spread, 1.4826e6, 1e-3);
  EXPECT_NEAR(o.stats[c].threshold, 4.4478e6, 1e-3);
  ASSERT_EQ(o.stand_out, (std::vector<size_t>{4}));
  ASSERT_EQ(o.rows[4].deviations.size(), 1u);
  EXPECT_EQ(o.rows[4].deviations[0].column, c);
  EXPECT_NEAR(o.rows[4].deviations[0].score, 38e6 / 4.4478e6, 1e-9);
}

TEST(Overview, FloorKeepsIdenticalRanksQuiet) {
  // MAD 0: the floor (10% of the median) decides; 5% above the median does not stand out,
  // 20% does.
  EXPECT_TRUE(BuildOverview(Job({1000000, 1000000, 1000000, 1050000})).stand_out.empty());
  EXPECT_EQ(BuildOverview(Job({1000000, 1000000, 1000000, 1200000})).stand_out, (std::vector<size_t>{3}));
  // Two ranks: nothing stands out (no majority), one rank: no overview.
  EXPECT_TRUE(BuildOverview(Job({1000000, 9000000})).stand_out.empty());
  EXPECT_TRUE(BuildOverview(Job({1000000})).rows.empty());
  EXPECT_EQ(OverviewText(BuildOverview(Job({1})), {true}), "");
}

TEST(Overview, AbsentFiguresAreNotOutliersAndRenderAsDash) {
  Report r = Job({5, 5, 5, 5});
  r.ranks[2].summary.overlap_ratio.reset();
  r.ranks[3].summary.overlap_ratio = std::nan("");
  r.ranks[1].summary.step_time_ns = 0;  // no iterations
  const JobOverview o = BuildOverview(r);
  EXPECT_EQ(o.stats[Column("overlap_ratio")].ranks, 2);
  EXPECT_EQ(o.stats[Column("step_time_ns")].ranks, 3);
  EXPECT_TRUE(o.stand_out.empty());
  EXPECT_EQ(OverviewValue(Column("overlap_ratio"), std::nullopt), "-");
  const std::string text = OverviewText(o, std::vector<bool>(4, true));
  EXPECT_NE(text.find("ranks that stand out: none"), std::string::npos) << text;
}

TEST(Overview, SelectionDefaults) {
  Report r = Job(std::vector<int64_t>(20, 1000000));
  r.ranks[7].summary.blocked_ns = 9000000;
  for (size_t i = 0; i < 20; ++i) r.ranks[i].summary.step_time_ns = 1000 + static_cast<int64_t>(i);
  const JobOverview o = BuildOverview(r);
  ASSERT_EQ(o.stand_out, (std::vector<size_t>{7}));
  const std::vector<bool> sel = SelectRanks(r, o, RankSelection{});
  std::vector<size_t> on;
  for (size_t i = 0; i < sel.size(); ++i)
    if (sel[i]) on.push_back(i);
  EXPECT_EQ(on, (std::vector<size_t>{7, 16, 17, 18, 19})) << "the outlier and the 4 slowest steps";
  EXPECT_EQ(std::count(sel.begin(), sel.end(), true), 5);
  const std::vector<bool> all8 = SelectRanks(Job(std::vector<int64_t>(8, 1)), BuildOverview(Job({})), {});
  EXPECT_EQ(std::count(all8.begin(), all8.end(), true), 8);
}

}  // namespace
}  // namespace overlapscope::report

namespace overlapscope::report {
namespace {

TEST(Overview, DiffOverviewNamesTheRankWhoseChangeStandsOut) {
  // Five ranks; in TEST rank 3's host blocks 5 ms more, the others 0..40 µs more: the change of
  // rank 3 stands out from the other ranks' changes (median 20 µs; floor 100 µs).
  const Report base = Job({1000000, 1000000, 1000000, 1000000, 1000000});
  const Report test = Job({1000000, 1010000, 1020000, 6000000, 1040000});
  const ReportDiff d = DiffReports(base, test);
  const JobOverview o = DiffOverview(d);
  ASSERT_EQ(o.rows.size(), 5u);
  EXPECT_EQ(o.title, "change per rank (TEST - BASE)");
  EXPECT_EQ(o.stand_out, (std::vector<size_t>{3}));
  EXPECT_DOUBLE_EQ(*o.rows[3].values[Column("blocked_ns")], 5000000);
  const std::string text = RenderDiffText(d);
  EXPECT_LT(text.find("== change per rank (TEST - BASE): 5 ranks =="), text.find("Verdict")) << text;
  EXPECT_NE(text.find("    rank 3     host blocked 5.000 ms (high, median 20.0 µs)"), std::string::npos) << text;
  EXPECT_NE(RenderDiffJson(d).find("\"overview\": {"), std::string::npos);
  EXPECT_TRUE(DiffOverview(DiffReports(Job({1}), Job({2}))).rows.empty());
  // diff --html: the same overview first, rank 3 listed and linked to its delta section.
  const std::string html = RenderDiffHtml(base, test, d, {}, {});
  const size_t at = html.find("<h2>Change per rank (TEST &minus; BASE): 5 ranks</h2>");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LT(at, html.find("class=\"verdict")) << "the overview comes before the verdict";
  EXPECT_NE(html.find("<li><a href=\"#r-rank-3-delta\">rank 3</a>: host blocked 5.000 ms (high, median 20.0 µs)"),
            std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"r-rank-3-delta\">rank 3: deltas</h2>"), std::string::npos);
  EXPECT_EQ(RenderDiffHtml(Job({1}), Job({2}), DiffReports(Job({1}), Job({2})), {}, {}).find("Change per rank"),
            std::string::npos);  // one rank: no overview
}

}  // namespace
}  // namespace overlapscope::report
