#include "workloads/matmul_allgather.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "workloads/allgather.h"
#include "workloads/mode_runner.h"
#include "workloads/rank_group.h"
#include "workloads/skew.h"
#include "workloads/timing.h"

namespace overlapscope::workloads {
namespace {

struct RankState {
  std::optional<Gemm> gemm;
  std::optional<DeviceChecker> check;
  AllGatherBuffers ag, ce;
  cudaEvent_t fork = nullptr, join = nullptr;
  ~RankState() {
    if (fork) cudaEventDestroy(fork);
    if (join) cudaEventDestroy(join);
  }
};

// All-gather on the comm stream concurrently with the GEMM on the compute stream. The
// all-gather is enqueued first (as FSDP prefetches) so its kernel is resident before the GEMM
// fills the SMs.
absl::Status EnqueueOverlap(RankContext& ctx, RankState& s, const AllGatherBuffers& ag, IterEvents& ev,
                            const RunParams& p, int sm_carveout) {
  OS_CUDA(cudaEventRecord(s.fork, ctx.compute));
  OS_CUDA(cudaStreamWaitEvent(ctx.comm, s.fork, 0));
  RETURN_IF_ERROR(TimedCollective(ctx, p, ev, "ag", ctx.comm, [&] { return ag.Enqueue(ctx.comm); }));
  RETURN_IF_ERROR(ev.Begin("gemm", ctx.compute));
  if (sm_carveout > 0) OS_CUBLAS(cublasSetSmCountTarget(ctx.blas, std::max(1, ctx.num_sms - sm_carveout)));
  absl::Status gemm = s.gemm->Enqueue(ctx);
  if (sm_carveout > 0) OS_CUBLAS(cublasSetSmCountTarget(ctx.blas, 0));
  RETURN_IF_ERROR(gemm);
  RETURN_IF_ERROR(ev.End("gemm", ctx.compute));
  OS_CUDA(cudaEventRecord(s.join, ctx.comm));
  OS_CUDA(cudaStreamWaitEvent(ctx.compute, s.join, 0));
  return absl::OkStatus();
}

class MatmulAllGather {
 public:
  MatmulAllGather(const MatmulAllGatherOptions& o, const CaptureHooks& h) : o_(o), hooks_(h) {}
  absl::StatusOr<WorkloadResult> Run();

 private:
  // Records a failed phase and says whether the group can go on.
  bool Failed(const std::string& phase, const absl::Status& st) {
    res_.errors.push_back(absl::StrCat(phase, ": ", st.message()));
    return false;
  }
  using EnqueueFn = std::function<absl::Status(RankContext&, RankState&, IterEvents&)>;
  PhaseBody TimedBody(const std::string& key, bool use_ce, EnqueueFn enqueue, bool gemm_runs, bool ag_runs);
  absl::Status Setup();
  bool SetupCopyEngine(bool& alive);
  EnqueueFn Enqueuer(const std::string& kind) const;
  PhaseBody MixedPhase(bool ce);
  PhaseBody GemmLoop();
  absl::Status Sweep(bool ce);  // all-gather alone at o_.sweep_mb sizes
  void Render();

