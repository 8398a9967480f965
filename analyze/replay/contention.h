// The contention model of what-if (internal to analyze/replay, METRICS §11): what happens on a
// GPU when a change makes communication kernels and compute kernels meet, decided block by
// block from what each kernel holds on an SM (residency.h), first come first served:
//
// - A communication kernel C becoming ready while a compute kernel K runs whose blocks fill
//   every SM and leave no room for C's blocks waits for K's blocks to retire: until K ends when
//   K runs in one wave (cuBLAS' persistent GEMMs: 132 blocks on 132 SMs), else about one of K's
//   waves. C is then not concurrent with K at all and slows nothing: it starts later (a start
//   constraint on K's end, kept for the later rounds of the model).
//   K also comes first when both are released by the same compute kernel's end (C through the
//   event wait the change gave it, K through its own stream). That is a race the trace cannot
//   decide (C's cross-stream event against K's stream, a 0.7 us memset ahead of it): in the
//   measured overlapped PyTorch all-gathers K won 146 of 182 rank-iterations (H100, 16-step and
//   torch_diag captures) and 4 of 9 in the 3-step ones (`tools/replay_pairs.py OVERLAPSCOPE
//   --race`). Where K won, C started in K's last tile round (cuBLAS' persistent GEMMs retire the
//   blocks without a last tile one round early: 45-47 us of 357-375, 107-115 of 1,460-1,520),
//   and its transfer (end - last rank's start) took 111-113 us against 90-96 alone; where C won,
//   both ran side by side (the GEMM 28-31 % longer).
//   Where the trace records K's shape (record_shapes: model::OpShape, joined through K's external
//   id) and K's name its tile, K's rounds are known (last_round.h): R = ceil(tiles / blocks), the
//   last round duration / R long, rounds x blocks - tiles SMs free in it. If C's blocks fit those
//   SMs, C starts in that round, r x the round before K's end, r the share of C's alone-time done
//   beside the round as measured for C's kernel family (all-gather 0.53, send/recv 0: no gain; any
//   other 0), i.e. C ends where a start one round early at rate r would end it; there it holds none
//   of K's SMs (K is not slowed: measured 364.6 against 364.6 us). The rate folds in C's slower
//   transfer beside the round; the race (C first, K 28-31 % longer) is not modelled. Without the
//   shape, with the last round full (GEMM rows 8448: no SM free, measured ~7 us early instead of
//   45) or a rate of 0, C waits for K's end (docs/RESULTS.md "Ninth round: shapes"; the rates:
//   "Seventh round", tools/replay_tail.py).
// - A compute kernel K starting while C holds SMs (or C's blocks fit beside K's) runs on the
//   SMs left: fluid, at min(want, S - held) / want of its speed while C runs, where `want` is
//   the SMs K occupies alone (its grid over its blocks per SM) and held the SMs of the
//   communication kernels then running (their grids, one SM-load each).
// The recorded duration already holds the recorded contention: K's work is what the same model
// says it did under the recorded schedule, then replayed under the predicted one. Where the trace
// has its own slowdown for K's name (the `slowdowns` table: the same name overlapped vs alone),
// that figure replaces the fluid one: duration × (1 + (s − 1)·o_pred) / (1 + (s − 1)·o_rec), o
// the share of K under the SM-holding communication.
// Copy-engine collectives (ce: changes, and copy-engine memcpys) hold no SMs and keep their
// recorded transfer time, but a ce: collective still waits for a compute kernel filling every SM,
// as a copy kernel of at least one SM (blocks unknown) would: NCCL 2.28's copy-engine all-to-all
// and all-gather copy the rank's own chunk on its device first (a device-to-device memcpy at
// 1.5-1.7 TB/s on H100, four times the same run's peer copies through the copy engines,
// 0.35-0.39 TB/s: by all signs an SM copy), and in the captures of tests/data/replay_pairs every
// such copy that started while a GEMM ran started in the GEMM's tail, as the NCCL kernel did, while
// the later ones started beside the 32-block consumer kernels. The transfer: measured on the same
// GPUs, the copy-engine all-to-all's time from the last rank's start is the kernel's alone (333 vs
// 331 us on 4 x H100, 252 vs 257 us on 2), while the kernel's grew 31-46 % beside the GEMMs; the
// base run (kernels only) has no copy-engine records to say otherwise.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analyze/graph/graph.h"
#include "analyze/replay/build.h"
#include "analyze/replay/replay.h"
#include "analyze/replay/sim.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

struct ContentionFactors {
  // (GPU node, factor) of the nodes slowed or sped up, in node order; the others keep a factor
  // of 1. A list, not a per-node array: most nodes are untouched, and at 10 M nodes an array is
  // ~40 MB of fresh pages each round.
  std::vector<std::pair<int32_t, double>> factor;
  std::vector<ExtraEdge> waits;     // new: a communication kernel waits for a compute kernel's SMs
  int64_t by_trace = 0, by_sm = 0;  // compute activities whose factor came from each model
};

// `waited`'s value for a communication kernel whose wait puts it in a GEMM's last tile round.
inline constexpr uint8_t kWaitedInLastRound = 2;

// The factors for schedule `s` of `g` (built with effects `fx`), and the waits for SMs it
// shows that are not yet constraints (a schedule run with the waits found before: they stay).
// `waited` (per node, or empty): communication kernels that already wait for SMs in `s` (one wait
// each): placed where `s` put them, so that the factors describe the schedule they will slow.
ContentionFactors ComputeContention(const model::Trace& t, const graph::Graph& graph, const NodeAttrs& a,
                                    const SimGraph& g, const Schedule& s, const ChangeEffects& fx,
                                    const std::vector<NameSlowdown>& slowdowns, int sm_count_override,
                                    const std::vector<uint8_t>& waited);

}  // namespace overlapscope::analyze::replay
