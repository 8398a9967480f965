// RankGroup under MPI: one rank per process (rank_group.h says how failures are agreed on).
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "workloads/mpi_world.h"
#include "workloads/rank_group.h"

namespace overlapscope::workloads {
namespace {

// Ends the process (exit 1; mpirun then ends the other ranks) when the guarded work is not done
// within `timeout`: a rank stuck in a collective cannot be recovered in-process. Exits with
// _Exit rather than MPI_Abort: MPI may only be called from the main thread (FUNNELED).
class Watchdog {
 public:
  Watchdog(absl::Duration timeout, std::string what) {
    thread_ = std::thread([this, timeout, what = std::move(what)] {
      std::unique_lock<std::mutex> lock(mu_);
      if (cv_.wait_for(lock, absl::ToChronoSeconds(timeout), [&] { return done_; })) return;
      std::fprintf(stderr, "overlapscope run: rank %d: %s did not finish within %s; a collective is hung, exiting\n",
                   mpi::Rank(), what.c_str(), absl::FormatDuration(timeout).c_str());
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// A rank-local failure while peers may be inside a collective with this rank: end the job.
[[noreturn]] void AbortJob(const absl::Status& st) {
  std::fprintf(stderr,
               "overlapscope run: rank %d of %d (%s): %s\n  ending all ranks (MPI_Abort): the others may be "
               "waiting for this rank inside a collective\n",
               mpi::Rank(), mpi::Size(), mpi::Hostname().c_str(), std::string(st.message()).c_str());
  mpi::Abort(1);
}

// Communicator of all ranks: the unique id from rank 0, then ncclCommInitRankConfig.
absl::Status InitWorldComm(ncclComm_t* comm, ncclConfig_t cfg, double timeout_s) {
  ncclUniqueId id{};
  absl::Status st = absl::OkStatus();
  if (mpi::Rank() == 0) st = NcclStatus(ncclGetUniqueId(&id), "ncclGetUniqueId", __FILE__, __LINE__);
  RETURN_IF_ERROR(mpi::Agree(st));
  RETURN_IF_ERROR(mpi::Broadcast(&id, sizeof(id), 0));
  {
    Watchdog dog(absl::Seconds(timeout_s), "ncclCommInitRankConfig");
    st = NcclStatus(ncclCommInitRankConfig(comm, mpi::Size(), id, mpi::Rank(), &cfg), "ncclCommInitRankConfig",
                    __FILE__, __LINE__);
  }
  // A configuration the library rejects fails on every rank alike, so the ranks can agree.
  return mpi::Agree(st);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RankGroup>> RankGroup::CreateMpi(const GroupOptions& options) {
  if (!mpi::Active()) return absl::FailedPreconditionError("MPI rank group without MPI_Init");
  const int world = mpi::Size(), rank = mpi::Rank(), lr = mpi::LocalRank(), ls = mpi::LocalSize();
  const std::string host = mpi::Hostname();
  int count = 0;
  int device = -1;
  if (options.gpus > 0 && options.gpus != world)  // the same on every rank: no need to agree
    return absl::InvalidArgumentError(
        absl::StrCat("--gpus ", options.gpus, " but mpirun started ", world,
                     " ranks: under MPI each rank drives one GPU, so the "
                     "GPUs are the ranks (mpirun -np N); leave --gpus out or give --gpus ",
                     world));
  absl::Status st = CudaStatus(cudaGetDeviceCount(&count), "cudaGetDeviceCount", __FILE__, __LINE__);
  if (!st.ok()) {
  } else if (count == 0) {
    st = absl::FailedPreconditionError(absl::StrCat("no CUDA device visible on ", host));
  } else if (ls <= count) {
    device = lr;
  } else if (count == 1 && std::getenv("CUDA_VISIBLE_DEVICES") != nullptr) {
    device = 0;  // the launcher gave each rank its own GPU (checked for duplicates below)
  } else {
    st = absl::FailedPreconditionError(absl::StrCat(ls, " ranks on host ", host, " but only ", count,
                                                    " GPU(s) visible there: one GPU per rank, so start at most ", count,
                                                    " ranks per host"));
  }
  // Two ranks on one GPU: NCCL would fail with a less helpful message.
  char bus[32] = "?";
  if (st.ok())
    st = CudaStatus(cudaDeviceGetPCIBusId(bus, sizeof(bus), device), "cudaDeviceGetPCIBusId", __FILE__, __LINE__);
  ASSIGN_OR_RETURN(std::vector<std::string> gpus, mpi::AllGather(st.ok() ? absl::StrCat(host, " GPU ", bus) : ""));
  for (int r = 0; st.ok() && r < rank; ++r)
    if (gpus[r] == gpus[rank])
      st = absl::FailedPreconditionError(absl::StrCat("ranks ", r, " and ", rank, " both use ", gpus[rank],
                                                      ": one GPU per rank (check CUDA_VISIBLE_DEVICES)"));
  RETURN_IF_ERROR(mpi::Agree(st));

  std::unique_ptr<RankGroup> g(new RankGroup());
  g->options_ = options;
  g->ranks_.resize(1);
  RankContext& c = g->ranks_[0];
  c.rank = rank;
  c.nranks = world;
  c.device = device;
  c.local = 0;
  c.group = g.get();
  auto setup = [&]() -> absl::Status {
    RETURN_IF_ERROR(g->SetUpDevice(c, device));
    return g->Describe(device, world, absl::StrCat(" (", world, " MPI processes)"));
  };
  RETURN_IF_ERROR(mpi::Agree(setup()));
  if (options.nccl) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    if (options.nccl_max_ctas > 0) {
      cfg.minCTAs = 1;
      cfg.maxCTAs = options.nccl_max_ctas;
    }
    RETURN_IF_ERROR(InitWorldComm(&c.nccl, cfg, options.timeout_s));
  }
  return g;
}

absl::Status RankGroup::CreateCeCommsMpi() {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  OS_CUDA(cudaSetDevice(ranks_[0].device));
  return InitWorldComm(&ranks_[0].nccl_ce, cfg, options_.timeout_s);
}

absl::Status RankGroup::RunOnAllMpi(const std::function<absl::Status(RankContext&)>& fn, absl::Duration timeout) {
  absl::Status st;
  {
    Watchdog dog(timeout, "a phase");
    st = CudaStatus(cudaSetDevice(ranks_[0].device), "cudaSetDevice", __FILE__, __LINE__);
    if (st.ok()) st = fn(ranks_[0]);
  }
  // Validation failures are found after the phase's collectives completed: every rank gets here.
  if (!st.ok() && st.code() != absl::StatusCode::kDataLoss) AbortJob(st);
  return mpi::Agree(st);
}

}  // namespace overlapscope::workloads
