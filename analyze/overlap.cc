// Overlap per device and window (METRICS.md §2) and HTA's number for comparison.
#include <algorithm>
#include <cmath>

#include "analyze/context.h"
#include "analyze/strings.h"
#include "model/bounds.h"

namespace overlapscope::analyze {
namespace {

void FillStats(const IntervalSet& c, const IntervalSet& m, OverlapStats& s) {
  s.comm_ns = m.Length();
  s.compute_ns = c.Length();
  s.hidden_comm_ns = m.IntersectLength(c);
  s.exposed_comm_ns = s.comm_ns - s.hidden_comm_ns;
  if (s.comm_ns > 0) s.overlap_ratio = static_cast<double>(s.hidden_comm_ns) / static_cast<double>(s.comm_ns);
  if (s.compute_ns > 0)
    s.compute_share_overlapped = static_cast<double>(s.hidden_comm_ns) / static_cast<double>(s.compute_ns);
}

// An overlapped compute kernel: its name's dense slot, duration and iteration.
struct OverlappedInstance {
  int32_t name_slot;
  int32_t iteration;
  int64_t dur;
};

}  // namespace

void ComputeOverlap(const Context& ctx, std::vector<DeviceOverlap>* out) {
  const model::Trace& t = ctx.t;
  const size_t n_iter = ctx.iters.iterations.size();
  std::vector<int32_t> slot(n_iter, -1);
  std::vector<int32_t> slot_of_name(t.strings().size(), -1);
  for (size_t d = 0; d < t.devices().size(); ++d) {
    auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    if (acts.empty()) continue;
    const DeviceSets& sets = ctx.dev[d];
    DeviceOverlap dv;
    dv.device = static_cast<model::DeviceId>(d);
    dv.process = t.ProcessOfDevice(dv.device);
    FillStats(sets.compute, sets.comm, dv.whole);
    dv.whole.activities = static_cast<int64_t>(acts.size());
    dv.exposed_comm = sets.comm.Subtract(sets.compute).intervals();
    dv.hidden_comm = sets.comm.Intersect(sets.compute).intervals();

    // Per-iteration buckets (activities are in start order, so each bucket stays sorted).
    std::vector<int32_t> used;  // iteration indexes with activity here, in first-seen order
    // Compute/comm intervals tagged with their iteration slot (bit 0 of `tag`: 1 = comm); grouped
    // by a stable counting sort afterwards, so each group stays in start order.
    struct Tagged {
      Interval iv;
      int32_t tag;
    };
    std::vector<Tagged> tagged;
    std::vector<IterationOverlap> its;
    // Durations per compute-kernel name (dense slots; slot_of_name is shared across devices and
    // reset after each), alone and overlapped; overlapped instances kept for the contention sum.
    std::vector<model::StringId> names_used;
    std::vector<std::vector<int64_t>> alone, overl;
    std::vector<OverlappedInstance> overlapped_list;
    absl::flat_hash_map<model::CollectiveId, bool> seen_collective;
    const std::vector<Interval>& spans = ctx.act_span[d];
    size_t comm_cursor = 0;
    for (size_t ai = 0; ai < acts.size(); ++ai) {
      model::GpuRef r = acts[ai];
      ActivityClass c = ctx.Cls(r);
      if (c == ActivityClass::kSync) continue;
      int64_t s = spans[ai].start_ns, e = spans[ai].end_ns;
      int32_t it = ctx.iters.Of(r);
      if (it != model::kNone) {
        if (slot[it] < 0) {
          slot[it] = static_cast<int32_t>(its.size());
          used.push_back(it);
          IterationOverlap io;
          io.iteration = it;
          io.number = ctx.iters.iterations[it].number;
          io.gpu_start_ns = s;
          io.gpu_end_ns = e;
          its.push_back(io);
        }
        IterationOverlap& io = its[slot[it]];
        io.gpu_start_ns = std::min(io.gpu_start_ns, s);
        io.gpu_end_ns = std::max(io.gpu_end_ns, e);
        ++io.stats.activities;
        if (c == ActivityClass::kCompute || c == ActivityClass::kComm)
          tagged.push_back({{s, e}, slot[it] * 2 + (c == ActivityClass::kComm ? 1 : 0)});
      }
      if (c == ActivityClass::kCompute) {
        // Starts are non-decreasing here, so a cursor over the disjoint comm intervals replaces
        // a binary search per instance.
        const auto& cv = sets.comm.intervals();
        while (comm_cursor < cv.size() && cv[comm_cursor].end_ns <= s) ++comm_cursor;
        bool overlapped = e > s && comm_cursor < cv.size() && cv[comm_cursor].start_ns < e;
        model::StringId name = ctx.act_name[d][ai];
        int32_t& sl = slot_of_name[name];
        if (sl < 0) {
          sl = static_cast<int32_t>(names_used.size());
          names_used.push_back(name);
          alone.emplace_back();
          overl.emplace_back();
        }
        (overlapped ? overl : alone)[sl].push_back(e - s);
        if (overlapped) overlapped_list.push_back({sl, it, e - s});
      } else if (c == ActivityClass::kComm) {
        model::CollectiveId cid = r.kind == model::GpuKind::kKernel   ? t.kernels()[r.index].collective
                                  : r.kind == model::GpuKind::kMemcpy ? t.memcpys()[r.index].collective
                                                                      : model::kNone;
        CollectiveOverlap co;
        co.collective = cid;
        co.first_activity = r;
        co.stream = t.StreamOf(r);
        std::vector<Interval> own;
        if (cid != model::kNone) {
          if (!seen_collective.try_emplace(cid, true).second) continue;
          const model::Collective& col = t.collectives()[cid];
          co.name = col.op != 0 ? col.op : ctx.NameOf(r);
          for (model::GpuRef cr : t.CollectiveActivities(cid)) own.push_back({t.StartNs(cr), t.EndNs(cr)});
        } else {
          co.name = ctx.NameOf(r);
          own.push_back({s, e});
        }
        IntervalSet own_set = IntervalSet::FromSortedByStart(own);
        co.start_ns = own.front().start_ns;
        co.end_ns = s;
        for (const Interval& iv : own) co.end_ns = std::max(co.end_ns, iv.end_ns);
        co.own_ns = own_set.Length();
        for (const Interval& iv : own_set.intervals()) co.hidden_ns += sets.compute.CoveredIn(iv.start_ns, iv.end_ns);
        if (co.own_ns > 0) co.overlap_ratio = static_cast<double>(co.hidden_ns) / static_cast<double>(co.own_ns);
        dv.collectives.push_back(co);
      }
    }
    {
      std::vector<size_t> off(2 * its.size() + 1, 0);
      for (const Tagged& x : tagged) ++off[x.tag + 1];
      for (size_t k = 1; k < off.size(); ++k) off[k] += off[k - 1];
      std::vector<Interval> grouped(tagged.size());
      std::vector<size_t> fill(off.begin(), off.end() - 1);
      for (const Tagged& x : tagged) grouped[fill[x.tag]++] = x.iv;
      const Interval* g = grouped.data();
      for (size_t k = 0; k < its.size(); ++k) {
        int64_t acts_in = its[k].stats.activities;
        FillStats(IntervalSet::FromSortedByStart(g + off[2 * k], g + off[2 * k + 1]),
                  IntervalSet::FromSortedByStart(g + off[2 * k + 1], g + off[2 * k + 2]), its[k].stats);
        its[k].stats.activities = acts_in;
      }
    }

    // Contention: median "alone" duration per compute kernel name.
    std::vector<int64_t> median_alone(names_used.size(), -1);
    for (size_t k = 0; k < names_used.size(); ++k)
      if (!alone[k].empty()) median_alone[k] = MedianNs(alone[k]);
    for (size_t k = 0; k < names_used.size(); ++k) {
      if (overl[k].empty() || median_alone[k] <= 0) continue;
      KernelSlowdown ks;
      ks.name = names_used[k];
      ks.overlapped_count = static_cast<int64_t>(overl[k].size());
      ks.alone_count = static_cast<int64_t>(alone[k].size());
      ks.median_overlapped_ns = MedianNs(overl[k]);
      ks.median_alone_ns = median_alone[k];
      ks.slowdown = static_cast<double>(ks.median_overlapped_ns) / static_cast<double>(ks.median_alone_ns);
      dv.slowdowns.push_back(ks);
    }
    std::sort(dv.slowdowns.begin(), dv.slowdowns.end(), [](const KernelSlowdown& a, const KernelSlowdown& b) {
      return a.overlapped_count != b.overlapped_count ? a.overlapped_count > b.overlapped_count : a.name < b.name;
    });
    for (const OverlappedInstance& ci : overlapped_list) {
      OverlapStats* targets[2] = {&dv.whole, ci.iteration != model::kNone ? &its[slot[ci.iteration]].stats : nullptr};
      int64_t med = median_alone[ci.name_slot];
      for (OverlapStats* s : targets) {
        if (s == nullptr) continue;
        ++s->overlapped_compute_instances;
        if (med < 0)
          ++s->contention_unknown_instances;
        else
          s->contention_ns = model::SatAdd(s->contention_ns, ci.dur - med);
      }
    }
    dv.whole.net_overlap_gain_ns = dv.whole.hidden_comm_ns - dv.whole.contention_ns;
    for (auto& io : its) io.stats.net_overlap_gain_ns = io.stats.hidden_comm_ns - io.stats.contention_ns;
    std::sort(its.begin(), its.end(),
              [](const IterationOverlap& a, const IterationOverlap& b) { return a.iteration < b.iteration; });
    dv.iterations = std::move(its);
    for (int32_t it : used) slot[it] = -1;
    for (model::StringId n : names_used) slot_of_name[n] = -1;
    out->push_back(std::move(dv));
  }
}

}  // namespace overlapscope::analyze
