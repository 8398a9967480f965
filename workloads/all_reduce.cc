#include "workloads/all_reduce.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "workloads/all_reduce_peers.h"
#include "workloads/gemm.h"
#include "workloads/graph_timing.h"
#include "workloads/mode_runner.h"
#include "workloads/mpi_world.h"
#include "workloads/rank_group.h"
#include "workloads/timing.h"

namespace overlapscope::workloads {
namespace {

constexpr uint32_t kSalt = 0x5A17u;
// A held stream is released within microseconds; this only guards against a host that died.
constexpr int64_t kHoldTimeoutNs = int64_t{10} * 1000 * 1000 * 1000;

ncclDataType_t NcclType(DType t) {
  switch (t) {
    case DType::kF16: return ncclFloat16;
    case DType::kBF16: return ncclBfloat16;
    case DType::kF32: return ncclFloat32;
  }
  return ncclFloat32;
}

bool IsCustom(const std::string& impl) { return impl == "one-shot" || impl == "two-shot" || impl == "one-shot-push"; }

AllReduceAlgo AlgoOf(const std::string& impl) {
  return impl == "one-shot"   ? AllReduceAlgo::kOneShot
         : impl == "two-shot" ? AllReduceAlgo::kTwoShot
                              : AllReduceAlgo::kOneShotPush;
}

struct RankState {
  std::unique_ptr<AllReducePeers> peers;  // one-shot / two-shot / one-shot-push
  std::string peers_unusable;
  DeviceBuffer nccl_in, nccl_out, sym_in, sym_out;
  ncclWindow_t win_in = nullptr, win_out = nullptr;
  PinnedBuffer hold;  // HoldStream's flag
  DeviceBuffer hold_timeouts;
  std::map<std::string, std::vector<DeviceChecker>> checks;  // per implementation, per size
  std::map<std::string, std::string> graph_shape;            // --ar-timing graph: GraphShape per implementation
};

class AllReduce {
 public:
  AllReduce(const AllReduceOptions& o, const CaptureHooks& h) : o_(o), hooks_(h) {}
  absl::StatusOr<WorkloadResult> Run();

 private:
  absl::Status CheckOptions();
  absl::Status CheckGpus() const;
  bool Wants(const std::string& impl) const {
    return std::find(o_.impls.begin(), o_.impls.end(), impl) != o_.impls.end();
  }
  int64_t Count(size_t i) const { return o_.sizes[i] / DTypeBytes(o_.dtype); }
  absl::Status SetUp(RankContext& ctx, RankState& s);
  absl::Status Release(RankContext& ctx, RankState& s);
  // One all-reduce of every implementation and size, validated, with nothing held: NCCL sets up
  // its connections lazily at the first call of each kind, which must not happen behind a held
  // stream (a library that synchronized there would wait for the hold).
  absl::Status Prewarm(RankContext& ctx, RankState& s);
  void* Out(RankState& s, const std::string& impl) const {
    return IsCustom(impl) ? s.peers->out() : impl == "nccl" ? s.nccl_out.get() : s.sym_out.get();
  }
  absl::Status Issue(RankContext& ctx, RankState& s, const std::string& impl, int64_t count);
  // One all-reduce inside event pair `pair` (none when empty), then its validation.
  absl::Status OneAllReduce(RankContext& ctx, RankState& s, const std::string& impl, size_t i, IterEvents& ev,
                            const std::string& pair);
  // --ar-timing batch: `reps` all-reduces back to back inside the event pair "batch", then the
  // last one validated. --ar-timing graph: the same, captured into a CUDA graph first.
  absl::Status BatchAllReduce(RankContext& ctx, RankState& s, const std::string& impl, size_t i, IterEvents& ev,
                              int reps) {
    if (o_.timing == AllReduceTiming::kGraph) {
      std::string* shape = reps > 1 ? &s.graph_shape[impl] : nullptr;
      RETURN_IF_ERROR(LaunchAsGraph(
          ctx.compute, reps, [&] { return Issue(ctx, s, impl, Count(i)); }, ev, "batch", shape));
    } else {
      RETURN_IF_ERROR(ev.Begin("batch", ctx.compute));
      for (int j = 0; j < reps; ++j) RETURN_IF_ERROR(Issue(ctx, s, impl, Count(i)));
      RETURN_IF_ERROR(ev.End("batch", ctx.compute));
    }
    OS_CUDA(ValidateAndPoisonAllReduce(o_.dtype, Out(s, impl), Count(i), ctx.nranks, kSalt, s.checks[impl][i].check(),
                                       ctx.compute));
    return absl::OkStatus();
  }
  // Enqueues `body` behind a held stream (HoldStream) and releases it.
  absl::Status Held(RankContext& ctx, RankState& s, const std::function<absl::Status()>& body);
  absl::Status ReadChecks(RankContext& ctx, RankState& s, const std::string& impl, size_t i);
  PhaseBody SizePhase(size_t i);
  PhaseBody CapturePhase(const std::string& impl);

