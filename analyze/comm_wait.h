// Transfer and waiting (METRICS.md §2): where a collective's arrivals are known (matched across
// ranks, analyze/cross_rank.h), each of its carrying activities splits at the last participant's
// arrival into wait (before: the kernel spins for a late peer) and transfer (after). Per device,
// the wait part of the communication, of its hidden part and of its exposed part, and whom the
// device waited for.
//
// Units: *_ns int64 nanoseconds. The wait is measured on the device's communication set M
// (DeviceOverlap::hidden_comm ∪ exposed_comm), so comm_wait_ns <= comm_ns,
// hidden_wait_ns <= hidden_comm_ns and exposed_wait_ns <= exposed_comm_ns always. Never fails;
// devices none of whose collectives were matched have `known` false (no figure, not zero).
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/cross_rank.h"
#include "analyze/overlap.h"
#include "model/trace.h"

namespace overlapscope::analyze {

// Fills DeviceOverlap::wait (analyze/overlap.h: CommWait) of every device in `overlap` from the matched instances of
// `cross`.
void ComputeCommWait(const model::Trace& t, const CrossRankResult& cross, std::vector<DeviceOverlap>* overlap);

}  // namespace overlapscope::analyze
