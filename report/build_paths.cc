// critical_path, straggler_causes and stream_concurrency of the report (METRICS §8, §9) from the
// analyses, and each rank's summary figures of them (gates).
#include <string>

#include "absl/strings/str_cat.h"
#include "report/build.h"
#include "report/build_internal.h"

namespace overlapscope::report {
namespace {

using namespace overlapscope::report::build;  // NOLINT

std::string Name(analyze::PathCategory c) { return std::string(analyze::ToString(c)); }

std::string ProcessLabel(const model::Trace& t, model::ProcessId p) {
  if (!InRange(t.processes(), p)) return "?";
  const model::Process& x = t.processes()[p];
  return x.rank != model::kNone ? absl::StrCat("rank ", x.rank) : absl::StrCat("pid ", x.pid);
}
std::optional<int64_t> RankOf(const model::Trace& t, model::ProcessId p) {
  if (!InRange(t.processes(), p) || t.processes()[p].rank == model::kNone) return std::nullopt;
  return t.processes()[p].rank;
}
std::string ParticipantLabel(const analyze::CrossRankResult& cr, int32_t p) {
  return InRange(cr.participants, p) ? cr.participants[p].label : std::string("?");
}
std::optional<double> Ratio(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  return static_cast<double>(a) / static_cast<double>(b);
}

PathComposition Composition(const analyze::PathComposition& c) {
  PathComposition p;
  p.length_ns = c.Total();
  for (int k = 0; k < analyze::kPathCategories; ++k)
    p.categories.push_back({Name(static_cast<analyze::PathCategory>(k)), c.ns[k]});
  return p;
}

std::vector<PathActivity> Top(const model::Trace& t, const std::vector<analyze::PathActivity>& top, size_t n) {
  std::vector<PathActivity> v;
  for (size_t i = 0; i < top.size() && i < n; ++i)
    v.push_back({NameOrNone(t, top[i].name), Name(top[i].category), top[i].ns, top[i].segments});
  return v;
}

RankPath Rank(const model::Trace& t, const analyze::RankPath& rp, bool own) {
  RankPath r;
  r.rank = RankOf(t, rp.process);
  r.label = ProcessLabel(t, rp.process);
  r.has_span = own;
  r.start_ns = rp.start_ns;
  r.end_ns = rp.end_ns;
  r.stop = std::string(analyze::ToString(rp.stop));
  r.composition = Composition(rp.composition);
  return r;
}

std::vector<NameLateness> Names(const model::Trace& t, const std::vector<analyze::NameDelta>& names, int64_t behind) {
  std::vector<NameLateness> v;
  for (const analyze::NameDelta& n : names) {
    NameLateness x{Str(t, n.name), Name(n.category), n.late_ns,    n.median_ns, n.delta_ns(),
                   n.late_count,   n.median_count,   std::nullopt, std::nullopt};
    if (behind > 0) x.share_of_behind = static_cast<double>(n.delta_ns()) / static_cast<double>(behind);
    if (n.median_ns > 0) x.slower = static_cast<double>(n.late_ns) / static_cast<double>(n.median_ns) - 1;
    v.push_back(std::move(x));
  }
  return v;
}

std::vector<PathCategoryTime> Delta(const analyze::PathComposition& late, const analyze::PathComposition& median) {
  std::vector<PathCategoryTime> v;
  for (int k = 0; k < analyze::kPathCategories; ++k)
    v.push_back({Name(static_cast<analyze::PathCategory>(k)), late.ns[k] - median.ns[k]});
  return v;
}

WindowConcurrency PairsOf(const model::Trace& t, const analyze::WindowConcurrency& w,
                          const analyze::ConcurrencyResult& c) {
  WindowConcurrency x;
  for (const analyze::PairConcurrency& p : w.streams)
    x.streams.push_back({NativeStream(t, p.a), NativeStream(t, p.b), {p.concurrent_ns, p.a_ns, p.b_ns, p.share}});
  auto group = [&](int32_t g) { return InRange(c.groups, g) ? c.groups[g].name : std::string("?"); };
  for (const analyze::PairConcurrency& p : w.groups)
    x.groups.push_back({group(p.a), group(p.b), {p.concurrent_ns, p.a_ns, p.b_ns, p.share}});
  return x;
}

}  // namespace

CriticalPath BuildCriticalPath(const model::Trace& t, const analyze::CriticalPathResult& cp) {
  CriticalPath j;
  j.iterations = static_cast<int64_t>(cp.iterations.size());
  j.total = Composition(cp.total);
  j.top = Top(t, cp.top, cp.top.size());
  for (const analyze::RankPath& rp : cp.own_total)
    if (rp.composition.Total() > 0) j.own_total.push_back(Rank(t, rp, false));
  const analyze::PathCounts& n = cp.counts;
  j.unjoined = {n.gpu_without_launch, n.unresolved_waits,     n.syncs_without_release,
                n.backward_edges,     n.no_predecessor_stops, n.guard_stops};
  j.sm_holders = n.sm_holders;
  for (const analyze::IterationPath& ip : cp.iterations) {
    IterationCriticalPath x;
    x.iteration = IntOrNone(ip.number);
    x.start_ns = ip.start_ns;
    x.end_ns = ip.end_ns;
    x.stop = std::string(analyze::ToString(ip.stop));
    x.ends_on = ProcessLabel(t, ip.end_process);
    x.composition = Composition(ip.total);
    for (const analyze::RankPath& rp : ip.on_rank) x.on_rank.push_back(Rank(t, rp, false));
    for (const analyze::RankPath& rp : ip.own) x.own.push_back(Rank(t, rp, true));
    x.top = Top(t, ip.top, 3);
    j.per_iteration.push_back(std::move(x));
  }
  return j;
}

StragglerCauses BuildStragglerCauses(const model::Trace& t, const analyze::StragglerResult& st,
                                     const analyze::CrossRankResult& cr) {
  StragglerCauses j;
  for (const analyze::StragglerSummary& s : st.summaries) {
    if (s.times_last == 0) continue;
    StragglerSummary x;
    x.label = ParticipantLabel(cr, s.participant);
    if (s.rank != model::kNone) x.rank = s.rank;
    x.op = Str(t, s.op);
    x.instances = s.instances;
    x.times_last = s.times_last;
    x.times_last_share = Ratio(s.times_last, s.instances);
    x.lateness_ns = s.lateness_ns;
    x.behind_median_ns = s.behind_ns;
    x.started_later_ns = s.started_later_ns;
    x.unexplained_ns = s.unexplained_ns;
    x.category_delta = Delta(s.late_path, s.median_path);
    x.names = Names(t, s.names, s.behind_ns);
    j.summaries.push_back(std::move(x));
  }
  for (const analyze::StragglerCause& c : st.causes) {
    StragglerInstance x;
    x.op = Str(t, c.op);
    if (InRange(cr.instances, c.instance)) {
      const analyze::CollectiveInstance& ci = cr.instances[c.instance];
      x.communicator = Str(t, ci.communicator);
      x.sequence = IntOrNone(ci.sequence);
      x.ordinal = ci.ordinal;
    }
    x.late = ParticipantLabel(cr, c.late);
    x.median = ParticipantLabel(cr, c.median);
    x.lateness_ns = c.lateness_ns;
    x.behind_median_ns = c.behind_ns;
    x.late_arrival_ns = c.late_arrival_ns;
    x.median_arrival_ns = c.median_arrival_ns;
    x.late_window_start_ns = c.late_window_start_ns;
    x.median_window_start_ns = c.median_window_start_ns;
    x.started_later_ns = c.started_later_ns;
    x.unexplained_ns = c.unexplained_ns;
    x.late_path = Composition(c.late_path);
    x.median_path = Composition(c.median_path);
    x.names = Names(t, c.names, c.behind_ns);
    j.instances.push_back(std::move(x));
  }
  j.windows_from_iteration_start = st.windows_from_iteration_start;
  return j;
}

StreamConcurrency BuildStreamConcurrency(const model::Trace& t, const analyze::ConcurrencyResult& c) {
  StreamConcurrency j;
  for (size_t g = 0; g < c.groups.size(); ++g)
    j.groups.push_back(
        {c.groups[g].name, c.groups[g].regex, g < c.group_activities.size() ? c.group_activities[g] : 0});
  for (const analyze::DeviceConcurrency& d : c.devices) {
    DeviceConcurrency x;
    x.rank = RankOf(t, d.process);
    x.label = ProcessLabel(t, d.process);
    x.device = InRange(t.devices(), d.device) ? t.devices()[d.device].ordinal : -1;
    x.whole = PairsOf(t, d.whole, c);
    for (const analyze::WindowConcurrency& w : d.iterations) {
      if (w.streams.empty() && w.groups.empty()) continue;
      x.iterations.push_back({w.number, PairsOf(t, w, c)});
    }
    j.devices.push_back(std::move(x));
  }
  return j;
}

void AddPathSummary(const analyze::CriticalPathResult& cp, const analyze::StragglerResult& st,
                    const analyze::CrossRankResult& cr, model::ProcessId p, RankSummary* s) {
  // The rank's own critical paths (collectives not followed), summed over iterations.
  analyze::PathComposition c;
  if (InRange(cp.own_total, p)) c = cp.own_total[p].composition;
  s->critical_path_ns = c.Total();
  s->critical_path_shares.clear();
  for (int k = 0; k < analyze::kPathCategories; ++k)
    s->critical_path_shares.push_back({Name(static_cast<analyze::PathCategory>(k)), Ratio(c.ns[k], c.Total())});
  s->straggler_lateness_ns = 0;
  for (const analyze::StragglerSummary& x : st.summaries)
    if (InRange(cr.participants, x.participant) && cr.participants[x.participant].process == p)
      s->straggler_lateness_ns += x.lateness_ns;
}

}  // namespace overlapscope::report
