// The plan of the forward simulation (internal to analyze/replay, sim.cc): what every run on one
// simulation graph shares, built once per graph.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {

// A constraint seen from its source: target, kind, lag (ns) after the source's start or end.
#pragma pack(push, 1)  // 13 bytes, not 16 (fewer fresh pages)
struct SuccEdge {
  int32_t to;
  Dep dep;
  int64_t lag;
};
#pragma pack(pop)

// The successors fired by each node's start (kAfterStart) and by its end (the others).
struct Succs {
  std::vector<RowOffset> off_s, off_e;
  std::vector<SuccEdge> on_start, on_end;
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
Succs BuildSuccs(const SimGraph& g, Simulation::Plan* p = nullptr);
// The initial counts of each node's start and end constraints (into the vectors given: their
// capacity is reused), and which nodes have release edges (when has_release is not null).
void InitialCounts(const SimGraph& g, std::vector<int32_t>& cnt_s, std::vector<int32_t>& cnt_e,
                   ZeroedVector<uint8_t>* has_release);
// The collective groups (and, unless `counted`, the initial counts and the release flags).
void BuildCounts(const SimGraph& g, Simulation::Plan& p, bool counted = false);
// Both.
void BuildPlan(const SimGraph& g, Simulation::Plan& p);

}  // namespace overlapscope::analyze::replay
