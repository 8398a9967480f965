#include "analyze/replay/contention.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/replay/spans.h"

namespace overlapscope::analyze::replay {
namespace {

// Share of [lo, hi) covered by merged list u.
double Covered(const std::vector<Span>& u, int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  auto it = std::upper_bound(u.begin(), u.end(), lo, [](int64_t x, const Span& s) { return x < s.second; });
  int64_t c = 0;
  for (; it != u.end() && it->first < hi; ++it) c += std::min(hi, it->second) - std::max(lo, it->first);
  return static_cast<double>(c) / static_cast<double>(hi - lo);
}

// A kernel of B blocks (one block per SM) runs in ceil(B / S) waves on S free SMs; with H of
// them held by communication, in ceil(B / (S − H)): a full-GPU kernel (cuBLAS' 132-block GEMMs on
// a 132-SM H100/H200) needs a second wave beside a 24-block NCCL kernel and takes about twice as
// long (wave quantization), a small one that still fits is not slowed. Unknown grid: the share
// S / (S − H).
double SmSlowdown(int sms, int held, int32_t blocks) {
  held = std::clamp(held, 0, sms - 1);
  if (held == 0) return 1;
  if (blocks <= 0) return static_cast<double>(sms) / (sms - held);
  const double before = std::ceil(static_cast<double>(blocks) / sms);
  const double after = std::ceil(static_cast<double>(blocks) / (sms - held));
  return after / before;
}

}  // namespace

int SmCount(const model::Trace& t, model::DeviceId d) {
  if (d < 0 || d >= static_cast<model::DeviceId>(t.devices().size())) return 132;
  const std::string_view n = t.str(t.devices()[d].name);
  if (n.find("A100") != n.npos || n.find("A800") != n.npos) return 108;
  if (n.find("B200") != n.npos) return 148;
  return 132;
}

ContentionFactors ComputeContention(const model::Trace& t, const NodeAttrs& a, const SimGraph& g, const Schedule& s,
                                    const ChangeEffects& fx, const std::vector<NameSlowdown>& slowdowns,
                                    int sm_count_override) {
  ContentionFactors out;
  out.factor.assign(g.num_nodes, 1.0);
  const size_t devs = t.devices().size();
  std::vector<std::vector<Span>> rec(devs), pred(devs);
  std::vector<int32_t> held(devs, 0);
  for (int32_t v = 0; v < g.num_gpu; ++v) {
    const model::DeviceId d = a.device[v];
    if (d < 0 || a.cls[v] != GpuClass::kComm || a.blocks[v] <= 0) continue;  // copies hold no SMs
    rec[d].push_back({g.rec_start[v], g.rec_end[v]});
    if (fx.removed[v] || fx.copy_engine[v]) continue;
    pred[d].push_back({s.start[v], s.end[v]});
    held[d] = std::max(held[d], a.blocks[v]);
  }
  for (size_t d = 0; d < devs; ++d) {
    rec[d] = MergeSpans(std::move(rec[d]));
    pred[d] = MergeSpans(std::move(pred[d]));
  }
  absl::flat_hash_map<std::pair<model::DeviceId, model::StringId>, double> by_dev;
  absl::flat_hash_map<model::StringId, double> by_name;
  for (const NameSlowdown& sd : slowdowns) {
    if (!(sd.slowdown > 0)) continue;
    by_dev.try_emplace({sd.device, sd.name}, sd.slowdown);
    by_name.try_emplace(sd.name, sd.slowdown);  // the first device's figure for other devices
  }
  for (int32_t v = 0; v < g.num_gpu; ++v) {
    const model::DeviceId d = a.device[v];
    if (d < 0 || a.cls[v] != GpuClass::kCompute || fx.removed[v]) continue;
    const double o_rec = Covered(rec[d], g.rec_start[v], g.rec_end[v]);
    const double o_pred = Covered(pred[d], s.start[v], s.end[v]);
    if (std::abs(o_pred - o_rec) < 0.01) continue;
    double sd = 0;
    if (auto it = by_dev.find({d, a.name[v]}); it != by_dev.end())
      sd = it->second;
    else if (auto jt = by_name.find(a.name[v]); jt != by_name.end())
      sd = jt->second;
    if (sd > 0) {
      ++out.by_trace;
    } else {
      const int sms = sm_count_override > 0 ? sm_count_override : SmCount(t, d);
      sd = SmSlowdown(sms, held[d], a.blocks[v]);
      if (sd == 1) continue;
      ++out.by_sm;
    }
    out.factor[v] = (1 + (sd - 1) * o_pred) / (1 + (sd - 1) * o_rec);
  }
  return out;
}

}  // namespace overlapscope::analyze::replay
