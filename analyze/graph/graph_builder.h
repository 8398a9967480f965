// Internal to analyze/graph: the builder behind BuildGraph (graph.h). The bulk edges are flags
// set with the nodes (graph.cc: GPU nodes with stream order and launches, program order); each
// other Add* pass appends cross edges to one list (graph.cc: host releases, peers;
// graph_waits.cc: recorded event waits; graph_infer.cc: the evidence rule); SortEdges() sorts that
// list by target and by source for Graph.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyze/graph/graph.h"
#include "model/trace.h"

namespace overlapscope::analyze::graph {

class GraphBuilder {
 public:
  GraphBuilder(const model::Trace& t, const GraphInputs& in) : t_(t), in_(in) {}
  Graph Build() {
    Start();
    return Finish(in_);
  }
  // The steps that read only the model and in_'s options (GraphStart): nodes, program order,
  // recorded and inferred waits.
  void Start();
  // Then the host releases and peers of `lists` (read there only), the rows and the counts.
  Graph Finish(const GraphInputs& lists);

 private:
  // The GPU nodes, stream by stream, with their stream-order and launch edges.
  // Sizes the nodes' vectors (stream offsets, devices' streams, bulk_ for nodes and calls), then
  // AddGpuNodes and AddProgramOrder fill them at once (disjoint members and parts of bulk_).
  void SizeNodes();
  void AddGpuNodes();
  // Program order's flags and predecessors; its counts per thread (forward, backward) returned.
  void AddProgramOrder(std::vector<int64_t>* edges, std::vector<int64_t>* backward);
  // The API calls the recorded stream waits name (recorded_call_; per sync its call, kNone where
  // none, into *sync_call), then their edges (graph_waits.cc).
  void FindRecordedCalls(std::vector<int32_t>* sync_call);
  void AddRecordedWaits(const std::vector<int32_t>& sync_call);
  // One recorded stream wait `y`, its wait call, waiting and awaited activities as found (kNone
  // where not): the edge, or the count of why none (graph_waits.cc).
  void AddRecordedWait(const model::Sync& y, int32_t call, NodeId to, NodeId from);
  // The evidence rule (graph_infer.cc) in two steps: the search, which reads only the model,
  // the nodes and recorded_call_ (so it runs beside AddRecordedWaits): the indexes, the streams'
  // latencies, and the placement of every activity with evidence (false: no evidence anywhere,
  // nothing done); then, after the recorded waits, the placements applied in order (the
  // recorded waits without their record first, then the activities with evidence that no
  // recorded wait targets). SearchWithoutEvidence: the indexes and latencies alone.
  bool SearchInferredWaits();
  void PlaceInferredWaits(bool searched);
  void SearchWithoutEvidence();
  // What the evidence rule finds for waiting activity x (graph_infer.cc): the source (`only`
  // when candidates == 1), whether the call order named it, whether x was delayed.
  struct Placement {
    NodeId only = model::kNone;
    int candidates = 0;
    bool by_call_order = false, delayed = false;
  };
  // Reads only the graph's times, latencies and the indexes of BuildInferIndexes: several
  // activities are searched at once (graph_infer.cc).
  Placement FindPlacement(NodeId x, int32_t call) const;
  // A wait to place: the waiting activity, its stream-wait call and recorded sync (kNone if none).
  struct Wanted {
    NodeId to = model::kNone;
    int32_t call = model::kNone, sync = model::kNone;
  };
  // What the placements of one range of targets add (graph_place.cc), appended and summed in
  // range order after: the edges and waits in order, the counts per process (stats[p]; the
  // last: targets of no known process), the activities to mark unresolved.
  struct Placed {
    std::vector<Edge> edges;
    std::vector<WaitEdge> waits;
    std::vector<GraphStats> stats;
    std::vector<NodeId> unresolved;
  };
  // Adds to `out` the edge (or counts the wait) that `p` says, from stream-wait call `call`
  // (kNone if unknown) and recorded sync `sync` (kNone if none). Reads only the graph's times.
  void ApplyPlacement(NodeId x, int32_t call, int32_t sync, const Placement& p, Placed& out) const;
  // found[i] applied to wanted[i] in order (wanted: all waits of one target together; with
  // skip_recorded, those whose target a recorded wait targets are left out): in ranges split at
  // a target's boundary on up to in_.threads threads, then the ranges' edges, waits and counts
  // added in range order: the same as one pass in order, at any thread count.
  void ApplyPlacements(const std::vector<Wanted>& wanted, const std::vector<Placement>& found, bool skip_recorded);
  // FindPlacement for each (on up to in_.threads threads).
  std::vector<Placement> FindAll(const std::vector<Wanted>& wanted) const;
  // The indexes FindPlacement reads (graph_infer_index.cc): call_node_ and dev_streams_, and
  // thread_ops_ (built at the search's start); thread_calls_ and thread_waits_ (built beside the
  // nodes, Start). Each writes only its own.
  void BuildInferIndexes();
  void BuildThreadCalls();
  void BuildThreadOps();
  // The source the host's call order gives for stream-wait call `call` waited by activity x: the
  // activity enqueued by the last launch call of the same thread before `call` onto another
  // stream of x's device (graph_infer.cc); kNone when there is none within a few calls.
  NodeId SourceByCallOrder(NodeId x, int32_t call) const;
  // True when one framework op (a Kineto cpu_op range) of the thread encloses both API calls
  // (`first` starts before `second`): PyTorch's collective and the wait that follows it at once
  // sit in one op (c10d's, DTensor's redistribute, a compiled region's function).
  bool OneCpuOpEncloses(int32_t first, int32_t second) const;
  // True when GPU node x started while an activity enqueued after y on y's stream was running
  // (y's stream had moved on past y: what held x then was that activity, not y).
  bool HeldByLaterOnStream(NodeId y, NodeId x) const;
  // graph_waits.cc (event syncs read the recorded waits' recorders)
  void AddHostReleases(const std::vector<HostRelease>& releases);
  void AddPeers(const GraphInputs& lists);
  void SortEdges();

