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

// Slots shared across devices (sized once for the trace, reset after each device, so a device
// costs its own activities, not the trace's iteration or name count): iteration -> index into
// the device's iterations, and compute-kernel name -> dense name slot.
struct SharedSlots {
  std::vector<int32_t> of_iteration;
  std::vector<int32_t> of_name;
};

// The overlap of one device, built in one pass over its activities in start order (Add), then
// finished per iteration (IterationStats), per kernel name (Slowdowns) and for the contention
// sums (Contention).
class DeviceOverlapBuilder {
 public:
  DeviceOverlapBuilder(const Context& ctx, model::DeviceId d, SharedSlots& slots)
      : ctx_(ctx), t_(ctx.t), d_(d), sets_(ctx.dev[d]), slots_(slots) {}

  DeviceOverlap Run(absl::Span<const model::GpuRef> acts) {
    dv_.device = d_;
    dv_.process = t_.ProcessOfDevice(d_);
    FillStats(sets_.compute, sets_.comm, dv_.whole);
    dv_.whole.activities = static_cast<int64_t>(acts.size());
    dv_.exposed_comm = sets_.comm.Subtract(sets_.compute).intervals();
    dv_.hidden_comm = sets_.comm.Intersect(sets_.compute).intervals();
    const std::vector<Interval>& spans = ctx_.act_span[d_];
    for (size_t ai = 0; ai < acts.size(); ++ai) Add(acts[ai], ai, spans[ai]);
    IterationStats();
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
  // Compute/comm intervals tagged with their iteration slot (bit 0 of `tag`: 1 = comm); grouped
  // by a stable counting sort in IterationStats, so each group stays in start order.
  struct Tagged {
    Interval iv;
    int32_t tag;
  };

  void Add(model::GpuRef r, size_t ai, const Interval& span) {
    const ActivityClass c = ctx_.Cls(r);
    if (c == ActivityClass::kSync) return;
    const int32_t it = ctx_.iters.Of(r);
    if (it != model::kNone) AddToIteration(it, c, span);
    if (c == ActivityClass::kCompute)
      AddCompute(ctx_.act_name[d_][ai], it, span);
    else if (c == ActivityClass::kComm)
      AddCollective(r, span);
  }
  void AddToIteration(int32_t it, ActivityClass c, const Interval& span);
  void AddCompute(model::StringId name, int32_t it, const Interval& span);
  void AddCollective(model::GpuRef r, const Interval& span);
  void IterationStats();
  std::vector<int64_t> Slowdowns();
  void Contention(const std::vector<int64_t>& median_alone);

  const Context& ctx_;
  const model::Trace& t_;
  const model::DeviceId d_;
  const DeviceSets& sets_;
  SharedSlots& slots_;
  DeviceOverlap dv_;
  std::vector<int32_t> used_;  // iteration indexes with activity here, in first-seen order
  std::vector<Tagged> tagged_;
  std::vector<IterationOverlap> its_;
  // Durations per compute-kernel name (dense slots), alone and overlapped; overlapped instances
  // kept for the contention sum.
  std::vector<model::StringId> names_used_;
  std::vector<std::vector<int64_t>> alone_, overl_;
  std::vector<OverlappedInstance> overlapped_list_;
  absl::flat_hash_map<model::CollectiveId, bool> seen_collective_;
  size_t comm_cursor_ = 0;
};

// Per-iteration buckets (activities come in start order, so each bucket stays sorted).
void DeviceOverlapBuilder::AddToIteration(int32_t it, ActivityClass c, const Interval& span) {
  const int64_t s = span.start_ns, e = span.end_ns;
  int32_t& slot = slots_.of_iteration[it];
  if (slot < 0) {
    slot = static_cast<int32_t>(its_.size());
    used_.push_back(it);
    IterationOverlap io;
    io.iteration = it;
    io.number = ctx_.iters.iterations[it].number;
    io.gpu_start_ns = s;
    io.gpu_end_ns = e;
    its_.push_back(io);
  }
  IterationOverlap& io = its_[slot];
  io.gpu_start_ns = std::min(io.gpu_start_ns, s);
  io.gpu_end_ns = std::max(io.gpu_end_ns, e);
  ++io.stats.activities;
  if (c == ActivityClass::kCompute || c == ActivityClass::kComm)
    tagged_.push_back({{s, e}, slot * 2 + (c == ActivityClass::kComm ? 1 : 0)});
}

// A compute kernel's duration, filed as overlapped or alone under its name (contention).
void DeviceOverlapBuilder::AddCompute(model::StringId name, int32_t it, const Interval& span) {
  const int64_t s = span.start_ns, e = span.end_ns;
  // Starts are non-decreasing here, so a cursor over the disjoint comm intervals replaces a
  // binary search per instance.
  const auto& cv = sets_.comm.intervals();
  while (comm_cursor_ < cv.size() && cv[comm_cursor_].end_ns <= s) ++comm_cursor_;
  const bool overlapped = e > s && comm_cursor_ < cv.size() && cv[comm_cursor_].start_ns < e;
  int32_t& sl = slots_.of_name[name];
  if (sl < 0) {
    sl = static_cast<int32_t>(names_used_.size());
    names_used_.push_back(name);
    alone_.emplace_back();
    overl_.emplace_back();
  }
  (overlapped ? overl_ : alone_)[sl].push_back(e - s);
  if (overlapped) overlapped_list_.push_back({sl, it, e - s});
}

// The overlap of one collective (all its activities, at its first one), or of one
// communication activity that belongs to no collective.
void DeviceOverlapBuilder::AddCollective(model::GpuRef r, const Interval& span) {
  const int64_t s = span.start_ns, e = span.end_ns;
  model::CollectiveId cid = t_.CollectiveOf(r);
  CollectiveOverlap co;
  co.collective = cid;
  co.first_activity = r;
  co.stream = t_.StreamOf(r);
  std::vector<Interval> own;
  if (cid != model::kNone) {
    if (!seen_collective_.try_emplace(cid, true).second) return;
    const model::Collective& col = t_.collectives()[cid];
    co.name = col.op != 0 ? col.op : ctx_.NameOf(r);
    for (model::GpuRef cr : t_.CollectiveActivities(cid)) own.push_back({t_.StartNs(cr), t_.EndNs(cr)});
  } else {
    co.name = ctx_.NameOf(r);
    own.push_back({s, e});
  }
  IntervalSet own_set = IntervalSet::FromSortedByStart(own);
  co.start_ns = own.front().start_ns;
  co.end_ns = s;
  for (const Interval& iv : own) co.end_ns = std::max(co.end_ns, iv.end_ns);
  co.own_ns = own_set.Length();
  for (const Interval& iv : own_set.intervals()) co.hidden_ns += sets_.compute.CoveredIn(iv.start_ns, iv.end_ns);
  if (co.own_ns > 0) co.overlap_ratio = static_cast<double>(co.hidden_ns) / static_cast<double>(co.own_ns);
  dv_.collectives.push_back(co);
}

// Each iteration's compute and comm sets, from the tagged intervals grouped by iteration and
// class; the activity count was kept as they came.
void DeviceOverlapBuilder::IterationStats() {
  std::vector<size_t> off(2 * its_.size() + 1, 0);
  for (const Tagged& x : tagged_) ++off[x.tag + 1];
  for (size_t k = 1; k < off.size(); ++k) off[k] += off[k - 1];
  std::vector<Interval> grouped(tagged_.size());
  std::vector<size_t> fill(off.begin(), off.end() - 1);
  for (const Tagged& x : tagged_) grouped[fill[x.tag]++] = x.iv;
  const Interval* g = grouped.data();
  for (size_t k = 0; k < its_.size(); ++k) {
    int64_t acts_in = its_[k].stats.activities;
    FillStats(IntervalSet::FromSortedByStart(g + off[2 * k], g + off[2 * k + 1]),
              IntervalSet::FromSortedByStart(g + off[2 * k + 1], g + off[2 * k + 2]), its_[k].stats);
    its_[k].stats.activities = acts_in;
  }
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
    OverlapStats* targets[2] = {
        &dv_.whole, ci.iteration != model::kNone ? &its_[slots_.of_iteration[ci.iteration]].stats : nullptr};
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

void ComputeOverlap(const Context& ctx, std::vector<DeviceOverlap>* out) {
  const model::Trace& t = ctx.t;
  SharedSlots slots{std::vector<int32_t>(ctx.iters.iterations.size(), -1),
                    std::vector<int32_t>(t.strings().size(), -1)};
  for (size_t d = 0; d < t.devices().size(); ++d) {
    auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    if (acts.empty()) continue;
    out->push_back(DeviceOverlapBuilder(ctx, static_cast<model::DeviceId>(d), slots).Run(acts));
  }
}

}  // namespace overlapscope::analyze
