#include "workloads/mode_runner.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace overlapscope::workloads {

absl::Status RunPhase(RankGroup& g, const RunParams& p, const PhaseBody& body, std::map<std::string, double>& out) {
  std::vector<std::map<std::string, double>> per_rank(g.size());
  auto fn = [&](RankContext& ctx) { return body(ctx, p.warmup, p.iters, per_rank[ctx.rank]); };
  RETURN_IF_ERROR(g.RunOnAll(fn, absl::Seconds(p.timeout_s)));
  for (const auto& m : per_rank)
    for (const auto& [k, v] : m) {
      auto it = out.find(k);
      out[k] = it == out.end() ? v : std::max(it->second, v);
    }
  return absl::OkStatus();
}

absl::Status RunMode(RankGroup& g, const std::string& mode, const RunParams& p, const CaptureHooks& hooks,
                     const PhaseBody& body, std::map<std::string, double>& out) {
  RETURN_IF_ERROR(RunPhase(g, p, body, out));
  if (hooks.iters <= 0) return absl::OkStatus();
  if (hooks.begin) RETURN_IF_ERROR(hooks.begin(mode));
  g.set_nvtx(true);
  RunParams cp = p;
  cp.warmup = 1;
  cp.iters = hooks.iters;
  std::map<std::string, double> ignored;
  absl::Status st = RunPhase(g, cp, body, ignored);
  g.set_nvtx(false);
  // End the capture even when the run failed, so the session is not left open.
  absl::Status end = hooks.end ? hooks.end(mode) : absl::OkStatus();
  if (!st.ok()) return absl::Status(st.code(), absl::StrCat("captured run of ", mode, ": ", st.message()));
  return end;
}

}  // namespace overlapscope::workloads
