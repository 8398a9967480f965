#include "workloads/all_to_all.h"

#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "workloads/gemm_data.h"
#include "workloads/mode_runner.h"
#include "workloads/rank_group.h"
#include "workloads/skew.h"
#include "workloads/timing.h"

namespace overlapscope::workloads {
namespace {

constexpr uint32_t kSeedX = 3000, kSeedW = 4000;
// Random data: received elements checked against the FP64 reference per consumer call (a warp
// each; a few microseconds inside the timed steps, paid alike by every mode and "compute alone").
constexpr int kA2ASamples = 256;
using AlltoAllFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);

ncclDataType_t NcclType(DType t) {
  switch (t) {
    case DType::kF16: return ncclFloat16;
    case DType::kBF16: return ncclBfloat16;
    case DType::kF32: return ncclFloat32;
  }
  return ncclFloat32;
}

struct Layer {
  std::optional<Gemm> gemm;  // X * W_l -> its own C (= Y_l)
  DeviceBuffer z;            // received chunks
  cudaEvent_t produced = nullptr, arrived = nullptr;
  // async-ce: Y_l and the received chunks in ncclMemAlloc memory registered as symmetric
  // windows of the zero-CTA communicator (copy-engine all-to-all needs both).
  DeviceBuffer y_sym, z_sym;
  ncclWindow_t y_win = nullptr, z_win = nullptr;
};

struct RankState {
  std::vector<Layer> layers;
  std::optional<DeviceChecker> check;
  ~RankState() {
    for (auto& l : layers) {
      if (l.produced) cudaEventDestroy(l.produced);
      if (l.arrived) cudaEventDestroy(l.arrived);
    }
  }
};

class AllToAll {
 public:
  AllToAll(const AllToAllOptions& o, const CaptureHooks& h) : o_(o), hooks_(h) {}
  absl::StatusOr<WorkloadResult> Run();

 private:
  // The all-to-all of one layer as a TimedCollective (event pair "a2a<layer>", after the
  // straggler's spin if any).
  absl::Status A2A(RankContext& ctx, IterEvents& ev, int layer, cudaStream_t s, bool ce = false) {
    Layer& l = st_[ctx.local].layers[layer];
    return TimedCollective(ctx, o_.run, ev, pairs_[layer], s, [&] { return IssueA2A(ctx, l, s, ce); });
  }
  absl::Status IssueA2A(RankContext& ctx, Layer& l, cudaStream_t s, bool ce) {
    const size_t chunk = static_cast<size_t>(o_.gemm.m * o_.gemm.n / ctx.nranks);
    const size_t bytes = chunk * DTypeBytes(o_.gemm.dtype);
    if (ce) {  // NCCL runs it on the copy engines: cudaMemcpyBatchAsync, no NCCL kernel
      OS_NCCL(alltoall_(l.y_sym.get(), l.z_sym.get(), chunk, NcclType(o_.gemm.dtype), ctx.nccl_ce, s));
      return absl::OkStatus();
    }
    const void* y = l.gemm->output();
    if (alltoall_) {
      OS_NCCL(alltoall_(y, l.z.get(), chunk, NcclType(o_.gemm.dtype), ctx.nccl, s));
      return absl::OkStatus();
    }
    OS_NCCL(ncclGroupStart());
    for (int peer = 0; peer < ctx.nranks; ++peer) {
      OS_NCCL(ncclSend(static_cast<const char*>(y) + peer * bytes, chunk, NcclType(o_.gemm.dtype), peer, ctx.nccl, s));
      OS_NCCL(ncclRecv(l.z.as<char>() + peer * bytes, chunk, NcclType(o_.gemm.dtype), peer, ctx.nccl, s));
    }
    OS_NCCL(ncclGroupEnd());
    return absl::OkStatus();
  }
  // The consumer of layer `layer`'s received data; `count` false: same kernel, errors not
  // counted (the stand-in consumer of "compute alone", whose input never arrived).
  absl::Status Consume(RankContext& ctx, RankState& s, int layer, bool count, bool ce = false) {
    void* z = ce ? s.layers[layer].z_sym.get() : s.layers[layer].z.get();
    const DeviceCheck chk = count ? s.check->check() : DeviceCheck{};
    if (o_.gemm.data == GemmData::kStructured) {
      OS_CUDA(ValidateAndPoisonA2A(o_.gemm.dtype, z, o_.gemm.m, o_.gemm.n, o_.gemm.k, ctx.nranks, ctx.rank, kSeedX,
                                   kSeedW + layer, GemmScaleExp(o_.gemm.k), chk, ctx.compute));
      return absl::OkStatus();
    }
    // Random data: sampled elements of every sender's chunk against the FP64 reference, then every
    // element finite (delivered) and poisoned for the next all-to-all.
    SampledGemm g;
    g.dtype = o_.gemm.dtype;
    g.m = o_.gemm.m;
    g.n = o_.gemm.n;
    g.k = o_.gemm.k;
    g.seed_b = kSeedW + layer;
    g.a2a_nranks = ctx.nranks;
    g.a2a_me = ctx.rank;
    g.a2a_seed_a_base = kSeedX;
    OS_CUDA(ValidateGemmSampled(g, z, kA2ASamples, kSeedW + layer + 77u * static_cast<uint32_t>(ctx.rank), chk,
                                ctx.compute));
    OS_CUDA(CheckFiniteAndPoison(o_.gemm.dtype, z, o_.gemm.m * o_.gemm.n, chk, ctx.compute));
    return absl::OkStatus();
  }
  using Enqueue = std::function<absl::Status(RankContext&, RankState&, IterEvents&)>;
  absl::Status EnqueueSync(RankContext& ctx, RankState& s, IterEvents& ev);
  absl::Status EnqueueAsync(RankContext& ctx, RankState& s, IterEvents& ev, bool ce);
  absl::Status SetUpCe(RankContext& ctx, RankState& s);
  absl::Status ReleaseCe(RankContext& ctx, RankState& s);
  PhaseBody Body(const std::string& key, Enqueue enqueue, bool validate_gemm, bool validate_z_after);
  void Render();

