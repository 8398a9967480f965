// Straggler causes (METRICS §8): the late and the median rank's own critical paths between their
// previous collective and their arrival, compared name by name.
#include "analyze/straggler_causes.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyze/name_sums.h"
#include "analyze/path_walker.h"

namespace overlapscope::analyze {

using model::CollectiveId;
using model::kNone;

namespace {

// Categories whose path segments are compared name by name: GPU activities, and host time inside
// a recorded op, call or range (launch work and blocking calls).
bool IsNamedCategory(PathCategory c) {
  return IsGpuCategory(c) || c == PathCategory::kHostLaunch || c == PathCategory::kHostBlocked;
}

// Per thread, the record_function / NVTX ranges that are not iterations, by start: host time is
// also named by the innermost of them around it, so that a user's range (`data_prep`) is named
// with all the ops inside it, not only split among them.
class UserRanges {
 public:
  UserRanges(const model::Trace& t, const IterationAssignment& ia) : t_(t), by_thread_(t.threads().size()) {
    absl::flat_hash_set<model::StringId> steps;
    for (const Iteration& it : ia.iterations) steps.insert(it.name);
    for (size_t i = 0; i < t.ranges().size(); ++i) {
      const model::Range& r = t.ranges()[i];
      const bool user = r.kind == model::RangeKind::kUserAnnotation || r.kind == model::RangeKind::kNvtx;
      if (user && r.thread >= 0 && static_cast<size_t>(r.thread) < by_thread_.size() && !steps.contains(r.name))
        by_thread_[r.thread].push_back(static_cast<int32_t>(i));
    }
    for (auto& v : by_thread_)
      std::stable_sort(v.begin(), v.end(),
                       [&](int32_t a, int32_t b) { return t.ranges()[a].start_ns < t.ranges()[b].start_ns; });
  }
  // The name of the innermost such range of `th` around `ns` (the latest-starting one that
  // contains it; a bounded look back), 0 when none.
  model::StringId Around(model::ThreadId th, int64_t ns) const {
    if (th < 0 || static_cast<size_t>(th) >= by_thread_.size()) return 0;
    const auto& v = by_thread_[th];
    auto it =
        std::upper_bound(v.begin(), v.end(), ns, [&](int64_t x, int32_t i) { return x < t_.ranges()[i].start_ns; });
    for (int k = 0; it != v.begin() && k < 256; ++k) {
      --it;
      if (t_.ranges()[*it].end_ns > ns) return t_.ranges()[*it].name;
    }
    return 0;
  }

 private:
  const model::Trace& t_;
  std::vector<std::vector<int32_t>> by_thread_;
};

// One side of the comparison: a rank's own path from its window start to its arrival; its GPU
// names go to the caller's NameSums.
struct Side {
  int64_t window_start = 0;
  PathComposition path;
};

class Comparer {
 public:
  explicit Comparer(const PathIndex& ix)
      : ix_(ix),
        t_(ix.trace()),
        walker_(ix),
        ranges_(ix.trace(), *ix.inputs().iterations),
        late_(ix.trace().strings().size()),
        median_(ix.trace().strings().size()) {
    by_device_.resize(t_.devices().size());
    pos_.assign(t_.collectives().size(), kNone);
    for (size_t c = 0; c < t_.collectives().size(); ++c) {
      const model::DeviceId d = t_.collectives()[c].device;
      if (d == kNone) continue;
      pos_[c] = static_cast<int32_t>(by_device_[d].size());
      by_device_[d].push_back(static_cast<CollectiveId>(c));
    }
    floor_.assign(t_.processes().size(), INT64_MIN);
  }

  // The end of the latest previous collective on c's GPU that ended by `arrival`; else the start
  // of the iteration around the arrival, else the start of the capture window around it, else
  // the trace's start.
  int64_t WindowStart(CollectiveId c, int64_t arrival, bool* from_iteration) const {
    const model::Collective& col = t_.collectives()[c];
    int64_t best = INT64_MIN;
    if (col.device != kNone && pos_[c] != kNone) {
      const auto& list = by_device_[col.device];
      for (int32_t j = pos_[c] - 1; j >= 0 && j >= pos_[c] - 64; --j) {
        const int64_t e = t_.collectives()[list[j]].end_ns;
        if (e <= arrival) best = std::max(best, e);
      }
    }
    *from_iteration = best == INT64_MIN;
    if (best != INT64_MIN) return best;
    const IterationAssignment& ia = *ix_.inputs().iterations;
    const int32_t it = IterationAt(ia, col.process, arrival);
    if (it != kNone) return ia.iterations[it].start_ns;
    return WindowStartAt(ix_.inputs().windows, col.process, arrival, t_.start_ns());
  }

