#include "workloads/rank_group.h"

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "workloads/mpi_world.h"

namespace overlapscope::workloads {
namespace {

std::string NcclVersionString(int v) {
  // NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z for versions >= 2.9.
  return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
}

// One status for all ranks: OK, or every failed rank's message, one per line.
absl::Status JoinRankErrors(const std::vector<absl::Status>& st) {
  std::vector<std::string> errors;
  for (size_t r = 0; r < st.size(); ++r)
    if (!st[r].ok()) errors.push_back(absl::StrCat("rank ", r, ": ", st[r].message()));
  if (errors.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(errors, "\n"));
}

// Runs fn(r) for r in [0, n) on n threads and joins their errors.
absl::Status OnThreads(int n, const std::function<absl::Status(int)>& fn) {
  std::vector<absl::Status> st(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { st[r] = fn(r); });
  for (auto& t : threads) t.join();
  return JoinRankErrors(st);
}

absl::Status InitComm(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t cfg) {
  OS_NCCL(ncclCommInitRankConfig(comm, nranks, id, rank, &cfg));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RankGroup>> RankGroup::Create(const GroupOptions& options) {
  if (options.mpi) return CreateMpi(options);
  int count = 0;
  OS_CUDA(cudaGetDeviceCount(&count));
  if (count == 0) return absl::FailedPreconditionError("no CUDA device visible");
  if (options.gpus > count)
    return absl::InvalidArgumentError(absl::StrCat("--gpus ", options.gpus, " but only ", count, " GPUs are visible"));
  int n = options.gpus > 0 ? options.gpus : count;
  std::unique_ptr<RankGroup> g(new RankGroup());
  g->options_ = options;
  g->ranks_.resize(n);
  for (int r = 0; r < n; ++r) {
    RankContext& c = g->ranks_[r];
    c.rank = r;
    c.nranks = n;
    c.device = r;
    c.local = r;
    c.group = g.get();
    RETURN_IF_ERROR(g->SetUpDevice(c, r));
  }
  RETURN_IF_ERROR(g->Describe(0, n, ""));
  if (options.nccl) {
    ncclUniqueId id;
    OS_NCCL(ncclGetUniqueId(&id));
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    if (options.nccl_max_ctas > 0) {
      cfg.minCTAs = 1;
      cfg.maxCTAs = options.nccl_max_ctas;
    }
    auto init = [&](int r) -> absl::Status {
      OS_CUDA(cudaSetDevice(r));
      return InitComm(&g->ranks_[r].nccl, n, id, r, cfg);
    };
    RETURN_IF_ERROR(OnThreads(n, init));
  }
  return g;
}

absl::Status RankGroup::SetUpDevice(RankContext& c, int device) {
  OS_CUDA(cudaSetDevice(device));
  OS_CUDA(cudaDeviceGetAttribute(&c.num_sms, cudaDevAttrMultiProcessorCount, device));
  // Non-blocking streams: no implicit ordering with the legacy default stream.
  OS_CUDA(cudaStreamCreateWithFlags(&c.compute, cudaStreamNonBlocking));
  OS_CUDA(cudaStreamCreateWithFlags(&c.comm, cudaStreamNonBlocking));
  if (options_.cublas) {
    OS_CUBLAS(cublasCreate(&c.blas));
    OS_CUBLAS(cublasSetStream(c.blas, c.compute));
    if (options_.cublas_workspace_mb > 0) {
      const size_t bytes = static_cast<size_t>(options_.cublas_workspace_mb) << 20;
      OS_CUDA(cudaMalloc(&c.blas_workspace, bytes));
      OS_CUBLAS(cublasSetWorkspace(c.blas, c.blas_workspace, bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status RankGroup::Describe(int device, int n, const std::string& suffix) {
  cudaDeviceProp prop{};
  OS_CUDA(cudaGetDeviceProperties(&prop, device));
  description_ = absl::StrCat(prop.name, " x", n, suffix);
  if (options_.nccl) {
    OS_NCCL(ncclGetVersion(&nccl_version_));
    absl::StrAppend(&description_, ", NCCL ", NcclVersionString(nccl_version_), " (built against ", NCCL_MAJOR, ".",
                    NCCL_MINOR, ".", NCCL_PATCH, ")");
  }
  return absl::OkStatus();
}

absl::Status RankGroup::CreateCeComms() {
  if (ranks_[0].nccl_ce) return absl::OkStatus();
  if (options_.mpi) return CreateCeCommsMpi();
  ncclUniqueId id;
  OS_NCCL(ncclGetUniqueId(&id));
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  const int n = size();
  auto init = [&](int r) -> absl::Status {
    OS_CUDA(cudaSetDevice(ranks_[r].device));
    return InitComm(&ranks_[r].nccl_ce, n, id, r, cfg);
  };
  return OnThreads(n, init);
}

RankGroup::~RankGroup() {
  for (auto& c : ranks_) {
    cudaSetDevice(c.device);
    if (c.nccl && !aborted_) ncclCommDestroy(c.nccl);
    if (c.nccl_ce && !aborted_) ncclCommDestroy(c.nccl_ce);
    if (c.blas) cublasDestroy(c.blas);
    if (c.blas_workspace) cudaFree(c.blas_workspace);
    if (c.compute) cudaStreamDestroy(c.compute);
    if (c.comm) cudaStreamDestroy(c.comm);
  }
}

bool RankGroup::Barrier() {
  if (options_.mpi) return mpi::Barrier().ok();
  std::unique_lock<std::mutex> lock(mu_);
  if (aborted_) return false;
  int64_t gen = generation_;
  if (++arrived_ == size()) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return true;
  }
  cv_.wait(lock, [&] { return generation_ != gen || aborted_; });
  return !aborted_;
}

void RankGroup::Abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_) return;
    aborted_ = true;
    cv_.notify_all();
  }
  // Releases peers that wait inside a collective for the failed rank.
  for (auto& c : ranks_) {
    if (c.nccl) ncclCommAbort(c.nccl);
    if (c.nccl_ce) ncclCommAbort(c.nccl_ce);
  }
}

absl::Status RankGroup::RunOnAll(const std::function<absl::Status(RankContext&)>& fn, absl::Duration timeout) {
  if (aborted_) return absl::FailedPreconditionError("rank group was aborted by an earlier failure");
  if (options_.mpi) return RunOnAllMpi(fn, timeout);
  int n = size();
  std::vector<absl::Status> st(n);
  std::mutex done_mu;
  std::condition_variable done_cv;
  int done = 0;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      absl::Status s = CudaStatus(cudaSetDevice(ranks_[r].device), "cudaSetDevice", __FILE__, __LINE__);
      if (s.ok()) s = fn(ranks_[r]);
      if (!s.ok()) Abort();
      std::lock_guard<std::mutex> lock(done_mu);
      st[r] = std::move(s);
      ++done;
      done_cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(done_mu);
    if (!done_cv.wait_for(lock, absl::ToChronoSeconds(timeout), [&] { return done == n; })) {
      std::fprintf(stderr, "overlapscope: ranks did not finish within %s (%d of %d done); a collective is hung\n",
                   absl::FormatDuration(timeout).c_str(), done, n);
      for (int r = 0; r < n; ++r)
        if (!st[r].ok()) std::fprintf(stderr, "  rank %d: %s\n", r, std::string(st[r].message()).c_str());
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
  for (auto& t : threads) t.join();
  return JoinRankErrors(st);
}

std::string RankGroup::ranks_description() const {
  return options_.mpi ? absl::StrCat(world_size(), " processes (MPI)")
                      : absl::StrCat(size(), size() == 1 ? " thread" : " threads", " (one process)");
}

absl::StatusOr<std::vector<Series>> RankGroup::AllRanks(const std::vector<Series>& local) {
  if (!options_.mpi) return local;
  ASSIGN_OR_RETURN(std::vector<std::string> all, mpi::AllGather(SerializeSeries(local.at(0))));
  std::vector<Series> out;
  for (size_t r = 0; r < all.size(); ++r) {
    auto s = ParseSeries(all[r]);
    if (!s.ok()) return absl::InternalError(absl::StrCat("series from rank ", r, ": ", s.status().message()));
    out.push_back(std::move(s).value());
  }
  return out;
}

absl::Status RankGroup::SkewFigures(const std::string& prefix, std::map<std::string, double>& fig) {
  std::vector<Series> local;
  for (auto& c : ranks_) local.push_back(std::exchange(c.coll_ms, {}));
  ASSIGN_OR_RETURN(std::vector<Series> all, AllRanks(local));
  return AddSkewFigures(all, prefix, fig);
}

}  // namespace overlapscope::workloads
