#include "workloads/d2h.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "workloads/device_memory.h"
#include "workloads/kernels.h"
#include "workloads/mode_runner.h"
#include "workloads/rank_group.h"
#include "workloads/timing.h"

namespace overlapscope::workloads {
namespace {

enum class Mode { kBlocking, kNoSync, kEvent };

struct RankState {
  DeviceBuffer batch, dflag;
  PinnedBuffer hflag;
  std::optional<DeviceChecker> check;
  cudaEvent_t flag_ready = nullptr;
  int32_t next_tag = 1;  // tags grow over the whole run, so a stale value never looks fresh
  ~RankState() {
    if (flag_ready) cudaEventDestroy(flag_ready);
  }
};

void HostWork(int64_t us) {
  // Stand-in for host-side work (batch preparation, Python overhead): a busy wait, so it takes
  // its time even on a loaded machine and cannot be descheduled into a shorter one.
  const int64_t end = HostNowNs() + us * 1000;
  while (HostNowNs() < end) {
  }
}

class D2H {
 public:
  D2H(const D2HOptions& o, const CaptureHooks& h) : o_(o), hooks_(h) {}
  absl::StatusOr<WorkloadResult> Run();

 private:
  absl::Status Step(RankContext& ctx, RankState& s, Mode mode, cudaEvent_t gpu_begin, cudaEvent_t gpu_end,
                    int64_t& blocked_ns, bool& stale);
  PhaseBody Body(const std::string& key, Mode mode);
  void Render();

