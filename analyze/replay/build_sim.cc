// BuildSim (build.h): the graph's edges as start/end constraints, with the changes applied.
#include <algorithm>
#include <cmath>
#include <memory>

#include "analyze/replay/build.h"
#include "analyze/replay/build_async.h"
#include "analyze/replay/sm_holder.h"

namespace overlapscope::analyze::replay {
namespace {

using graph::EdgeKind;

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

int64_t Scaled(int64_t ns, double f) { return f == 1.0 ? ns : static_cast<int64_t>(std::llround(ns * f)); }

class SimBuilder {
 public:
  SimBuilder(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
             const ChangeEffects* fx, bool strict)
      : t_(t), g_(g), a_(a), changes_(changes), fx_(fx), strict_(strict) {}

  SimGraph Build(ReplayCounts* counts) {
    sim_.ResizeNodes(g_.num_nodes(), g_.num_gpu());
    // Room for the graph's edges, a fallback or thread edge per node and, under a change, the
    // restreamed streams' order and joins (capacity never written costs nothing).
    int64_t edges = 0;
    for (int k = 0; k < graph::kEdgeKinds; ++k) edges += g_.stats().recorded[k] + g_.stats().inferred[k];
    rows_.Reserve(g_.num_nodes(), edges + g_.num_nodes(), fx_ != nullptr ? 2 * int64_t{g_.num_gpu()} : 0);
    for (graph::NodeId v = 0; v < g_.num_nodes(); ++v) {
      sim_.rec_start[v] = g_.StartNs(v);
      sim_.rec_end[v] = std::max(g_.EndNs(v), g_.StartNs(v));
      sim_.dur[v] = Removed(v) ? 0 : Scaled(sim_.rec_end[v] - sim_.rec_start[v], Scale(v));
    }
    LaunchLatencies();
    Groups(counts);
    std::vector<uint8_t> restream(t_.streams().size() + 1, 0);
    if (fx_ != nullptr) {
      for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
        if ((fx_->moved[v] || fx_->deferred[v]) && g_.Stream(v) >= 0) restream[g_.Stream(v)] = 1;
      }
    }
    if (fx_ != nullptr) anchors_ = PrefetchAnchors(t_, g_, a_, changes_, *fx_);
    last_call_.assign(t_.threads().size(), -1);
    for (graph::NodeId v = 0; v < g_.num_nodes(); ++v) {
      rows_.Next(v);
      NodeEdges(v, restream);
    }
    if (fx_ != nullptr) {
      AddAsyncEdges(
          t_, g_, a_, changes_, *fx_, restream, anchors_,
          [this](graph::NodeId from, graph::NodeId to) { return Gap(from, to); }, rows_);
    }
    rows_.Finish(sim_);
    counts->pinned_unresolved += pinned_;
    counts->device_order += device_order_;
    counts->sm_waits += sm_waits_;
    return std::move(sim_);
  }

 private:
  bool Removed(graph::NodeId v) const { return fx_ != nullptr && fx_->removed[v]; }
  double Scale(graph::NodeId v) const { return fx_ != nullptr ? fx_->scale[v] : 1.0; }
  // An activity whose launch call is not in the trace keeps its whole recorded gap: what it
  // waited for is unknown (counted in GraphStats::gpu_without_launch).
  // So does an activity behind a stream wait the graph could not place (Graph::UnresolvedWaits):
  // the replay cannot move what it does not know (counted).
  int64_t Gap(graph::NodeId from, graph::NodeId to) const {
    const int64_t gap = std::max<int64_t>(0, g_.StartNs(to) - g_.EndNs(from));
    if (!strict_ && gap > kGpuGapCapNs && has_launch_[to] && g_.UnresolvedWaits(to) > 0) {
      ++pinned_;
      return gap;
    }
    return has_launch_[to] ? std::min(gap, kGpuGapCapNs) : gap;
  }

  // Per device, the median latency of launches that bound their activity's start.
  void LaunchLatencies() {
    std::vector<std::vector<int64_t>> per_dev(t_.devices().size());
    launch_binding_.assign(g_.num_gpu(), 0);
    has_launch_.assign(g_.num_nodes(), 1);
    for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
      int64_t other = INT64_MIN, launch = INT64_MIN;
      for (const graph::Edge& e : g_.Preds(v)) {
        if (e.kind == EdgeKind::kLaunch) {
          launch = std::max(launch, g_.StartNs(e.from));
        } else if (e.kind != EdgeKind::kPeer) {
          other = std::max(other, g_.EndNs(e.from));
        } else if (!Removed(e.from) && !Removed(v)) {
          // Collective groups: each peer edge joins the last arriver (its source) and a participant.
          std::vector<int32_t>& grp = sim_.group;
          if (grp[e.from] < 0) grp[e.from] = sim_.num_groups++;
          grp[v] = grp[e.from];
        }
      }
      if (launch == INT64_MIN) has_launch_[v] = 0;
      // The launch bound the start when it was issued after everything else the activity waited
      // for had ended (the GPU was idle): its recorded latency is then the true one.
      if (launch == INT64_MIN || launch < other) continue;
      launch_binding_[v] = 1;
      if (a_.device[v] >= 0) per_dev[a_.device[v]].push_back(g_.StartNs(v) - launch);
    }
    median_latency_.assign(per_dev.size(), kDefaultLaunchLatencyNs);
    for (size_t d = 0; d < per_dev.size(); ++d) {
      std::vector<int64_t>& l = per_dev[d];
      if (l.empty()) continue;
      std::nth_element(l.begin(), l.begin() + l.size() / 2, l.end());
      median_latency_[d] = l[l.size() / 2];
    }
  }

