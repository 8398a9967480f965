// The findings of the rules that look at collectives in ranges (collective-waited-at-once,
// collective-starved-of-sms: ranges of 256 collectives, joined in order), and the sync points in
// their order with the finding of each, are the same at 1, 2, 3 and 16 threads, on real 4-GPU
// traces with enough collectives for several ranges and where both rules fire.
#include <sstream>
#include <string>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "torch_diag.h"

namespace overlapscope::analyze {
namespace {

std::string Findings(const AnalysisResult& r) {
  std::ostringstream o;
  for (const Finding& f : r.sync.findings)
    o << f.kind << " " << f.time_ns << " " << f.end_ns << " " << f.process << " " << f.thread << " " << f.stream << " "
      << f.call << " " << f.iteration << " " << f.cost_ns << " " << f.message << " | " << f.advice << "\n";
  // The sync points in their order, each with its finding.
  for (const SyncPoint& p : r.sync.points)
    o << p.start_ns << " " << static_cast<int>(p.kind) << " " << p.api_call << " " << p.sync << " " << p.finding
      << "\n";
  return o.str();
}

TEST(FindingsThreads, CollectiveRulesSameAtEveryThreadCount) {
  size_t collectives = 0, waited = 0;
  for (const char* scenario : {"dtensor_a2a_eager", "fsdp2"}) {
    const model::Trace t = testing::LoadTorchDiag("w4_default", scenario);
    const AnalysisResult one = testing::AnalyzeOneThread(t);
    for (const DeviceOverlap& d : one.overlap) collectives += d.collectives.size();
    for (const Finding& f : one.sync.findings) waited += f.kind == "collective-waited-at-once";
    const std::string want = Findings(one);
    for (int threads : {1, 2, 3, 16}) {
      AnalyzeOptions o;
      o.threads = threads;
      auto r = AnalyzeAll(t, o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(Findings(*r), want) << scenario << " threads " << threads;
    }
  }
  EXPECT_GT(collectives, 512u);  // ranges of 256: several
  EXPECT_GT(waited, 16u);
}

}  // namespace
}  // namespace overlapscope::analyze
