// BuildSim (build.h): the graph's edges as start/end constraints, with the changes applied.
#include "analyze/replay/build_sim.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "analyze/replay/build_async.h"
#include "analyze/replay/fresh.h"

namespace overlapscope::analyze::replay {

namespace {

using graph::EdgeKind;

int64_t Scaled(int64_t ns, double f) { return f == 1.0 ? ns : static_cast<int64_t>(std::llround(ns * f)); }

}  // namespace

SimGraph SimBuilder::Build(ReplayCounts* counts) {
  sim_.ResizeNodes(g_.num_nodes(), g_.num_gpu(), /*times=*/false);
  if (shared_ == nullptr) {
    own_ = ShareOf(t_, g_);
    shared_ = &own_;
  }
  sim_.rec_start = shared_->start;
  sim_.rec_dur = shared_->dur;
  // Room for the graph's edges, a fallback or thread edge per node and, under a change, the
  // restreamed streams' order and joins (capacity never written costs nothing).
  int64_t edges = 0;
  for (int k = 0; k < graph::kEdgeKinds; ++k) edges += g_.stats().recorded[k] + g_.stats().inferred[k];
  rows_.Reserve(g_.num_nodes(), edges + g_.num_nodes(), fx_ != nullptr ? 2 * int64_t{g_.num_gpu()} : 0);
  if (fx_ != nullptr && (fx_->any_scale || fx_->any_removed || fx_->any_nosync)) {
    std::vector<int64_t> dur(g_.num_nodes());  // its own: the changes rewrite some
    const SharedTimes& rec = shared_->dur;
    for (graph::NodeId v = 0; v < g_.num_nodes(); ++v) dur[v] = Removed(v) ? 0 : Scaled(rec[v], Scale(v));
    sim_.dur = std::move(dur);
  } else {
    sim_.dur = shared_->dur;
  }
  JoinPeers();
  Groups(counts);
  // Per stream: kRestreamMerged, or kRestreamInline where it holds no deferred activity and no
  // collective is prefetched (its order then follows the stream's activities one by one).
  std::vector<uint8_t> restream(t_.streams().size() + 1, 0);
  if (fx_ != nullptr) {
    anchors_ = PrefetchAnchors(t_, g_, a_, changes_, *fx_);
    std::vector<uint8_t> deferred(restream.size(), 0);
    for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
      if ((fx_->moved[v] || fx_->Deferred(v)) && g_.Stream(v) >= 0) restream[g_.Stream(v)] = 1;
      if (fx_->Deferred(v) && g_.Stream(v) >= 0) deferred[g_.Stream(v)] = 1;
    }
    for (size_t st = 0; st < restream.size(); ++st) {
      if (restream[st]) restream[st] = deferred[st] || !anchors_.empty() ? kRestreamMerged : kRestreamInline;
    }
    inline_.assign(restream.size(), {});
  }
  if (fx_ != nullptr) {
    // The async edges first (they read only the recorded graph): in node order they join the
    // rows as these are built, instead of being merged into them after.
    AddAsyncEdges(
        t_, g_, a_, changes_, *fx_, restream, anchors_,
        [this](graph::NodeId from, graph::NodeId to) { return Gap(from, to); }, rows_);
    rows_.InlineAdded();
  }
  last_call_.assign(t_.threads().size(), -1);
  for (graph::NodeId v = 0; v < g_.num_nodes(); ++v) {
    rows_.Next(v);
    NodeEdges(v, restream);
    if (v < g_.num_gpu() && g_.Stream(v) >= 0 && restream[g_.Stream(v)] == kRestreamInline) RestreamInline(v);
    rows_.AppendAdded(v);
  }
  rows_.Finish(sim_);
  counts->pinned_unresolved += pinned_;
  counts->device_order += device_order_;
  counts->sm_waits += sm_waits_;
  return std::move(sim_);
}

namespace {

// The collective groups (per node, -1: none), numbered as the peer edges are met (node order,
// then edge order): each joins the last arriver (its source) and a participant. The edges of
// nodes `removed` says are left out.
template <typename Removed>
int32_t NumberGroups(const std::vector<std::pair<graph::NodeId, graph::NodeId>>& peers, Removed removed,
                     std::vector<int32_t>& grp) {
  int32_t groups = 0;
  for (const auto& [from, v] : peers) {
    if (removed(from) || removed(v)) continue;
    if (grp[from] < 0) grp[from] = groups++;
    grp[v] = grp[from];
  }
  return groups;
}

}  // namespace

