// BuildReport with several threads (each rank's devices, findings, sync points and blocking
// with launch figures built at once): the same document at 1, 2, 3 and 16 threads as at one,
// on real multi-rank traces with findings, sync points and blocked intervals.
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "nlohmann/json.hpp"
#include "report/build.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

TEST(BuildReportThreads, SameDocumentAtEveryThreadCount) {
  const std::vector<std::vector<std::string>> traces = {
      {"torch_diag/w4_sync/fsdp2", "4"}, {"torch_diag/w2_default/mm_ag_overlap", "2"}, {"kineto/a2a_async", "2"}};
  size_t findings = 0, points = 0;
  for (const std::vector<std::string>& trace : traces) {
    std::vector<std::string> paths;
    for (int k = 0; k < std::stoi(trace[1]); ++k)
      paths.push_back(std::string(OVERLAPSCOPE_TEST_DATA) + "/" + trace[0] + "/rank" + std::to_string(k) + ".json.gz");
    auto t = import::ImportTraces(paths);
    ASSERT_TRUE(t.ok()) << trace[0] << ": " << t.status();
    auto r = analyze::AnalyzeAll(*t, analyze::AnalyzeOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    ReportInfo info;
    const std::string one = RenderJson(BuildReport(*t, *r, info));
    const nlohmann::json doc = nlohmann::json::parse(one);
    for (const auto& rank : doc["ranks"]) {
      findings += rank["findings"]["items"].size();
      points += rank["sync_points"]["count"].get<size_t>();
    }
    for (int threads : {1, 2, 3, 16}) {
      info.threads = threads;
      EXPECT_EQ(RenderJson(BuildReport(*t, *r, info)), one) << trace[0] << " threads " << threads;
    }
  }
  // The traces have findings (83) and sync points (1,902) in every rank.
  EXPECT_GT(findings, 50u);
  EXPECT_GT(points, 1000u);
}

}  // namespace
}  // namespace overlapscope::report
