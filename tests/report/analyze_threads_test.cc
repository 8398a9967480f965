// AnalyzeAll's steps run as a graph of tasks (base::RunTaskGraph: each step once the steps it
// reads have finished): the same report, byte for byte, at 1, 2, 3 and 16 threads, on real
// multi-rank traces (collectives matched across ranks, stragglers, findings, sync points with
// wait sources) and on one rank of them alone (no collective can be matched: no arrival is
// estimated, no straggler comparer built).
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

std::string ReportAt(const model::Trace& t, int threads) {
  analyze::AnalyzeOptions o;
  o.threads = threads;
  auto r = analyze::AnalyzeAll(t, o);
  if (!r.ok()) return r.status().ToString();
  ReportInfo info;
  return RenderJson(BuildReport(t, *r, info));
}

TEST(AnalyzeAllThreads, SameReportAtEveryThreadCount) {
  const std::string data = std::string(OVERLAPSCOPE_TEST_DATA) + "/";
  const std::vector<std::vector<std::string>> traces = {
      {"torch_diag/w4_sync/fsdp2/rank0", "torch_diag/w4_sync/fsdp2/rank1", "torch_diag/w4_sync/fsdp2/rank2",
       "torch_diag/w4_sync/fsdp2/rank3"},
      {"torch_diag/w4_default/fsdp2_straggler/rank0", "torch_diag/w4_default/fsdp2_straggler/rank1",
       "torch_diag/w4_default/fsdp2_straggler/rank2", "torch_diag/w4_default/fsdp2_straggler/rank3"},
      {"kineto/a2a_async/rank0", "kineto/a2a_async/rank1"},
      {"torch_diag/w4_default/fsdp2_straggler/rank0"}};
  size_t matched = 0, stragglers = 0, findings = 0;
  for (const std::vector<std::string>& files : traces) {
    std::vector<std::string> paths;
    for (const std::string& f : files) paths.push_back(data + f + ".json.gz");
    auto t = import::ImportTraces(paths);
    ASSERT_TRUE(t.ok()) << files[0] << ": " << t.status();
    const std::string one = ReportAt(*t, 1);
    const nlohmann::json doc = nlohmann::json::parse(one, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << files[0] << ": " << one.substr(0, 200);
    if (files.size() > 1) {
      matched += doc["collectives_across_ranks"]["matched_instances"].get<size_t>();
      stragglers += doc["straggler_causes"]["instances"].size();
    } else {
      EXPECT_EQ(doc["collectives_across_ranks"]["matched_instances"].get<size_t>(), 0u);
      EXPECT_GT(doc["collectives_across_ranks"]["unmatched"].get<size_t>(), 0u);
    }
    for (const auto& rank : doc["ranks"]) findings += rank["findings"]["items"].size();
    for (int threads : {2, 3, 16}) EXPECT_EQ(ReportAt(*t, threads), one) << files[0] << " threads " << threads;
  }
  // The multi-rank traces match collectives, explain stragglers and have findings.
  EXPECT_GT(matched, 0u);
  EXPECT_GT(stragglers, 0u);
  EXPECT_GT(findings, 0u);
}

}  // namespace
}  // namespace overlapscope::report
