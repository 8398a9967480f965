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
//
// MPI (GroupOptions::mpi, after mpi::Init()): one rank per process instead. The group holds the
// process's one rank (global rank, world size from MPI; device = the rank's local rank on its
// host), the NCCL unique id goes from rank 0 to the others by MPI_Bcast, Barrier() is
// MPI_Barrier, and RunOnAll() runs fn on the calling thread. Under MPI every decision to stop is
// taken by all ranks together (mpi::Agree): a validation failure (DataLoss) on any rank comes
// back on every rank; any other error ends the whole job at once (MPI_Abort, exit 1), because
// peers may be waiting for the failed rank inside an NCCL collective.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "workloads/cuda_status.h"
#include "workloads/skew.h"

namespace overlapscope::workloads {

struct GroupOptions {
  int gpus = 0;           // ranks to use; 0: every visible GPU
  bool nccl = true;       // default communicator
  int nccl_max_ctas = 0;  // > 0: ncclConfig_t::maxCTAs of the default communicator
  bool cublas = true;
  // cuBLAS workspace per rank in MiB (cublasSetWorkspace), as PyTorch gives its handles on
  // Hopper (32 MiB); 0: cuBLAS's own default.
  int cublas_workspace_mb = 32;
  bool nvtx = false;       // emit NVTX iteration ranges (only while a capture is running)
  bool mpi = false;        // one rank per process (mpi::Init() must have succeeded)
  double timeout_s = 300;  // MPI: give up (exit 1) when communicator set-up hangs this long
};

struct RankContext {
  int rank = 0, nranks = 1, device = 0, num_sms = 0;
  int local = 0;  // index of this rank in its RankGroup (= rank, except under MPI: 0)
  cudaStream_t compute = nullptr, comm = nullptr;
  cublasHandle_t blas = nullptr;
  void* blas_workspace = nullptr;  // GroupOptions::cublas_workspace_mb of device memory, or null
  ncclComm_t nccl = nullptr;       // default communicator (kernels)
  ncclComm_t nccl_ce = nullptr;    // zero-CTA communicator, after RankGroup::CreateCeComms()
  class RankGroup* group = nullptr;
  // Durations of the collectives this rank timed (timing.h TimedCollective), per series, until
  // RankGroup::SkewFigures() collects them.
  Series coll_ms;
};

class RankGroup {
 public:
  static absl::StatusOr<std::unique_ptr<RankGroup>> Create(const GroupOptions& options);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int size() const { return static_cast<int>(ranks_.size()); }  // ranks in this process
  int world_size() const { return ranks_.empty() ? 0 : ranks_[0].nranks; }
  bool mpi() const { return options_.mpi; }
  // "2 processes (MPI)" or "2 threads (one process)".
  std::string ranks_description() const;
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
  // Every rank's series, indexed by global rank: `local` is indexed by RankContext::local (under
  // MPI: gathered from all processes, so every rank gets the same vector).
  absl::StatusOr<std::vector<Series>> AllRanks(const std::vector<Series>& local);
  // Collects every rank's RankContext::coll_ms (and clears them) and writes skew.h's figures
  // with `prefix` into `fig` (the same figures on every rank).
  absl::Status SkewFigures(const std::string& prefix, std::map<std::string, double>& fig);
  // Emit NVTX ranges from now on (set by the CLI while a capture is running).
  void set_nvtx(bool on) { options_.nvtx = on; }

 private:
  RankGroup() = default;
  void Abort();
  // Sets `device` current and gives `c` its SM count, non-blocking compute and comm streams and,
  // when options_.cublas, a cuBLAS handle on the compute stream.
  absl::Status SetUpDevice(RankContext& c, int device);
  // description_: "<GPU name> x<n><suffix>", plus the NCCL version when options_.nccl.
  absl::Status Describe(int device, int n, const std::string& suffix);
  // The MPI variants (rank_group_mpi.cc).
  static absl::StatusOr<std::unique_ptr<RankGroup>> CreateMpi(const GroupOptions& options);
  absl::Status CreateCeCommsMpi();
  absl::Status RunOnAllMpi(const std::function<absl::Status(RankContext&)>& fn, absl::Duration timeout);

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