  Side Walk(CollectiveId c, int64_t arrival, int64_t window_start, NameSums* names, PathCounts* counts) {
    Side s;
    s.window_start = std::min(window_start, arrival);
    const auto carriers = t_.CollectiveActivities(c);
    if (carriers.empty() || arrival <= s.window_start) return s;
    const model::ProcessId p = t_.collectives()[c].process;
    floor_[p] = s.window_start;
    WalkStart ws;
    ws.mode = WalkStart::kGpuArrival, ws.gpu = carriers.front(), ws.t = arrival;
    segs_.clear();
    walker_.Walk(ws, floor_, false, &segs_, counts);
    floor_[p] = INT64_MIN;
    for (const PathSegment& x : segs_) {
      const int64_t len = x.end_ns - x.start_ns;
      s.path.ns[static_cast<int>(x.category)] += len;
      // GPU activities by name, and host time by the op, runtime call or range it lay in (a
      // host-bound straggler is named like a GPU-bound one); untraced host time has no name.
      if (IsNamedCategory(x.category) && (IsGpuCategory(x.category) || x.name != 0))
        names->Add(x.name, x.category, len);
      if (IsNamedCategory(x.category) && !IsGpuCategory(x.category)) {
        const model::StringId range = ranges_.Around(x.thread, x.start_ns + len / 2);
        if (range != 0 && range != x.name) names->Add(range, PathCategory::kHostLaunch, len);
      }
    }
    return s;
  }
  // The names on both paths, late minus median (sums cleared for the next instance).
  std::vector<NameDelta> Merge() {
    std::vector<NameDelta> v;
    auto add = [&](const NameSums::Entry& e, bool late) {
      for (int c = 0; c < kPathCategories; ++c) {
        if (e.segments[c] == 0 || !IsNamedCategory(static_cast<PathCategory>(c))) continue;
        NameDelta d;
        d.name = e.name, d.category = static_cast<PathCategory>(c);
        (late ? d.late_ns : d.median_ns) = e.ns[c];
        (late ? d.late_count : d.median_count) = e.segments[c];
        if (late) {
          if (const NameSums::Entry* m = median_.Find(e.name); m != nullptr)
            d.median_ns = m->ns[c], d.median_count = m->segments[c];
        } else if (const NameSums::Entry* l = late_.Find(e.name); l != nullptr && l->segments[c] > 0) {
          continue;  // listed with the late side
        }
        v.push_back(d);
      }
    };
    for (const NameSums::Entry& e : late_.entries()) add(e, true);
    for (const NameSums::Entry& e : median_.entries()) add(e, false);
    late_.Clear();
    median_.Clear();
    return v;
  }
  NameSums* late() { return &late_; }
  NameSums* median() { return &median_; }

