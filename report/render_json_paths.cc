// JSON of the critical path, straggler causes and stream concurrency (METRICS §8, §9): keys in
// docs/report-schema.md, absent optionals as null.
#include "report/render_json_paths.h"

#include "report/render_json_iteration.h"

namespace overlapscope::report {
namespace {

using ojson = nlohmann::ordered_json;

// {"length_ns": ..., "compute_ns": ..., ...}: the categories add up to the length.
ojson CompositionJson(const PathComposition& c) {
  ojson j;
  j["length_ns"] = c.length_ns;
  for (const PathCategoryTime& k : c.categories) j[k.category + "_ns"] = k.ns;
  return j;
}

ojson TopJson(const std::vector<PathActivity>& top) {
  ojson a = ojson::array();
  for (const PathActivity& x : top)
    a.push_back({{"name", JsonOpt(x.name)}, {"category", x.category}, {"ns", x.ns}, {"segments", x.segments}});
  return a;
}

ojson RankPathJson(const RankPath& rp) {
  ojson j;
  j["rank"] = JsonOpt(rp.rank);
  j["label"] = rp.label;
  if (rp.has_span) {
    j["start_ns"] = rp.start_ns;
    j["end_ns"] = rp.end_ns;
    j["stop"] = rp.stop;
  }
  j["composition"] = CompositionJson(rp.composition);
  return j;
}

ojson RankPathsJson(const std::vector<RankPath>& v) {
  ojson a = ojson::array();
  for (const RankPath& rp : v) a.push_back(RankPathJson(rp));
  return a;
}

ojson NamesJson(const std::vector<NameLateness>& names) {
  ojson a = ojson::array();
  for (const NameLateness& n : names)
    a.push_back({{"name", n.name},
                 {"category", n.category},
                 {"late_ns", n.late_ns},
                 {"median_ns", n.median_ns},
                 {"delta_ns", n.delta_ns},
                 {"late_count", n.late_count},
                 {"median_count", n.median_count},
                 {"share_of_behind", JsonOpt(n.share_of_behind)},
                 {"slower", JsonOpt(n.slower)}});
  return a;
}

ojson CriticalPathJson(const CriticalPath& cp) {
  ojson j;
  j["iterations"] = cp.iterations;
  j["total"] = CompositionJson(cp.total);
  j["top"] = TopJson(cp.top);
  j["own_total"] = RankPathsJson(cp.own_total);
  const PathUnjoined& u = cp.unjoined;
  j["unjoined"] = {{"gpu_without_launch", u.gpu_without_launch},       {"unresolved_waits", u.unresolved_waits},
                   {"syncs_without_release", u.syncs_without_release}, {"backward_edges", u.backward_edges},
                   {"no_predecessor_stops", u.no_predecessor_stops},   {"guard_stops", u.guard_stops}};
  j["sm_holders"] = cp.sm_holders;
  ojson its = ojson::array();
  for (const IterationCriticalPath& ip : cp.per_iteration) {
    ojson x;
    x["iteration"] = JsonOpt(ip.iteration);
    x["start_ns"] = ip.start_ns;
    x["end_ns"] = ip.end_ns;
    x["stop"] = ip.stop;
    x["ends_on"] = ip.ends_on;
    x["composition"] = CompositionJson(ip.composition);
    x["on_rank"] = RankPathsJson(ip.on_rank);
    x["own"] = RankPathsJson(ip.own);
    x["top"] = TopJson(ip.top);
    its.push_back(x);
  }
  j["per_iteration"] = its;
  return j;
}

ojson StragglerCausesJson(const StragglerCauses& st) {
  ojson j;
  ojson sums = ojson::array();
  for (const StragglerSummary& s : st.summaries) {
    ojson delta;
    for (const PathCategoryTime& k : s.category_delta) delta[k.category + "_ns"] = k.ns;
    sums.push_back({{"label", s.label},
                    {"rank", JsonOpt(s.rank)},
                    {"op", s.op},
                    {"instances", s.instances},
                    {"times_last", s.times_last},
                    {"times_last_share", JsonOpt(s.times_last_share)},
                    {"lateness_ns", s.lateness_ns},
                    {"behind_median_ns", s.behind_median_ns},
                    {"started_later_ns", s.started_later_ns},
                    {"unexplained_ns", s.unexplained_ns},
                    {"category_delta", delta},
                    {"names", NamesJson(s.names)}});
  }
  j["summaries"] = sums;
  ojson inst = ojson::array();
  for (const StragglerInstance& c : st.instances)
    inst.push_back({{"op", c.op},
                    {"communicator", c.communicator},
                    {"sequence", JsonOpt(c.sequence)},
                    {"ordinal", c.ordinal},
                    {"late", c.late},
                    {"median", c.median},
                    {"lateness_ns", c.lateness_ns},
                    {"behind_median_ns", c.behind_median_ns},
                    {"late_arrival_ns", c.late_arrival_ns},
                    {"median_arrival_ns", c.median_arrival_ns},
                    {"late_window_start_ns", c.late_window_start_ns},
                    {"median_window_start_ns", c.median_window_start_ns},
                    {"started_later_ns", c.started_later_ns},
                    {"unexplained_ns", c.unexplained_ns},
                    {"late_path", CompositionJson(c.late_path)},
                    {"median_path", CompositionJson(c.median_path)},
                    {"names", NamesJson(c.names)}});
  j["instances"] = inst;
  j["windows_from_iteration_start"] = st.windows_from_iteration_start;
  return j;
}

ojson FiguresJson(ojson x, const Concurrency& c) {
  x["concurrent_ns"] = c.concurrent_ns;
  x["a_ns"] = c.a_ns;
  x["b_ns"] = c.b_ns;
  x["share"] = JsonOpt(c.share);
  return x;
}

ojson StreamsJson(const WindowConcurrency& w) {
  ojson a = ojson::array();
  for (const StreamPair& p : w.streams) a.push_back(FiguresJson({{"a", JsonOpt(p.a)}, {"b", JsonOpt(p.b)}}, p.c));
  return a;
}
ojson GroupsJson(const WindowConcurrency& w) {
  ojson a = ojson::array();
  for (const GroupPair& p : w.groups) a.push_back(FiguresJson({{"a", p.a}, {"b", p.b}}, p.c));
  return a;
}

}  // namespace

ojson ConcurrencyIterationJson(const IterationConcurrency& w) {
  return ojson{{"iteration", w.iteration}, {"streams", StreamsJson(w.pairs)}, {"groups", GroupsJson(w.pairs)}};
}

namespace {

ojson StreamConcurrencyJson(const StreamConcurrency& c, DeferredArrays* deferred) {
  ojson j;
  ojson groups = ojson::array();
  for (const ConcurrencyGroup& g : c.groups)
    groups.push_back({{"name", g.name}, {"regex", g.regex}, {"activities", g.activities}});
  j["groups"] = groups;
  ojson devs = ojson::array();
  for (const DeviceConcurrency& d : c.devices) {
    ojson x;
    x["rank"] = JsonOpt(d.rank);
    x["label"] = d.label;
    x["device"] = d.device;
    x["whole"] = {{"streams", StreamsJson(d.whole)}, {"groups", GroupsJson(d.whole)}};
    if (deferred != nullptr) {
      x["iterations"] = deferred->AddText(d.iterations.size(), [&d](size_t i, size_t indent, std::string* out) {
        AppendConcurrencyIterationText(d.iterations[i], indent, out);
      });
    } else {
      ojson its = ojson::array();
      for (const IterationConcurrency& w : d.iterations) its.push_back(ConcurrencyIterationJson(w));
      x["iterations"] = its;
    }
    devs.push_back(x);
  }
  j["devices"] = devs;
  return j;
}

}  // namespace

void AppendPathsJson(const Report& r, nlohmann::ordered_json* doc, DeferredArrays* deferred) {
  (*doc)["critical_path"] = CriticalPathJson(r.critical_path);
  (*doc)["straggler_causes"] = StragglerCausesJson(r.straggler_causes);
  if (r.paths_skipped) {  // 1.8: not computed, and why (the figures above are then empty)
    (*doc)["critical_path"]["skipped"] = *r.paths_skipped;
    (*doc)["straggler_causes"]["skipped"] = *r.paths_skipped;
  }
  (*doc)["stream_concurrency"] = StreamConcurrencyJson(r.stream_concurrency, deferred);
}

}  // namespace overlapscope::report
