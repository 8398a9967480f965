// The contention model of what-if (internal to analyze/replay, METRICS §11): compute that a
// change makes run beside SM-holding communication is slowed, compute that it frees is sped up.
//
// For a compute activity with recorded overlap fraction o_rec (share of it under communication
// kernels in the trace) and predicted fraction o_pred, and a slowdown s when fully overlapped:
//   duration' = duration × (1 + (s − 1)·o_pred) / (1 + (s − 1)·o_rec)
// (the recorded duration already holds the recorded contention). s is the trace's own slowdown
// for the same name (NameSlowdown: median overlapped / median alone, on the device or any device)
// where it has one; else the SM-share model: the communication kernels hold H blocks of the
// device's S SMs (one block per SM), so a kernel of B blocks runs in ceil(B / (S − H)) waves
// instead of ceil(B / S) (wave quantization: a 132-block GEMM beside a 24-block all-gather on a
// 132-SM GPU takes two waves), or slows by S / (S − H) when its grid is unknown.
// Copy-engine collectives (ce: changes, and copy-engine memcpys) hold no SMs.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/replay/build.h"
#include "analyze/replay/replay.h"
#include "analyze/replay/sim.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

struct ContentionFactors {
  std::vector<double> factor;       // per node, 1 when untouched
  int64_t by_trace = 0, by_sm = 0;  // compute activities whose factor came from each model
};

// SMs of a device from its name (H100/H200: 132, A100: 108, B200: 148); 132 when unknown.
int SmCount(const model::Trace& t, model::DeviceId d);

// The factors for schedule `s` of `g` (built with effects `fx`).
ContentionFactors ComputeContention(const model::Trace& t, const NodeAttrs& a, const SimGraph& g, const Schedule& s,
                                    const ChangeEffects& fx, const std::vector<NameSlowdown>& slowdowns,
                                    int sm_count_override);

}  // namespace overlapscope::analyze::replay
