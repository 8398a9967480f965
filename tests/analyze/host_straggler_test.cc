// Host-bound stragglers named (METRICS §8 lateness): on the real FSDP2 traces whose last rank runs
// host-side preprocessing (record_function("data_prep") around CPU sort/add ops) every step
// (tests/data/torch_diag/*/fsdp2_straggler, torch 2.11, 2 and 4 x H100), the straggler summary
// names that rank and, first among its names, the host range (or its ops) rather than only
// "host +X ms".
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

TEST(HostStraggler, DataPrepNamedFirstOnTheRealFsdp2Straggler) {
  for (const std::string variant : {"w4_sync", "w4_default", "w2_sync", "w2_default"}) {
    const int world = variant.rfind("w4", 0) == 0 ? 4 : 2;
    const std::string dir = std::string(OVERLAPSCOPE_TEST_DATA) + "/torch_diag/" + variant + "/fsdp2_straggler";
    std::vector<std::string> files;
    for (int r = 0; r < world; ++r) files.push_back(dir + "/rank" + std::to_string(r) + ".json.gz");
    auto t = import::ImportTraces(files);
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    AnalyzeOptions o;
    o.threads = 1;
    auto r = AnalyzeAll(*t, o);
    ASSERT_TRUE(r.ok()) << r.status();
    const StragglerSummary* ag = nullptr;  // the all-gathers' most frequent last rank
    for (const StragglerSummary& s : r->stragglers.summaries)
      if (t->str(s.op).find("allgather") != std::string_view::npos && (ag == nullptr || s.times_last > ag->times_last))
        ag = &s;
    ASSERT_NE(ag, nullptr) << variant;
    EXPECT_EQ(ag->rank, world - 1) << variant;
    EXPECT_EQ(ag->times_last, ag->instances) << variant;  // last at every all-gather
    ASSERT_FALSE(ag->names.empty()) << variant;
    const NameDelta& first = ag->names.front();
    const std::string name(t->str(first.name));
    EXPECT_TRUE(name == "data_prep" || name == "aten::sort") << variant << ": " << name;
    EXPECT_EQ(first.category, PathCategory::kHostLaunch) << variant;
    EXPECT_EQ(first.median_ns, 0) << variant;  // the median rank runs no data_prep
    // Most of the rank's lead over the median rank is that host work.
    EXPECT_GT(2 * first.delta_ns(), ag->behind_ns) << variant;
  }
}

}  // namespace
}  // namespace overlapscope::analyze
