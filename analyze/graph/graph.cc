// BuildGraph (graph.h): nodes, the structural edges (program order, stream order, launches,
// peers) and the compressed rows. Waits and host releases are in graph_waits.cc, the evidence
// rule in graph_infer.cc.
#include "analyze/graph/graph.h"

#include <algorithm>

#include "analyze/graph/graph_builder.h"

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

Graph GraphBuilder::Build() {
  g_.process_stats_.assign(t_.processes().size(), {});
  for (const model::Stream& s : t_.streams())
    stream_proc_.push_back(s.device == kNone ? kNone : t_.ProcessOfDevice(s.device));
  for (const model::Thread& th : t_.threads()) thread_proc_.push_back(th.process);
  AddNodes();
  AddProgramOrder();
  AddStreamOrder();
  AddLaunches();
  AddRecordedWaits();
  AddInferredWaits();
  AddHostReleases();
  AddPeers();
  Finish();
  g_.stats_ = other_;
  for (const GraphStats& p : g_.process_stats_) AddStats(g_.stats_, p);
  return std::move(g_);
}

bool GraphBuilder::Forward(NodeId from, NodeId to, EdgeKind k, bool inferred) {
  const int64_t fs = g_.start_[from], fe = g_.end_[from], ts = g_.start_[to], te = g_.end_[to];
  bool forward = false;
  switch (k) {
    case EdgeKind::kProgramOrder: forward = fe <= ts; break;
    case EdgeKind::kStreamOrder:
    case EdgeKind::kLaunch: forward = fs <= ts; break;
    case EdgeKind::kEventWait: forward = inferred ? fe <= ts : (fs < ts || fe <= ts); break;
    case EdgeKind::kHostRelease: forward = fe <= te; break;
    case EdgeKind::kPeer: forward = fs <= te; break;
  }
  GraphStats& st = S(to);
  if (!forward) {
    ++st.backward_edges;
    return false;
  }
  ++(inferred ? st.inferred : st.recorded)[static_cast<int>(k)];
  return true;
}

bool GraphBuilder::Add(NodeId from, NodeId to, EdgeKind k, bool inferred) {
  if (!Forward(from, to, k, inferred)) return false;
  edges_.push_back({from, to, k, inferred});
  return true;
}

GraphStats& GraphBuilder::S(NodeId n) {
  model::ProcessId p = kNone;
  if (g_.IsGpu(n)) {
    p = stream_proc_[g_.gpu_stream_[n]];
  } else if (const model::ThreadId th = api_thread_[g_.ApiIndex(n)]; th != kNone) {
    p = thread_proc_[th];
  }
  return p >= 0 && static_cast<size_t>(p) < g_.process_stats_.size() ? g_.process_stats_[p] : other_;
}

void GraphBuilder::MarkUnresolved(NodeId g) {
  if (g_.unresolved_.empty()) g_.unresolved_.assign(g_.num_gpu(), 0);
  if (g_.unresolved_[g] < 255) ++g_.unresolved_[g];
}

void GraphBuilder::AddNodes() {
  const model::Trace& t = t_;
  g_.flat_[0].assign(t.kernels().size(), kNone);
  g_.flat_[1].assign(t.memcpys().size(), kNone);
  g_.flat_[2].assign(t.memsets().size(), kNone);
  const size_t ns = t.streams().size();
  const size_t ngpu = t.kernels().size() + t.memcpys().size() + t.memsets().size();
  g_.num_api_ = static_cast<int32_t>(t.api_calls().size());
  g_.stream_off_.resize(ns + 1);
  g_.gpu_ref_.reserve(ngpu);
  g_.gpu_stream_.reserve(ngpu);
  g_.start_.reserve(ngpu + g_.num_api_);
  g_.end_.reserve(ngpu + g_.num_api_);
  launch_.reserve(ngpu);
  for (size_t s = 0; s < ns; ++s) {
    g_.stream_off_[s] = static_cast<NodeId>(g_.gpu_ref_.size());
    for (GpuRef r : t.StreamActivities(static_cast<model::StreamId>(s))) {
      g_.flat_[static_cast<int>(r.kind)][r.index] = static_cast<NodeId>(g_.gpu_ref_.size());
      g_.gpu_ref_.push_back(r);
      g_.gpu_stream_.push_back(static_cast<model::StreamId>(s));
      g_.start_.push_back(t.StartNs(r));
      g_.end_.push_back(t.EndNs(r));
      launch_.push_back(t.LaunchOf(r));
    }
  }
  g_.stream_off_[ns] = static_cast<NodeId>(g_.gpu_ref_.size());
  // Activities without a stream are not in StreamActivities; they stay out of the graph
  // (GpuNode gives kNone for them).
  api_thread_.reserve(t.api_calls().size());
  for (const model::ApiCall& a : t.api_calls()) {
    g_.start_.push_back(a.start_ns);
    g_.end_.push_back(a.end_ns);
    api_thread_.push_back(a.thread);
  }
}

