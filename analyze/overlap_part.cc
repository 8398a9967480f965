// One range of a device's activities read for the overlap (overlap_part.h).
#include "analyze/overlap_part.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace overlapscope::analyze {
namespace {

// Fills an OverlapPart from activities [begin, end) of device d, with `slots` its own (reset
// before it returns).
class PartBuilder {
 public:
  PartBuilder(const Context& ctx, model::DeviceId d, SharedSlots& slots, OverlapPart& out)
      : ctx_(ctx), t_(ctx.t), d_(d), sets_(ctx.dev[d]), slots_(slots), p_(out) {}

  void Run(absl::Span<const model::GpuRef> acts, size_t begin, size_t end) {
    const std::vector<Interval>& spans = ctx_.act_span[d_];
    // Starts are non-decreasing, so the first comm interval not ended by the range's first
    // start is where one pass from the device's start would have its cursor.
    if (begin < end) {
      const auto& cv = sets_.comm.intervals();
      const int64_t s0 = spans[begin].start_ns;
      comm_cursor_ = static_cast<size_t>(
          std::partition_point(cv.begin(), cv.end(), [s0](const Interval& iv) { return iv.end_ns <= s0; }) -
          cv.begin());
    }
    for (size_t ai = begin; ai < end; ++ai) Add(acts[ai], ai, spans[ai]);
    for (int32_t it : p_.used) slots_.of_iteration[it] = -1;
    for (model::StringId n : p_.names_used) slots_.of_name[n] = -1;
  }

 private:
  void Add(model::GpuRef r, size_t ai, const Interval& span) {
    const ActivityClass c = ctx_.Cls(r);
    if (c == ActivityClass::kSync) return;
    const int32_t it = ctx_.iters.Of(r);
    int32_t slot = -1;
    if (it != model::kNone) slot = AddToIteration(it, c, span);
    if (c == ActivityClass::kCompute)
      AddCompute(ctx_.act_name[d_][ai], slot, span);
    else if (c == ActivityClass::kComm)
      AddCollective(r, span);
  }
  int32_t AddToIteration(int32_t it, ActivityClass c, const Interval& span);
  void AddCompute(model::StringId name, int32_t slot, const Interval& span);
  void AddCollective(model::GpuRef r, const Interval& span);

  const Context& ctx_;
  const model::Trace& t_;
  const model::DeviceId d_;
  const DeviceSets& sets_;
  SharedSlots& slots_;
  OverlapPart& p_;
  absl::flat_hash_set<model::CollectiveId> seen_collective_;
  size_t comm_cursor_ = 0;
};

// Per-iteration buckets (activities come in start order, so each bucket stays sorted); returns
// the iteration's slot in the part.
int32_t PartBuilder::AddToIteration(int32_t it, ActivityClass c, const Interval& span) {
  const int64_t s = span.start_ns, e = span.end_ns;
  int32_t& slot = slots_.of_iteration[it];
  if (slot < 0) {
    slot = static_cast<int32_t>(p_.its.size());
    p_.used.push_back(it);
    IterationOverlap io;
    io.iteration = it;
    io.number = ctx_.iters.iterations[it].number;
    io.gpu_start_ns = s;
    io.gpu_end_ns = e;
    p_.its.push_back(io);
  }
  IterationOverlap& io = p_.its[slot];
  io.gpu_start_ns = std::min(io.gpu_start_ns, s);
  io.gpu_end_ns = std::max(io.gpu_end_ns, e);
  ++io.stats.activities;
  if (c == ActivityClass::kCompute || c == ActivityClass::kComm)
    p_.tagged.push_back({{s, e}, slot * 2 + (c == ActivityClass::kComm ? 1 : 0)});
  return slot;
}

// A compute kernel's duration, filed as overlapped or alone under its name (contention).
void PartBuilder::AddCompute(model::StringId name, int32_t slot, const Interval& span) {
  const int64_t s = span.start_ns, e = span.end_ns;
  // Starts are non-decreasing here, so a cursor over the disjoint comm intervals replaces a
  // binary search per instance.
  const auto& cv = sets_.comm.intervals();
  while (comm_cursor_ < cv.size() && cv[comm_cursor_].end_ns <= s) ++comm_cursor_;
  const bool overlapped = e > s && comm_cursor_ < cv.size() && cv[comm_cursor_].start_ns < e;
  int32_t& sl = slots_.of_name[name];
  if (sl < 0) {
    sl = static_cast<int32_t>(p_.names_used.size());
    p_.names_used.push_back(name);
    p_.alone.emplace_back();
    p_.overl.emplace_back();
  }
  (overlapped ? p_.overl : p_.alone)[sl].push_back(e - s);
  if (overlapped) p_.overlapped.push_back({sl, slot, e - s});
}

// The overlap of one collective (all its activities, at its first one in the part), or of one
// communication activity that belongs to no collective.
void PartBuilder::AddCollective(model::GpuRef r, const Interval& span) {
  const int64_t s = span.start_ns, e = span.end_ns;
  model::CollectiveId cid = t_.CollectiveOf(r);
  CollectiveOverlap co;
  co.collective = cid;
  co.first_activity = r;
  co.stream = t_.StreamOf(r);
  std::vector<Interval> own;
  if (cid != model::kNone) {
    if (!seen_collective_.insert(cid).second) return;
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
  p_.collectives.push_back(co);
}

}  // namespace

void FillOverlapPart(const Context& ctx, model::DeviceId d, absl::Span<const model::GpuRef> acts, size_t begin,
                     size_t end, SharedSlots& slots, OverlapPart* out) {
  PartBuilder(ctx, d, slots, *out).Run(acts, begin, end);
}

}  // namespace overlapscope::analyze
