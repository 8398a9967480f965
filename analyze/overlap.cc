// Overlap per device and window (METRICS.md §2) and HTA's number for comparison.
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "analyze/context.h"
#include "analyze/overlap_part.h"
#include "analyze/strings.h"
#include "base/phase_log.h"
#include "base/run_all.h"
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

// The overlap of one device: its activities in ranges at once (PartBuilder), merged in range
// order, then finished per iteration (IterationStats), per kernel name (Slowdowns) and for the
// contention sums (Contention).
class DeviceOverlapBuilder {
 public:
  DeviceOverlapBuilder(const Context& ctx, model::DeviceId d, SharedSlots& slots)
      : ctx_(ctx), t_(ctx.t), d_(d), sets_(ctx.dev[d]), slots_(slots) {}

  DeviceOverlap Run(absl::Span<const model::GpuRef> acts, std::vector<SharedSlots>& part_slots, size_t min_chunk) {
    dv_.device = d_;
    dv_.process = t_.ProcessOfDevice(d_);
    FillStats(sets_.compute, sets_.comm, dv_.whole);
    dv_.whole.activities = static_cast<int64_t>(acts.size());
    dv_.exposed_comm = sets_.comm.Subtract(sets_.compute).intervals();
    dv_.hidden_comm = sets_.comm.Intersect(sets_.compute).intervals();
    const std::vector<size_t> bounds = base::RangeBounds(ctx_.opt.threads, acts.size(), min_chunk);
    std::vector<OverlapPart> parts(bounds.size() - 1);
    if (part_slots.size() < parts.size()) part_slots.resize(parts.size());
    std::vector<std::function<void()>> tasks;
    for (size_t k = 0; k < parts.size(); ++k)
      tasks.emplace_back([&, k] {
        SharedSlots& sl = part_slots[k];
        if (sl.of_iteration.empty()) {  // sized on the thread that fills it
          sl.of_iteration.assign(ctx_.iters.iterations.size(), -1);
          sl.of_name.assign(t_.strings().size(), -1);
        }
        FillOverlapPart(ctx_, d_, acts, bounds[k], bounds[k + 1], sl, &parts[k]);
      });
    {
      base::PhaseSpan s_("ov parts");
      base::RunAll(ctx_.opt.threads, tasks);
    }
    {
      base::PhaseSpan s_("ov merge");
      MergeParts(parts);
    }
    base::PhaseSpan s_("ov contention");
    Contention(Slowdowns());
    dv_.whole.net_overlap_gain_ns = dv_.whole.hidden_comm_ns - dv_.whole.contention_ns;
    for (auto& io : its_) io.stats.net_overlap_gain_ns = io.stats.hidden_comm_ns - io.stats.contention_ns;
    std::sort(its_.begin(), its_.end(),
              [](const IterationOverlap& a, const IterationOverlap& b) { return a.iteration < b.iteration; });
    dv_.iterations = std::move(its_);
    for (int32_t it : used_) slots_.of_iteration[it] = -1;
    for (model::StringId n : names_used_) slots_.of_name[n] = -1;
    return std::move(dv_);
  }

 private:
  // A part's slots among the device's: part slot -> device slot, for its iterations and names.
  struct PartSlots {
    std::vector<int32_t> it, name;
  };
  void MergeParts(std::vector<OverlapPart>& parts);
  void Slots(OverlapPart& p, uint32_t part, PartSlots* ps);
  void IterationStats(const std::vector<OverlapPart>& parts, const std::vector<PartSlots>& ps);
  std::vector<int64_t> Slowdowns();
  void Contention(const std::vector<int64_t>& median_alone);

  const Context& ctx_;
  const model::Trace& t_;
  const model::DeviceId d_;
  const DeviceSets& sets_;
  SharedSlots& slots_;
  DeviceOverlap dv_;
  std::vector<int32_t> used_;  // iteration indexes with activity here, in first-seen order
  std::vector<IterationOverlap> its_;
  // Durations per compute-kernel name (dense slots), alone and overlapped; overlapped instances
  // kept for the contention sum.
  std::vector<model::StringId> names_used_;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> name_src_;  // per name slot: (part, part's slot)
  std::vector<std::vector<int64_t>> alone_, overl_;
  std::vector<OverlappedInstance> overlapped_list_;
  absl::flat_hash_set<model::CollectiveId> seen_collective_;
};

