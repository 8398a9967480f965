// The plan of the forward simulation (internal to analyze/replay, sim.cc): what every run on one
// simulation graph shares, built once per graph.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {

// A constraint seen from its source, 8 bytes (at 10 M nodes every byte an edge is ~15 MB of
// fresh pages in each plan). `to`: the target; in the end rows a release edge (Dep::kRelease)
// holds ~target, the others are kAfterEnd (start rows: all kAfterStart). `lag` (ns after the
// source's start or end): kBigLag when it does not fit 32 bits; the plan's big-lag list holds it.
struct SuccEdge {
  int32_t to;
  int32_t lag;
};

// The successors fired by each node's start (kAfterStart) and by its end (the others).
struct Succs {
  std::vector<RowOffset> off_s, off_e;
  std::vector<SuccEdge> on_start, on_end;
  BigLags big_start, big_end;  // usually empty

  // The lag of on_start[i] (`big` = big_start) or on_end[i] (big_end).
  static int64_t Lag(const std::vector<SuccEdge>& rows, const BigLags& big, int64_t i) {
    return LagOf(rows[i].lag, big, i);
  }
};

// What every run on one graph shares: successors, initial counts, collective groups.
struct Simulation::Plan {
  Succs succ;
  std::vector<int32_t> cnt_s, cnt_e;
  ZeroedVector<uint8_t> has_release;
  std::vector<int32_t> group_cnt, members;
  std::vector<int64_t> group_off;
};

// The successor rows: a counting sort of the predecessor rows by source, stable (a source's
// successors in target order, as the rows list them). With `p` (or null) it also fills p's
// initial counts and release flags (InitialCounts() in the same pass over the rows).
// `b` (or null): PlanBuffersFor(g.num_nodes), whose arrays it takes. `row_offsets` (or null):
// &g.pred_off, whose storage becomes p's start counts (g's rows are then left without it).
Succs BuildSuccs(const SimGraph& g, Simulation::Plan* p = nullptr, PlanBuffers* b = nullptr,
                 std::vector<RowOffset>* row_offsets = nullptr);
// The initial counts of each node's start and end constraints from the plan's successor rows
// (into the vectors given: their capacity is reused).
void InitialCounts(const SimGraph& g, const Succs& succ, std::vector<int32_t>& cnt_s, std::vector<int32_t>& cnt_e);
// The collective groups (the counts and release flags come from BuildSuccs).
void BuildCounts(const SimGraph& g, Simulation::Plan& p);
// Both.
void BuildPlan(const SimGraph& g, Simulation::Plan& p, PlanBuffers* b = nullptr,
               std::vector<RowOffset>* row_offsets = nullptr);

}  // namespace overlapscope::analyze::replay
