// RankGroup — one rank per local GPU inside this process: a device, a compute and a comm
// stream, a cuBLAS handle and (optionally) NCCL communicators, plus RunOnAll(), which runs a
// function on one thread per rank at the same time (the "one thread per GPU" model; NCCL
// communicators are created with ncclCommInitRankConfig from those threads).
//
// Failure modes: Create() fails with the CUDA/NCCL/cuBLAS error when a device cannot be used or
// a communicator cannot be built (e.g. a CTA policy or window registration the NCCL library does
// not support). RunOnAll() returns the errors of all ranks joined; the first failing rank aborts
// the NCCL communicators so that peers waiting in a collective are released. If the ranks are
// still not back after `timeout`, the process prints what it knows and exits with status 1:
// a hung collective cannot be recovered in-process.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "workloads/cuda_status.h"

namespace overlapscope::workloads {

struct GroupOptions {
  int gpus = 0;               // ranks to use; 0: every visible GPU
  bool nccl = true;           // default communicator
  int nccl_max_ctas = 0;      // > 0: ncclConfig_t::maxCTAs of the default communicator
  bool cublas = true;
  bool nvtx = false;          // emit NVTX iteration ranges (only while a capture is running)
};

struct RankContext {
  int rank = 0, nranks = 1, device = 0, num_sms = 0;
  cudaStream_t compute = nullptr, comm = nullptr;
  cublasHandle_t blas = nullptr;
  ncclComm_t nccl = nullptr;     // default communicator (kernels)
  ncclComm_t nccl_ce = nullptr;  // zero-CTA communicator, after RankGroup::CreateCeComms()
  class RankGroup* group = nullptr;
};

class RankGroup {
 public:
  static absl::StatusOr<std::unique_ptr<RankGroup>> Create(const GroupOptions& options);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int size() const { return static_cast<int>(ranks_.size()); }
  const GroupOptions& options() const { return options_; }
  RankContext& rank(int r) { return ranks_[r]; }
  // "NVIDIA H200 x2, NCCL 2.28.3 (built against 2.28.9)" and the like.
  const std::string& description() const { return description_; }
  int nccl_runtime_version() const { return nccl_version_; }

  // Builds the second communicator (CTAPolicy = NCCL_CTA_POLICY_ZERO: copy-engine collectives
  // with symmetric-window buffers). Separate from Create() so that a library without it fails
  // only the modes that need it.
  absl::Status CreateCeComms();

  // Runs fn on every rank concurrently (each thread has its device set) and waits.
  absl::Status RunOnAll(const std::function<absl::Status(RankContext&)>& fn,
                        absl::Duration timeout = absl::Seconds(300));
  // Waits until every rank arrived. False when the group was aborted (a rank failed): the
  // caller returns at once.
  bool Barrier();
  // Emit NVTX ranges from now on (set by the CLI while a capture is running).
  void set_nvtx(bool on) { options_.nvtx = on; }

 private:
  RankGroup() = default;
  void Abort();

  GroupOptions options_;
  std::vector<RankContext> ranks_;
  std::string description_;
  int nccl_version_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  bool aborted_ = false;
};

}  // namespace overlapscope::workloads
