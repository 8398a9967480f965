// The last tile round of a persistent GEMM (internal to analyze/replay, the contention model of
// contention.h). cuBLAS' persistent GEMMs run one block per SM, each taking output tiles until none
// is left: with T tiles on P blocks the kernel runs R = ceil(T / P) rounds, and the R*P - T blocks
// without a last tile retire one round early, freeing their SMs for the last round's length
// (duration / R). The tile count needs the product's shape (record_shapes' "Input Dims",
// model::OpShape) and the kernel's tile (its name); without either the round is unknown.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/replay/sim.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

// The output tile of a GEMM kernel from its name, (a, b) in the library's column-major order (a
// along cuBLAS' m, which is PyTorch's n for a row-major product): "tilesize128x128x64" (cuBLAS
// sm90 xmma), else the first "_AxB_" or "_AxBxC_" with A and B at least 16 (nvjet
// "_256x128_64x4_1x2_", cutlass "_128x256x64_", ampere "_256x128_"). False when the name has none.
bool TileOfKernelName(std::string_view name, int64_t* a, int64_t* b);

struct LastRound {
  int64_t tiles = 0;
  int32_t rounds = 0;    // 0: unknown (no shape or no tile)
  int32_t free_sms = 0;  // SMs without a block in the last round (sms - blocks + rounds*blocks - tiles)
};

// The matrix-product shapes of a trace by (process, external id): a kernel's op.
class OpShapeIndex {
 public:
  explicit OpShapeIndex(const model::Trace& t);
  bool empty() const { return by_op_.empty(); }
  // The shape of the op that launched kernel `k`, or nullptr.
  const model::OpShape* Of(const model::Trace& t, const model::Kernel& k) const;

 private:
  absl::flat_hash_map<std::pair<model::ProcessId, int64_t>, const model::OpShape*> by_op_;
};

// The rounds of kernel `k` (its grid `blocks` of one block per SM, on a GPU of `sms` SMs), or
// rounds 0 when its shape or tile is unknown.
LastRound LastRoundOf(const model::Trace& t, const OpShapeIndex& shapes, const model::Kernel& k, int32_t blocks,
                      int32_t sms);

// Where a collective that became ready at `ready` can start beside persistent kernel `k` (one wave
// of one block per SM, its `blocks` on a GPU of `sms` SMs, placed at [k_start, k_end)): in k's last
// tile round where its rounds are known and the round's freed SMs hold the collective's `held`, at
// k_end - rate x (k_end - k_start) / rounds (not before `ready`; rate > 0, LastRoundRate()); else
// k_end. *kind says which (sim.h LastRoundWait: kNoShape, kOutside or kInRound).
int64_t StartInLastRound(const model::Trace& t, const OpShapeIndex& shapes, const model::Kernel& k, int32_t blocks,
                         int32_t sms, int64_t k_start, int64_t k_end, double rate, int32_t held, int64_t ready,
                         LastRoundWait* kind);

// The share of a communication kernel's alone-time it gets done beside a persistent GEMM's last
// round (0: none, the collective is as late as if it started at the GEMM's end), by the measured
// rates of its kernel family (docs/RESULTS.md "Seventh round", "Ninth round"): NCCL's all-gather
// 0.53 (the median of 11 captures, 0.30-0.78), its send/recv (all-to-all) 0 (median -0.07 of 12,
// -0.56 to +0.34). Any other kernel: 0, not measured.
double LastRoundRate(std::string_view kernel_name);
// NCCL all-gather's share above, for the outputs that name it.
inline constexpr double kAllGatherLastRoundRate = 0.53;

}  // namespace overlapscope::analyze::replay
