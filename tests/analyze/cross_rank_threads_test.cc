// AnalyzeCrossRank with its arrivals estimated on several threads: the same instances (ranks,
// arrivals and their sources, waits, skew) and counts as on one, on real multi-rank traces
// with 128-384 collectives (ranges of 64 at 2, 3 and 16 threads).
#include <string>
#include <vector>

#include "analyze/cross_rank.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

TEST(CrossRankThreads, SameResultAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w4_default/dtensor_a2a_eager"};
  size_t instances = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    std::vector<std::string> files;
    for (int r = 0; r < 4; ++r) files.push_back(path + "/rank" + std::to_string(r) + ".json.gz");
    auto t = import::ImportTraces(files);
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    const CrossRankResult one = AnalyzeCrossRank(*t, nullptr, 1);
    instances += one.instances.size();
    for (int threads : {2, 3, 16}) {
      const CrossRankResult many = AnalyzeCrossRank(*t, nullptr, threads);
      const std::string at = std::string(dir) + " threads " + std::to_string(threads);
      ASSERT_EQ(many.instances.size(), one.instances.size()) << at;
      EXPECT_EQ(many.arrival_fallbacks, one.arrival_fallbacks) << at;
      EXPECT_EQ(many.total_skew_ns, one.total_skew_ns) << at;
      EXPECT_EQ(many.unmatched, one.unmatched) << at;
      for (size_t i = 0; i < one.instances.size(); ++i) {
        const CollectiveInstance &a = one.instances[i], &b = many.instances[i];
        EXPECT_EQ(b.skew_ns, a.skew_ns) << at << " instance " << i;
        EXPECT_EQ(b.last, a.last) << at << " instance " << i;
        ASSERT_EQ(b.ranks.size(), a.ranks.size()) << at << " instance " << i;
        for (size_t k = 0; k < a.ranks.size(); ++k) {
          EXPECT_EQ(b.ranks[k].collective, a.ranks[k].collective) << at;
          EXPECT_EQ(b.ranks[k].arrival_ns, a.ranks[k].arrival_ns) << at;
          EXPECT_EQ(b.ranks[k].arrival_source, a.ranks[k].arrival_source) << at;
          EXPECT_EQ(b.ranks[k].wait_ns, a.ranks[k].wait_ns) << at;
        }
      }
    }
  }
  EXPECT_GT(instances, 100u);  // the traces match collectives across their ranks
}

}  // namespace
}  // namespace overlapscope::analyze
