// The critical-path index's host side (PathIndex: outermost calls and host ranges per thread,
// made in ranges of the calls and of the ranges and joined in order; the ranges' parents beside
// their union) is the same at 1, 2, 3 and 16 threads with ranges of one event as with one
// thread, on real multi-rank traces (several host threads, nested calls, iteration markers).
#include <algorithm>
#include <string>
#include <vector>

#include "analyze/path_walker.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "path_fixture.h"

namespace overlapscope::analyze {
namespace {

TEST(PathIndexThreads, SameHostIndexAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w2_default/mm_ag_overlap", "kineto/a2a_async"};
  size_t calls = 0, nested = 0, lines = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    auto t = import::ImportTraces({path + "/rank0.json.gz", path + "/rank1.json.gz"});
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    testing::Prepared p(*t);
    const std::string want = PathIndex(*t, p.in()).HostIndexText();
    calls += t->api_calls().size();
    nested += static_cast<size_t>(std::count(want.begin(), want.end(), '<'));
    lines += static_cast<size_t>(std::count(want.begin(), want.end(), '\n'));
    for (int threads : {1, 2, 3, 16}) {
      PathInputs in = p.in();
      in.threads = threads;
      in.min_chunk = 1;
      EXPECT_EQ(PathIndex(*t, in).HostIndexText(), want) << dir << " threads " << threads;
    }
  }
  EXPECT_GT(calls, 1000u);
  EXPECT_GT(nested, 1000u);  // host ranges listed with their parents
  EXPECT_GT(lines, 6u);      // threads (several per rank)
}

}  // namespace
}  // namespace overlapscope::analyze
