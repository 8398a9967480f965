// The builder behind BuildSim (build.h), internal to analyze/replay: build_sim.cc turns the
// graph's edges into start/end constraints (with the changes applied); build_bounds.cc says where
// a GPU activity may start (launch latency, gaps between activities, the fallbacks for a start
// no recorded predecessor explains).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyze/replay/build.h"
#include "analyze/replay/sm_holder.h"

namespace overlapscope::analyze::replay {

// GPU-to-GPU edges keep at most this much of their recorded gap (the front end's switch between
// activities); a longer recorded gap was some other constraint's doing.
constexpr int64_t kGpuGapCapNs = 2'000;
constexpr int64_t kDefaultLaunchLatencyNs = 5'000;
// A binding launch keeps its recorded latency up to max(this, the device's median); beyond it the
// activity waited for something the graph does not hold (an unresolved wait): it gets the median,
// and the replay error shows the missing dependency instead of hiding it in a latency.
constexpr int64_t kLatencyBoundNs = 20'000;
// A start later than every recorded predecessor allows by more than this is unexplained.
constexpr int64_t kUnexplainedNs = 5'000;

// One build of the simulation graph (BuildSim): the graph, the node attributes and the changes
// (fx null: as recorded) must outlive it.
class SimBuilder {
 public:
  SimBuilder(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
             const ChangeEffects* fx, bool strict, const SimShared* shared)
      : t_(t), g_(g), a_(a), changes_(changes), fx_(fx), strict_(strict), shared_(shared) {}

  SimGraph Build(ReplayCounts* counts);

 private:
  bool Removed(graph::NodeId v) const { return fx_ != nullptr && fx_->Removed(v); }
  double Scale(graph::NodeId v) const { return fx_ != nullptr ? fx_->Scale(v) : 1.0; }
  // An activity whose launch call is not in the trace keeps its whole recorded gap: what it
  // waited for is unknown (counted in GraphStats::gpu_without_launch).
  // So does an activity behind a stream wait the graph could not place (Graph::UnresolvedWaits):
  // the replay cannot move what it does not know (counted).
  int64_t Gap(graph::NodeId from, graph::NodeId to) const;
  // The same without counting: *pinned says whether it kept the recorded gap for that reason.
  int64_t GapOf(graph::NodeId from, graph::NodeId to, bool* pinned) const;

  // The collective groups: each peer edge joins the last arriver (its source) and a participant.
  void JoinPeers();

  // Each group member's transfer time: its end after the group's last recorded start.
  void Groups(ReplayCounts* counts);

  // v's rows of constraints (`restream`: per stream, rebuilt by AddAsyncEdges()).
  void NodeEdges(graph::NodeId v, const std::vector<uint8_t>& restream);

  struct Bound {
    int64_t at = INT64_MIN;  // where the recorded predecessors allow the start (INT64_MIN: none)
    graph::NodeId by = -1;   // the predecessor that binds last
    Dep dep = Dep::kAfterEnd;
  };
  // Where a GPU activity's recorded predecessors (launch, stream order, event waits: also those a
  // change leaves out) allow it to start, and which binds last: NodeEdges() finds it with the
  // lags of its rows, in one pass over the node's in-edges.
  struct Explain {
    Bound b;
    void Offer(int64_t at, graph::NodeId from, Dep dep) {
      if (at > b.at) b = {at, from, dep};
    }
  };

  // A kernel that started later than its predecessors allow, inside a kernel of another stream
  // that fills every SM with blocks its own cannot sit beside (a one-wave GEMM), got SMs only when
  // that kernel's blocks retired: it follows that kernel's end at the recorded distance (usually
  // negative: the first blocks retire before the last). Counted; true when it applied.
  bool SmWait(graph::NodeId v, const Bound& b);

  // A GPU activity that started later than all its recorded predecessors allow waited for something
  // the graph does not hold (SmWait() took the SMs it explains), a wait with no evidence at all. It
  // is ordered after the activity of another stream of its device that ended last before its
  // start, with the recorded gap (counted: GraphStats does not know these).
  void DeviceOrder(graph::NodeId v, const Bound& b);

  void IndexEnds();  // by_end_

  // v's rows of its restreamed stream (kRestreamInline), after NodeEdges().
  void RestreamInline(graph::NodeId v);
  struct InlineStream {
    graph::NodeId main = -1;  // the last activity not moved (where a moved collective is issued)
    graph::NodeId side = -1;  // the last moved collective
  };
  std::vector<InlineStream> inline_;  // per stream

  // The lag v keeps after the start of its launch call.
  // *pinned: kept the recorded lag for an unresolved wait (NodeEdges counts it, Pin).
  int64_t LaunchLagOf(graph::NodeId call, graph::NodeId v, bool* pinned) const;

  const model::Trace& t_;
  const graph::Graph& g_;
  const NodeAttrs& a_;
  const std::vector<Change>& changes_;
  const ChangeEffects* fx_;
  const bool strict_;
  const SimShared* shared_;  // ShareOf(), computed by the caller or by Build()
  SimShared own_;
  SimGraph sim_;
  EdgeRows rows_;
  std::vector<graph::NodeId> last_call_;  // per thread, the last host call seen
  // GPU activities that kept a recorded gap for an unresolved wait (ReplayCounts::pinned_unresolved),
  // each counted once whatever the number of its edges that kept one.
  void Pin(graph::NodeId v) const {
    if (pinned_nodes_.empty()) pinned_nodes_.assign(static_cast<size_t>(g_.num_nodes()), 0);
    if (v < 0 || v >= static_cast<graph::NodeId>(pinned_nodes_.size()) || pinned_nodes_[v]) return;
    pinned_nodes_[v] = 1;
    ++pinned_;
  }
  mutable std::vector<uint8_t> pinned_nodes_;  // per node, sized on first use
  mutable int64_t pinned_ = 0;
  int64_t device_order_ = 0;
  int64_t sm_waits_ = 0;
  std::vector<graph::NodeId> anchors_;  // PrefetchAnchors(); empty without prefetch:
  SmHolders holders_{t_, g_, a_};
  std::vector<std::vector<std::pair<int64_t, graph::NodeId>>> by_end_;  // per device: (end, node)
};

}  // namespace overlapscope::analyze::replay