void GraphBuilder::AddProgramOrder() {
  // Outermost calls per thread (calls are sorted by start): a call ending inside the previous
  // outermost one is nested in it (a runtime call's driver call) and gets no edge of its own.
  const auto& calls = t_.api_calls();
  std::vector<int32_t> last(t_.threads().size(), kNone);
  po_pred_.assign(calls.size(), kNone);
  for (size_t i = 0; i < calls.size(); ++i) {
    const model::ApiCall& a = calls[i];
    if (a.thread == kNone || static_cast<size_t>(a.thread) >= last.size()) continue;
    int32_t& prev = last[a.thread];
    if (prev != kNone && a.end_ns <= calls[prev].end_ns) continue;
    if (prev != kNone && Forward(g_.ApiNode(prev), g_.ApiNode(static_cast<int32_t>(i)), EdgeKind::kProgramOrder, false))
      po_pred_[i] = prev;
    prev = static_cast<int32_t>(i);
  }
}

void GraphBuilder::AddStreamOrder() {
  bulk_.assign(g_.num_gpu(), 0);
  const int32_t ns = static_cast<int32_t>(g_.stream_off_.size()) - 1;
  for (int32_t s = 0; s < ns; ++s)
    for (NodeId n = g_.stream_off_[s] + 1; n < g_.stream_off_[s + 1]; ++n)
      if (Forward(n - 1, n, EdgeKind::kStreamOrder, false)) bulk_[n] |= kBulkStream;
}

void GraphBuilder::AddLaunches() {
  for (NodeId n = 0; n < g_.num_gpu(); ++n) {
    if (launch_[n] == kNone) {
      ++S(n).gpu_without_launch;
      continue;
    }
    if (Forward(g_.ApiNode(launch_[n]), n, EdgeKind::kLaunch, false)) bulk_[n] |= kBulkLaunch;
  }
}

void GraphBuilder::AddPeers() {
  const auto& colls = t_.collectives();
  const size_t n = std::min(in_.peer_participants.size(), in_.peer_last.size());
  auto first_node = [&](model::CollectiveId c) -> NodeId {
    if (c == kNone || c < 0 || static_cast<size_t>(c) >= colls.size()) return kNone;
    absl::Span<const GpuRef> acts = t_.CollectiveActivities(c);
    return acts.empty() ? kNone : g_.GpuNode(acts.front());
  };
  for (size_t i = 0; i < n; ++i) {
    const NodeId last = first_node(in_.peer_last[i]);
    if (last == kNone) continue;
    for (model::CollectiveId c : in_.peer_participants[i]) {
      if (c == in_.peer_last[i]) continue;
      if (const NodeId to = first_node(c); to != kNone) Add(last, to, EdgeKind::kPeer, false);
    }
  }
}

void GraphBuilder::Finish() {
  // The bulk edges (program order, stream order, launch) are written straight into the
  // predecessor rows, node by node, each node's in the order the passes made them: its bulk
  // edges, then its cross edges (waits, host releases, peers) in the order they were added.
  const size_t nn = static_cast<size_t>(g_.num_nodes());
  const int32_t ngpu = g_.num_gpu();
  std::vector<Edge> by_from = edges_;
  std::stable_sort(edges_.begin(), edges_.end(), [](const Edge& a, const Edge& b) { return a.to < b.to; });
  g_.pred_off_.assign(nn + 1, 0);
  for (NodeId n = 0; n < ngpu; ++n)
    g_.pred_off_[n + 1] = ((bulk_[n] & kBulkStream) ? 1 : 0) + ((bulk_[n] & kBulkLaunch) ? 1 : 0);
  for (size_t i = 0; i < po_pred_.size(); ++i) g_.pred_off_[ngpu + i + 1] = po_pred_[i] != kNone;
  for (const Edge& e : edges_) ++g_.pred_off_[e.to + 1];
  for (size_t i = 0; i < nn; ++i) g_.pred_off_[i + 1] += g_.pred_off_[i];
  // Appended in node order (no zero-filled array written twice).
  std::vector<Edge>& out = g_.pred_edges_;
  out.reserve(static_cast<size_t>(g_.pred_off_[nn]));
  size_t c = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(nn); ++n) {
    if (n < ngpu) {
      if (bulk_[n] & kBulkStream) out.push_back({n - 1, n, EdgeKind::kStreamOrder, false});
      if (bulk_[n] & kBulkLaunch) out.push_back({g_.ApiNode(launch_[n]), n, EdgeKind::kLaunch, false});
    } else if (const int32_t p = po_pred_[n - ngpu]; p != kNone) {
      out.push_back({g_.ApiNode(p), n, EdgeKind::kProgramOrder, false});
    }
    for (; c < edges_.size() && edges_[c].to == n; ++c) out.push_back(edges_[c]);
  }
  // Successor rows: the cross edges only (CrossSuccs), in the order they were added.
  std::stable_sort(by_from.begin(), by_from.end(), [](const Edge& a, const Edge& b) { return a.from < b.from; });
  g_.succ_off_.assign(nn + 1, 0);
  for (const Edge& e : by_from) ++g_.succ_off_[e.from + 1];
  for (size_t i = 0; i < nn; ++i) g_.succ_off_[i + 1] += g_.succ_off_[i];
  g_.succ_edges_ = std::move(by_from);
  std::vector<Edge>().swap(edges_);
  std::vector<uint8_t>().swap(bulk_);
  std::vector<int32_t>().swap(po_pred_);
}

}  // namespace overlapscope::analyze::graph
