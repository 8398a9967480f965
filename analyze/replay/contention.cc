#include "analyze/replay/contention.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analyze/graph/device_sms.h"
#include "analyze/replay/both.h"
#include "analyze/replay/last_round.h"
#include "analyze/replay/placed.h"
#include "analyze/replay/residency.h"
#include "analyze/replay/spans.h"

namespace overlapscope::analyze::replay {
namespace {

using placed::Meeting;
using placed::MeetingCursor;
using placed::Placed;
using placed::PrefixMaxEnd;
using placed::SortByStart;

// Share of [lo, hi) covered by merged list u.
double Covered(const std::vector<Span>& u, int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  auto it = std::upper_bound(u.begin(), u.end(), lo, [](int64_t x, const Span& s) { return x < s.second; });
  int64_t c = 0;
  for (; it != u.end() && it->first < hi; ++it) c += std::min(hi, it->second) - std::max(lo, it->first);
  return static_cast<double>(c) / static_cast<double>(hi - lo);
}

BlockFootprint FootprintOf(const model::Trace& t, const graph::Graph& graph, int32_t v) {
  const model::GpuRef r = graph.Ref(v);
  return r.kind == model::GpuKind::kKernel ? FootprintOfKernel(t.kernels()[r.index]) : BlockFootprint{};
}

// The kernel whose end released v: v's binding predecessors followed through GPU work that is
// neither compute nor communication (a memset between two GEMMs); -1 when a host call or
// nothing bound it. A collective and a compute kernel released by the same end start together.
int32_t ReleasingKernel(const NodeAttrs& a, const Schedule& s, int32_t v) {
  int32_t u = s.bind_start[v];
  for (int hops = 0; hops < 16 && u >= 0 && u < a.num_gpu; ++hops) {
    if (s.bind_dep[v] != Dep::kAfterEnd) return -1;
    if (a.cls[u] == GpuClass::kCompute || a.cls[u] == GpuClass::kComm) return u;
    v = u;
    u = s.bind_start[u];
  }
  return -1;
}

class DeviceModel {
 public:
  DeviceModel(const model::Trace& t, const graph::Graph& graph, const NodeAttrs& a, const SimGraph& g,
              const Schedule& s, const OpShapeIndex& shapes, int32_t sms)
      : t_(t), graph_(graph), a_(a), g_(g), s_(s), shapes_(shapes), sms_(sms) {}

  std::vector<Placed> compute, comm, rec_comm;  // filled by the caller

  // The waits of the communication kernels for SMs (into out.waits), then their placement with
  // them. `roots`: per GPU node, whether it is the releasing kernel of a communication kernel.
  void Waits(ContentionFactors& out, const std::vector<uint8_t>& waited, const std::vector<bool>& roots) {
    SortByStart(compute);
    const std::vector<int64_t> max_end = PrefixMaxEnd(compute);
    std::vector<Span> rec_compute;
    rec_compute.reserve(compute.size());
    // Releasing kernel -> the first K it releases; only the communication kernels' releasing
    // kernels are ever looked up (one each at most: no rehash).
    absl::flat_hash_map<int32_t, const Placed*> first_released;
    first_released.reserve(comm.size());
    for (const Placed& k : compute) {
      rec_compute.push_back({g_.rec_start[k.v], g_.RecEnd(k.v)});
      const int32_t root = ReleasingKernel(a_, s_, k.v);
      if (root >= 0 && roots[root]) first_released.try_emplace(root, &k);
    }
    rec_compute = MergeSpans(std::move(rec_compute));
    MeetingCursor running(compute, max_end);
    for (Placed& c : comm) {
      const int64_t ready = s_.start[c.v];
      int64_t free = ready;
      const Placed* by = nullptr;
      LastRoundWait kind = LastRoundWait::kNone;
      // A recorded start inside compute already waited as recorded; a kernel given its wait in an
      // earlier round starts where the schedule put it (a second wait is not added: placing it
      // after that one would slow nothing here that the simulation then runs beside it).
      const bool has_wait = static_cast<size_t>(c.v) < waited.size() && waited[c.v];
      c.in_last_round = has_wait && waited[c.v] == kWaitedInLastRound;
      if (!has_wait && !InsideAny(rec_compute, g_.rec_start[c.v])) {
        auto consider = [&](const Placed& k) {
          LastRoundWait w = LastRoundWait::kNone;
          if (const int64_t at = FreeAt(k, c, ready, &w); at > free) free = at, by = &k, kind = w;
        };
        // Running when the collective became ready (one starting at the same instant: the
        // collective, issued first, gets the SMs).
        running.Each(ready, ready + 1, [&](const Placed& k) {
          if (k.start < ready) consider(k);
        });
        if (auto it = first_released.find(ReleasingKernel(a_, s_, c.v));
            it != first_released.end() && it->second->start >= ready)
          consider(*it->second);
      }
      if (by) {
        // In the last round: a lag on the GEMM's end (the round moves with it if it is slowed).
        if (free >= by->end || kind == LastRoundWait::kInRound)
          out.waits.push_back({by->v, c.v, Dep::kAfterEnd, free - by->end, kind});
        else
          out.waits.push_back({by->v, c.v, Dep::kAfterStart, free - by->start, kind});
        c.in_last_round = kind == LastRoundWait::kInRound;
      }
      c.start = free;
      c.end = s_.end[c.v] + (free - ready);
    }
    SortByStart(comm);
    SortByStart(rec_comm);
  }

