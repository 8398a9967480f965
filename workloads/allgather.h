// All-gather buffers of one rank and the operations the workloads run on them: NCCL
// all-gather of 32-bit words with a per-rank pattern (kernels.h), reset, and on-device check.
// Copy-engine variant: buffers from ncclMemAlloc registered as symmetric windows on a
// zero-CTA communicator (RankGroup::CreateCeComms), deregistered by Release().
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "workloads/device_memory.h"
#include "workloads/rank_group.h"

namespace overlapscope::workloads {

class AllGatherBuffers {
 public:
  // `mib` MiB per rank, rounded down to whole 4 KiB (at least 4 KiB). `symmetric`: ncclMemAlloc
  // + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) on `comm` (a collective call: every rank
  // must create its buffers at the same time).
  static absl::StatusOr<AllGatherBuffers> Create(RankContext& ctx, ncclComm_t comm, double mib, bool symmetric);
  AllGatherBuffers() = default;
  AllGatherBuffers(AllGatherBuffers&&) = default;
  AllGatherBuffers& operator=(AllGatherBuffers&&) = default;

  absl::Status Enqueue(cudaStream_t s) const;
  absl::Status Reset(cudaStream_t s) const;  // zeroes the receive buffer
  // Checks every gathered word; synchronizes `s`.
  absl::Status Validate(RankContext& ctx, DeviceChecker& check, cudaStream_t s, const std::string& what) const;
  // Deregisters the windows (collective, like Create). Call before destruction.
  absl::Status Release();

  int64_t bytes_per_rank() const { return count_ * 4; }
  int64_t gathered_bytes() const { return count_ * 4 * nranks_; }

 private:
  DeviceBuffer send_, recv_;
  int64_t count_ = 0;
  int nranks_ = 1;
  ncclComm_t comm_ = nullptr;
  ncclWindow_t send_win_ = nullptr, recv_win_ = nullptr;
};

// nccl-tests figures for an all-gather of `gathered_bytes` in `ms`: algbw = bytes / time,
// busbw = algbw * (n - 1) / n, both in GB/s (1e9 bytes per second).
double AlgBwGBps(int64_t gathered_bytes, double ms);
double BusBwGBps(int64_t gathered_bytes, double ms, int nranks);

}  // namespace overlapscope::workloads
