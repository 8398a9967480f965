// all-reduce: which all-reduce is fastest at which message size (../shared/BACKGROUND.md §5).
// Implementations, each a sum over all ranks of one buffer per rank (out of place):
//   nccl           — ncclAllReduce on cudaMalloc buffers;
//   one-shot       — overlapscope's kernel: every rank reads all peers' inputs (peer pointers);
//   two-shot       — overlapscope's kernel: reduce-scatter, then all-gather by stores to peers;
//   one-shot-push  — overlapscope's kernel: every rank stores its input into every peer's
//                    receive buffer, then reduces locally (no barrier; all_reduce_push.h);
//   nccl-symmetric — ncclAllReduce on ncclMemAlloc buffers registered as symmetric windows
//                    (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC; NCCL >= 2.27).
// (all_reduce_kernels.h and all_reduce_peers.h describe the custom kernels.)
//
// Timing: per message size, the implementations take turns iteration by iteration (timing.h's
// interleaving). An iteration holds the stream with a wait kernel (all_reduce_kernels.h
// HoldStream) while the host enqueues `reps` times [event, all-reduce, event, validation], then
// releases it, so each all-reduce's CUDA event pair times the GPU (including the wait for the
// slowest peer), not the host's launch cost. The figure is the median over all reps of all
// timed iterations, the maximum of that over ranks. Every result is validated on the device
// (each element against the exact sum of the ranks' integer inputs, then poisoned with NaN), so
// a wrong or missing result fails the run. bytes = one rank's buffer; algbw = bytes / time;
// busbw = algbw x 2(n-1)/n (nccl-tests). With AllReduceTiming::kBatch or kGraph the reps run back
// to back between one event pair instead (the figure is the median over iterations of time / reps).
//
// Needs at least 2 GPUs (ranks): with one, Run() fails with FailedPrecondition saying so.
// Sets NCCL_NVLS_ENABLE=0 unless the environment sets it (NVLink multicast stays off on shared
// machines, ../shared/GPU.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/kernels.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

inline const std::vector<std::string>& AllReduceImpls() {
  static const std::vector<std::string> m = {"nccl", "one-shot", "two-shot", "one-shot-push", "nccl-symmetric"};
  return m;
}

// How the table times an all-reduce.
//   kEach:  an event pair around every all-reduce (each validated);
//   kBatch: the `reps` all-reduces of an iteration back to back between one event pair, figure =
//           time / reps (as nccl-tests time), only the last one's output validated;
//   kGraph: the same `reps` all-reduces captured into one CUDA graph per iteration (stream capture,
//           programmatic launches becoming programmatic edges) and the graph launched between one
//           event pair, time / reps: how the published custom all-reduce tables of inference
//           servers time (they run their all-reduces inside CUDA graphs).
enum class AllReduceTiming { kEach, kBatch, kGraph };

struct AllReduceOptions {
  RunParams run;
  DType dtype = DType::kBF16;
  std::vector<int64_t> sizes;  // bytes per rank; empty: 0.5 MiB .. 64 MiB, doubling
  std::vector<std::string> impls = AllReduceImpls();
  // Blocks per rank of the custom kernels, at most (1..128); 0: each kernel's default
  // (AllReduceDefaultBlocks: one-shot and two-shot 64, one-shot-push 128).
  int max_blocks = 0;
  int reps = 5;  // all-reduces per timed iteration
  AllReduceTiming timing = AllReduceTiming::kEach;
  // false: the iteration's launches are not held behind a spinning kernel (--ar-no-hold). For
  // profilers that serialize every launch (Nsight Compute), where a held stream would wait for
  // the host until the hold's 10 s timeout; the figures then include the host's launch gaps.
  bool hold = true;
};

// Message sizes in bytes from "A..B" (A, 2A, 4A, ... up to B) or "A,B,C"; each a number with
// an optional unit B, KB, MB, GB (1024-based, as nccl-tests' -b/-e; KiB, MiB, GiB too), e.g.
// "0.5MB..64MB". InvalidArgument for anything else, sizes that are not whole bytes or < 1, a
// range whose end is below its start, or more than 64 sizes.
absl::StatusOr<std::vector<int64_t>> ParseAllReduceSizes(const std::string& spec);
// "512 KiB", "2 MiB", "1000 B".
std::string FormatBytes(int64_t bytes);

// nccl-tests all-reduce figures for `bytes` per rank in `ms`, in GB/s (1e9 B/s): algbw = bytes /
// time, busbw = algbw x 2(n-1)/n. 0 when ms <= 0.
double AllReduceBusBwGBps(int64_t bytes, double ms, int nranks);

// The figure of one implementation and size, e.g. "one-shot_2MiB_ms" (what: "ms", "busbw_gbps").
std::string AllReduceFigureKey(const std::string& impl, int64_t bytes, const std::string& what);

// From r.figures' "<impl>_<size>_ms" (max over ranks of the median time): adds each one's
// "<impl>_<size>_busbw_gbps", per size "best_<size>_ms" and, when nccl ran, the best one's
// "best_<size>_speedup_vs_nccl" (nccl time / best time), and writes r.table: one row per size,
// time and busbw per implementation ("failed" where it has no figure), the best one and its
// speed-up over nccl. Pure, no CUDA.
void RenderAllReduceTable(const std::vector<int64_t>& sizes, const std::vector<std::string>& impls, int nranks,
                          WorkloadResult& r);

absl::StatusOr<WorkloadResult> RunAllReduce(const AllReduceOptions& o, const CaptureHooks& hooks = {});

}  // namespace overlapscope::workloads
