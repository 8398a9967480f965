// The simulation's plan (sim_plan.h). Built without copies of offset arrays: at 10 M nodes every
// fresh array costs its page faults.
#include "analyze/replay/sim_plan.h"

#include <algorithm>
#include <utility>

#include "analyze/replay/fresh.h"

namespace overlapscope::analyze::replay {
// The offsets serve as fill positions and are shifted back after (no copy of them).
Succs BuildSuccs(const SimGraph& g, Simulation::Plan* p, PlanBuffers* b, std::vector<RowOffset>* row_offsets) {
  Succs s;
  const int32_t n = g.num_nodes;
  // Where the plan takes the row offsets, node v's start count goes to row_offsets[v] once its
  // row is read (v + 1's begin is read before): no array of its own.
  std::vector<RowOffset>* in_place = p != nullptr && row_offsets == &g.pred_off ? row_offsets : nullptr;
  // Buffers made ahead hold the initial values already (PlanBuffersFor).
  const bool ready = b != nullptr && b->off.size() == static_cast<size_t>(n) + 1;
  if (ready) {
    s.off = std::move(b->off);
  } else {
    AssignFresh(s.off, static_cast<size_t>(n) + 1, 0);
  }
  if (p != nullptr) {
    if (ready) {
      p->cnt_e = std::move(b->cnt_e);
    } else {
      AssignFresh(p->cnt_e, n, 1);
    }
    if (in_place == nullptr) {
      if (ready && b->cnt_s.size() == static_cast<size_t>(n)) {
        p->cnt_s = std::move(b->cnt_s);
      } else {
        AssignFresh(p->cnt_s, n, 0);
      }
    }
    p->releases.Reset(n);
  }
  const int64_t edges = g.num_edges();
  for (int64_t i = 0; i < edges; ++i) ++s.off[g.pred_from[i] + 1];
  for (int32_t v = 0; v < n; ++v) s.off[v + 1] += s.off[v];
  AssignFresh(s.on, static_cast<size_t>(s.off.back()), SuccEdge{});
  // Each row is read once: its edges placed and its constraints counted in the same pass.
  const std::vector<int32_t>& group = g.group.values();
  int64_t lo = n > 0 ? g.pred_off[0] : 0;
  const std::vector<std::pair<int32_t, int64_t>>& tails = g.release_tails;  // by node: a cursor
  size_t tail_at = 0;
  for (int32_t to = 0; to < n; ++to) {
    int32_t starts = 0, releases = 0;
    const int64_t hi = g.pred_off[to + 1];
    for (int64_t i = lo; i < hi; ++i) {
      const Dep dep = g.pred_dep[i];
      const int64_t at = s.off[g.pred_from[i]]++;
      const int32_t code = dep == Dep::kAfterStart ? to + Succs::kStartEdge : dep == Dep::kRelease ? ~to : to;
      s.on[at] = {code, NarrowLag(g.Lag(i), at, s.big)};
      if (dep == Dep::kRelease) {
        ++releases;
      } else {
        ++starts;
      }
    }
    lo = hi;
    if (in_place != nullptr) {
      (*in_place)[to] = starts;
    } else if (p != nullptr) {
      p->cnt_s[to] += starts;
    }
    if (p != nullptr) {
      p->cnt_e[to] += releases + (group[to] >= 0 ? 1 : 0);
      if (releases > 0) {
        while (tail_at < tails.size() && tails[tail_at].first < to) ++tail_at;
        p->releases.Add(to, tail_at < tails.size() && tails[tail_at].first == to ? tails[tail_at].second : 0);
      }
    }
  }
  if (p != nullptr) p->releases.Finish();
  if (in_place != nullptr) {
    in_place->resize(n);
    p->cnt_s = std::move(*in_place);
    in_place->clear();
  }
  // off[v] now holds v's end (the next node's begin): shift back by one.
  for (int32_t v = n; v > 0; --v) s.off[v] = s.off[v - 1];
  s.off[0] = 0;
  std::sort(s.big.begin(), s.big.end());
  return s;
}

// From the successor rows: the predecessor rows may be gone (ScheduleFromRows). Each edge counts
// once, at its target, as BuildSuccs' pass over the predecessor rows counted it.
void InitialCounts(const SimGraph& g, const Succs& succ, std::vector<int32_t>& cnt_s, std::vector<int32_t>& cnt_e) {
  const int32_t n = g.num_nodes;
  cnt_s.assign(n, 0);
  cnt_e.assign(n, 1);
  for (const SuccEdge& e : succ.on) {
    if (e.to >= Succs::kStartEdge) {
      ++cnt_s[e.to - Succs::kStartEdge];
    } else {
      ++(e.to < 0 ? cnt_e[~e.to] : cnt_s[e.to]);
    }
  }
  const std::vector<int32_t>& group = g.group.values();
  for (int32_t v = 0; v < n; ++v) {
    if (group[v] >= 0) ++cnt_e[v];
  }
}

void BuildCounts(const SimGraph& g, Simulation::Plan& p) {
  const int32_t n = g.num_nodes;
  p.group_cnt.assign(g.num_groups, 0);
  p.group_off.assign(static_cast<size_t>(g.num_groups) + 1, 0);
  const std::vector<int32_t>& group = g.group.values();
  for (int32_t v = 0; v < n; ++v) {
    if (group[v] >= 0) ++p.group_off[group[v] + 1];
  }
  for (int32_t k = 0; k < g.num_groups; ++k) {
    p.group_cnt[k] = static_cast<int32_t>(p.group_off[k + 1]);
    p.group_off[k + 1] += p.group_off[k];
  }
  p.members.resize(static_cast<size_t>(p.group_off.back()));
  for (int32_t v = 0; v < n; ++v) {
    if (group[v] >= 0) p.members[p.group_off[group[v]]++] = v;
  }
  for (int32_t k = g.num_groups; k > 0; --k) p.group_off[k] = p.group_off[k - 1];
  p.group_off[0] = 0;
}

void ReleaseIndex::Reset(int32_t n) {
  AssignFresh(bits_, (static_cast<size_t>(n) + 63) / 64, uint64_t{0});
  rank_.clear();
  tail_.clear();
}

void ReleaseIndex::Add(int32_t v, int64_t tail) {
  bits_[v >> 6] |= uint64_t{1} << (v & 63);
  tail_.push_back(tail);
}

void ReleaseIndex::Finish() {
  AssignFresh(rank_, bits_.size(), 0);
  int32_t below = 0;
  for (size_t w = 0; w < bits_.size(); ++w) {
    rank_[w] = below;
    below += std::popcount(bits_[w]);
  }
}

void BuildPlan(const SimGraph& g, Simulation::Plan& p, PlanBuffers* b, std::vector<RowOffset>* row_offsets) {
  p.succ = BuildSuccs(g, &p, b, row_offsets);
  BuildCounts(g, p);
}

PlanBuffers PlanBuffersFor(int32_t n) {
  PlanBuffers b;
  AssignFresh(b.off, static_cast<size_t>(n) + 1, 0);
  AssignFresh(b.cnt_e, n, 1);  // no cnt_s: the plan takes the graph's row offsets for it
  return b;
}

}  // namespace overlapscope::analyze::replay