// A part's slots, parts in order: its iterations and names take the device's slots in
// first-seen order (each name's lists noted with the part as a source), and a collective seen in
// an earlier part keeps that part's entry (its first activity on the device).
void DeviceOverlapBuilder::Slots(OverlapPart& p, uint32_t part, PartSlots* ps) {
  ps->it.resize(p.its.size());
  ps->name.resize(p.names_used.size());
  for (size_t k = 0; k < p.its.size(); ++k) {
    const IterationOverlap& x = p.its[k];
    int32_t& slot = slots_.of_iteration[x.iteration];
    if (slot < 0) {
      slot = static_cast<int32_t>(its_.size());
      used_.push_back(x.iteration);
      its_.push_back(x);
    } else {
      IterationOverlap& io = its_[slot];
      io.gpu_start_ns = std::min(io.gpu_start_ns, x.gpu_start_ns);
      io.gpu_end_ns = std::max(io.gpu_end_ns, x.gpu_end_ns);
      io.stats.activities += x.stats.activities;
    }
    ps->it[k] = slot;
  }
  for (size_t k = 0; k < p.names_used.size(); ++k) {
    int32_t& sl = slots_.of_name[p.names_used[k]];
    if (sl < 0) {
      sl = static_cast<int32_t>(names_used_.size());
      names_used_.push_back(p.names_used[k]);
      name_src_.emplace_back();
    }
    name_src_[sl].push_back({part, static_cast<uint32_t>(k)});
    ps->name[k] = sl;
  }
  for (CollectiveOverlap& co : p.collectives)
    if (co.collective == model::kNone || seen_collective_.insert(co.collective).second)
      dv_.collectives.push_back(std::move(co));
}

// The parts in range order, into what one pass over the device gives: the slots (Slots, in
// order), then at once each name's durations joined in part order, the overlapped instances
// (each part its own stretch) and the iterations' sets (IterationStats).
void DeviceOverlapBuilder::MergeParts(std::vector<OverlapPart>& parts) {
  std::vector<PartSlots> ps(parts.size());
  for (size_t k = 0; k < parts.size(); ++k) Slots(parts[k], static_cast<uint32_t>(k), &ps[k]);
  const int threads = ctx_.opt.threads;
  alone_.resize(names_used_.size());
  overl_.resize(names_used_.size());
  std::vector<size_t> inst_at(parts.size() + 1, 0);
  for (size_t k = 0; k < parts.size(); ++k) inst_at[k + 1] = inst_at[k] + parts[k].overlapped.size();
  overlapped_list_.resize(inst_at.back());
  auto join = [](std::vector<int64_t>& to, std::vector<int64_t>& from) {
    if (to.empty())
      to = std::move(from);
    else
      to.insert(to.end(), from.begin(), from.end());
  };
  base::RunAll(threads, {[&] {
                           base::ParallelFor(threads, names_used_.size(), 16, [&](size_t s0, size_t s1) {
                             for (size_t sl = s0; sl < s1; ++sl)
                               for (const auto& [k, j] : name_src_[sl]) {
                                 join(alone_[sl], parts[k].alone[j]);
                                 join(overl_[sl], parts[k].overl[j]);
                               }
                           });
                         },
                         [&] {
                           base::ParallelFor(threads, parts.size(), 1, [&](size_t k0, size_t k1) {
                             for (size_t k = k0; k < k1; ++k)
                               for (size_t i = 0; i < parts[k].overlapped.size(); ++i) {
                                 const OverlappedInstance& o = parts[k].overlapped[i];
                                 overlapped_list_[inst_at[k] + i] = {ps[k].name[o.name_slot],
                                                                     o.it_slot < 0 ? -1 : ps[k].it[o.it_slot], o.dur};
                               }
                           });
                         },
                         [&] { IterationStats(parts, ps); }});
}

