// The replay's count of GPU activities behind unresolved waits that keep their recorded gap
// (ReplayCounts::pinned_unresolved, "N GPU activities behind unresolved waits keep their recorded
// gap"): activities, each counted once, so never more than the activities the graph marks as
// behind an unresolved or ambiguous wait (Graph::UnresolvedWaits > 0). Real capture:
// tests/data/torch_diag/w4_default/fsdp2 (torch.profiler defaults: no event ids on the waits).
// It had counted each pinned edge twice (54 on this trace, where 22 activities are behind
// such waits and keep their gap).
#include <gtest/gtest.h>

#include <string>

#include "analyze/analysis.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "engine/session.h"
#include "replay_test_util.h"

namespace overlapscope::engine {
namespace {

TEST(ReplayPinned, CountsActivitiesNotEdges) {
  const std::string dir = std::string(OVERLAPSCOPE_TEST_DATA) + "/torch_diag/w4_default/fsdp2";
  const nlohmann::json doc = ReplayJson(dir);
  ASSERT_TRUE(doc.is_object());
  const int64_t pinned = doc["graph"]["pinned_unresolved"].get<int64_t>();
  auto s = Load({dir});
  ASSERT_TRUE(s.ok()) << s.status();
  const model::Trace& t = s->trace();
  analyze::AnalyzeOptions ao;
  ao.critical_path = false;
  auto ar = analyze::AnalyzeAll(t, ao);
  ASSERT_TRUE(ar.ok()) << ar.status();
  const analyze::graph::Graph g = analyze::graph::BuildGraph(t, analyze::MakeGraphInputs(ar->blocking, ar->cross_rank));
  int64_t behind = 0;
  for (analyze::graph::NodeId v = 0; v < g.num_gpu(); ++v) behind += g.UnresolvedWaits(v) > 0;
  std::printf("fsdp2: %lld GPU activities keep their recorded gap of %lld behind unresolved or ambiguous waits\n",
              static_cast<long long>(pinned), static_cast<long long>(behind));
  EXPECT_GT(pinned, 0);
  EXPECT_LE(pinned, behind);
}

}  // namespace
}  // namespace overlapscope::engine