// The shared groups unless a node is removed.
void SimBuilder::JoinPeers() {
  if (fx_ == nullptr || !fx_->any_removed) {
    sim_.group = shared_->group;
    sim_.num_groups = shared_->num_groups;
    return;
  }
  std::vector<int32_t> grp(g_.num_nodes(), -1);
  sim_.num_groups = NumberGroups(
      shared_->peers, [this](graph::NodeId v) { return Removed(v); }, grp);
  sim_.group = std::move(grp);
}

SimShared ShareOf(const model::Trace& t, const graph::Graph& g) {
  SimShared s;
  std::vector<int64_t> start, dur;
  AssignFresh(start, g.num_nodes(), int64_t{0});
  AssignFresh(dur, g.num_nodes(), int64_t{0});
  for (graph::NodeId v = 0; v < g.num_nodes(); ++v) {
    start[v] = g.StartNs(v);
    dur[v] = std::max(g.EndNs(v), g.StartNs(v)) - start[v];
  }
  s.start = std::move(start);
  s.dur = std::move(dur);
  // Per device, the median latency of launches that bound their activity's start.
  std::vector<std::vector<int64_t>> per_dev(t.devices().size());
  AssignFresh(s.launch_binding, g.num_gpu(), uint8_t{0});
  AssignFresh(s.has_launch, g.num_gpu(), uint8_t{1});
  for (graph::NodeId v = 0; v < g.num_gpu(); ++v) {
    int64_t other = INT64_MIN, launch = INT64_MIN;
    for (const graph::Edge& e : g.Preds(v)) {
      if (e.kind == EdgeKind::kLaunch) {
        launch = std::max(launch, g.StartNs(e.from));
      } else if (e.kind != EdgeKind::kPeer) {
        other = std::max(other, g.EndNs(e.from));
      } else {
        s.peers.emplace_back(e.from, v);
      }
    }
    if (launch == INT64_MIN) s.has_launch[v] = 0;
    // The launch bound the start when it was issued after everything else the activity waited
    // for had ended (the GPU was idle): its recorded latency is then the true one.
    if (launch == INT64_MIN || launch < other) continue;
    s.launch_binding[v] = 1;
    const model::StreamId st = t.StreamOf(g.Ref(v));  // the device as NodeAttrs::device says it
    const model::DeviceId d = st >= 0 ? t.DeviceOfStream(st) : model::kNone;
    if (d >= 0) per_dev[d].push_back(g.StartNs(v) - launch);
  }
  s.median_latency.assign(per_dev.size(), kDefaultLaunchLatencyNs);
  for (size_t d = 0; d < per_dev.size(); ++d) {
    std::vector<int64_t>& l = per_dev[d];
    if (l.empty()) continue;
    std::nth_element(l.begin(), l.begin() + l.size() / 2, l.end());
    s.median_latency[d] = l[l.size() / 2];
  }
  std::vector<int32_t> grp;
  AssignFresh(grp, g.num_nodes(), -1);
  s.num_groups = NumberGroups(
      s.peers, [](graph::NodeId) { return false; }, grp);
  s.group = std::move(grp);
  return s;
}

// Each group member's transfer time: its end after the group's last recorded start.
void SimBuilder::Groups(ReplayCounts* counts) {
  const std::vector<int32_t>& grp = sim_.group;
  const int32_t groups = sim_.num_groups;
  std::vector<int64_t> last(groups, INT64_MIN);
  for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
    if (grp[v] >= 0) last[grp[v]] = std::max(last[grp[v]], g_.StartNs(v));
  }
  for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
    if (grp[v] >= 0) {
      const int64_t rec = sim_.RecEnd(v) - std::max(sim_.rec_start[v], last[grp[v]]);
      sim_.transfer[v] = Scaled(std::clamp<int64_t>(rec, 0, sim_.rec_dur[v]), Scale(v));
    } else if (a_.CarriesCollective(v) && !Removed(v)) {
      ++counts->collectives_unmatched;
    }
  }
  counts->collective_groups += groups;
}

