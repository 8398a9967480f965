// The dependency graph is the same at any thread count (GraphInputs::threads: the recorded
// waits' lookups and the evidence rule's searches run in ranges at once, the edges are added in
// order on the calling thread). Real traces with recorded waits, sourceless recorded waits
// (torch 2.11's rows) and inferred ones; min_chunk 1 so that these small traces are split.
#include <cstring>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze::graph {
namespace {

void ExpectSameGraph(const Graph& a, const Graph& b, const std::string& what) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes()) << what;
  EXPECT_EQ(std::memcmp(&a.stats(), &b.stats(), sizeof(GraphStats)), 0) << what;
  ASSERT_EQ(a.waits().size(), b.waits().size()) << what;
  for (size_t i = 0; i < a.waits().size(); ++i) {
    const WaitEdge &x = a.waits()[i], &y = b.waits()[i];
    EXPECT_TRUE(x.from == y.from && x.to == y.to && x.api_call == y.api_call && x.sync == y.sync &&
                x.inferred == y.inferred)
        << what << " wait " << i;
  }
  int differ = 0;
  for (NodeId n = 0; n < a.num_nodes(); ++n) {
    std::vector<Edge> pa, pb;
    for (const Edge& e : a.Preds(n)) pa.push_back(e);
    for (const Edge& e : b.Preds(n)) pb.push_back(e);
    bool same = pa.size() == pb.size() && (n >= a.num_gpu() || a.UnresolvedWaits(n) == b.UnresolvedWaits(n));
    for (size_t i = 0; same && i < pa.size(); ++i)
      same = pa[i].from == pb[i].from && pa[i].kind == pb[i].kind && pa[i].inferred == pb[i].inferred;
    differ += !same;
  }
  EXPECT_EQ(differ, 0) << what;
}

TEST(GraphThreads, SameGraphAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w4_sync/dtensor_a2a_compiled",
                        "torch_diag/w2_default/mm_ag_overlap", "kineto/a2a_async", "kineto_nosync/a2a_async"};
  int inferred = 0, recorded = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    auto t = import::ImportTraces({path + "/rank0.json.gz", path + "/rank1.json.gz"});
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    for (bool use_recorded : {true, false}) {
      GraphInputs in;
      in.use_recorded_waits = use_recorded;
      in.min_chunk = 1;
      const Graph one = BuildGraph(*t, in);
      inferred += static_cast<int>(one.stats().waits_inferred);
      recorded += static_cast<int>(one.stats().waits_recorded + one.stats().waits_recorded_without_source);
      for (int threads : {2, 3, 16}) {
        in.threads = threads;
        ExpectSameGraph(one, BuildGraph(*t, in), std::string(dir) + " threads " + std::to_string(threads));
      }
    }
  }
  // The traces exercise both paths (the rule and the recorded waits).
  EXPECT_GT(inferred, 100);
  EXPECT_GT(recorded, 100);
}

// AnalyzeAll starts the graph beside the context (GraphStart: the steps that read only the model,
// their nodes, program order and threads' calls at once) and adds the host releases and peers
// later: the same graph as BuildGraph with every input at once, at any thread count.
TEST(GraphThreads, StartThenFinishIsBuildGraphAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w2_default/mm_ag_overlap", "kineto/a2a_async"};
  int64_t releases = 0, peers = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    auto t = import::ImportTraces({path + "/rank0.json.gz", path + "/rank1.json.gz"});
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    AnalyzeOptions ao;
    ao.threads = 1;
    auto r = AnalyzeAll(*t, ao);
    ASSERT_TRUE(r.ok()) << dir << ": " << r.status();
    const GraphInputs lists = MakeGraphInputs(r->blocking, r->cross_rank);
    const Graph one = BuildGraph(*t, lists);
    releases += one.stats().recorded[static_cast<int>(EdgeKind::kHostRelease)];
    peers += one.stats().recorded[static_cast<int>(EdgeKind::kPeer)];
    for (int threads : {1, 2, 3, 16}) {
      GraphInputs options;  // no lists: GraphStart reads none
      options.threads = threads;
      options.min_chunk = 1;
      GraphStart start(*t, options);
      ExpectSameGraph(one, start.Finish(lists), std::string(dir) + " start, threads " + std::to_string(threads));
    }
  }
  // The lists that Finish adds are there.
  EXPECT_GT(releases, 0);
  EXPECT_GT(peers, 0);
}

}  // namespace
}  // namespace overlapscope::analyze::graph
