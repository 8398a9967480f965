// Where a GPU activity may start in the simulation graph (build_sim.h): the lags its launch and
// its stream keep, and the fallbacks for a start no recorded predecessor explains.
#include <algorithm>

#include "analyze/replay/build_sim.h"

namespace overlapscope::analyze::replay {

using graph::EdgeKind;

// An activity whose launch call is not in the trace keeps its whole recorded gap: what it
// waited for is unknown (counted in GraphStats::gpu_without_launch).
// So does an activity behind a stream wait the graph could not place (Graph::UnresolvedWaits):
// the replay cannot move what it does not know (counted).
int64_t SimBuilder::Gap(graph::NodeId from, graph::NodeId to) const {
  bool pinned = false;
  const int64_t gap = GapOf(from, to, &pinned);
  if (pinned) Pin(to);
  return gap;
}

int64_t SimBuilder::GapOf(graph::NodeId from, graph::NodeId to, bool* pinned) const {
  const int64_t gap = std::max<int64_t>(0, g_.StartNs(to) - g_.EndNs(from));
  *pinned = false;
  // (A host call counts as launched: SimShared::has_launch holds GPU nodes only.)
  const bool launched = to >= g_.num_gpu() || shared_->has_launch[to];
  if (!strict_ && gap > kGpuGapCapNs && launched && g_.UnresolvedWaits(to) > 0) {
    *pinned = true;
    return gap;
  }
  return launched ? std::min(gap, kGpuGapCapNs) : gap;
}

// A kernel that started later than its predecessors allow, inside a kernel of another stream
// that fills every SM with blocks its own cannot sit beside (a one-wave GEMM), got SMs only when
// that kernel's blocks retired: it follows that kernel's end at the recorded distance (usually
// negative: the first blocks retire before the last). Counted; true when it applied.
bool SimBuilder::SmWait(graph::NodeId v, const Bound& b) {
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
void SimBuilder::DeviceOrder(graph::NodeId v, const Bound& b) {
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

void SimBuilder::IndexEnds() {
  by_end_.resize(t_.devices().size());
  for (graph::NodeId u = 0; u < g_.num_gpu(); ++u) {
    if (a_.device[u] >= 0) by_end_[a_.device[u]].push_back({g_.EndNs(u), u});
  }
  for (auto& e : by_end_) std::sort(e.begin(), e.end());
}

int64_t SimBuilder::LaunchLagOf(graph::NodeId call, graph::NodeId v, bool* pinned) const {
  const int64_t rec = std::max<int64_t>(0, g_.StartNs(v) - g_.StartNs(call));
  const int64_t med = a_.device[v] >= 0 ? shared_->median_latency[a_.device[v]] : kDefaultLaunchLatencyNs;
  *pinned = false;
  if (shared_->launch_binding[v] && rec <= std::max(kLatencyBoundNs, med)) return rec;
  // A stream wait the graph could not place delayed it: keep its recorded start relative to
  // its launch (counted: the replay cannot move what it does not know).
  if (!strict_ && shared_->launch_binding[v] && g_.UnresolvedWaits(v) > 0) {
    *pinned = true;
    return rec;
  }
  return std::min(rec, med);
}
}  // namespace overlapscope::analyze::replay