  // Each group member's transfer time: its end after the group's last recorded start.
  void Groups(ReplayCounts* counts) {
    const std::vector<int32_t>& grp = sim_.group;
    const int32_t groups = sim_.num_groups;
    std::vector<int64_t> last(groups, INT64_MIN);
    for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
      if (grp[v] >= 0) last[grp[v]] = std::max(last[grp[v]], g_.StartNs(v));
    }
    for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
      if (grp[v] >= 0) {
        const int64_t rec = sim_.rec_end[v] - std::max(sim_.rec_start[v], last[grp[v]]);
        sim_.transfer[v] = Scaled(std::clamp<int64_t>(rec, 0, sim_.rec_end[v] - sim_.rec_start[v]), Scale(v));
      } else if (a_.carries_collective[v] && !Removed(v)) {
        ++counts->collectives_unmatched;
      }
    }
    counts->collective_groups += groups;
  }

  void NodeEdges(graph::NodeId v, const std::vector<uint8_t>& restream) {
    const bool gpu = g_.IsGpu(v);
    const bool nosync = fx_ != nullptr && !gpu && fx_->nosync[v];
    int64_t tail = 0;
    bool any_release = false, program_order = false;
    for (const graph::Edge& e : g_.Preds(v)) {
      switch (e.kind) {
        case EdgeKind::kProgramOrder:
          rows_.Append({e.from, Dep::kAfterEnd, std::max<int64_t>(0, g_.StartNs(v) - g_.EndNs(e.from))});
          program_order = true;
          break;
        case EdgeKind::kStreamOrder:
          if (g_.Stream(v) >= 0 && restream[g_.Stream(v)]) break;  // Restream() rebuilds them
          rows_.Append({e.from, Dep::kAfterEnd, Gap(e.from, v)});
          break;
        case EdgeKind::kEventWait:
          if (fx_ != nullptr && fx_->moved[e.from]) break;  // AddAsyncEdges() joins it later
          rows_.Append({e.from, Dep::kAfterEnd, Gap(e.from, v)});
          break;
        case EdgeKind::kLaunch:
          // A prefetched collective is launched with its iteration's first activity (AddAsyncEdges).
          if (!anchors_.empty() && anchors_[v] >= 0) break;
          rows_.Append({e.from, Dep::kAfterStart, LaunchLag(e.from, v)});
          break;
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
      sim_.release_tail[v] = tail;
      if (nosync) sim_.dur[v] = tail;
    }
    if (gpu) {
      // Where its recorded predecessors allow v to start (once: LaunchLag counts what it pins).
      Bound b;
      b.at = Explained(v, &b.by, &b.dep);
      if (!SmWait(v, b) && !strict_) DeviceOrder(v, b);
    }
    if (!gpu && a_.thread[v] >= 0) {
      // A host call with no program-order predecessor (nested calls, a thread's first call)
      // follows the previous call of its thread (host calls are numbered by start) by its
      // recorded distance, so it moves with its thread.
      graph::NodeId& last = last_call_[a_.thread[v]];
      if (!program_order && last >= 0) rows_.Append({last, Dep::kAfterStart, g_.StartNs(v) - g_.StartNs(last)});
      last = v;
    }
  }

  struct Bound {
    int64_t at = INT64_MIN;  // where the recorded predecessors allow the start (INT64_MIN: none)
    graph::NodeId by = -1;   // the predecessor that binds last
    Dep dep = Dep::kAfterEnd;
  };
  // Where v's recorded predecessors allow it to start (INT64_MIN: none), and which binds last.
  int64_t Explained(graph::NodeId v, graph::NodeId* by_out, Dep* dep_out) const {
    int64_t explained = INT64_MIN;
    graph::NodeId by = -1;
    Dep dep = Dep::kAfterEnd;
    for (const graph::Edge& e : g_.Preds(v)) {
      int64_t at;
      if (e.kind == EdgeKind::kLaunch) {
        at = g_.StartNs(e.from) + LaunchLag(e.from, v);
      } else if (e.kind == EdgeKind::kStreamOrder || e.kind == EdgeKind::kEventWait) {
        at = g_.EndNs(e.from) + Gap(e.from, v);
      } else {
        continue;
      }
      if (at > explained) {
        explained = at;
        by = e.from;
        dep = e.kind == EdgeKind::kLaunch ? Dep::kAfterStart : Dep::kAfterEnd;
      }
    }
    *by_out = by;
    *dep_out = dep;
    return explained;
  }

  // A kernel that started later than its predecessors allow, inside a kernel of another stream
  // that fills every SM with blocks its own cannot sit beside (a one-wave GEMM), got SMs only when
  // that kernel's blocks retired: it follows that kernel's end at the recorded distance (usually
  // negative: the first blocks retire before the last). Counted; true when it applied.
  bool SmWait(graph::NodeId v, const Bound& b) {
    if (b.by < 0 || g_.StartNs(v) - b.at <= kUnexplainedNs) return false;
    const graph::NodeId k = holders_.HolderOf(v);
    if (k < 0) return false;
    rows_.Append({k, Dep::kAfterEnd, g_.StartNs(v) - g_.EndNs(k)});
    ++sm_waits_;
    return true;
  }

  // A GPU activity that started later than all its recorded predecessors allow waited for something
  // the graph does not hold (SmWait() took the SMs it explains), a wait with no evidence at all. It
  // is ordered after the activity of another stream of its device that ended last before its
  // start, with the recorded gap (counted: GraphStats does not know these).
  void DeviceOrder(graph::NodeId v, const Bound& b) {
    const graph::NodeId by = b.by;
    const Dep dep = b.dep;
    const int64_t explained = b.at;
    if (by < 0 || g_.StartNs(v) - explained <= kUnexplainedNs) return;
    ++device_order_;
    const model::DeviceId d = a_.device[v];
    if (d >= 0) {
      if (by_end_.empty()) IndexEnds();
      const std::vector<std::pair<int64_t, graph::NodeId>>& ends = by_end_[d];
      auto it = std::upper_bound(ends.begin(), ends.end(), std::make_pair(g_.StartNs(v), INT32_MAX));
      for (int steps = 0; it != ends.begin() && steps < 16; ++steps) {
        --it;
        if (it->first <= explained) break;
        if (g_.Stream(it->second) == g_.Stream(v) || it->second == v) continue;
        rows_.Append({it->second, Dep::kAfterEnd, g_.StartNs(v) - it->first});
        return;
      }
    }
    // Nothing on the device ended in between: keep the recorded distance to the predecessor that
    // bound it last.
    const int64_t base = dep == Dep::kAfterStart ? g_.StartNs(by) : g_.EndNs(by);
    rows_.Append({by, dep, g_.StartNs(v) - base});
  }

  void IndexEnds() {
    by_end_.resize(t_.devices().size());
    for (graph::NodeId u = 0; u < g_.num_gpu(); ++u) {
      if (a_.device[u] >= 0) by_end_[a_.device[u]].push_back({g_.EndNs(u), u});
    }
    for (auto& e : by_end_) std::sort(e.begin(), e.end());
  }

  int64_t LaunchLag(graph::NodeId call, graph::NodeId v) const {
    const int64_t rec = std::max<int64_t>(0, g_.StartNs(v) - g_.StartNs(call));
    const int64_t med = a_.device[v] >= 0 ? median_latency_[a_.device[v]] : kDefaultLaunchLatencyNs;
    if (launch_binding_[v] && rec <= std::max(kLatencyBoundNs, med)) return rec;
    // A stream wait the graph could not place delayed it: keep its recorded start relative to
    // its launch (counted: the replay cannot move what it does not know).
    if (!strict_ && launch_binding_[v] && g_.UnresolvedWaits(v) > 0) {
      ++pinned_;
      return rec;
    }
    return std::min(rec, med);
  }

  const model::Trace& t_;
  const graph::Graph& g_;
  const NodeAttrs& a_;
  const std::vector<Change>& changes_;
  const ChangeEffects* fx_;
  const bool strict_;
  SimGraph sim_;
  EdgeRows rows_;
  std::vector<uint8_t> launch_binding_, has_launch_;
  std::vector<int64_t> median_latency_;
  std::vector<graph::NodeId> last_call_;  // per thread, the last host call seen
  mutable int64_t pinned_ = 0;
  int64_t device_order_ = 0;
  int64_t sm_waits_ = 0;
  std::vector<graph::NodeId> anchors_;  // PrefetchAnchors(); empty without prefetch:
  SmHolders holders_{t_, g_, a_};
  std::vector<std::vector<std::pair<int64_t, graph::NodeId>>> by_end_;  // per device: (end, node)
};

}  // namespace

SimGraph BuildSim(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
                  const ChangeEffects* fx, bool strict, ReplayCounts* counts) {
  return SimBuilder(t, g, a, changes, fx, strict).Build(counts);
}

}  // namespace overlapscope::analyze::replay
