#include "analyze/replay/contention.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/graph/device_sms.h"
#include "analyze/replay/both.h"
#include "analyze/replay/device_model.h"
#include "analyze/replay/last_round.h"
#include "analyze/replay/placed.h"
#include "analyze/replay/residency.h"
#include "analyze/replay/spans.h"

namespace overlapscope::analyze::replay {
using placed::Placed;

ContentionFactors ComputeContention(const model::Trace& t, const graph::Graph& graph, const NodeAttrs& a,
                                    const SimGraph& g, const Schedule& s, const ChangeEffects& fx,
                                    const std::vector<NameSlowdown>& slowdowns, int sm_count_override,
                                    const std::vector<uint8_t>& waited) {
  ContentionFactors out;
  const size_t devs = t.devices().size();
  std::vector<std::unique_ptr<DeviceModel>> dm(devs);
  std::vector<uint8_t> has_comm(devs, 0);
  std::vector<int32_t> colls;           // the communication kernels, in node order (one scan of the nodes)
  std::vector<BlockFootprint> coll_fp;  // theirs (one read of each kernel's record)
  for (int32_t v = 0; v < g.num_gpu; ++v) {
    const model::DeviceId d = a.device[v];
    if (d < 0 || a.cls[v] != GpuClass::kComm) continue;
    const BlockFootprint fp = FootprintOf(t, graph, v);
    if (fp.blocks <= 0) continue;  // copies hold no SMs
    has_comm[d] = 1;
    colls.push_back(v);
    coll_fp.push_back(fp);
  }
  const OpShapeIndex shapes(t);  // empty (and free) without record_shapes
  for (size_t d = 0; d < devs; ++d)
    if (has_comm[d])
      dm[d] = std::make_unique<DeviceModel>(
          t, graph, a, g, s, shapes,
          sm_count_override > 0 ? sm_count_override : graph::DeviceSmCount(t, static_cast<model::DeviceId>(d)));
  // The collectives first; then only the compute kernels that meet one (in either schedule) or
  // that the end releasing one also releases: the others keep their duration (most of a trace).
  std::vector<std::vector<Span>> near(devs);
  std::vector<bool> root(g.num_gpu, false);  // releasing kernels (ReleasingKernel) of the collectives
  for (size_t c = 0; c < colls.size(); ++c) {
    const int32_t v = colls[c];
    const model::DeviceId d = a.device[v];  // dm[d] is set: the device has v
    Placed p{v, coll_fp[c], s.start[v], s.end[v]};
    dm[d]->rec_comm.push_back({v, p.fp, g.rec_start[v], g.RecEnd(v)});
    near[d].push_back({g.rec_start[v], g.RecEnd(v)});
    if (fx.Removed(v)) continue;
    if (fx.CopyEngine(v)) {
      // Copy engines hold no SMs, but the collective's own chunk is copied on the device first,
      // by SMs (contention.h): a copy kernel whose blocks are unknown, one SM at least, so it
      // waits only for a kernel that fills every SM.
      p.fp = BlockFootprint{};
      p.fp.blocks = 1;
      p.holds = false;
    }
    dm[d]->comm.push_back(p);
    near[d].push_back({s.start[v], s.end[v]});
    if (const int32_t r = ReleasingKernel(a, s, v); r >= 0) root[r] = true;
  }
  for (auto& n : near) n = MergeSpans(std::move(n));
  // The halves of the node range on two threads (read-only lookups), joined in node order.
  std::vector<std::vector<Placed>> lower(devs), upper(devs);
  auto near_compute = [&](int32_t lo, int32_t hi, std::vector<std::vector<Placed>>& out) {
    std::vector<MeetsCursor> pred, rec;  // per device
    for (const std::vector<Span>& n : near) pred.emplace_back(n), rec.emplace_back(n);
    for (int32_t v = lo; v < hi; ++v) {
      const model::DeviceId d = a.device[v];
      if (d < 0 || !dm[d] || a.cls[v] != GpuClass::kCompute || fx.Removed(v)) continue;
      if (!pred[d].Meets(s.start[v], s.end[v]) && !rec[d].Meets(g.rec_start[v], g.RecEnd(v))) {
        const int32_t r = ReleasingKernel(a, s, v);
        if (r < 0 || !root[r]) continue;
      }
      out[d].push_back({v, BlockFootprint{}, s.start[v], s.end[v]});  // footprint: Placed
    }
  };
  const int32_t mid = g.num_gpu / 2;
  // Room for every compute kernel of a device in each half (capacity never written costs no
  // page): lists grown by doubling and then joined left about half their pages behind (at 10 M
  // nodes ~17 k of the what-if's fresh pages). A device's lower list has room for its upper one.
  std::vector<size_t> below(devs, 0), above(devs, 0);
  for (int32_t v = 0; v < g.num_gpu; ++v) {
    const model::DeviceId d = a.device[v];
    if (d >= 0 && dm[d] && a.cls[v] == GpuClass::kCompute) ++(v < mid ? below : above)[d];
  }
  for (size_t d = 0; d < devs; ++d) {
    if (below[d] > 0) lower[d].reserve(below[d] + above[d]);
    if (above[d] > 0) upper[d].reserve(above[d]);
  }
  BothAtOnce([&] { near_compute(mid, g.num_gpu, upper); }, [&] { near_compute(0, mid, lower); });
  for (size_t d = 0; d < devs; ++d) {
    if (!dm[d]) continue;
    if (lower[d].empty()) {
      dm[d]->compute = std::move(upper[d]);
      continue;
    }
    dm[d]->compute = std::move(lower[d]);
    dm[d]->compute.insert(dm[d]->compute.end(), upper[d].begin(), upper[d].end());
  }
  absl::flat_hash_map<std::pair<model::DeviceId, model::StringId>, double> by_dev;
  absl::flat_hash_map<model::StringId, double> by_name;
  for (const NameSlowdown& sd : slowdowns) {
    if (!(sd.slowdown > 0)) continue;
    by_dev.try_emplace({sd.device, sd.name}, sd.slowdown);
    by_name.try_emplace(sd.name, sd.slowdown);  // the first device's figure for other devices
  }
  // Each device on its own (its kernels' factors, its waits and tallies), the devices split in
  // two runs of about the same number of compute kernels on two threads; the waits then joined
  // in device order, as one thread would have found them.
  std::vector<ContentionFactors> part(devs);
  auto model_devices = [&](size_t lo, size_t hi) {
    for (size_t d = lo; d < hi; ++d) {
      if (!dm[d]) continue;
      DeviceModel& m = *dm[d];
      ContentionFactors& o = part[d];
      m.Waits(o, waited, root);
      m.Prepare();
      for (const Placed& k : m.compute) {
        double sd = 0;
        if (auto it = by_dev.find({static_cast<model::DeviceId>(d), a.Name(k.v)}); it != by_dev.end())
          sd = it->second;
        else if (auto jt = by_name.find(a.Name(k.v)); jt != by_name.end())
          sd = jt->second;
        bool by_trace = false;
        const double f = m.FactorWith(k, sd, by_trace);
        if (std::abs(f - 1) < 0.005) continue;
        o.factor.emplace_back(k.v, f);  // GPU nodes only: host calls are never slowed
        ++(by_trace ? o.by_trace : o.by_sm);
      }
    }
  };
  size_t total = 0, split = 0;
  for (size_t d = 0; d < devs; ++d) total += dm[d] ? dm[d]->compute.size() : 0;
  for (size_t below = 0; split < devs && 2 * below < total; ++split) below += dm[split] ? dm[split]->compute.size() : 0;
  BothAtOnce([&] { model_devices(split, devs); }, [&] { model_devices(0, split); });
  for (const ContentionFactors& o : part) {
    out.factor.insert(out.factor.end(), o.factor.begin(), o.factor.end());
    out.waits.insert(out.waits.end(), o.waits.begin(), o.waits.end());
    out.by_trace += o.by_trace;
    out.by_sm += o.by_sm;
  }
  // Each device's in node order (its compute kernels are): the devices' lists merged.
  std::sort(out.factor.begin(), out.factor.end());
  return out;
}

}  // namespace overlapscope::analyze::replay
