// overlapscope's own all-reduce kernels (sum), written for the all-reduce workload: every rank
// reads its peers' buffers through peer pointers (peer access within one process, CUDA IPC
// across processes) and synchronizes with flag barriers in device memory; no NCCL inside.
//   one-shot: every rank reads all n inputs and writes the sum into its own output;
//   two-shot: rank r reduces segment r of the inputs (reduce-scatter) and writes that sum into
//             every rank's output (all-gather by stores through peer pointers);
//   one-shot-push: every rank stores its input into every peer's receive buffer and reduces
//             locally once the data has arrived, with no barrier (all_reduce_push.h: its own
//             buffers, sentinel scheme and safety rule; the barrier text below does not apply).
// Both add the ranks' values in rank order 0..n-1 in FP32 and round once, so every rank gets
// bit-identical results, equal to a host reference that adds in the same order.
//
// Barriers: each block of rank r writes `epoch` into slot [phase][block][r] of every peer's flag
// buffer and waits until its own slots [phase][block][q] reach `epoch` for every q: relaxed
// system-scope flags without a fence for the start barrier, release/acquire for two-shot's end
// barrier (after its stores into the peers' outputs). Phase 0 (start) waits until every peer's
// kernel is running, so its input is complete (and every peer's previous all-reduce on these
// buffers has ended). Two-shot's phase 1 (end) keeps every rank's kernel alive until no peer
// writes its output any more. One-shot has no end barrier (it only writes its own output): a
// rank may leave while peers still read its input, so the caller must not rewrite a rank's
// input until that rank's next all-reduce on these buffers has been enqueued before the write
// on the same stream (that launch's start barrier waits for every peer to finish the previous
// one); a caller that rewrites its input every step alternates two input buffers. The workload
// never rewrites them. `epoch` must grow by one per launch on the same flags (the same
// sequence on every rank); flag buffers start zeroed. The kernels' blocks of one launch must all
// be resident at once (their count is capped; see LaunchAllReduce). A barrier that waits longer
// than AllReduceArgs::timeout_ns (default 10 s) gives up, adds one to *timeouts and goes on (the result is
// then wrong and the caller reports it), so a missing peer never hangs the GPU.
//
// Kernel names start with "ovs_allreduce_" (the default classification rule makes them
// communication). Plain C++ interface (no Abseil) so the .cu compiles with nvcc alone.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "workloads/kernels.h"