 private:
  const PathIndex& ix_;
  const model::Trace& t_;
  PathWalker walker_;
  UserRanges ranges_;
  std::vector<std::vector<CollectiveId>> by_device_;
  std::vector<int32_t> pos_;
  std::vector<int64_t> floor_;
  std::vector<PathSegment> segs_;
  NameSums late_, median_;
};

void SortAndCut(std::vector<NameDelta>& v, size_t n) {
  std::sort(v.begin(), v.end(), [](const NameDelta& a, const NameDelta& b) {
    if (a.delta_ns() != b.delta_ns()) return a.delta_ns() > b.delta_ns();
    return a.name < b.name;
  });
  if (v.size() > n) v.resize(n);
}

}  // namespace

StragglerResult StragglerCausesOn(const PathIndex& ix, const StragglerOptions& opt) {
  const CrossRankResult& cr = *ix.inputs().cross_rank;
  StragglerResult res;
  // The comparer (the user ranges per thread, a path walker, the collectives per device) is
  // built at the first instance that needs it: a one-rank trace has none, and building it cost
  // most of this step there.
  std::optional<Comparer> cmp_slot;
  // (participant, op) -> summary and its per-name sums.
  absl::flat_hash_map<std::pair<int32_t, model::StringId>, std::pair<StragglerSummary, std::vector<NameDelta>>> agg;
  std::vector<std::pair<int64_t, int32_t>> order;  // (arrival, position in inst.ranks)
  for (size_t i = 0; i < cr.instances.size(); ++i) {
    const CollectiveInstance& inst = cr.instances[i];
    for (const CollectiveParticipant& p : inst.ranks) {
      auto& [sum, names] = agg[{p.participant, inst.op}];
      sum.participant = p.participant, sum.rank = p.rank, sum.op = inst.op;
      ++sum.instances;
    }
    if (inst.last == kNone || inst.ranks.size() < 2) continue;
    order.clear();
    for (size_t k = 0; k < inst.ranks.size(); ++k) order.push_back({inst.ranks[k].arrival_ns, static_cast<int32_t>(k)});
    std::stable_sort(order.begin(), order.end());
    const size_t n = order.size();
    const int64_t lo = order[(n - 1) / 2].first, hi = order[n / 2].first;
    const CollectiveParticipant& m = inst.ranks[order[(n - 1) / 2].second];
    const CollectiveParticipant* q = nullptr;
    for (const CollectiveParticipant& p : inst.ranks)
      if (p.participant == inst.last) q = &p;
    if (q == nullptr) continue;
    if (!cmp_slot) cmp_slot.emplace(ix);
    Comparer& cmp = *cmp_slot;
    StragglerCause c;
    c.instance = static_cast<int32_t>(i);
    c.op = inst.op;
    c.late = q->participant, c.late_rank = q->rank, c.late_arrival_ns = q->arrival_ns;
    c.median = m.participant, c.median_rank = m.rank, c.median_arrival_ns = m.arrival_ns;
    c.lateness_ns = q->arrival_ns - (lo + (hi - lo) / 2);
    c.behind_ns = q->arrival_ns - m.arrival_ns;
    bool from_it_q = false, from_it_m = false;
    const Side late = cmp.Walk(q->collective, q->arrival_ns, cmp.WindowStart(q->collective, q->arrival_ns, &from_it_q),
                               cmp.late(), &res.counts);
    const Side med = cmp.Walk(m.collective, m.arrival_ns, cmp.WindowStart(m.collective, m.arrival_ns, &from_it_m),
                              cmp.median(), &res.counts);
    res.windows_from_iteration_start += (from_it_q ? 1 : 0) + (from_it_m ? 1 : 0);
    c.late_window_start_ns = late.window_start, c.median_window_start_ns = med.window_start;
    c.started_later_ns = late.window_start - med.window_start;
    c.late_path = late.path, c.median_path = med.path;
    c.unexplained_ns = c.behind_ns - c.started_later_ns - (late.path.Total() - med.path.Total());
    c.names = cmp.Merge();
    auto& [sum, names] = agg[{q->participant, inst.op}];
    ++sum.times_last;
    sum.lateness_ns += c.lateness_ns, sum.behind_ns += c.behind_ns;
    sum.started_later_ns += c.started_later_ns, sum.unexplained_ns += c.unexplained_ns;
    sum.late_path.Add(c.late_path), sum.median_path.Add(c.median_path);
    names.insert(names.end(), c.names.begin(), c.names.end());
    SortAndCut(c.names, opt.top_n);
    res.causes.push_back(std::move(c));
  }
  for (auto& [key, v] : agg) {
    auto& [sum, names] = v;
    absl::flat_hash_map<model::StringId, NameDelta> by;
    for (const NameDelta& x : names) {
      NameDelta& y = by[x.name];
      y.name = x.name, y.category = x.category;
      y.late_ns += x.late_ns, y.median_ns += x.median_ns;
      y.late_count += x.late_count, y.median_count += x.median_count;
    }
    for (auto& [k, y] : by) sum.names.push_back(y);
    SortAndCut(sum.names, opt.top_n);
    res.summaries.push_back(std::move(sum));
  }
  std::sort(res.summaries.begin(), res.summaries.end(), [](const StragglerSummary& a, const StragglerSummary& b) {
    if (a.times_last != b.times_last) return a.times_last > b.times_last;
    if (a.lateness_ns != b.lateness_ns) return a.lateness_ns > b.lateness_ns;
    if (a.participant != b.participant) return a.participant < b.participant;
    return a.op < b.op;
  });
  return res;
}

StragglerResult AnalyzeStragglerCauses(const model::Trace& trace, const PathInputs& in, const StragglerOptions& opt) {
  PathIndex ix(trace, in);
  return StragglerCausesOn(ix, opt);
}

PathAnalyses AnalyzePaths(const model::Trace& trace, const PathInputs& in, const CriticalPathOptions& cp,
                          const StragglerOptions& st) {
  PathIndex ix(trace, in);
  PathAnalyses r;
  r.critical_path = CriticalPathOn(ix, cp);
  r.stragglers = StragglerCausesOn(ix, st);
  return r;
}

}  // namespace overlapscope::analyze
