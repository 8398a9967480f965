// BuildGraph and GraphStart (graph.h): the steps in order, program order, peers and the
// compressed rows. The GPU nodes (with stream order and launches) are in graph_nodes.cc, waits
// and host releases in graph_waits.cc, the evidence rule in graph_infer.cc.
#include "analyze/graph/graph.h"

#include <algorithm>
#include <vector>

#include "analyze/graph/graph_builder.h"
#include "base/phase_log.h"
#include "base/run_all.h"

namespace overlapscope::analyze::graph {

using model::GpuRef;
using model::kNone;

std::string_view ToString(EdgeKind k) {
  switch (k) {
    case EdgeKind::kProgramOrder: return "program-order";
    case EdgeKind::kStreamOrder: return "stream-order";
    case EdgeKind::kLaunch: return "launch";
    case EdgeKind::kEventWait: return "event-wait";
    case EdgeKind::kHostRelease: return "host-release";
    case EdgeKind::kPeer: return "peer";
  }
  return "unknown";
}

void AddStats(GraphStats& a, const GraphStats& b) {
  for (int k = 0; k < kEdgeKinds; ++k) a.recorded[k] += b.recorded[k], a.inferred[k] += b.inferred[k];
  a.waits_recorded += b.waits_recorded;
  a.waits_inferred += b.waits_inferred;
  a.waits_inferred_by_order += b.waits_inferred_by_order;
  a.waits_ambiguous += b.waits_ambiguous;
  a.waits_unresolved += b.waits_unresolved;
  a.gpu_without_launch += b.gpu_without_launch;
  a.syncs_without_release += b.syncs_without_release;
  a.backward_edges += b.backward_edges;
  a.waits_not_delayed += b.waits_not_delayed;
  a.waits_already_complete += b.waits_already_complete;
  a.waits_recorded_without_source += b.waits_recorded_without_source;
}

Graph BuildGraph(const model::Trace& trace, const GraphInputs& in) { return GraphBuilder(trace, in).Build(); }

GraphStart::GraphStart(const model::Trace& trace, const GraphInputs& options)
    : b_(std::make_unique<GraphBuilder>(trace, options)) {
  b_->Start();
}

GraphStart::~GraphStart() = default;

Graph GraphStart::Finish(const GraphInputs& lists) { return b_->Finish(lists); }

namespace {
// The edges of `v` (sorted by `key`) whose key is n.
template <typename Key>
absl::Span<const Edge> EqualRange(const std::vector<Edge>& v, NodeId n, Key key) {
  const auto lo = std::lower_bound(v.begin(), v.end(), n, [&](const Edge& e, NodeId x) { return key(e) < x; });
  auto hi = lo;
  while (hi != v.end() && key(*hi) == n) ++hi;
  return {v.data() + (lo - v.begin()), static_cast<size_t>(hi - lo)};
}
}  // namespace

absl::Span<const Edge> Graph::CrossSuccs(NodeId n) const {
  if (!(bulk_[n] & kBulkCrossOut)) return {};
  return EqualRange(succ_edges_, n, [](const Edge& e) { return e.from; });
}

PredRange Graph::Preds(NodeId n) const {
  PredRange r;
  const uint8_t b = bulk_[n];
  if (n < num_gpu()) {
    if (b & kBulkStream) r.bulk_[r.nbulk_++] = {n - 1, n, EdgeKind::kStreamOrder, false};
    if (b & kBulkLaunch) r.bulk_[r.nbulk_++] = {ApiNode(launch_[n]), n, EdgeKind::kLaunch, false};
  } else if (b & kBulkProgram) {
    r.bulk_[r.nbulk_++] = {ApiNode(po_pred_[ApiIndex(n)]), n, EdgeKind::kProgramOrder, false};
  }
  if (b & kBulkCross) r.cross_ = EqualRange(cross_in_, n, [](const Edge& e) { return e.to; });
  return r;
}

namespace {
// Each step its own span line under OVERLAPSCOPE_PHASES (base/phase_log.h).
template <typename Fn>
void Step(const char* name, Fn&& fn) {
  base::PhaseSpan span(name);
  fn();
}
}  // namespace

void GraphBuilder::Start() {
  g_.process_stats_.assign(t_.processes().size(), {});
  for (const model::Stream& s : t_.streams())
    stream_proc_.push_back(s.device == kNone ? kNone : t_.ProcessOfDevice(s.device));
  for (const model::Thread& th : t_.threads()) thread_proc_.push_back(th.process);
  // The GPU nodes, program order, the threads' calls and their cpu_op ranges (for the evidence
  // rule) read only the model and write their own members (the nodes' and the calls' flags are
  // disjoint parts of bulk_, sized first): at once.
  SizeNodes();
  std::vector<int64_t> po_edges, po_backward;
  base::RunAll(in_.threads, {[&] { Step("g gpu nodes", [&] { AddGpuNodes(); }); },
                             [&] { Step("g program order", [&] { AddProgramOrder(&po_edges, &po_backward); }); },
                             [&] {
                               if (in_.infer_waits) Step("g thread calls", [&] { BuildThreadCalls(); });
                             }});
  for (size_t th = 0; th < po_edges.size(); ++th) {
    GraphStats& st = ProcessStats(thread_proc_[th]);
    st.recorded[static_cast<int>(EdgeKind::kProgramOrder)] += po_edges[th];
    st.backward_edges += po_backward[th];
  }
  // The recorded waits' edges and the evidence rule's search (its indexes, the streams' launch
  // latencies, where each wait with evidence would be placed) read disjoint members once the
  // calls the recorded waits name are known (they are no evidence): at once. The placements
  // then go in after the recorded edges, in the order of one pass.
  std::vector<int32_t> sync_call;
  Step("g recorded calls", [&] { FindRecordedCalls(&sync_call); });
  bool searched = false;
  base::RunAll(in_.threads, {[&] { Step("g recorded waits", [&] { AddRecordedWaits(sync_call); }); },
                             [&] {
                               if (in_.infer_waits) Step("g infer search", [&] { searched = SearchInferredWaits(); });
                             }});
  Step("g inferred waits", [&] { PlaceInferredWaits(searched); });
}

Graph GraphBuilder::Finish(const GraphInputs& lists) {
  Step("g host releases", [&] { AddHostReleases(lists.host_releases); });
  Step("g peers", [&] { AddPeers(lists); });
  Step("g finish", [&] { SortEdges(); });
  g_.stats_ = other_;
  for (const GraphStats& p : g_.process_stats_) AddStats(g_.stats_, p);
  return std::move(g_);
}

bool GraphBuilder::IsForward(NodeId from, NodeId to, EdgeKind k, bool inferred) const {
  const int64_t fs = g_.StartNs(from), fe = g_.EndNs(from), ts = g_.StartNs(to), te = g_.EndNs(to);
  switch (k) {
    case EdgeKind::kProgramOrder: return fe <= ts;
    case EdgeKind::kStreamOrder:
    case EdgeKind::kLaunch: return fs <= ts;
    case EdgeKind::kEventWait: return inferred ? fe <= ts : (fs < ts || fe <= ts);
    case EdgeKind::kHostRelease: return fe <= te;
    case EdgeKind::kPeer: return fs <= te;
  }
  return false;
}

bool GraphBuilder::CountForward(NodeId from, NodeId to, EdgeKind k, bool inferred, GraphStats& st) const {
  if (!IsForward(from, to, k, inferred)) {
    ++st.backward_edges;
    return false;
  }
  ++(inferred ? st.inferred : st.recorded)[static_cast<int>(k)];
  return true;
}

bool GraphBuilder::Forward(NodeId from, NodeId to, EdgeKind k, bool inferred) {
  return CountForward(from, to, k, inferred, S(to));
}

bool GraphBuilder::Add(NodeId from, NodeId to, EdgeKind k, bool inferred) {
  if (!Forward(from, to, k, inferred)) return false;
  edges_.push_back({from, to, k, inferred});
  return true;
}

model::ProcessId GraphBuilder::ProcessOf(NodeId n) const {
  if (g_.IsGpu(n)) return stream_proc_[g_.gpu_stream_[n]];
  const model::ThreadId th = t_.api_calls()[g_.ApiIndex(n)].thread;
  return th != kNone ? thread_proc_[th] : kNone;
}

GraphStats& GraphBuilder::S(NodeId n) { return ProcessStats(ProcessOf(n)); }

void GraphBuilder::MarkUnresolved(NodeId g) {
  if (g_.unresolved_.empty()) g_.unresolved_.assign(g_.num_gpu(), 0);
  if (g_.unresolved_[g] < 255) ++g_.unresolved_[g];
}

GraphStats& GraphBuilder::ProcessStats(model::ProcessId p) {
  return p >= 0 && static_cast<size_t>(p) < g_.process_stats_.size() ? g_.process_stats_[p] : other_;
}

void GraphBuilder::AddProgramOrder(std::vector<int64_t>* edges, std::vector<int64_t>* backward) {
  // Outermost calls per thread (calls are sorted by start): a call ending inside the previous
  // outermost one is nested in it (a runtime call's driver call) and gets no edge of its own.
  // Counted per thread (forward: from.end <= to.start), added to the processes by the caller.
  const auto& calls = t_.api_calls();
  const size_t nth = t_.threads().size();
  std::vector<int32_t> last(nth, kNone);
  edges->assign(nth, 0), backward->assign(nth, 0);
  po_pred_.assign(calls.size(), kNone);
  uint8_t* api_bulk = bulk_.data() + g_.num_gpu();
  for (size_t i = 0; i < calls.size(); ++i) {
    const model::ApiCall& a = calls[i];
    if (a.thread == kNone || static_cast<size_t>(a.thread) >= nth) continue;
    int32_t& prev = last[a.thread];
    if (prev != kNone && a.end_ns <= calls[prev].end_ns) continue;
    if (prev != kNone && calls[prev].end_ns <= a.start_ns) {
      po_pred_[i] = prev;
      api_bulk[i] = Graph::kBulkProgram;
      ++(*edges)[a.thread];
    } else if (prev != kNone) {
      ++(*backward)[a.thread];
    }
    prev = static_cast<int32_t>(i);
  }
}

void GraphBuilder::AddPeers(const GraphInputs& lists) {
  const auto& colls = t_.collectives();
  const size_t n = std::min(lists.peer_participants.size(), lists.peer_last.size());
  auto first_node = [&](model::CollectiveId c) -> NodeId {
    if (c == kNone || c < 0 || static_cast<size_t>(c) >= colls.size()) return kNone;
    absl::Span<const GpuRef> acts = t_.CollectiveActivities(c);
    return acts.empty() ? kNone : g_.GpuNode(acts.front());
  };
  for (size_t i = 0; i < n; ++i) {
    const NodeId last = first_node(lists.peer_last[i]);
    if (last == kNone) continue;
    for (model::CollectiveId c : lists.peer_participants[i]) {
      if (c == lists.peer_last[i]) continue;
      if (const NodeId to = first_node(c); to != kNone) Add(last, to, EdgeKind::kPeer, false);
    }
  }
}

void GraphBuilder::SortEdges() {
  // The bulk edges stay as flags and program-order predecessors (Preds makes them on the fly);
  // the cross edges are kept twice, by target and by source.
  for (const Edge& e : edges_) {
    bulk_[e.to] |= Graph::kBulkCross;
    bulk_[e.from] |= Graph::kBulkCrossOut;
  }
  std::vector<Edge> by_from = edges_;
  std::stable_sort(edges_.begin(), edges_.end(), [](const Edge& a, const Edge& b) { return a.to < b.to; });
  g_.cross_in_ = std::move(edges_);
  std::stable_sort(by_from.begin(), by_from.end(), [](const Edge& a, const Edge& b) { return a.from < b.from; });
  g_.succ_edges_ = std::move(by_from);
}

}  // namespace overlapscope::analyze::graph
