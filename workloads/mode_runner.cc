#include "workloads/mode_runner.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "workloads/sm_clock.h"

namespace overlapscope::workloads {
namespace {

absl::Status Step(RankGroup& g, const RunParams& p, const std::function<absl::Status(RankContext&)>& fn) {
  if (!fn) return absl::OkStatus();
  return g.RunOnAll(fn, absl::Seconds(p.timeout_s));
}

}  // namespace

absl::Status RunPhase(RankGroup& g, const RunParams& p, const PhaseBody& body, std::map<std::string, double>& out) {
  std::vector<std::map<std::string, double>> per_rank(g.size());
  auto fn = [&](RankContext& ctx) -> absl::Status {
    if (body.prepare) RETURN_IF_ERROR(body.prepare(ctx));
    RETURN_IF_ERROR(body.run(ctx, p.warmup, p.iters, per_rank[ctx.local]));
    return body.validate ? body.validate(ctx) : absl::OkStatus();
  };
  // The SM clock is sampled while the timed phases run (sm_clock.h), not during set-up or capture.
  SmClockSampler* clock = ActiveSmClock();
  if (clock) clock->Resume();
  absl::Status st = g.RunOnAll(fn, absl::Seconds(p.timeout_s));
  if (clock) clock->Pause();
  RETURN_IF_ERROR(st);
  // Under MPI the other ranks' figures live in other processes: gather them (same on every rank).
  std::vector<Series> local;
  for (const auto& m : per_rank) {
    Series s;
    for (const auto& [k, v] : m) s[k] = {v};
    local.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(std::vector<Series> all, g.AllRanks(local));
  for (const auto& m : all)
    for (const auto& [k, v] : m) {
      if (v.empty()) continue;
      auto it = out.find(k);
      out[k] = it == out.end() ? v[0] : std::max(it->second, v[0]);
    }
  return absl::OkStatus();
}

absl::Status RunMode(RankGroup& g, const std::string& mode, const RunParams& p, const CaptureHooks& hooks,
                     const PhaseBody& body, std::map<std::string, double>& out) {
  RETURN_IF_ERROR(RunPhase(g, p, body, out));
  return CaptureMode(g, mode, p, hooks, body);
}

absl::Status CaptureMode(RankGroup& g, const std::string& mode, const RunParams& p, const CaptureHooks& hooks,
                         const PhaseBody& body) {
  if (hooks.iters <= 0) return absl::OkStatus();
  RETURN_IF_ERROR(Step(g, p, body.prepare));
  if (hooks.begin) RETURN_IF_ERROR(hooks.begin(mode));
  g.set_nvtx(true);
  std::vector<std::map<std::string, double>> ignored(g.size());
  auto run = [&](RankContext& ctx) { return body.run(ctx, 1, hooks.iters, ignored[ctx.local]); };
  absl::Status st = g.RunOnAll(run, absl::Seconds(p.timeout_s));
  g.set_nvtx(false);
  // End the capture even when the run failed, so the session is not left open.
  absl::Status end = hooks.end ? hooks.end(mode) : absl::OkStatus();
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat("captured run of ", mode, ": ", st.message()));
  RETURN_IF_ERROR(end);
  return Step(g, p, body.validate);
}

}  // namespace overlapscope::workloads