  D2HOptions o_;
  CaptureHooks hooks_;
  std::unique_ptr<RankGroup> g_;
  std::vector<RankState> st_;
  std::map<std::string, double> f_;
  WorkloadResult res_;
};

absl::Status D2H::Step(RankContext& ctx, RankState& s, Mode mode, cudaEvent_t gpu_begin, cudaEvent_t gpu_end,
                       int64_t& blocked_ns, bool& stale) {
  cudaStream_t st = nullptr;  // legacy default stream (see header)
  const int32_t tag = s.next_tag++;
  volatile int32_t* host_flag = s.hflag.as<int32_t>();
  OS_CUDA(cudaEventRecord(gpu_begin, st));
  OS_CUDA(ProduceBatch(s.batch.as<int32_t>(), o_.batch_elems, tag, o_.producer_us * 1000, ctx.num_sms, st));
  OS_CUDA(ComputeFlag(s.batch.as<int32_t>(), o_.batch_elems, tag, s.dflag.as<int32_t>(), s.check->check(), st));
  blocked_ns = 0;
  if (mode == Mode::kBlocking) {
    int64_t t0 = HostNowNs();
    OS_CUDA(cudaMemcpy(s.hflag.as<int32_t>(), s.dflag.get(), sizeof(int32_t), cudaMemcpyDeviceToHost));
    blocked_ns += HostNowNs() - t0;
  } else {
    OS_CUDA(cudaMemcpyAsync(s.hflag.as<int32_t>(), s.dflag.get(), sizeof(int32_t), cudaMemcpyDeviceToHost, st));
    if (mode == Mode::kEvent) OS_CUDA(cudaEventRecord(s.flag_ready, st));
  }
  OS_CUDA(SpinKernel(o_.irrelevant_us * 1000, ctx.num_sms, st));
  OS_CUDA(cudaEventRecord(gpu_end, st));
  HostWork(o_.host_work_us);
  if (mode == Mode::kEvent) {
    int64_t t0 = HostNowNs();
    OS_CUDA(cudaEventSynchronize(s.flag_ready));
    blocked_ns += HostNowNs() - t0;
  }
  const int32_t got = *host_flag;
  stale = got != tag && got != -tag;
  if (got == -tag)
    return absl::DataLossError(absl::StrCat("VALIDATION FAILED on rank ", ctx.rank, ": the device flag of step tag ",
                                            tag, " says the batch was wrong"));
  if (stale && mode != Mode::kNoSync)
    return absl::DataLossError(absl::StrCat("VALIDATION FAILED on rank ", ctx.rank, ": host read flag ", got,
                                            " but step tag ", tag, " was expected after synchronizing"));
  return absl::OkStatus();
}

PhaseBody D2H::Body(const std::string& key, Mode mode) {
  PhaseBody b;
  b.prepare = [this](RankContext& ctx) -> absl::Status {
    RETURN_IF_ERROR(st_[ctx.local].check->Reset(nullptr));
    OS_CUDA(cudaStreamSynchronize(nullptr));
    return absl::OkStatus();
  };
  b.run = [=, this](RankContext& ctx, int warmup, int iters, std::map<std::string, double>& fig) -> absl::Status {
    RankState& s = st_[ctx.local];
    std::vector<cudaEvent_t> ev(2 * (warmup + iters), nullptr);
    auto destroy = [&] {
      for (auto e : ev)
        if (e) cudaEventDestroy(e);
    };
    for (auto& e : ev) {
      absl::Status cs = CudaStatus(cudaEventCreate(&e), "cudaEventCreate", __FILE__, __LINE__);
      if (!cs.ok()) {
        destroy();
        return cs;
      }
    }
    std::vector<double> blocked_us, gpu_ms;
    int64_t stale_reads = 0, wall_start = 0;
    const bool nvtx = ctx.group->options().nvtx;
    absl::Status st;
    for (int it = 0; it < warmup + iters && st.ok(); ++it) {
      const bool timed = it >= warmup;
      if (it == warmup) {
        // Drain the warm-up steps (the no-sync mode queues ahead) so wall time covers timed steps only.
        st = CudaStatus(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize", __FILE__, __LINE__);
        wall_start = HostNowNs();
      }
      if (nvtx && timed) nvtxRangePushA(absl::StrCat("ProfilerStep#", it - warmup).c_str());
      int64_t blocked = 0;
      bool stale = false;
      if (st.ok()) st = Step(ctx, s, mode, ev[2 * it], ev[2 * it + 1], blocked, stale);
      if (nvtx && timed) nvtxRangePop();
      if (timed) {
        blocked_us.push_back(blocked / 1e3);
        stale_reads += stale;
      }
    }
    if (st.ok()) st = CudaStatus(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize", __FILE__, __LINE__);
    const int64_t wall_ns = HostNowNs() - wall_start;
    for (int it = warmup; it < warmup + iters && st.ok(); ++it) {
      float ms = 0;
      st =
          CudaStatus(cudaEventElapsedTime(&ms, ev[2 * it], ev[2 * it + 1]), "cudaEventElapsedTime", __FILE__, __LINE__);
      gpu_ms.push_back(ms);
    }
    destroy();
    RETURN_IF_ERROR(st);
    fig[key + "_blocked_us"] = Median(blocked_us);
    fig[key + "_wall_ms"] = wall_ns / 1e6 / iters;
    fig[key + "_gpu_ms"] = Median(gpu_ms);
    fig[key + "_stale"] = static_cast<double>(stale_reads);
    fig[key + "_steps"] = iters;
    return absl::OkStatus();
  };
  b.validate = [=, this](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    // After the final synchronization the last flag must have arrived, even without sync.
    const int32_t last = *s.hflag.as<volatile int32_t>();
    if (last != s.next_tag - 1)
      return absl::DataLossError(absl::StrCat("VALIDATION FAILED on rank ", ctx.rank, ": ", key, ": final flag ", last,
                                              ", expected ", s.next_tag - 1));
    ASSIGN_OR_RETURN(auto counts, s.check->Read(nullptr));
    return CheckCounts(counts, ctx.rank, key + " batches", static_cast<uint64_t>(o_.batch_elems) * (s.next_tag - 1));
  };
  return b;
}

absl::StatusOr<WorkloadResult> D2H::Run() {
  for (const auto& m : o_.modes)
    if (std::find(D2HModes().begin(), D2HModes().end(), m) == D2HModes().end())
      return absl::InvalidArgumentError(
          absl::StrCat("unknown mode '", m, "' for d2h (", absl::StrJoin(D2HModes(), ", "), ", all)"));
  if (o_.producer_us < 0 || o_.irrelevant_us < 0 || o_.host_work_us < 0 || o_.batch_elems < 1)
    return absl::InvalidArgumentError("d2h durations must be >= 0 and the batch >= 1 element");
  GroupOptions go;
  go.gpus = o_.run.gpus;
  go.nccl = false;
  go.cublas = false;
  ASSIGN_OR_RETURN(g_, RankGroup::Create(go));
  res_.workload = "d2h";
  res_.device = g_->description();
  res_.ranks = g_->ranks_description();
  res_.nranks = g_->world_size();
  res_.config = absl::StrFormat(
      "per step: produce batch %d us GPU, flag kernel, 4-byte D2H, irrelevant compute %d us GPU, host work %d us; "
      "%d steps after %d warm-up, max over %d GPU(s)",
      o_.producer_us, o_.irrelevant_us, o_.host_work_us, o_.run.iters, o_.run.warmup, g_->size());
  st_ = std::vector<RankState>(g_->size());
  auto setup = [&](RankContext& ctx) -> absl::Status {
    RankState& s = st_[ctx.local];
    ASSIGN_OR_RETURN(s.batch, DeviceBuffer::Create(o_.batch_elems * 4, ctx.device));
    ASSIGN_OR_RETURN(s.dflag, DeviceBuffer::Create(4, ctx.device));
    ASSIGN_OR_RETURN(s.hflag, PinnedBuffer::Create(4));
    ASSIGN_OR_RETURN(s.check, DeviceChecker::Create(ctx.device));
    OS_CUDA(cudaEventCreateWithFlags(&s.flag_ready, cudaEventDisableTiming));
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(g_->RunOnAll(setup));
  const std::pair<const char*, Mode> modes[] = {
      {"blocking", Mode::kBlocking}, {"nonblocking-nosync", Mode::kNoSync}, {"nonblocking-event", Mode::kEvent}};
  for (const auto& [name, mode] : modes) {
    if (std::find(o_.modes.begin(), o_.modes.end(), name) == o_.modes.end()) continue;
    absl::Status st = RunMode(*g_, name, o_.run, hooks_, Body(name, mode), f_);
    if (!st.ok()) {
      res_.errors.push_back(absl::StrCat(name, ": ", st.message()));
      break;
    }
  }
  Render();
  return std::move(res_);
}

void D2H::Render() {
  res_.figures = f_;
  std::string t = absl::StrFormat("  %-20s %16s %14s %14s %14s\n", "mode", "host blocked/step", "wall/step",
                                  "GPU time/step", "stale reads");
  std::string summary;
  for (const auto& m : D2HModes()) {
    if (std::find(o_.modes.begin(), o_.modes.end(), m) == o_.modes.end()) continue;
    if (!f_.count(m + "_wall_ms")) {
      absl::StrAppend(&summary, summary.empty() ? "" : " / ", m, " FAILED");
      continue;
    }
    absl::StrAppend(&summary, summary.empty() ? "" : " / ", m,
                    absl::StrFormat(" blocked %.0f us", f_[m + "_blocked_us"]));
    t += absl::StrFormat("  %-20s %13.1f us %11.3f ms %11.3f ms %8.0f of %.0f\n", m, f_[m + "_blocked_us"],
                         f_[m + "_wall_ms"], f_[m + "_gpu_ms"], f_[m + "_stale"], f_[m + "_steps"]);
  }
  res_.table = summary + " (median host time blocked per step)\n" + t;
}

}  // namespace

absl::StatusOr<WorkloadResult> RunD2H(const D2HOptions& o, const CaptureHooks& hooks) {
  D2H w(o, hooks);
  return w.Run();
}

}  // namespace overlapscope::workloads
