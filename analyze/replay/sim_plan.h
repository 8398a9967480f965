// The plan of the forward simulation (internal to analyze/replay, sim.cc): what every run on one
// simulation graph shares, built once per graph.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {

// A constraint seen from its source, 8 bytes (at 10 M nodes every byte an edge is ~15 MB of
// fresh pages in each plan). `to`: the target, coded by kind (Succs::kStartEdge). `lag` (ns after
// the source's start or end): kBigLag when it does not fit 32 bits; the plan's big-lag list holds
// it.
struct SuccEdge {
  int32_t to;
  int32_t lag;
};

// The successors of each node in one row: those its start fires (kAfterStart: `to` holds the
// target + kStartEdge) and those its end fires (kAfterEnd: the target; kRelease: ~target), each
// kind in target order. One row offset a node, not one per kind (4 bytes a node: ~9 k fresh
// pages a plan at 10 M nodes); a fire reads the row's other kind too (the same cache lines).
// Targets must be below kStartEdge (Replay() refuses larger graphs long before).
struct Succs {
  static constexpr int32_t kStartEdge = int32_t{1} << 30;
  std::vector<RowOffset> off;
  std::vector<SuccEdge> on;
  BigLags big;  // usually empty

  int64_t Lag(int64_t i) const { return LagOf(on[i].lag, big, i); }  // of on[i]
};

// The host calls with release edges (a bit a node) and their tails (SimGraph::release_tails, one
// entry a call, in node order, found by the rank of the call's bit): about 0.2 bytes a node
// where a flag and a tail a node were 9 (~11 k fresh pages a plan at 10 M nodes).
class ReleaseIndex {
 public:
  void Reset(int32_t n);              // n nodes, none with releases
  void Add(int32_t v, int64_t tail);  // v above every node added before
  void Finish();                      // after the last Add()
  bool Has(int32_t v) const { return (bits_[v >> 6] >> (v & 63)) & 1; }
  int64_t Tail(int32_t v) const {  // for Has(v) only
    const uint64_t below = bits_[v >> 6] & ((uint64_t{1} << (v & 63)) - 1);
    return tail_[rank_[v >> 6] + std::popcount(below)];
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<int32_t> rank_;  // per word of bits_: the bits set in the words before it
  std::vector<int64_t> tail_;
};

// What every run on one graph shares: successors, initial counts, collective groups.
struct Simulation::Plan {
  Succs succ;
  std::vector<int32_t> cnt_s, cnt_e;
  ReleaseIndex releases;
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