  // Whether the edge goes forward in time for its kind (graph.h's backward edges).
  bool IsForward(NodeId from, NodeId to, EdgeKind k, bool inferred) const;
  // Counts the edge in `st`: backward (graph.h) or by kind. True if forward.
  bool CountForward(NodeId from, NodeId to, EdgeKind k, bool inferred, GraphStats& st) const;
  // CountForward on the counts of its target's process.
  bool Forward(NodeId from, NodeId to, EdgeKind k, bool inferred);
  // A cross edge (event wait, host release, peer): appended when it goes forward. True if added.
  bool Add(NodeId from, NodeId to, EdgeKind k, bool inferred);
  void MarkUnresolved(NodeId g);
  // The counts of the process of node n (a spare for nodes of no known process).
  GraphStats& S(NodeId n);
  model::ProcessId ProcessOf(NodeId n) const;    // node n's process (kNone when not known)
  GraphStats& ProcessStats(model::ProcessId p);  // process p's counts (the spare for kNone)

  // Recorded waits (graph_waits.cc): the last-ending activity the recording stream `rs` had
  // enqueued before the record with correlation `rec_corr`, kNone when none.
  NodeId RecorderBefore(model::StreamId rs, int64_t rec_corr);
  // The first activity enqueued on stream s after the call with correlation `corr`, kNone if none.
  NodeId FirstAfterCorrelation(model::StreamId s, int64_t corr);
  // The first activity on stream s whose launch call starts at or after t, kNone if none.
  NodeId FirstLaunchedAfter(model::StreamId s, int64_t t);
  bool StreamOk(model::StreamId s) const {
    return s != model::kNone && s >= 0 && s + 1 < static_cast<int>(g_.stream_off_.size());
  }

  const model::Trace& t_;
  const GraphInputs& in_;
  Graph g_;
  std::vector<Edge> edges_;  // the cross edges (sorted by SortEdges())
  // The bulk edges, written straight into the graph (Graph::bulk_, Graph::po_pred_).
  static constexpr uint8_t kBulkStream = Graph::kBulkStream, kBulkLaunch = Graph::kBulkLaunch;
  std::vector<uint8_t>& bulk_ = g_.bulk_;
  std::vector<int32_t>& po_pred_ = g_.po_pred_;
  GraphStats other_;                                         // counts of targets of no known process
  std::vector<model::ProcessId> stream_proc_, thread_proc_;  // per stream / thread: its process
  std::vector<int32_t>& launch_ = g_.launch_;                // per GPU node: Trace::LaunchOf, kNone when absent (kept)
  // Per stream, filled on demand: its activities' correlations in enqueue order with the
  // last-ending node so far (recorders), and its activities' launch starts (waits without
  // correlation).
  struct ByCorr {
    bool built = false;
    std::vector<int64_t> corr;
    std::vector<NodeId> node;  // node of corr[i]
    std::vector<NodeId> last;  // argmax end over node[0..i]
  };
  std::vector<ByCorr> by_corr_;
  std::vector<uint8_t> recorded_wait_;  // per GPU node: 1 a recorded wait targets it, 2 one with its record
  std::vector<uint8_t> recorded_call_;  // per API call: a recorded stream-wait sync names it
  // Recorded waits whose record the trace does not give (torch 2.11's cuda_sync rows carry
  // wait_on_stream = -1 and wait_on_cuda_event_record_corr_id = -1): the waiting activity is
  // known, the source is left to the evidence rule.
  struct SourcelessWait {
    NodeId to = model::kNone;
    int32_t call = model::kNone, sync = model::kNone;
  };
  std::vector<SourcelessWait> sourceless_;
  std::vector<std::vector<model::StreamId>> dev_streams_;  // per device (BuildInferIndexes)
  std::vector<NodeId> call_node_;  // per API call: the last GPU node it launched (BuildInferIndexes)
  // The activities with evidence, in activity order, and their placements (SearchInferredWaits).
  std::vector<Wanted> evidence_wanted_;
  std::vector<Placement> evidence_found_;
  // Per thread, its cpu_op ranges' starts and ends sorted by start (BuildInferIndexes).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> thread_ops_;
  // Per thread, its API calls' indexes in order, and those of its stream-wait calls
  // (ApiSemantic::kStreamWait) in order (BuildThreadCalls).
  std::vector<std::vector<int32_t>> thread_calls_, thread_waits_;
  const ByCorr& Corr(model::StreamId s);
};

}  // namespace overlapscope::analyze::graph
