// The evidence rule's placements applied (graph_builder.h: ApplyPlacement, ApplyPlacements):
// the edges, waits and counts each found source adds, in ranges of targets at once.
#include <algorithm>
#include <functional>
#include <vector>

#include "analyze/graph/graph_builder.h"
#include "base/run_all.h"

namespace overlapscope::analyze::graph {

using model::kNone;

void GraphBuilder::ApplyPlacement(NodeId x, int32_t call, int32_t sync, const Placement& p, Placed& out) const {
  const model::ProcessId proc = ProcessOf(x);
  GraphStats& st = out.stats[proc >= 0 && static_cast<size_t>(proc) + 1 < out.stats.size() ? static_cast<size_t>(proc)
                                                                                           : out.stats.size() - 1];
  if (p.candidates == 1) {
    // A second wait of x on the same source (the timing names the same activity) is that edge.
    // x's waits are all in this range (ranges split at a target's boundary), and no wait added
    // before this pass targets x (a recorded wait with its record keeps x out of both lists).
    for (auto it = out.waits.rbegin(); it != out.waits.rend() && it->to == x; ++it)
      if (it->from == p.only) return;
    if (!CountForward(p.only, x, EdgeKind::kEventWait, true, st)) return;
    out.edges.push_back({p.only, x, EdgeKind::kEventWait, true});
    ++st.waits_inferred;
    if (p.by_call_order) ++st.waits_inferred_by_order;
    out.waits.push_back({p.only, x, call, sync, true});
  } else if (p.candidates > 1) {
    ++st.waits_ambiguous;
    if (p.delayed) out.unresolved.push_back(x);
  } else if (p.delayed) {
    ++st.waits_unresolved;
    out.unresolved.push_back(x);
  } else {
    ++st.waits_not_delayed;
  }
}

void GraphBuilder::ApplyPlacements(const std::vector<Wanted>& wanted, const std::vector<Placement>& found,
                                   bool skip_recorded) {
  const size_t n = wanted.size();
  // Ranges as ParallelFor cuts them, each bound moved past the rest of its target's waits.
  std::vector<size_t> bounds = base::RangeBounds(in_.threads, n, static_cast<size_t>(std::max(1, in_.min_chunk)));
  for (size_t k = 1; k + 1 < bounds.size(); ++k) {
    size_t b = std::max(bounds[k], bounds[k - 1]);
    while (b > 0 && b < n && wanted[b].to == wanted[b - 1].to) ++b;
    bounds[k] = b;
  }
  std::vector<Placed> parts(bounds.size() - 1);
  std::vector<std::function<void()>> tasks;
  for (size_t k = 0; k < parts.size(); ++k)
    tasks.emplace_back([&, k] {
      Placed& out = parts[k];
      out.stats.assign(g_.process_stats_.size() + 1, {});
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i)
        if (!skip_recorded || !recorded_wait_[wanted[i].to])
          ApplyPlacement(wanted[i].to, wanted[i].call, wanted[i].sync, found[i], out);
    });
  base::RunAll(in_.threads, tasks);
  size_t edges = edges_.size(), waits = g_.waits_.size();
  for (const Placed& p : parts) edges += p.edges.size(), waits += p.waits.size();
  edges_.reserve(edges);
  g_.waits_.reserve(waits);
  for (const Placed& p : parts) {
    edges_.insert(edges_.end(), p.edges.begin(), p.edges.end());
    g_.waits_.insert(g_.waits_.end(), p.waits.begin(), p.waits.end());
    for (size_t i = 0; i + 1 < p.stats.size(); ++i) AddStats(g_.process_stats_[i], p.stats[i]);
    AddStats(other_, p.stats.back());
    for (const NodeId x : p.unresolved) MarkUnresolved(x);
  }
}

}  // namespace overlapscope::analyze::graph