  MatmulAllGatherOptions o_;
  CaptureHooks hooks_;
  std::unique_ptr<RankGroup> g_;
  std::vector<RankState> st_;
  std::map<std::string, double> f_;
  std::vector<std::pair<double, double>> sweep_, sweep_ce_;  // (gathered bytes, ms)
  int64_t gathered_bytes_ = 0;
  WorkloadResult res_;
};

PhaseBody MatmulAllGather::TimedBody(const std::string& key, bool use_ce, EnqueueFn enqueue, bool gemm_runs,
                                     bool ag_runs) {
  auto buffers = [this, use_ce](RankContext& ctx) -> const AllGatherBuffers& {
    return use_ce ? st_[ctx.local].ce : st_[ctx.local].ag;
  };
  PhaseBody b;
  // Clear the outputs so validation proves that this phase produced them.
  b.prepare = [=, this](RankContext& ctx) -> absl::Status {
    if (gemm_runs) RETURN_IF_ERROR(st_[ctx.local].gemm->ClearOutput(ctx));
    if (ag_runs) RETURN_IF_ERROR(buffers(ctx).Reset(ctx.compute));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
    return absl::OkStatus();
  };
  b.run = [=, this](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    auto fn = [&](int, IterEvents& ev) { return enqueue(ctx, s, ev); };
    ASSIGN_OR_RETURN(Samples smp, TimeIterations(ctx, ctx.compute, warmup, iters, fn));
    KeepCollectiveTimes(ctx, smp, "", {"ag"}, key);
    fig[key + "_ms"] = smp.Median("total");
    if (smp.ms.count("gemm")) fig[key + "_gemm_ms"] = smp.Median("gemm");
    if (smp.ms.count("ag")) fig[key + "_ag_ms"] = smp.Median("ag");
    return absl::OkStatus();
  };
  b.validate = [=, this](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    if (gemm_runs) RETURN_IF_ERROR(s.gemm->Validate(ctx, key + " GEMM output"));
    if (ag_runs) RETURN_IF_ERROR(buffers(ctx).Validate(ctx, *s.check, ctx.compute, key + " all-gather output"));
    return absl::OkStatus();
  };
  return b;
}

absl::Status MatmulAllGather::Sweep(bool ce) {
  for (double mb : o_.sweep_mb) {
    std::vector<AllGatherBuffers> bufs(g_->size());
    PhaseBody b;
    b.prepare = [&, mb](RankContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(bufs[ctx.local], AllGatherBuffers::Create(ctx, ce ? ctx.nccl_ce : ctx.nccl, mb, ce));
      return bufs[ctx.local].Reset(ctx.compute);
    };
    b.run = [&](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
      auto fn = [&](int, IterEvents&) { return bufs[ctx.local].Enqueue(ctx.compute); };
      ASSIGN_OR_RETURN(Samples smp, TimeIterations(ctx, ctx.compute, warmup, iters, fn));
      fig["ms"] = smp.Median("total");
      fig["bytes"] = static_cast<double>(bufs[ctx.local].gathered_bytes());
      return absl::OkStatus();
    };
    b.validate = [&, mb](RankContext& ctx) -> absl::Status {
      AllGatherBuffers& x = bufs[ctx.local];
      RETURN_IF_ERROR(
          x.Validate(ctx, *st_[ctx.local].check, ctx.compute, absl::StrCat("all-gather sweep ", mb, " MiB")));
      return x.Release();
    };
    std::map<std::string, double> f;
    RETURN_IF_ERROR(RunPhase(*g_, o_.run, b, f));
    (ce ? sweep_ce_ : sweep_).push_back({f["bytes"], f["ms"]});
  }
  return absl::OkStatus();
}

// Checks the options, starts the rank group (one rank per GPU or per MPI process), describes
// the run, and gives every rank its GEMM, checker, all-gather buffers and events; then burns in
// (steady clocks before anything is measured).
absl::Status MatmulAllGather::Setup() {
  for (const auto& m : o_.modes)
    if (std::find(MatmulAllGatherModes().begin(), MatmulAllGatherModes().end(), m) == MatmulAllGatherModes().end())
      return absl::InvalidArgumentError(absl::StrCat("unknown mode '", m, "' for matmul-allgather (",
                                                     absl::StrJoin(MatmulAllGatherModes(), ", "), ", all)"));
  if (o_.ag_mb <= 0) return absl::InvalidArgumentError("--ag-mb must be > 0");
  GroupOptions go;
  go.gpus = o_.run.gpus;
  go.nccl_max_ctas = o_.run.nccl_max_ctas;
  go.mpi = o_.run.mpi;
  go.timeout_s = o_.run.timeout_s;
  go.cublas_workspace_mb = o_.run.cublas_workspace_mb;
  ASSIGN_OR_RETURN(g_, RankGroup::Create(go));
  RETURN_IF_ERROR(CheckDelay(o_.run, g_->world_size()));
  st_ = std::vector<RankState>(g_->size());
  res_.workload = "matmul-allgather";
  res_.device = g_->description();
  res_.ranks = g_->ranks_description();
  res_.nranks = g_->world_size();
  if (o_.run.delay_us > 0) res_.notes.push_back(DelayNote(o_.run));
  res_.config = absl::StrFormat(
      "GEMM %dx%dx%d %s (cublasGemmEx, FP32 accumulate), all-gather %.6g MiB per rank; median of %d iterations "
      "after %d warm-up, max over %d ranks",
      o_.gemm.m, o_.gemm.n, o_.gemm.k, DTypeName(o_.gemm.dtype), o_.ag_mb, o_.run.iters, o_.run.warmup,
      g_->world_size());
  res_.notes.push_back(GemmDataDescription(o_.gemm));
  res_.notes.push_back(o_.run.cublas_workspace_mb > 0
                           ? absl::StrCat("cuBLAS workspace ", o_.run.cublas_workspace_mb, " MiB per GPU")
                           : std::string("cuBLAS workspace: the library's default"));
  if (o_.run.nccl_max_ctas > 0) res_.notes.push_back(absl::StrCat("communicator maxCTAs = ", o_.run.nccl_max_ctas));
  if (o_.sm_carveout > 0)
    res_.notes.push_back(
        absl::StrCat("overlap modes: GEMM limited to SMs - ", o_.sm_carveout, " (cublasSetSmCountTarget)"));
  auto setup = [&](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    ASSIGN_OR_RETURN(s.gemm, Gemm::Create(ctx, o_.gemm, 1000 + ctx.rank, 2000));
    ASSIGN_OR_RETURN(s.check, DeviceChecker::Create(ctx.device));
    ASSIGN_OR_RETURN(s.ag, AllGatherBuffers::Create(ctx, ctx.nccl, o_.ag_mb, false));
    OS_CUDA(cudaEventCreateWithFlags(&s.fork, cudaEventDisableTiming));
    OS_CUDA(cudaEventCreateWithFlags(&s.join, cudaEventDisableTiming));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(g_->RunOnAll(setup));
  gathered_bytes_ = st_[0].ag.gathered_bytes();
  return g_->RunOnAll([&](RankContext& ctx) { return BurnIn(ctx, *st_[ctx.local].gemm, o_.run.burn_in_ms); });
}

// Copy-engine set-up (overlap-ce) comes before the measurements, so its kinds join the
// interleaved phase; when the library rejects it, that is an error of the overlap-ce mode and
// the other kinds go on without it. A failed window registration ends the group (`alive`).
// True: the copy-engine kinds run.
bool MatmulAllGather::SetupCopyEngine(bool& alive) {
  auto ce_setup = [&](RankContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(st_[ctx.local].ce, AllGatherBuffers::Create(ctx, ctx.nccl_ce, o_.ag_mb, true));
    return absl::OkStatus();
  };
  absl::Status st = g_->CreateCeComms();
  if (!st.ok()) res_.errors.push_back(absl::StrCat("overlap-ce: zero-CTA communicator: ", st.message()));
  if (st.ok()) {
    st = g_->RunOnAll(ce_setup);
    if (!st.ok()) alive = Failed("overlap-ce: symmetric window registration", st);
  }
  return st.ok();
}

// One iteration of a measured kind on one rank: gemm_alone, ag_alone, ag_alone_ce, sequential,
// overlap, overlap_ce. Every all-gather is a TimedCollective (event pair "ag", after the
// straggler's spin if any).
MatmulAllGather::EnqueueFn MatmulAllGather::Enqueuer(const std::string& kind) const {
  const RunParams rp = o_.run;
  const int carve = o_.sm_carveout;
  if (kind == "gemm_alone") return [](RankContext& ctx, RankState& s, IterEvents&) { return s.gemm->Enqueue(ctx); };
  if (kind == "ag_alone")
    return [rp](RankContext& ctx, RankState& s, IterEvents& ev) {
      return TimedCollective(ctx, rp, ev, "ag", ctx.compute, [&] { return s.ag.Enqueue(ctx.compute); });
    };
  if (kind == "ag_alone_ce")
    return [rp](RankContext& ctx, RankState& s, IterEvents& ev) {
      return TimedCollective(ctx, rp, ev, "ag", ctx.compute, [&] { return s.ce.Enqueue(ctx.compute); });
    };
  if (kind == "sequential")
    return [rp](RankContext& ctx, RankState& s, IterEvents& ev) -> absl::Status {
      RETURN_IF_ERROR(s.gemm->Enqueue(ctx));
      return TimedCollective(ctx, rp, ev, "ag", ctx.compute, [&] { return s.ag.Enqueue(ctx.compute); });
    };
  if (kind == "overlap")
    return [carve, rp](RankContext& ctx, RankState& s, IterEvents& ev) {
      return EnqueueOverlap(ctx, s, s.ag, ev, rp, carve);
    };
  return [carve, rp](RankContext& ctx, RankState& s, IterEvents& ev) {  // overlap_ce
    return EnqueueOverlap(ctx, s, s.ce, ev, rp, carve);
  };
}

// All figures of METRICS.md §7 from one interleaved phase (timing.h says why): the kinds alone
// and the modes asked for, validated at the end.
PhaseBody MatmulAllGather::MixedPhase(bool ce) {
  auto wants = [&](const std::string& m) { return std::find(o_.modes.begin(), o_.modes.end(), m) != o_.modes.end(); };
  std::vector<std::string> names = {"gemm_alone", "ag_alone"};
  if (wants("sequential")) names.push_back("sequential");
  if (wants("overlap")) names.push_back("overlap");
  if (ce) names.insert(names.end(), {"ag_alone_ce", "overlap_ce"});
  std::vector<EnqueueFn> kinds;
  for (const auto& k : names) kinds.push_back(Enqueuer(k));
  PhaseBody mixed;
  mixed.prepare = [this, ce](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    RETURN_IF_ERROR(s.gemm->ClearOutput(ctx));
    RETURN_IF_ERROR(s.ag.Reset(ctx.compute));
    if (ce) RETURN_IF_ERROR(s.ce.Reset(ctx.compute));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
    return absl::OkStatus();
  };
  mixed.run = [this, kinds, names](RankContext& ctx, int warmup, int iters,
                                   std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    auto fn = [&](int k, IterEvents& ev) { return kinds[k](ctx, s, ev); };
    ASSIGN_OR_RETURN(Samples smp, TimeInterleaved(ctx, ctx.compute, warmup, iters, names, fn));
    for (const auto& [name, v] : smp.ms) fig[name] = Median(v);
    for (const auto& k : names) KeepCollectiveTimes(ctx, smp, k + "_", {"ag"}, k);
    return absl::OkStatus();
  };
  mixed.validate = [this, ce](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    RETURN_IF_ERROR(s.gemm->Validate(ctx, "GEMM output (interleaved phase)"));
    RETURN_IF_ERROR(s.ag.Validate(ctx, *s.check, ctx.compute, "all-gather output (interleaved phase)"));
    if (ce) RETURN_IF_ERROR(s.ce.Validate(ctx, *s.check, ctx.compute, "copy-engine all-gather output"));
    return absl::OkStatus();
  };
  return mixed;
}

// The plain cuBLAS loop: `iters` GEMMs back to back between two events, no host sync between
// (the GEMM's speed without per-iteration events, for comparison with gemm_alone).
PhaseBody MatmulAllGather::GemmLoop() {
  PhaseBody loop;
  loop.run = [this](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    for (int i = 0; i < warmup; ++i) RETURN_IF_ERROR(s.gemm->Enqueue(ctx));
    OS_CUDA(cudaStreamSynchronize(ctx.compute));
    if (!g_->Barrier()) return absl::AbortedError("another rank failed");
    IterEvents ev;
    RETURN_IF_ERROR(ev.Begin("loop", ctx.compute));
    for (int i = 0; i < iters; ++i) RETURN_IF_ERROR(s.gemm->Enqueue(ctx));
    RETURN_IF_ERROR(ev.End("loop", ctx.compute));
    ASSIGN_OR_RETURN(auto ms, ev.Elapsed());
    fig["gemm_loop_ms"] = ms["loop"] / iters;
    return absl::OkStatus();
  };
  loop.validate = [this](RankContext& ctx) { return st_[ctx.local].gemm->Validate(ctx, "plain GEMM loop output"); };
  return loop;
}

absl::StatusOr<WorkloadResult> MatmulAllGather::Run() {
  RETURN_IF_ERROR(Setup());
  bool alive = true;
  auto phase = [&](const std::string& name, const absl::Status& st) {
    if (!st.ok()) alive = Failed(name, st);
    return alive;
  };
  auto wants = [&](const std::string& m) { return std::find(o_.modes.begin(), o_.modes.end(), m) != o_.modes.end(); };
  const bool ce = wants("overlap-ce") && SetupCopyEngine(alive);
  phase("interleaved GEMM / all-gather / modes", RunPhase(*g_, o_.run, MixedPhase(ce), f_));
  if (alive) phase("collective skew (interleaved phase)", g_->SkewFigures("", f_));
  if (alive) phase("plain cuBLAS loop", RunPhase(*g_, o_.run, GemmLoop(), f_));
  if (alive && !o_.sweep_mb.empty()) phase("all-gather sweep", Sweep(false));
  if (alive && ce && !o_.sweep_mb.empty()) phase("all-gather sweep (copy engine)", Sweep(true));
  // One capture per mode (the figures above are not taken from these runs).
  if (alive && wants("sequential"))
    phase("sequential", CaptureMode(*g_, "sequential", o_.run, hooks_,
                                    TimedBody("sequential", false, Enqueuer("sequential"), true, true)));
  if (alive && wants("overlap"))
    phase("overlap",
          CaptureMode(*g_, "overlap", o_.run, hooks_, TimedBody("overlap", false, Enqueuer("overlap"), true, true)));
  if (alive && ce)
    phase("overlap-ce", CaptureMode(*g_, "overlap-ce", o_.run, hooks_,
                                    TimedBody("overlap_ce", true, Enqueuer("overlap_ce"), true, true)));
  if (alive) phase("collective skew (captured runs)", g_->SkewFigures("captured_", f_));
  if (alive && ce)
    phase("overlap-ce: window deregistration",
          g_->RunOnAll([&](RankContext& ctx) { return st_[ctx.local].ce.Release(); }));
  Render();
  return std::move(res_);
}

void MatmulAllGather::Render() {
  auto& f = f_;
  res_.figures = f;
  const int n = g_->world_size();
  std::string t;
  auto has = [&](const std::string& k) { return f.count(k) > 0; };
  const double gemm = has("gemm_alone_ms") ? f["gemm_alone_ms"] : 0;
  const double ag = has("ag_alone_ms") ? f["ag_alone_ms"] : 0;
  if (has("gemm_alone_ms")) {
    double tflops = o_.gemm.flops() / (gemm * 1e-3) / 1e12;
    res_.figures["gemm_tflops"] = tflops;
    t += Row("GEMM alone", gemm, absl::StrFormat("%.1f TFLOP/s", tflops));
  }
  if (has("gemm_loop_ms")) {
    double loop = f["gemm_loop_ms"];
    res_.figures["gemm_alone_vs_loop"] = loop / gemm;
    t += Row("GEMM plain cuBLAS loop", loop,
             absl::StrFormat("%.1f TFLOP/s; GEMM alone reaches %.1f%% of it", o_.gemm.flops() / (loop * 1e-3) / 1e12,
                             100.0 * loop / gemm));
  }
  auto bw = [&](double ms) {
    return absl::StrFormat("algbw %.1f GB/s, busbw %.1f GB/s (%.0f MiB gathered)", AlgBwGBps(gathered_bytes_, ms),
                           BusBwGBps(gathered_bytes_, ms, n), gathered_bytes_ / 1048576.0);
  };
  if (has("ag_alone_ms")) {
    res_.figures["ag_busbw_gbps"] = BusBwGBps(gathered_bytes_, ag, n);
    t += Row("all-gather alone", ag, bw(ag));
  }
  if (has("ag_alone_ce_ms")) {
    res_.figures["ag_ce_busbw_gbps"] = BusBwGBps(gathered_bytes_, f["ag_alone_ce_ms"], n);
    t += Row("all-gather alone (copy engine)", f["ag_alone_ce_ms"], bw(f["ag_alone_ce_ms"]));
  }
  const double ideal = std::max(gemm, ag);
  res_.figures["ideal_ms"] = ideal;
  t += Row("ideal max(GEMM, all-gather)", ideal);
  std::string summary;
  auto mode_row = [&](const std::string& key, const std::string& label, double ideal_for) {
    if (!has(key + "_ms")) {
      absl::StrAppend(&summary, summary.empty() ? "" : " / ", label, " FAILED");
      return;
    }
    double ms = f[key + "_ms"];
    absl::StrAppend(&summary, summary.empty() ? "" : " / ", label, absl::StrFormat(" %.3f ms", ms));
    std::string extra;
    if (key != "sequential" && has("sequential_ms")) {
      auto e = OverlapEfficiency(f["sequential_ms"], ms, ideal_for);
      if (e) res_.figures[key + "_efficiency"] = *e;
      extra = absl::StrFormat("efficiency %s; in the step: GEMM %.3f ms (%+.1f%% vs alone), all-gather %.3f ms",
                              FormatEfficiency(e), f[key + "_gemm_ms"], 100.0 * (f[key + "_gemm_ms"] / gemm - 1),
                              f[key + "_ag_ms"]);
    }
    t += Row(label, ms, extra);
  };
  auto wants = [&](const std::string& m) { return std::find(o_.modes.begin(), o_.modes.end(), m) != o_.modes.end(); };
  if (wants("sequential")) mode_row("sequential", "Sequential", ideal);
  if (wants("overlap")) mode_row("overlap", "Overlap w/o CE", ideal);
  if (wants("overlap-ce"))
    mode_row("overlap_ce", "Overlap with CE", has("ag_alone_ce_ms") ? std::max(gemm, f["ag_alone_ce_ms"]) : ideal);
  auto sweep_table = [&](const std::vector<std::pair<double, double>>& sw, const std::string& title,
                         const std::string& key) {
    if (sw.empty()) return;
    t += "\n  all-gather sweep, " + title + " (all-gather alone):\n";
    t += absl::StrFormat("  %14s %14s %10s %12s %12s\n", "MiB per rank", "MiB gathered", "time ms", "algbw GB/s",
                         "busbw GB/s");
    double best = 0;
    for (auto [bytes, ms] : sw) {
      double bus = BusBwGBps(static_cast<int64_t>(bytes), ms, n);
      best = std::max(best, bus);
      t += absl::StrFormat("  %14.3f %14.3f %10.3f %12.1f %12.1f\n", bytes / n / 1048576.0, bytes / 1048576.0, ms,
                           AlgBwGBps(static_cast<int64_t>(bytes), ms), bus);
    }
    res_.figures[key] = best;
  };
  sweep_table(sweep_, "default communicator (NCCL kernels)", "sweep_best_busbw_gbps");
  sweep_table(sweep_ce_, "zero-CTA communicator (copy engines), symmetric windows", "sweep_ce_best_busbw_gbps");
  double best =
      std::max(res_.figures.count("sweep_best_busbw_gbps") ? res_.figures["sweep_best_busbw_gbps"] : 0.0,
               res_.figures.count("sweep_ce_best_busbw_gbps") ? res_.figures["sweep_ce_best_busbw_gbps"] : 0.0);
  if (best > 0 && has("ag_alone_ms"))
    t +=
        absl::StrFormat("  all-gather at %.6g MiB per rank: busbw %.1f GB/s = %.1f%% of the best busbw in the sweeps\n",
                        o_.ag_mb, BusBwGBps(gathered_bytes_, ag, n), 100.0 * BusBwGBps(gathered_bytes_, ag, n) / best);
  t += RenderSkew(res_.figures, n);
  res_.table = summary + "\n" + t;
}

}  // namespace

absl::StatusOr<WorkloadResult> RunMatmulAllGather(const MatmulAllGatherOptions& o, const CaptureHooks& hooks) {
  MatmulAllGather w(o, hooks);
  return w.Run();
}

}  // namespace overlapscope::workloads