namespace overlapscope::workloads {

inline constexpr int kAllReduceMaxRanks = 8;
inline constexpr int kAllReduceMaxBlocks = 128;  // blocks per rank
inline constexpr int kAllReduceThreads = 512;    // threads per block
inline constexpr int64_t kAllReduceBarrierTimeoutNs = int64_t{10} * 1000 * 1000 * 1000;

enum class AllReduceAlgo { kOneShot, kTwoShot, kOneShotPush };

// Passed by value to the kernel. in/out/flags[q] are rank q's buffers as this rank addresses
// them (its own at q == rank). Buffers must be 16-byte aligned.
struct AllReduceArgs {
  const void* in[kAllReduceMaxRanks] = {};
  void* out[kAllReduceMaxRanks] = {};
  uint32_t* flags[kAllReduceMaxRanks] = {};  // AllReduceFlagBytes() each, zeroed before first use
  int64_t count = 0;                         // elements per rank
  int nranks = 0;
  int rank = 0;  // the rank this launch plays (the first one, with ranks_per_launch > 1)
  uint32_t epoch = 0;
  unsigned int* timeouts = nullptr;                 // device counter of barriers that gave up (may be null)
  int64_t timeout_ns = kAllReduceBarrierTimeoutNs;  // how long a barrier waits before giving up
  // one-shot-push only (all_reduce_push.h): rank q's receive buffer, the bytes of one slot
  // (a multiple of 16, at least count x element size rounded up to 16) and the half this launch
  // uses (0 or 1, alternating per push launch on these buffers, the same on every rank).
  void* recv[kAllReduceMaxRanks] = {};
  int64_t recv_slot_bytes = 0;
  uint32_t recv_half = 0;
  // Diagnostics only (null in normal runs): kAllReduceStampWords words of device memory that the
  // launch fills with %globaltimer readings in ns (AllReduceStamp). The entry stamps are written
  // before the kernel waits for the previous kernel on its stream (programmatic dependent launch,
  // LaunchAllReduce), so the words must be zeroed before that previous kernel was enqueued.
  unsigned long long* stamps = nullptr;
};

// What AllReduceArgs::stamps receives. "Ready": past the start barrier (one-shot, two-shot), or
// the first thread's peer data arrived (one-shot-push). Block 0 thread 0 writes the *0 words,
// every block's thread 0 the maxima (atomicMax); the exit is taken after the block's last work.
enum AllReduceStamp : int {
  kStampEntry0 = 0,
  kStampReady0 = 1,
  kStampExitMax = 2,
  kStampEntryMax = 3,
  kStampReadyMax = 4,
  kAllReduceStampWords = 8,
};

size_t AllReduceFlagBytes();

// Blocks per rank for `count` elements of `t`: one block per kAllReduceVecsPerBlock 16-byte
// vectors (so small all-reduces still spread over many SMs: the reads over NVLink are issued by
// more SMs at once), at most `max_blocks` (clamped to 1..kAllReduceMaxBlocks).
inline constexpr int kAllReduceVecsPerBlock = 128;
// The most blocks per rank a kernel uses by default. one-shot-push: 128, since each thread of it
// issues its stores to every peer and then polls its own buffer, and more threads keep more of a
// large message in flight (4 x H200, back to back, 128 against 64 blocks: 2 MiB 0.0250 / 0.0286 ms,
// 16 MiB 0.178 / 0.204, 64 MiB 0.708 / 0.804; 0.5-1 MiB within run-to-run noise; docs/RESULTS.md,
// sixth round); one-shot and two-shot: 64 (one-shot 3-6 % slower at 128 from 0.5 to 4 MiB).
inline constexpr int AllReduceDefaultBlocks(AllReduceAlgo algo) {
  return algo == AllReduceAlgo::kOneShotPush ? 128 : 64;
}
int AllReduceBlocks(DType t, int64_t count, int max_blocks);

#ifdef __CUDACC__
#define OVS_HOST_DEVICE __host__ __device__
#else
#define OVS_HOST_DEVICE
#endif
// The vectors [*b0, *b1) of [begin, end) that block `block` of `nblocks` handles: equal
// contiguous chunks, the last ones possibly shorter or empty. Every vector of [begin, end) is
// in exactly one block's range.
OVS_HOST_DEVICE inline void AllReduceBlockRange(int64_t begin, int64_t end, int block, int nblocks, int64_t* b0,
                                                int64_t* b1) {
  const int64_t chunk = (end - begin + nblocks - 1) / nblocks;
  *b0 = begin + block * chunk < end ? begin + block * chunk : end;
  *b1 = *b0 + chunk < end ? *b0 + chunk : end;
}

// Launches one all-reduce of `a` on `s` with `blocks` blocks per rank, as a programmatic
// dependent launch (cudaLaunchKernelEx with programmatic stream serialization: the kernel may be
// scheduled while the previous kernel on `s` finishes, then waits for it before touching any
// buffer, so stream order is kept). ranks_per_launch > 1
// (tests on one GPU): one launch plays ranks a.rank .. a.rank + ranks_per_launch - 1, one per
// grid row, so the N "ranks" of a single device meet in their barriers. Returns
// cudaErrorInvalidValue for bad arguments (nranks outside 1..8, rank range, blocks outside
// 1..kAllReduceMaxBlocks, null or misaligned pointers, count < 0; for one-shot-push also null or
// misaligned receive buffers, a slot too small for count, recv_half above 1) and
// cudaErrorCooperativeLaunchTooLarge when the blocks cannot all be resident on the device.
cudaError_t LaunchAllReduce(AllReduceAlgo algo, DType t, const AllReduceArgs& a, int blocks, int ranks_per_launch,
                            cudaStream_t s);

// Workload data: element i of rank r's input is a small integer in [-4, 4] (a hash of i, r and
// salt), so any sum over at most 8 ranks is exact in fp16, bf16 and fp32 whatever the order.
cudaError_t FillAllReduceInput(DType t, void* in, int64_t count, int rank, uint32_t salt, cudaStream_t s);
// Checks every element of `out` against the sum over ranks 0..nranks-1 of that data (counting
// wrong ones into chk), then overwrites `out` with NaN, so the next all-reduce must write it all.
cudaError_t ValidateAndPoisonAllReduce(DType t, void* out, int64_t count, int nranks, uint32_t salt, DeviceCheck chk,
                                       cudaStream_t s);

// One thread spins until *host_flag (mapped pinned host memory) is non-zero, holding stream `s`
// while the host enqueues a batch behind it, so the batch then runs back to back on the GPU and
// CUDA events around its parts time the GPU, not the host's launch cost. Gives up after
// `timeout_ns` (adding one to *timeouts) so a host that never releases it cannot hang the GPU.
cudaError_t HoldStream(const volatile int* host_flag, int64_t timeout_ns, unsigned int* timeouts, cudaStream_t s);

}  // namespace overlapscope::workloads