// Each iteration's compute and comm sets, from the parts' tagged intervals grouped by iteration
// and class in part order (a stable counting sort: each group stays in start order; each part
// scatters its own), then the iterations at once; the activity count was kept as they came.
void DeviceOverlapBuilder::IterationStats(const std::vector<OverlapPart>& parts, const std::vector<PartSlots>& ps) {
  const int threads = ctx_.opt.threads;
  const size_t tags = 2 * its_.size(), np = parts.size();
  auto tag = [&](size_t k, const Tagged& x) { return static_cast<size_t>(ps[k].it[x.tag >> 1]) * 2 + (x.tag & 1); };
  std::vector<size_t> at(np * tags, 0);  // at[k * tags + g]: part k's count of group g, then where they go
  base::ParallelFor(threads, np, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (const Tagged& x : parts[k].tagged) ++at[k * tags + tag(k, x)];
  });
  std::vector<size_t> off(tags + 1, 0);
  for (size_t g = 0, pos = 0; g < tags; ++g) {
    off[g] = pos;
    for (size_t k = 0; k < np; ++k) pos += std::exchange(at[k * tags + g], pos);
    off[g + 1] = pos;
  }
  std::vector<Interval> grouped(off[tags]);
  base::ParallelFor(threads, np, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (const Tagged& x : parts[k].tagged) grouped[at[k * tags + tag(k, x)]++] = x.iv;
  });
  const Interval* g = grouped.data();
  base::ParallelFor(threads, its_.size(), 64, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) {
      int64_t acts_in = its_[k].stats.activities;
      FillStats(IntervalSet::FromSortedByStart(g + off[2 * k], g + off[2 * k + 1]),
                IntervalSet::FromSortedByStart(g + off[2 * k + 1], g + off[2 * k + 2]), its_[k].stats);
      its_[k].stats.activities = acts_in;
    }
  });
}

// Contention: per compute kernel name, the median duration overlapped against the median
// alone. Returns the median alone per name slot (-1: never ran alone), which Contention needs.
std::vector<int64_t> DeviceOverlapBuilder::Slowdowns() {
  std::vector<int64_t> median_alone(names_used_.size(), -1);
  for (size_t k = 0; k < names_used_.size(); ++k)
    if (!alone_[k].empty()) median_alone[k] = MedianNs(alone_[k]);
  for (size_t k = 0; k < names_used_.size(); ++k) {
    if (overl_[k].empty() || median_alone[k] <= 0) continue;
    KernelSlowdown ks;
    ks.name = names_used_[k];
    ks.overlapped_count = static_cast<int64_t>(overl_[k].size());
    ks.alone_count = static_cast<int64_t>(alone_[k].size());
    ks.median_overlapped_ns = MedianNs(overl_[k]);
    ks.median_alone_ns = median_alone[k];
    ks.slowdown = static_cast<double>(ks.median_overlapped_ns) / static_cast<double>(ks.median_alone_ns);
    dv_.slowdowns.push_back(ks);
  }
  std::sort(dv_.slowdowns.begin(), dv_.slowdowns.end(), [](const KernelSlowdown& a, const KernelSlowdown& b) {
    return a.overlapped_count != b.overlapped_count ? a.overlapped_count > b.overlapped_count : a.name < b.name;
  });
  return median_alone;
}

// The time overlapped compute kernels lost to contention (their duration over their name's
// median alone), for the device and for their iteration.
void DeviceOverlapBuilder::Contention(const std::vector<int64_t>& median_alone) {
  for (const OverlappedInstance& ci : overlapped_list_) {
    OverlapStats* targets[2] = {&dv_.whole, ci.it_slot >= 0 ? &its_[ci.it_slot].stats : nullptr};
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
}

}  // namespace

void ComputeOverlap(const Context& ctx, std::vector<DeviceOverlap>* out, size_t min_chunk) {
  const model::Trace& t = ctx.t;
  SharedSlots slots{std::vector<int32_t>(ctx.iters.iterations.size(), -1),
                    std::vector<int32_t>(t.strings().size(), -1)};
  std::vector<SharedSlots> part_slots;
  for (size_t d = 0; d < t.devices().size(); ++d) {
    auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    if (acts.empty()) continue;
    out->push_back(DeviceOverlapBuilder(ctx, static_cast<model::DeviceId>(d), slots).Run(acts, part_slots, min_chunk));
  }
}

}  // namespace overlapscope::analyze
