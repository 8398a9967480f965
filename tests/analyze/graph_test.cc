// The dependency graph (analyze/graph/graph.h) on hand-made traces; every count is worked out
// by hand in the comments.
#include "analyze/graph/graph.h"

#include <vector>

#include "gtest/gtest.h"
#include "synth.h"

namespace overlapscope::analyze::graph {
namespace {

using model::GpuKind;
using model::GpuRef;
using testing::Synth;

int Count(const Graph& g, EdgeKind k, bool inferred) {
  int n = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    for (const Edge& e : g.Preds(v)) n += e.kind == k && e.inferred == inferred;
  return n;
}
// The GPU node of kernel i.
NodeId K(const Graph& g, int i) { return g.GpuNode({GpuKind::kKernel, i}); }
bool HasEdge(const Graph& g, NodeId from, NodeId to, EdgeKind k, bool inferred) {
  for (const Edge& e : g.Preds(to))
    if (e.from == from && e.kind == k && e.inferred == inferred) return true;
  return false;
}

TEST(Graph, StructuralEdges) {
  Synth s;
  s.Kernel("a", 7, 100, 200, /*launch_s=*/10);  // cudaLaunchKernel [10,20), corr 1
  s.Kernel("b", 7, 200, 300, /*launch_s=*/30);  // [30,40), corr 2
  s.Api("cudaGetDevice", 32, 35);               // nested in b's launch call: no edge of its own
  model::Trace t = s.Finish();
  Graph g = BuildGraph(t, {});
  ASSERT_EQ(g.num_gpu(), 2);
  ASSERT_EQ(g.num_api(), 3);
  const NodeId a = K(g, 0), b = K(g, 1);
  EXPECT_EQ(g.Stream(a), g.Stream(b));
  EXPECT_EQ(b, a + 1);  // a stream's activities are contiguous
  EXPECT_TRUE(HasEdge(g, a, b, EdgeKind::kStreamOrder, false));
  EXPECT_TRUE(HasEdge(g, g.ApiNode(0), a, EdgeKind::kLaunch, false));
  EXPECT_TRUE(HasEdge(g, g.ApiNode(1), b, EdgeKind::kLaunch, false));
  EXPECT_TRUE(HasEdge(g, g.ApiNode(0), g.ApiNode(1), EdgeKind::kProgramOrder, false));
  const GraphStats& st = g.stats();
  EXPECT_EQ(st.recorded[static_cast<int>(EdgeKind::kProgramOrder)], 1);
  EXPECT_EQ(st.recorded[static_cast<int>(EdgeKind::kStreamOrder)], 1);
  EXPECT_EQ(st.recorded[static_cast<int>(EdgeKind::kLaunch)], 2);
  EXPECT_EQ(st.backward_edges, 0);
  EXPECT_EQ(st.gpu_without_launch, 0);
  // The predecessor rows hold the 4 edges; none crosses lanes (no successor rows).
  int preds = 0, succs = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) preds += g.Preds(v).size(), succs += g.CrossSuccs(v).size();
  EXPECT_EQ(preds, 4);
  EXPECT_EQ(succs, 0);
  EXPECT_EQ(g.StartNs(g.ApiNode(1)), 30);
  EXPECT_EQ(g.EndNs(b), 300);
}

TEST(Graph, GraphLaunchReachesEveryKernel) {
  Synth s;
  const int64_t corr = s.Api("cudaGraphLaunch", 10, 20);
  for (int i = 0; i < 3; ++i) {
    model::Kernel k;
    k.start_ns = 100 + 100 * i, k.end_ns = 150 + 100 * i, k.device = s.dev(), k.stream = s.Stream(7);
    k.correlation_id = corr, k.name = s.builder().Intern("g");
    s.builder().data().kernels.push_back(k);
  }
  s.Kernel("orphan", 7, 500, 600);  // no launch call in the trace
  model::Trace t = s.Finish();
  Graph g = BuildGraph(t, {});
  EXPECT_EQ(g.stats().recorded[static_cast<int>(EdgeKind::kLaunch)], 3);
  EXPECT_EQ(g.stats().gpu_without_launch, 1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(HasEdge(g, g.ApiNode(0), K(g, i), EdgeKind::kLaunch, false));
}

// mm0 on the compute stream 13, an all-gather on stream 7, an event record, a stream wait, mm on
// 13. Calls: mm0 launch [5,15) corr 1, nccl launch [20,30) corr 2, record [32,34) corr 3, wait
// [36,38) corr 4, mm launch [40,50) corr 5.
Synth WaitTrace(int64_t mm_start, bool recorded) {
  Synth s;
  s.Kernel("mm0", 13, 50, 90, 5);
  s.Kernel("nccl", 7, 100, 500, 20);
  s.Api("cudaEventRecord", 32, 34);
  const int64_t wait = s.Api("cudaStreamWaitEvent", 36, 38);
  s.Kernel("mm", 13, mm_start, mm_start + 100, 40);
  if (recorded) {
    model::Sync y;
    y.kind = model::SyncKind::kStreamWaitEvent;
    y.start_ns = 36, y.end_ns = 38, y.device = s.dev();
    y.stream = s.Stream(13), y.wait_on_stream = s.Stream(7);
    y.event_record_correlation_id = 3, y.correlation_id = wait;
    s.builder().data().syncs.push_back(y);
  }
  return s;
}

TEST(Graph, RecordedWaitAndNoInferredDuplicate) {
  Synth s = WaitTrace(505, true);
  model::Trace t = s.Finish();
  Graph g = BuildGraph(t, {});
  // Kernels in trace order: mm0 0, nccl 1, mm 2.
  EXPECT_TRUE(HasEdge(g, K(g, 1), K(g, 2), EdgeKind::kEventWait, false));
  EXPECT_EQ(Count(g, EdgeKind::kEventWait, false), 1);
  EXPECT_EQ(Count(g, EdgeKind::kEventWait, true), 0);  // the recorded wait's call is no evidence
  EXPECT_EQ(g.stats().waits_recorded, 1);
  EXPECT_EQ(g.stats().waits_inferred, 0);
  // Calls at 5, 20, 32, 36, 40: four program-order edges.
  EXPECT_EQ(g.stats().recorded[static_cast<int>(EdgeKind::kProgramOrder)], 4);
}

TEST(Graph, InferredWaitMatchesTheRecordedOne) {
  Synth s = WaitTrace(505, true);
  model::Trace t = s.Finish();
  GraphInputs in;
  in.use_recorded_waits = false;
  Graph g = BuildGraph(t, in);
  // Evidence: the wait call at 36 lies between mm0's launch (5) and mm's (40). ready =
  // max(mm0 end 90, launch 40) = 90; stream 7's last activity before 505 is nccl, ending at
  // 500 >= 90 and 5 ns before mm: the one candidate.
  EXPECT_TRUE(HasEdge(g, K(g, 1), K(g, 2), EdgeKind::kEventWait, true));
  EXPECT_EQ(Count(g, EdgeKind::kEventWait, false), 0);
  EXPECT_EQ(g.stats().waits_inferred, 1);
  EXPECT_EQ(g.stats().inferred[static_cast<int>(EdgeKind::kEventWait)], 1);
  EXPECT_EQ(g.stats().waits_recorded, 0);
  // Launch latency of stream 13: no sample. mm was launched while mm0 ran, and mm0 is the
  // stream's first activity, whose delay (50 - 5 = 45 ns) may hold work the trace did not record.
  EXPECT_EQ(g.LaunchLatencyNs(g.Stream(K(g, 0))), 0);
  EXPECT_EQ(g.UnresolvedWaits(K(g, 2)), 0);
}

TEST(Graph, WaitWithoutSourceIsUnresolved) {
  // mm starts 100 ns after nccl ends: beyond max(1 ns, 45 ns latency), and 510 ns after ready.
  Synth s = WaitTrace(600, false);
  model::Trace t = s.Finish();
  GraphInputs in;
  in.infer_min_bound_ns = 1;
  Graph g = BuildGraph(t, in);
  EXPECT_EQ(g.stats().waits_inferred, 0);
  EXPECT_EQ(g.stats().waits_unresolved, 1);
  EXPECT_EQ(g.UnresolvedWaits(K(g, 2)), 1);
  // With the default 20 us bound the same wait is placed.
  Graph d = BuildGraph(t, {});
  EXPECT_EQ(d.stats().waits_inferred, 1);
  EXPECT_EQ(d.stats().waits_unresolved, 0);
}

TEST(Graph, TwoCandidateStreamsAreAmbiguous) {
  Synth s = WaitTrace(505, false);
  s.Kernel("copy", 9, 300, 502, 45);  // another stream ending 3 ns before mm
  model::Trace t = s.Finish();
  Graph g = BuildGraph(t, {});
  EXPECT_EQ(g.stats().waits_ambiguous, 1);
  EXPECT_EQ(g.stats().waits_inferred, 0);
  EXPECT_EQ(Count(g, EdgeKind::kEventWait, true), 0);
  // Kernels by start: mm0 0, nccl 1, copy 2, mm 3. mm started 415 ns after ready (90), within
  // the 20 us bound: not delayed, so not marked unresolved on the path.
  EXPECT_EQ(g.UnresolvedWaits(K(g, 3)), 0);
}

TEST(Graph, NoWaitCallNoInference) {
  Synth s;
  s.Kernel("mm0", 13, 50, 90, 5);
  s.Kernel("nccl", 7, 100, 500, 20);
  s.Kernel("mm", 13, 505, 600, 40);
  model::Trace t = s.Finish();
  Graph g = BuildGraph(t, {});
  EXPECT_EQ(g.stats().waits_inferred + g.stats().waits_ambiguous + g.stats().waits_unresolved, 0);
  EXPECT_EQ(g.stats().waits_not_delayed, 0);
}

TEST(Graph, HostReleaseAndPeer) {
  Synth s;
  const model::CollectiveId c0 = s.Collective("allgather"), c1 = s.Collective("allgather");
  s.Kernel("nccl0", 7, 100, 300, 10, c0);
  s.Kernel("nccl1", 9, 250, 300, 20, c1);
  s.Api("cudaStreamSynchronize", 30, 310);   // call 2
  s.Api("cudaStreamSynchronize", 400, 410);  // call 3: released by work ending after it returned
  model::Trace t = s.Finish();
  GraphInputs in;
  in.host_releases.push_back({2, GpuRef{GpuKind::kKernel, 0}});
  in.host_releases.push_back({3, GpuRef{GpuKind::kKernel, model::kNone}});  // nothing released it
  in.peer_participants = {{c0, c1}};
  in.peer_last = {c1};
  Graph g = BuildGraph(t, in);
  EXPECT_TRUE(HasEdge(g, K(g, 0), g.ApiNode(2), EdgeKind::kHostRelease, false));
  EXPECT_EQ(g.stats().syncs_without_release, 1);
  // The last arrival's first carrier (nccl1, starts 250) -> the other's (nccl0, ends 300).
  EXPECT_TRUE(HasEdge(g, K(g, 1), K(g, 0), EdgeKind::kPeer, false));
  EXPECT_EQ(g.stats().recorded[static_cast<int>(EdgeKind::kPeer)], 1);
}

TEST(Graph, BackwardEdgesAreCounted) {
  Synth s;
  s.Kernel("k", 7, 100, 500, 10);
  s.Api("cudaStreamSynchronize", 30, 200);  // returned before k ended
  model::Trace t = s.Finish();
  GraphInputs in;
  in.host_releases.push_back({1, GpuRef{GpuKind::kKernel, 0}});
  Graph g = BuildGraph(t, in);
  EXPECT_EQ(g.stats().backward_edges, 1);
  EXPECT_EQ(g.stats().recorded[static_cast<int>(EdgeKind::kHostRelease)], 0);
}

TEST(Graph, EmptyTrace) {
  Synth s;
  model::Trace t = s.Finish();
  Graph g = BuildGraph(t, {});
  EXPECT_EQ(g.num_nodes(), 0);
}

}  // namespace
}  // namespace overlapscope::analyze::graph
