// SM residency of kernels (internal to analyze/replay, the contention model of contention.cc):
// how many blocks of a kernel one SM holds, whether a second kernel's blocks fit beside them,
// and how long a kernel takes when some SMs are held by others (a fluid model: its blocks
// progress in proportion to the SMs it gets).
//
// Limits per SM are Hopper's (H100/H200: 65,536 registers, 228 KiB shared memory, 2,048
// threads, 32 blocks), also used for other GPUs (A100 holds less shared memory: the model then
// overstates what fits). A kernel whose registers or shared memory are unknown (-1) is taken to
// fill its SMs (one block each, nothing beside it).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/events.h"

namespace overlapscope::analyze::replay {

// What one block of a kernel holds on its SM, and the grid.
struct BlockFootprint {
  int32_t blocks = 0;   // grid x*y*z; 0 unknown
  int32_t threads = 0;  // block x*y*z; 0 unknown
  int32_t regs = -1;    // registers per thread; -1 unknown
  int64_t smem = -1;    // shared memory per block, bytes; -1 unknown
  bool Known() const { return threads > 0 && regs >= 0 && smem >= 0; }
};

// A kernel's footprint as the trace recorded it (grid, block, registers, shared memory).
BlockFootprint FootprintOfKernel(const model::Kernel& k);

// Blocks of `k` one SM holds at once (>= 1; 1 when unknown).
int32_t BlocksPerSm(const BlockFootprint& k);

// SMs `k` occupies alone on a GPU of `sms` SMs (its blocks spread one SM-load each): at most
// `sms`; `sms` when its grid is unknown.
int32_t SmsOccupied(const BlockFootprint& k, int32_t sms);

// Whether a block of `c` fits on an SM that holds as many blocks of `k` as it can. False when
// either footprint is unknown.
bool FitsBeside(const BlockFootprint& k, const BlockFootprint& c);

// SMs taken away from a kernel over time: (time ns, +held) at a holder's start and (time, -held)
// at its end, any order.
using HoldSteps = std::vector<std::pair<int64_t, int32_t>>;

// Time a kernel needing `want` SMs of `sms` at full speed takes from `start` to do `work_ns` of
// full-speed work while `holds` (sorted by time) take SMs: its rate is min(want, sms - held) /
// want (at least 1 SM). Returns the end time.
int64_t FluidEnd(int64_t start, int64_t work_ns, int32_t want, int32_t sms, const HoldSteps& holds);

// Full-speed work done from `start` to `end` under `holds` (the inverse of FluidEnd), ns.
int64_t FluidWork(int64_t start, int64_t end, int32_t want, int32_t sms, const HoldSteps& holds);

}  // namespace overlapscope::analyze::replay
