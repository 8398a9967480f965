// The number of streaming multiprocessors of a traced device, for the rules that ask whether a
// kernel's grid fills the device (the critical path's SM holders, the replay's contention model).
//
// Traces carry the device's name, not its SM count: known names map to their count (A100/A800
// 108, B200 148); every other device, H100 and H200 included, is taken as 132. An unknown device
// index gives 132 too. Never fails.
#pragma once

#include <cstdint>

#include "analyze/graph/graph.h"
#include "model/trace.h"

namespace overlapscope::analyze::graph {

int DeviceSmCount(const model::Trace& t, model::DeviceId d);

// Whether kernel `k`'s grid has at least one block per SM of its device: while it runs, a kernel
// of another stream finds no free SM until its blocks retire (its last wave). A grid of 0
// (unknown) is false.
bool GridFillsDevice(const model::Trace& t, const model::Kernel& k);

// What counts as a kernel held out of the SMs, the same for the critical path's SM holders and
// the finding collective-starved-of-sms: a start at least kSmHoldMinNs after the kernel was ready
// (shorter is launch and scheduling noise), behind a kernel that had run at least that long and
// ended at most kSmHoldAfterEndNs before that start (the scheduler places the next grid within
// microseconds of the last block's retirement).
inline constexpr int64_t kSmHoldMinNs = 50'000;
inline constexpr int64_t kSmHoldAfterEndNs = 20'000;

// What held kernel n (a GPU node of `g`, ready at `ready`: when its dependencies allowed it to
// start) out of the SMs until `c`, its start: the kernel of another stream of its device whose
// grid fills the device, that had started at least kSmHoldMinNs before c and was still running at
// c or had ended at most kSmHoldAfterEndNs before it; the one ending last. kNone when n started
// less than kSmHoldMinNs after `ready` (or `ready` is INT64_MIN: unknown), n is no kernel, its grid
// is not in the trace, or there is no such kernel.
// O(streams of its device × log activities per stream).
NodeId SmHolderAt(const model::Trace& t, const Graph& g, NodeId n, int64_t ready, int64_t c);

}  // namespace overlapscope::analyze::graph