  AllToAllOptions o_;
  CaptureHooks hooks_;
  AlltoAllFn alltoall_ = nullptr;
  std::unique_ptr<RankGroup> g_;
  std::vector<RankState> st_;
  std::map<std::string, double> f_;
  std::vector<std::string> pairs_;  // "a2a0", "a2a1", ...: event pairs of the layers' all-to-alls
  WorkloadResult res_;
};

absl::Status AllToAll::EnqueueSync(RankContext& ctx, RankState& s, IterEvents& ev) {
  for (int l = 0; l < o_.layers; ++l) {
    RETURN_IF_ERROR(s.layers[l].gemm->Enqueue(ctx));
    RETURN_IF_ERROR(A2A(ctx, ev, l, ctx.compute));
    RETURN_IF_ERROR(Consume(ctx, s, l, true));
  }
  return absl::OkStatus();
}

absl::Status AllToAll::EnqueueAsync(RankContext& ctx, RankState& s, IterEvents& ev, bool ce) {
  for (int l = 0; l < o_.layers; ++l) {
    Layer& cur = s.layers[l];
    if (ce) {
      RETURN_IF_ERROR(cur.gemm->EnqueueInto(ctx, cur.y_sym.get()));
    } else {
      RETURN_IF_ERROR(cur.gemm->Enqueue(ctx));
    }
    OS_CUDA(cudaEventRecord(cur.produced, ctx.compute));
    OS_CUDA(cudaStreamWaitEvent(ctx.comm, cur.produced, 0));
    RETURN_IF_ERROR(A2A(ctx, ev, l, ctx.comm, ce));
    OS_CUDA(cudaEventRecord(cur.arrived, ctx.comm));
    // The previous layer's data is needed only now, after this layer's matmul was enqueued.
    if (l > 0) {
      OS_CUDA(cudaStreamWaitEvent(ctx.compute, s.layers[l - 1].arrived, 0));
      RETURN_IF_ERROR(Consume(ctx, s, l - 1, true, ce));
    }
  }
  OS_CUDA(cudaStreamWaitEvent(ctx.compute, s.layers[o_.layers - 1].arrived, 0));
  return Consume(ctx, s, o_.layers - 1, true, ce);
}

absl::Status AllToAll::SetUpCe(RankContext& ctx, RankState& s) {
  for (auto& L : s.layers) {
    ASSIGN_OR_RETURN(L.y_sym, DeviceBuffer::Create(L.gemm->c_bytes(), ctx.device, DeviceBuffer::Allocator::kNccl));
    ASSIGN_OR_RETURN(L.z_sym, DeviceBuffer::Create(L.gemm->c_bytes(), ctx.device, DeviceBuffer::Allocator::kNccl));
    OS_NCCL(ncclCommWindowRegister(ctx.nccl_ce, L.y_sym.get(), L.y_sym.bytes(), &L.y_win, NCCL_WIN_COLL_SYMMETRIC));
    OS_NCCL(ncclCommWindowRegister(ctx.nccl_ce, L.z_sym.get(), L.z_sym.bytes(), &L.z_win, NCCL_WIN_COLL_SYMMETRIC));
  }
  return absl::OkStatus();
}

absl::Status AllToAll::ReleaseCe(RankContext& ctx, RankState& s) {
  for (auto& L : s.layers) {
    if (L.y_win) OS_NCCL(ncclCommWindowDeregister(ctx.nccl_ce, L.y_win));
    if (L.z_win) OS_NCCL(ncclCommWindowDeregister(ctx.nccl_ce, L.z_win));
    L.y_win = L.z_win = nullptr;
  }
  return absl::OkStatus();
}

PhaseBody AllToAll::Body(const std::string& key, Enqueue enqueue, bool validate_gemm, bool validate_z_after) {
  PhaseBody b;
  b.prepare = [=, this](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    if (validate_gemm)
      for (auto& l : s.layers) RETURN_IF_ERROR(l.gemm->ClearOutput(ctx));
    RETURN_IF_ERROR(s.check->Reset(ctx.compute));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
    return absl::OkStatus();
  };
  b.run = [=, this](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    auto fn = [&](int, IterEvents& ev) { return enqueue(ctx, s, ev); };
    ASSIGN_OR_RETURN(Samples smp, TimeIterations(ctx, ctx.compute, warmup, iters, fn));
    KeepCollectiveTimes(ctx, smp, "", pairs_, key);
    fig[key + "_ms"] = smp.Median("total");
    return absl::OkStatus();
  };
  b.validate = [=, this](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    if (validate_z_after)
      for (int l = 0; l < o_.layers; ++l) RETURN_IF_ERROR(Consume(ctx, s, l, true));
    ASSIGN_OR_RETURN(auto counts, s.check->Read(ctx.compute));
    if (counts.bad)
      return absl::DataLossError(absl::StrCat("VALIDATION FAILED on rank ", ctx.rank, ": ", key, ": ", counts.bad,
                                              " received elements wrong (first at element ", counts.first_bad,
                                              " of a layer's ", o_.gemm.m * o_.gemm.n, ")"));
    if (validate_gemm)
      for (int l = 0; l < o_.layers; ++l)
        RETURN_IF_ERROR(s.layers[l].gemm->Validate(ctx, absl::StrCat(key, " layer ", l, " matmul output")));
    return absl::OkStatus();
  };
  return b;
}

absl::StatusOr<WorkloadResult> AllToAll::Run() {
  for (const auto& m : o_.modes)
    if (std::find(AllToAllModes().begin(), AllToAllModes().end(), m) == AllToAllModes().end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown mode '", m, "' for all-to-all (", absl::StrJoin(AllToAllModes(), ", "), ", all)"));
  if (o_.layers < 1) return absl::InvalidArgumentError("--layers must be >= 1");
  if (o_.impl != "auto" && o_.impl != "alltoall" && o_.impl != "sendrecv")
    return absl::InvalidArgumentError("--a2a-impl must be auto, alltoall or sendrecv");
  GroupOptions go;
  go.gpus = o_.run.gpus;
  go.nccl_max_ctas = o_.run.nccl_max_ctas;
  go.mpi = o_.run.mpi;
  go.timeout_s = o_.run.timeout_s;
  go.cublas_workspace_mb = o_.run.cublas_workspace_mb;
  ASSIGN_OR_RETURN(g_, RankGroup::Create(go));
  const int n = g_->world_size();
  RETURN_IF_ERROR(CheckDelay(o_.run, n));
  for (int l = 0; l < o_.layers; ++l) pairs_.push_back(absl::StrCat("a2a", l));
  if ((o_.gemm.m * o_.gemm.n) % n != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("m*n = ", o_.gemm.m * o_.gemm.n, " is not divisible by ", n, " ranks"));
  if (o_.impl != "sendrecv") alltoall_ = reinterpret_cast<AlltoAllFn>(dlsym(RTLD_DEFAULT, "ncclAlltoAll"));
  if (o_.impl == "alltoall" && !alltoall_)
    return absl::FailedPreconditionError("--a2a-impl alltoall: the loaded NCCL library has no ncclAlltoAll");
  res_.workload = "all-to-all";
  res_.device = g_->description();
  res_.ranks = g_->ranks_description();
  res_.nranks = n;
  if (o_.run.delay_us > 0) res_.notes.push_back(DelayNote(o_.run));
  res_.notes.push_back(alltoall_ ? "all-to-all API: ncclAlltoAll"
                                 : "all-to-all API: ncclGroupStart + ncclSend/ncclRecv per peer + ncclGroupEnd");
  res_.notes.push_back(GemmDataDescription(o_.gemm));
  res_.notes.push_back(o_.run.cublas_workspace_mb > 0
                           ? absl::StrCat("cuBLAS workspace ", o_.run.cublas_workspace_mb, " MiB per GPU")
                           : std::string("cuBLAS workspace: the library's default"));
  if (o_.gemm.data == GemmData::kRandom)
    res_.notes.push_back(absl::StrCat("consumer: ", kA2ASamples,
                                      " sampled received elements against the FP64 reference, then every element "
                                      "checked finite and poisoned with NaN"));
  if (o_.run.nccl_max_ctas > 0) res_.notes.push_back(absl::StrCat("communicator maxCTAs = ", o_.run.nccl_max_ctas));
  res_.config = absl::StrFormat(
      "%d layers of GEMM %dx%dx%d %s (FP32 accumulate), each output resharded by an all-to-all (%.0f MiB per rank); "
      "median of %d iterations after %d warm-up, max over %d ranks",
      o_.layers, o_.gemm.m, o_.gemm.n, o_.gemm.k, DTypeName(o_.gemm.dtype),
      o_.gemm.m * o_.gemm.n * DTypeBytes(o_.gemm.dtype) / 1048576.0, o_.run.iters, o_.run.warmup, n);
  st_ = std::vector<RankState>(g_->size());
  auto setup = [&](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    s.layers.resize(o_.layers);
    ASSIGN_OR_RETURN(s.check, DeviceChecker::Create(ctx.device));
    for (int l = 0; l < o_.layers; ++l) {
      Layer& L = s.layers[l];
      ASSIGN_OR_RETURN(L.gemm, Gemm::Create(ctx, o_.gemm, kSeedX + ctx.rank, kSeedW + l));
      ASSIGN_OR_RETURN(L.z, DeviceBuffer::Create(L.gemm->c_bytes(), ctx.device));
      OS_CUDA(cudaMemset(L.z.get(), 0, L.z.bytes()));
      OS_CUDA(cudaEventCreateWithFlags(&L.produced, cudaEventDisableTiming));
      OS_CUDA(cudaEventCreateWithFlags(&L.arrived, cudaEventDisableTiming));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(g_->RunOnAll(setup));

  // Compute alone: the matmuls and the consumers (uncounted: no data arrives), as in the modes.
  auto compute_only = [this](RankContext& ctx, RankState& s, IterEvents&) -> absl::Status {
    for (int l = 0; l < o_.layers; ++l) {
      RETURN_IF_ERROR(s.layers[l].gemm->Enqueue(ctx));
      RETURN_IF_ERROR(Consume(ctx, s, l, false));
    }
    return absl::OkStatus();
  };
  auto comm_only = [this](RankContext& ctx, RankState&, IterEvents& ev) -> absl::Status {
    for (int l = 0; l < o_.layers; ++l) RETURN_IF_ERROR(A2A(ctx, ev, l, ctx.compute));
    return absl::OkStatus();
  };
  auto sync = [this](RankContext& ctx, RankState& s, IterEvents& ev) { return EnqueueSync(ctx, s, ev); };
  auto async = [this](RankContext& ctx, RankState& s, IterEvents& ev) { return EnqueueAsync(ctx, s, ev, false); };
  auto async_ce = [this](RankContext& ctx, RankState& s, IterEvents& ev) { return EnqueueAsync(ctx, s, ev, true); };
  bool alive = true;
  auto phase = [&](const std::string& name, const absl::Status& st) {
    if (!st.ok()) {
      res_.errors.push_back(absl::StrCat(name, ": ", st.message()));
      alive = false;
    }
  };
  auto wants = [&](const std::string& m) { return std::find(o_.modes.begin(), o_.modes.end(), m) != o_.modes.end(); };
  // All figures from one interleaved phase (timing.h says why). "comm alone" moves the Y_l the
  // preceding kinds computed; its output is overwritten unchecked by the next kind, but the
  // same all-to-alls are checked element by element in sync and async.
  std::vector<std::string> names = {"compute_alone", "comm_alone"};
  std::vector<Enqueue> fns = {compute_only, comm_only};
  if (wants("sync")) {
    names.push_back("sync");
    fns.push_back(sync);
  }
  if (wants("async")) {
    names.push_back("async");
    fns.push_back(async);
  }
  // Copy-engine all-to-all: a zero-CTA communicator and symmetric buffers. If the NCCL library
  // rejects them, that is an error of the async-ce mode; the other modes go on without it.
  bool ce = false;
  if (wants("async-ce")) {
    absl::Status st = alltoall_ ? g_->CreateCeComms()
                                : absl::FailedPreconditionError("needs ncclAlltoAll (copy engines run no send/recv)");
    if (st.ok()) st = g_->RunOnAll([&](RankContext& ctx) { return SetUpCe(ctx, st_[ctx.local]); });
    if (!st.ok()) res_.errors.push_back(absl::StrCat("async-ce: copy-engine all-to-all set-up: ", st.message()));
    ce = st.ok();
    if (ce) {
      names.push_back("comm_alone_ce");
      fns.push_back([this](RankContext& ctx, RankState&, IterEvents& ev) -> absl::Status {
        for (int l = 0; l < o_.layers; ++l) RETURN_IF_ERROR(A2A(ctx, ev, l, ctx.compute, true));
        return absl::OkStatus();
      });
      names.push_back("async-ce");
      fns.push_back(async_ce);
    }
  }
  PhaseBody mixed = Body("mixed", nullptr, true, false);
  mixed.run = [&](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    auto fn = [&](int k, IterEvents& ev) { return fns[k](ctx, s, ev); };
    ASSIGN_OR_RETURN(Samples smp, TimeInterleaved(ctx, ctx.compute, warmup, iters, names, fn));
    // The per-layer all-to-all pairs feed the skew figures only (not one figure per layer).
    for (const auto& [name, v] : smp.ms)
      if (name.find("_a2a") == std::string::npos) fig[name] = Median(v);
    for (const auto& k : names) KeepCollectiveTimes(ctx, smp, k + "_", pairs_, k);
    return absl::OkStatus();
  };
  phase("interleaved compute / all-to-all / modes", RunPhase(*g_, o_.run, mixed, f_));
  if (alive) phase("collective skew (interleaved phase)", g_->SkewFigures("", f_));
  if (alive && wants("sync")) phase("sync", CaptureMode(*g_, "sync", o_.run, hooks_, Body("sync", sync, true, false)));
  if (alive && wants("async"))
    phase("async", CaptureMode(*g_, "async", o_.run, hooks_, Body("async", async, true, false)));
  if (alive && ce) {
    // The matmuls of async-ce write into the symmetric Y buffers, not their own C: only the
    // received data is validated (every element, by the consumers).
    phase("async-ce", CaptureMode(*g_, "async-ce", o_.run, hooks_, Body("async-ce", async_ce, false, false)));
    phase("async-ce: window deregistration",
          g_->RunOnAll([&](RankContext& ctx) { return ReleaseCe(ctx, st_[ctx.local]); }));
  }
  if (alive) phase("collective skew (captured runs)", g_->SkewFigures("captured_", f_));
  Render();
  return std::move(res_);
}

void AllToAll::Render() {
  auto& f = f_;
  res_.figures = f;
  auto has = [&](const std::string& k) { return f.count(k) > 0; };
  const int n = g_->world_size();
  std::string t, summary;
  const double comp = has("compute_alone_ms") ? f["compute_alone_ms"] : 0;
  const double comm = has("comm_alone_ms") ? f["comm_alone_ms"] : 0;
  if (has("compute_alone_ms"))
    t += Row(
        "compute alone (matmuls+consumers)", comp,
        absl::StrFormat("%.1f TFLOP/s counting the matmuls only", o_.layers * o_.gemm.flops() / (comp * 1e-3) / 1e12));
  if (has("comm_alone_ms")) {
    // nccl-tests alltoall: bytes = one rank's whole buffer; busbw = algbw * (n-1)/n.
    const double bytes = static_cast<double>(o_.gemm.m * o_.gemm.n * DTypeBytes(o_.gemm.dtype));
    const double per = comm / o_.layers;
    const double alg = bytes / (per * 1e-3) / 1e9;
    res_.figures["a2a_busbw_gbps"] = alg * (n - 1) / n;
    t += Row("communication alone (all-to-alls)", comm,
             absl::StrFormat("%.3f ms each; algbw %.1f GB/s, busbw %.1f GB/s", per, alg, alg * (n - 1) / n));
  }
  const double ideal = std::max(comp, comm);
  res_.figures["ideal_ms"] = ideal;
  t += Row("ideal max(compute, comm)", ideal);
  if (has("comm_alone_ce_ms"))
    t += Row("communication alone, copy engines", f["comm_alone_ce_ms"],
             absl::StrFormat("%.3f ms each", f["comm_alone_ce_ms"] / o_.layers));
  for (const auto& [key, label] : {std::pair<std::string, std::string>{"sync", "Sync (compute stream)"},
                                   {"async", "Async (comm stream + events)"},
                                   {"async-ce", "Async, copy-engine all-to-all"}}) {
    if (std::find(o_.modes.begin(), o_.modes.end(), key) == o_.modes.end()) continue;
    if (!has(key + "_ms")) {
      absl::StrAppend(&summary, summary.empty() ? "" : " / ", label, " FAILED");
      continue;
    }
    const double ms = f[key + "_ms"];
    absl::StrAppend(&summary, summary.empty() ? "" : " / ", label, absl::StrFormat(" %.3f ms", ms));
    std::string extra;
    if ((key == "async" || key == "async-ce") && has("sync_ms")) {
      auto e = OverlapEfficiency(f["sync_ms"], ms, ideal);
      if (e) res_.figures[key == "async" ? "async_efficiency" : "async_ce_efficiency"] = *e;
      extra = absl::StrFormat("efficiency %s; %+.1f%% vs sync", FormatEfficiency(e), 100.0 * (ms / f["sync_ms"] - 1));
    }
    t += Row(label, ms, extra);
  }
  t += RenderSkew(res_.figures, n);
  res_.table = summary + "\n" + t;
}

}  // namespace

absl::StatusOr<WorkloadResult> RunAllToAll(const AllToAllOptions& o, const CaptureHooks& hooks) {
  AllToAll w(o, hooks);
  return w.Run();
}

}  // namespace overlapscope::workloads
