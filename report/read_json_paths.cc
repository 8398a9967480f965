// JSON report -> report::Report, the sections on what bounds the step (report/report_paths.h,
// written by render_json_paths.cc): critical_path, straggler_causes, stream_concurrency. Reports
// before schema 1.6 have none: the sections stay empty. Errors are ReadError exceptions, caught by
// ReadReportJson (read_json.cc).
#include "report/read_json_internal.h"

namespace overlapscope::report::read_internal {
namespace {

// {"length_ns": L, "<category>_ns": ns, ...} in document order.
PathComposition Composition(const Node& n) {
  PathComposition c;
  c.length_ns = n.At("length_ns").Int();
  n.Members([&](const std::string& k, const Node& v) {
    if (k == "length_ns" || k.size() <= 3 || k.compare(k.size() - 3, 3, "_ns") != 0) return;
    c.categories.push_back({k.substr(0, k.size() - 3), v.Int()});
  });
  return c;
}

std::vector<PathActivity> Top(const Node& n) {
  std::vector<PathActivity> v;
  n.Each([&](const Node& x) {
    v.push_back({x.At("name").OptStr(), x.At("category").Str(), x.At("ns").Int(), x.At("segments").Int()});
  });
  return v;
}

std::vector<RankPath> RankPaths(const Node& n) {
  std::vector<RankPath> v;
  n.Each([&](const Node& x) {
    RankPath rp;
    rp.rank = x.At("rank").OptInt();
    rp.label = x.At("label").Str();
    rp.has_span = x.Has("start_ns");
    if (rp.has_span) {
      rp.start_ns = x.At("start_ns").Int();
      rp.end_ns = x.At("end_ns").Int();
      rp.stop = x.At("stop").Str();
    }
    rp.composition = Composition(x.At("composition"));
    v.push_back(std::move(rp));
  });
  return v;
}

std::vector<NameLateness> Names(const Node& n) {
  std::vector<NameLateness> v;
  n.Each([&](const Node& x) {
    v.push_back({x.At("name").Str(), x.At("category").Str(), x.At("late_ns").Int(), x.At("median_ns").Int(),
                 x.At("delta_ns").Int(), x.At("late_count").Int(), x.At("median_count").Int(),
                 x.At("share_of_behind").OptDouble(), x.At("slower").OptDouble()});
  });
  return v;
}

CriticalPath ReadCriticalPath(const Node& n) {
  CriticalPath cp;
  if (n.j.is_null()) return cp;
  cp.iterations = n.At("iterations").Int();
  cp.total = Composition(n.At("total"));
  cp.top = Top(n.At("top"));
  cp.own_total = RankPaths(n.At("own_total"));
  const Node u = n.At("unjoined");
  cp.unjoined = {u.At("gpu_without_launch").Int(),    u.At("unresolved_waits").Int(),
                 u.At("syncs_without_release").Int(), u.At("backward_edges").Int(),
                 u.At("no_predecessor_stops").Int(),  u.At("guard_stops").Int()};
  cp.sm_holders = n.At("sm_holders").OptInt().value_or(0);  // absent before 1.11
  n.At("per_iteration").Each([&](const Node& x) {
    IterationCriticalPath ip;
    ip.iteration = x.At("iteration").OptInt();
    ip.start_ns = x.At("start_ns").Int();
    ip.end_ns = x.At("end_ns").Int();
    ip.stop = x.At("stop").Str();
    ip.ends_on = x.At("ends_on").Str();
    ip.composition = Composition(x.At("composition"));
    ip.on_rank = RankPaths(x.At("on_rank"));
    ip.own = RankPaths(x.At("own"));
    ip.top = Top(x.At("top"));
    cp.per_iteration.push_back(std::move(ip));
  });
  return cp;
}

StragglerSummary Summary(const Node& x) {
  StragglerSummary s;
  s.label = x.At("label").Str();
  s.rank = x.At("rank").OptInt();
  s.op = x.At("op").Str();
  s.instances = x.At("instances").Int();
  s.times_last = x.At("times_last").Int();
  s.times_last_share = x.At("times_last_share").OptDouble();
  s.lateness_ns = x.At("lateness_ns").Int();
  s.behind_median_ns = x.At("behind_median_ns").Int();
  s.started_later_ns = x.At("started_later_ns").Int();
  s.unexplained_ns = x.At("unexplained_ns").Int();
  x.At("category_delta").Members([&](const std::string& k, const Node& v) {
    if (k.size() > 3) s.category_delta.push_back({k.substr(0, k.size() - 3), v.Int()});
  });
  s.names = Names(x.At("names"));
  return s;
}

StragglerInstance StragglerAt(const Node& x) {
  StragglerInstance c;
  c.op = x.At("op").Str();
  c.communicator = x.At("communicator").Str();
  c.sequence = x.At("sequence").OptInt();
  c.ordinal = x.At("ordinal").Int();
  c.late = x.At("late").Str();
  c.median = x.At("median").Str();
  c.lateness_ns = x.At("lateness_ns").Int();
  c.behind_median_ns = x.At("behind_median_ns").Int();
  c.late_arrival_ns = x.At("late_arrival_ns").Int();
  c.median_arrival_ns = x.At("median_arrival_ns").Int();
  c.late_window_start_ns = x.At("late_window_start_ns").Int();
  c.median_window_start_ns = x.At("median_window_start_ns").Int();
  c.started_later_ns = x.At("started_later_ns").Int();
  c.unexplained_ns = x.At("unexplained_ns").Int();
  c.late_path = Composition(x.At("late_path"));
  c.median_path = Composition(x.At("median_path"));
  c.names = Names(x.At("names"));
  return c;
}

StragglerCauses ReadStragglers(const Node& n) {
  StragglerCauses st;
  if (n.j.is_null()) return st;
  n.At("summaries").Each([&](const Node& x) { st.summaries.push_back(Summary(x)); });
  n.At("instances").Each([&](const Node& x) { st.instances.push_back(StragglerAt(x)); });
  st.windows_from_iteration_start = n.At("windows_from_iteration_start").Int();
  return st;
}

Concurrency Figures(const Node& x) {
  return {x.At("concurrent_ns").Int(), x.At("a_ns").Int(), x.At("b_ns").Int(), x.At("share").OptDouble()};
}

WindowConcurrency Window(const Node& x) {
  WindowConcurrency w;
  x.At("streams").Each([&](const Node& p) {
    w.streams.push_back({p.At("a").OptInt(), p.At("b").OptInt(), Figures(p)});
  });
  x.At("groups").Each([&](const Node& p) { w.groups.push_back({p.At("a").Str(), p.At("b").Str(), Figures(p)}); });
  return w;
}

StreamConcurrency ReadConcurrency(const Node& n) {
  StreamConcurrency c;
  if (n.j.is_null()) return c;
  n.At("groups").Each([&](const Node& g) {
    c.groups.push_back({g.At("name").Str(), g.At("regex").Str(), g.At("activities").Int()});
  });
  n.At("devices").Each([&](const Node& x) {
    DeviceConcurrency d;
    d.rank = x.At("rank").OptInt();
    d.label = x.At("label").Str();
    d.device = x.At("device").Int();
    d.whole = Window(x.At("whole"));
    x.At("iterations").Each([&](const Node& w) { d.iterations.push_back({w.At("iteration").Int(), Window(w)}); });
    c.devices.push_back(std::move(d));
  });
  return c;
}

}  // namespace

void ReadPaths(const Node& doc, Report* r) {
  r->critical_path = ReadCriticalPath(doc.At("critical_path"));
  r->straggler_causes = ReadStragglers(doc.At("straggler_causes"));
  r->stream_concurrency = ReadConcurrency(doc.At("stream_concurrency"));
  if (doc.Has("critical_path") && doc.At("critical_path").Has("skipped"))  // 1.8; absent: computed
    r->paths_skipped = doc.At("critical_path").At("skipped").OptStr();
}

}  // namespace overlapscope::report::read_internal