  AllReduceOptions o_;
  CaptureHooks hooks_;
  std::unique_ptr<RankGroup> g_;
  std::unique_ptr<PeerExchange> ex_;
  std::vector<RankState> st_;
  std::vector<std::string> impls_;  // the wanted implementations that could be set up
  std::vector<std::string> pairs_;  // "ar0", "ar1", ...: one event pair per all-reduce of an iteration
  std::map<std::string, double> f_;
  WorkloadResult res_;
};

absl::Status AllReduce::CheckOptions() {
  if (o_.impls.empty()) return absl::InvalidArgumentError("--impl: no implementation given");
  for (const auto& m : o_.impls)
    if (std::find(AllReduceImpls().begin(), AllReduceImpls().end(), m) == AllReduceImpls().end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown --impl '", m, "' for all-reduce (", absl::StrJoin(AllReduceImpls(), ", "), ", all)"));
  if (o_.sizes.empty()) {
    ASSIGN_OR_RETURN(o_.sizes, ParseAllReduceSizes("0.5MB..64MB"));
  }
  for (int64_t b : o_.sizes)
    if (b % DTypeBytes(o_.dtype) != 0)
      return absl::InvalidArgumentError(absl::StrCat("--sizes: ", b, " bytes is not a whole number of ",
                                                     DTypeName(o_.dtype), " elements (", DTypeBytes(o_.dtype),
                                                     " bytes each)"));
  if (o_.max_blocks < 0 || o_.max_blocks > kAllReduceMaxBlocks)
    return absl::InvalidArgumentError(absl::StrCat("--ar-blocks must be 1..", kAllReduceMaxBlocks));
  if (o_.reps < 1) return absl::InvalidArgumentError("--reps must be >= 1");
  return absl::OkStatus();
}

absl::Status AllReduce::CheckGpus() const {
  const char* why = "an all-reduce over one rank moves no data, so there is nothing to compare";
  if (o_.run.mpi) {
    if (mpi::Size() < 2)
      return absl::FailedPreconditionError(
          absl::StrCat("all-reduce needs at least 2 ranks (mpirun -np N, N >= 2, one GPU each): ", why));
    return absl::OkStatus();
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  const int n = o_.run.gpus > 0 ? o_.run.gpus : count;
  if (n < 2)
    return absl::FailedPreconditionError(absl::StrCat(
        "all-reduce needs at least 2 GPUs, one rank each; ",
        o_.run.gpus == 1 ? std::string("--gpus 1 was given") : absl::StrCat("this machine shows ", count, " GPU(s)"),
        ": ", why));
  return absl::OkStatus();
}

absl::Status AllReduce::SetUp(RankContext& ctx, RankState& s) {
  const size_t max_bytes = (*std::max_element(o_.sizes.begin(), o_.sizes.end()) + 15) / 16 * 16;
  const int64_t max_count = static_cast<int64_t>(max_bytes) / DTypeBytes(o_.dtype);
  for (const auto& impl : o_.impls)
    for (size_t i = 0; i < o_.sizes.size(); ++i) {
      ASSIGN_OR_RETURN(DeviceChecker c, DeviceChecker::Create(ctx.device));
      s.checks[impl].push_back(std::move(c));
    }
  ASSIGN_OR_RETURN(s.hold, PinnedBuffer::Create(64));
  ASSIGN_OR_RETURN(s.hold_timeouts, DeviceBuffer::Create(16, ctx.device));
  OS_CUDA(cudaMemset(s.hold_timeouts.get(), 0, 16));
  std::vector<void*> inputs;
  if (Wants("nccl")) {
    ASSIGN_OR_RETURN(s.nccl_in, DeviceBuffer::Create(max_bytes, ctx.device));
    ASSIGN_OR_RETURN(s.nccl_out, DeviceBuffer::Create(max_bytes, ctx.device));
    inputs.push_back(s.nccl_in.get());
  }
  if (Wants("one-shot") || Wants("two-shot") || Wants("one-shot-push")) {
    const std::optional<DType> push = Wants("one-shot-push") ? std::optional<DType>(o_.dtype) : std::nullopt;
    ASSIGN_OR_RETURN(AllReducePeers::Setup p, AllReducePeers::Create(ctx, max_bytes, *ex_, push));
    s.peers = std::move(p.peers);
    s.peers_unusable = p.unusable;
    if (s.peers) inputs.push_back(s.peers->in());
  }
  if (Wants("nccl-symmetric")) {
    ASSIGN_OR_RETURN(s.sym_in, DeviceBuffer::Create(max_bytes, ctx.device, DeviceBuffer::Allocator::kNccl));
    ASSIGN_OR_RETURN(s.sym_out, DeviceBuffer::Create(max_bytes, ctx.device, DeviceBuffer::Allocator::kNccl));
    OS_NCCL(ncclCommWindowRegister(ctx.nccl, s.sym_in.get(), max_bytes, &s.win_in, NCCL_WIN_COLL_SYMMETRIC));
    OS_NCCL(ncclCommWindowRegister(ctx.nccl, s.sym_out.get(), max_bytes, &s.win_out, NCCL_WIN_COLL_SYMMETRIC));
    inputs.push_back(s.sym_in.get());
  }
  for (void* in : inputs) OS_CUDA(FillAllReduceInput(o_.dtype, in, max_count, ctx.rank, kSalt, ctx.compute));
  OS_CUDA(cudaStreamSynchronize(ctx.compute));
  return absl::OkStatus();
}

absl::Status AllReduce::Release(RankContext& ctx, RankState& s) {
  if (s.win_in) OS_NCCL(ncclCommWindowDeregister(ctx.nccl, s.win_in));
  if (s.win_out) OS_NCCL(ncclCommWindowDeregister(ctx.nccl, s.win_out));
  s.win_in = s.win_out = nullptr;
  if (s.peers) RETURN_IF_ERROR(s.peers->Release(ctx, *ex_));
  return absl::OkStatus();
}

absl::Status AllReduce::Prewarm(RankContext& ctx, RankState& s) {
  IterEvents unused;
  for (const auto& impl : impls_) {
    for (size_t i = 0; i < o_.sizes.size(); ++i) {
      RETURN_IF_ERROR(s.checks[impl][i].Reset(ctx.compute));
      RETURN_IF_ERROR(OneAllReduce(ctx, s, impl, i, unused, ""));
      // A library's first capture may set things up (NCCL registers the buffers of captured
      // calls): once here too, before any stream is held.
      if (o_.timing == AllReduceTiming::kGraph) RETURN_IF_ERROR(BatchAllReduce(ctx, s, impl, i, unused, 1));
      RETURN_IF_ERROR(ReadChecks(ctx, s, impl, i));
    }
  }
  return absl::OkStatus();
}

absl::Status AllReduce::Issue(RankContext& ctx, RankState& s, const std::string& impl, int64_t count) {
  if (IsCustom(impl)) {
    const AllReduceAlgo algo = AlgoOf(impl);
    const int blocks = o_.max_blocks > 0 ? o_.max_blocks : AllReduceDefaultBlocks(algo);
    return s.peers->Launch(algo, o_.dtype, count, blocks, ctx.compute, ctx.group->options().nvtx);
  }
  const bool sym = impl == "nccl-symmetric";
  OS_NCCL(ncclAllReduce(sym ? s.sym_in.get() : s.nccl_in.get(), sym ? s.sym_out.get() : s.nccl_out.get(), count,
                        NcclType(o_.dtype), ncclSum, ctx.nccl, ctx.compute));
  return absl::OkStatus();
}

absl::Status AllReduce::OneAllReduce(RankContext& ctx, RankState& s, const std::string& impl, size_t i, IterEvents& ev,
                                     const std::string& pair) {
  if (!pair.empty()) RETURN_IF_ERROR(ev.Begin(pair, ctx.compute));
  RETURN_IF_ERROR(Issue(ctx, s, impl, Count(i)));
  if (!pair.empty()) RETURN_IF_ERROR(ev.End(pair, ctx.compute));
  OS_CUDA(ValidateAndPoisonAllReduce(o_.dtype, Out(s, impl), Count(i), ctx.nranks, kSalt, s.checks[impl][i].check(),
                                     ctx.compute));
  return absl::OkStatus();
}

absl::Status AllReduce::Held(RankContext& ctx, RankState& s, const std::function<absl::Status()>& body) {
  if (!o_.hold) return body();
  volatile int* flag = s.hold.as<int>();
  *flag = 0;
  OS_CUDA(HoldStream(flag, kHoldTimeoutNs, s.hold_timeouts.as<unsigned int>(), ctx.compute));
  absl::Status st = body();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *flag = 1;  // also after a failed enqueue: the GPU must not wait for the timeout
  return st;
}

absl::Status AllReduce::ReadChecks(RankContext& ctx, RankState& s, const std::string& impl, size_t i) {
  ASSIGN_OR_RETURN(auto counts, s.checks[impl][i].Read(ctx.compute));
  RETURN_IF_ERROR(CheckCounts(counts, ctx.rank, absl::StrCat(impl, " all-reduce of ", FormatBytes(o_.sizes[i])),
                              static_cast<uint64_t>(Count(i))));
  unsigned int held = 0, barriers = 0;
  OS_CUDA(cudaMemcpy(&held, s.hold_timeouts.get(), sizeof(held), cudaMemcpyDeviceToHost));
  if (s.peers) {
    ASSIGN_OR_RETURN(barriers, s.peers->Timeouts());
  }
  if (held || barriers)
    return absl::DataLossError(absl::StrCat("rank ", ctx.rank, ": ", barriers, " all-reduce barrier(s) and ", held,
                                            " stream hold(s) gave up after 10 s waiting (a peer never arrived)"));
  return absl::OkStatus();
}

PhaseBody AllReduce::SizePhase(size_t i) {
  PhaseBody b;
  b.prepare = [=, this](RankContext& ctx) -> absl::Status {
    for (const auto& impl : impls_) RETURN_IF_ERROR(st_[ctx.local].checks[impl][i].Reset(ctx.compute));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
    return absl::OkStatus();
  };
  b.run = [=, this](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    auto fn = [&](int k, IterEvents& ev) {
      return Held(ctx, s, [&]() -> absl::Status {
        if (o_.timing != AllReduceTiming::kEach) return BatchAllReduce(ctx, s, impls_[k], i, ev, o_.reps);
        for (const auto& pair : pairs_) RETURN_IF_ERROR(OneAllReduce(ctx, s, impls_[k], i, ev, pair));
        return absl::OkStatus();
      });
    };
    ASSIGN_OR_RETURN(Samples smp, TimeInterleaved(ctx, ctx.compute, warmup, iters, impls_, fn));
    if (o_.timing != AllReduceTiming::kEach) {
      for (const auto& impl : impls_) {
        const auto it = smp.ms.find(absl::StrCat(impl, "_batch_ms"));
        if (it != smp.ms.end()) fig[AllReduceFigureKey(impl, o_.sizes[i], "ms")] = Median(it->second) / o_.reps;
      }
      return absl::OkStatus();
    }
    for (const auto& impl : impls_) {
      std::vector<double> all;
      for (const auto& pair : pairs_) {
        const auto it = smp.ms.find(absl::StrCat(impl, "_", pair, "_ms"));
        if (it != smp.ms.end()) all.insert(all.end(), it->second.begin(), it->second.end());
      }
      if (!all.empty()) fig[AllReduceFigureKey(impl, o_.sizes[i], "ms")] = Median(all);
    }
    return absl::OkStatus();
  };
  b.validate = [=, this](RankContext& ctx) -> absl::Status {
    for (const auto& impl : impls_) RETURN_IF_ERROR(ReadChecks(ctx, st_[ctx.local], impl, i));
    return absl::OkStatus();
  };
  return b;
}

PhaseBody AllReduce::CapturePhase(const std::string& impl) {
  PhaseBody b;
  b.prepare = [=, this](RankContext& ctx) -> absl::Status {
    for (auto& c : st_[ctx.local].checks[impl]) RETURN_IF_ERROR(c.Reset(ctx.compute));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
    return absl::OkStatus();
  };
  // One iteration: every size once, as the timed phases ran them (behind a held stream).
  b.run = [=, this](RankContext& ctx, int warmup, int iters, std::map<std::string, double>&) -> absl::Status {
    RankState& s = st_[ctx.local];
    auto fn = [&](int, IterEvents& ev) {
      return Held(ctx, s, [&]() -> absl::Status {
        for (size_t i = 0; i < o_.sizes.size(); ++i) RETURN_IF_ERROR(OneAllReduce(ctx, s, impl, i, ev, ""));
        return absl::OkStatus();
      });
    };
    return TimeIterations(ctx, ctx.compute, warmup, iters, fn).status();
  };
  b.validate = [=, this](RankContext& ctx) -> absl::Status {
    for (size_t i = 0; i < o_.sizes.size(); ++i) RETURN_IF_ERROR(ReadChecks(ctx, st_[ctx.local], impl, i));
    return absl::OkStatus();
  };
  return b;
}

absl::StatusOr<WorkloadResult> AllReduce::Run() {
  RETURN_IF_ERROR(CheckOptions());
  RETURN_IF_ERROR(CheckGpus());
  const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
  if (!nvls) setenv("NCCL_NVLS_ENABLE", "0", 0);  // before the communicator exists
  GroupOptions go;
  go.gpus = o_.run.gpus;
  go.cublas = false;
  go.mpi = o_.run.mpi;
  go.timeout_s = o_.run.timeout_s;
  ASSIGN_OR_RETURN(g_, RankGroup::Create(go));
  const int n = g_->world_size();
  ex_ = std::make_unique<PeerExchange>(n);
  for (int j = 0; j < o_.reps; ++j) pairs_.push_back(absl::StrCat("ar", j));
  res_.workload = "all-reduce";
  res_.device = g_->description();
  res_.ranks = g_->ranks_description();
  res_.nranks = n;
  res_.notes.push_back(nvls ? absl::StrCat("NCCL_NVLS_ENABLE=", nvls, " (from the environment)")
                            : std::string("NCCL_NVLS_ENABLE=0 (NVLink multicast off; set by overlapscope)"));
  res_.config = absl::StrFormat(
      "sum of one %s buffer per rank (out of place), sizes %s .. %s; per size and implementation the median of %d "
      "all-reduces (%d per iteration, %d iterations after %d warm-up, implementations interleaved), max over %d "
      "ranks%s",
      DTypeName(o_.dtype), FormatBytes(o_.sizes.front()), FormatBytes(o_.sizes.back()), o_.reps * o_.run.iters, o_.reps,
      o_.run.iters, o_.run.warmup, n,
      o_.timing == AllReduceTiming::kBatch
          ? "; --ar-timing batch: the all-reduces of an iteration back to back between one event pair, time / reps "
            "(median over the iterations), the last one validated"
      : o_.timing == AllReduceTiming::kGraph
          ? "; --ar-timing graph: the all-reduces of an iteration captured into one CUDA graph, launched between "
            "one event pair, time / reps (median over the iterations), the last one validated"
          : "");
  st_ = std::vector<RankState>(g_->size());
  RETURN_IF_ERROR(g_->RunOnAll([&](RankContext& ctx) { return SetUp(ctx, st_[ctx.local]); }));
  for (const auto& impl : o_.impls) {
    if (IsCustom(impl) && !st_[0].peers) {
      res_.errors.push_back(absl::StrCat(impl, ": cannot map the peers' buffers: ", st_[0].peers_unusable));
      continue;
    }
    impls_.push_back(impl);
  }
  if (st_[0].peers)
    res_.notes.push_back(absl::StrFormat(
        "one-shot/two-shot/one-shot-push: overlapscope's kernels, up to %s blocks x %d threads per rank, flag "
        "barriers in device memory (one-shot-push: none, sentinel values in a receive buffer), peers through %s",
        o_.max_blocks > 0 ? absl::StrCat(o_.max_blocks)
                          : absl::StrCat(AllReduceDefaultBlocks(AllReduceAlgo::kOneShot), " (one-shot-push ",
                                         AllReduceDefaultBlocks(AllReduceAlgo::kOneShotPush), ")"),
        kAllReduceThreads, g_->mpi() ? "CUDA IPC (cudaIpcGetMemHandle)" : "peer access (cudaDeviceEnablePeerAccess)"));
  if (!o_.hold)
    res_.notes.push_back(
        "--ar-no-hold: the iterations were enqueued without holding the stream, so the figures include the "
        "host's launch gaps (for profilers that serialize launches; not comparable with held runs)");
  if (Wants("nccl-symmetric"))
    res_.notes.push_back("nccl-symmetric: ncclMemAlloc buffers, ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC)");
  bool alive = !impls_.empty();
  auto phase = [&](const std::string& name, const absl::Status& st) {
    if (st.ok()) return;
    res_.errors.push_back(absl::StrCat(name, ": ", st.message()));
    alive = false;
  };
  if (alive) phase("first call of each", g_->RunOnAll([&](RankContext& ctx) { return Prewarm(ctx, st_[ctx.local]); }));
  for (size_t i = 0; alive && i < o_.sizes.size(); ++i)
    phase(absl::StrCat("timed phase, ", FormatBytes(o_.sizes[i])), RunPhase(*g_, o_.run, SizePhase(i), f_));
  for (size_t k = 0; alive && k < impls_.size(); ++k)
    phase(absl::StrCat("captured run of ", impls_[k]),
          CaptureMode(*g_, impls_[k], o_.run, hooks_, CapturePhase(impls_[k])));
  for (const auto& [impl, shape] : st_[0].graph_shape)
    res_.notes.push_back(
        absl::StrCat("--ar-timing graph, ", impl, ": the graph of ", o_.reps, " all-reduces has ", shape));
  if (alive) phase("release", g_->RunOnAll([&](RankContext& ctx) { return Release(ctx, st_[ctx.local]); }));
  res_.figures = f_;
  RenderAllReduceTable(o_.sizes, o_.impls, n, res_);
  return std::move(res_);
}

}  // namespace

absl::StatusOr<WorkloadResult> RunAllReduce(const AllReduceOptions& o, const CaptureHooks& hooks) {
  AllReduce w(o, hooks);
  return w.Run();
}

}  // namespace overlapscope::workloads