void SimBuilder::NodeEdges(graph::NodeId v, const std::vector<uint8_t>& restream) {
  const bool gpu = g_.IsGpu(v);
  const bool nosync = fx_ != nullptr && !gpu && fx_->NoSync(v);
  int64_t tail = 0;
  bool any_release = false, program_order = false;
  Explain explain;  // GPU nodes: where the recorded predecessors allow the start
  // The activity counts once however many of its edges keep a recorded gap (Pin).
  auto count_pin = [&](bool pinned, bool kept) {
    if (pinned && (kept || gpu)) Pin(v);
  };
  for (const graph::Edge& e : g_.Preds(v)) {
    switch (e.kind) {
      case EdgeKind::kProgramOrder:
        rows_.Append({e.from, Dep::kAfterEnd, std::max<int64_t>(0, g_.StartNs(v) - g_.EndNs(e.from))});
        program_order = true;
        break;
      case EdgeKind::kStreamOrder:
      case EdgeKind::kEventWait: {
        bool pinned = false;
        const int64_t lag = GapOf(e.from, v, &pinned);
        // Restream() rebuilds a restreamed stream's order; AddAsyncEdges() joins a moved
        // collective's waiters later.
        const bool kept = e.kind == EdgeKind::kStreamOrder ? !(g_.Stream(v) >= 0 && restream[g_.Stream(v)])
                                                           : !(fx_ != nullptr && fx_->moved[e.from]);
        if (kept) rows_.Append({e.from, Dep::kAfterEnd, lag});
        count_pin(pinned, kept);
        explain.Offer(g_.EndNs(e.from) + lag, e.from, Dep::kAfterEnd);
        break;
      }
      case EdgeKind::kLaunch: {
        bool pinned = false;
        const int64_t lag = LaunchLagOf(e.from, v, &pinned);
        // A prefetched collective is launched with its iteration's first activity (AddAsyncEdges).
        const bool kept = anchors_.empty() || anchors_[v] < 0;
        if (kept) rows_.Append({e.from, Dep::kAfterStart, lag});
        count_pin(pinned, kept);
        explain.Offer(g_.StartNs(e.from) + lag, e.from, Dep::kAfterStart);
        break;
      }
      case EdgeKind::kHostRelease: {
        const int64_t t = std::max<int64_t>(0, g_.EndNs(v) - std::max(g_.StartNs(v), g_.EndNs(e.from)));
        tail = any_release ? std::max(tail, t) : t;
        any_release = true;
        if (!nosync) rows_.Append({e.from, Dep::kRelease, t});
        break;
      }
      case EdgeKind::kPeer: break;  // Groups()
    }
  }
  if (any_release) {
    sim_.SetReleaseTail(v, tail);
    if (nosync) sim_.dur[v] = tail;
  }
  if (gpu && !SmWait(v, explain.b) && !strict_) DeviceOrder(v, explain.b);
  if (!gpu && a_.ThreadOf(v) >= 0) {
    // A host call with no program-order predecessor (nested calls, a thread's first call)
    // follows the previous call of its thread (host calls are numbered by start) by its
    // recorded distance, so it moves with its thread.
    graph::NodeId& last = last_call_[a_.ThreadOf(v)];
    if (!program_order && last >= 0) rows_.Append({last, Dep::kAfterStart, g_.StartNs(v) - g_.StartNs(last)});
    last = v;
  }
}

// As AddAsyncEdges' Restream() (build_async.cc) without deferred activities or prefetches, one
// activity at a time: a moved collective is issued after the last activity not moved and after
// the previous moved one (its side stream); the others follow the last one not moved with their
// gap. Appended where Restream()'s Add() would have put them: after v's own rows, before its
// joins.
void SimBuilder::RestreamInline(graph::NodeId v) {
  InlineStream& st = inline_[g_.Stream(v)];
  if (fx_->moved[v]) {
    if (st.main >= 0) rows_.Append({st.main, Dep::kAfterEnd, 0});
    if (st.side >= 0) rows_.Append({st.side, Dep::kAfterEnd, 0});
    st.side = v;
    return;
  }
  if (st.main >= 0) rows_.Append({st.main, Dep::kAfterEnd, Gap(st.main, v)});
  st.main = v;
}

SimGraph BuildSim(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
                  const ChangeEffects* fx, bool strict, ReplayCounts* counts, const SimShared* shared) {
  return SimBuilder(t, g, a, changes, fx, strict, shared).Build(counts);
}

}  // namespace overlapscope::analyze::replay