  void Prepare() {
    comm_max_ = PrefixMaxEnd(comm);
    rec_max_ = PrefixMaxEnd(rec_comm);
    pred_at_.emplace(comm, comm_max_);
    rec_at_.emplace(rec_comm, rec_max_);
  }

  // The factor of compute kernel k (1 when its SMs are as recorded); `sd` > 0: the trace's own
  // slowdown of its name (by_trace set).
  double FactorWith(const Placed& k, double sd, bool& by_trace) {
    const int64_t r0 = g_.rec_start[k.v], r1 = g_.RecEnd(k.v);
    const int64_t p0 = s_.start[k.v], dur = g_.dur[k.v];
    HoldSteps rec, pred;
    std::vector<Span> rec_u, pred_u;
    // A collective in k's last round holds none of k's SMs (it started inside k, where k put it).
    auto hold_pred = [&](const Placed& c) {
      if (!(c.in_last_round && c.start >= p0)) Hold(c, pred, pred_u);
    };
    rec_at_->Each(r0, r1, [&](const Placed& c) { Hold(c, rec, rec_u); });
    pred_at_->Each(p0, p0 + dur, hold_pred);
    if (rec.empty() && pred.empty()) return 1;
    by_trace = sd > 0;
    if (by_trace) {
      const double o_rec = Covered(MergeSpans(std::move(rec_u)), r0, r1);
      const double o_pred = Covered(MergeSpans(std::move(pred_u)), p0, p0 + dur);
      return (1 + (sd - 1) * o_pred) / (1 + (sd - 1) * o_rec);
    }
    std::sort(rec.begin(), rec.end());
    std::sort(pred.begin(), pred.end());
    const int32_t want = SmsOccupied(Footprint(k), sms_);
    const double alone = r1 > r0 ? static_cast<double>(FluidWork(r0, r1, want, sms_, rec)) / (r1 - r0) : 1.0;
    const int64_t work = static_cast<int64_t>(std::llround(static_cast<double>(dur) * alone));
    int64_t end = FluidEnd(p0, work, want, sms_, pred);
    // Slowed past its own end, it meets more communication: again over the longer span.
    for (int pass = 0; pass < 3 && end > p0 + dur; ++pass) {
      pred.clear();
      Meeting(comm, comm_max_, p0, end, hold_pred);
      std::sort(pred.begin(), pred.end());
      const int64_t next = FluidEnd(p0, work, want, sms_, pred);
      if (next == end) break;
      end = next;
    }
    return dur > 0 ? static_cast<double>(end - p0) / dur : 1.0;
  }

 private:
  BlockFootprint Footprint(const Placed& k) const { return FootprintOf(t_, graph_, k.v); }  // a compute kernel's

  static bool InsideAny(const std::vector<Span>& u, int64_t t) {
    auto it = std::upper_bound(u.begin(), u.end(), t, [](int64_t x, const Span& s) { return x < s.second; });
    return it != u.end() && it->first < t;
  }

  // When kernel k leaves room for communication kernel c that became ready at `ready`; *kind:
  // what a one-wave k's last tile round made of it.
  int64_t FreeAt(const Placed& k, const Placed& c, int64_t ready, LastRoundWait* kind) const {
    const BlockFootprint kfp = Footprint(k);
    const int32_t held = SmsOccupied(c.fp, sms_);
    if (FitsBeside(kfp, c.fp) || sms_ - SmsOccupied(kfp, sms_) >= held) return ready;
    const int64_t per_wave = static_cast<int64_t>(sms_) * BlocksPerSm(kfp);
    const int64_t waves = kfp.blocks > 0 ? (kfp.blocks + per_wave - 1) / per_wave : 1;
    if (waves > 1) return std::min(k.end, std::max(ready, k.start) + (k.end - k.start) / waves);
    const model::GpuRef r = graph_.Ref(k.v);
    if (r.kind != model::GpuKind::kKernel || BlocksPerSm(kfp) != 1) return k.end;
    // A persistent GEMM: its last tile round (last_round.h). A copy-engine collective's rate
    // beside the round was never measured: its end, as before.
    const double rate = c.holds && !shapes_.empty() ? LastRoundRate(t_.str(a_.Name(c.v))) : 0.0;
    return StartInLastRound(t_, shapes_, t_.kernels()[r.index], kfp.blocks, sms_, k.start, k.end, rate, held, ready,
                            kind);
  }

  void Hold(const Placed& c, HoldSteps& steps, std::vector<Span>& u) const {
    if (!c.holds) return;
    const int32_t held = SmsOccupied(c.fp, sms_);
    steps.push_back({c.start, held});
    steps.push_back({c.end, -held});
    u.push_back({c.start, c.end});
  }

  const model::Trace& t_;
  const graph::Graph& graph_;
  const NodeAttrs& a_;
  const SimGraph& g_;
  const Schedule& s_;
  const OpShapeIndex& shapes_;
  const int32_t sms_;
  std::vector<int64_t> comm_max_, rec_max_;
  std::optional<MeetingCursor> pred_at_, rec_at_;  // over comm and rec_comm (Prepare())
};

}  // namespace

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
