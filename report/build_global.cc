// The report's global sections and the assembly of a Report from its parts (report/report.h
// says how per-rank parts merge).
#include <algorithm>
#include <map>
#include <tuple>

#include "base/run_all.h"
#include "report/build.h"
#include "report/build_internal.h"
#include "report/import_warnings.h"

namespace overlapscope::report {
namespace {

using namespace overlapscope::report::build;  // NOLINT

report::ClockAlignment Clock(const model::Trace& t, const analyze::ClockAlignment& a) {
  report::ClockAlignment j;
  j.mode = std::string(analyze::ToString(a.mode));
  j.status = std::string(analyze::ToString(a.status));
  j.applied = a.applied();
  if (!a.hosts.empty() && a.hosts.front().reference) j.reference_host = a.hosts.front().host;
  j.min_instances = a.min_instances;
  j.matched_instances_used = a.matched_instances_used;
  j.residual_spread_ns = a.residual_spread_ns;
  j.summary = analyze::DescribeClockAlignment(a);
  for (const analyze::HostClock& h : a.hosts) {
    report::HostClock x{h.host,      {},          h.reference,          h.aligned,
                        h.offset_ns, h.instances, h.residual_spread_ns, std::nullopt};
    for (model::ProcessId p : h.processes)
      if (InRange(t.processes(), p)) x.pids.push_back(t.processes()[p].pid);
    if (!h.reason.empty()) x.reason = h.reason;
    j.hosts.push_back(std::move(x));
  }
  return j;
}

// Order of the classes in the schema (classes.totals, top_kernels).
int ClassOrder(const std::string& cls) {
  static const char* const kOrder[] = {"compute", "comm", "memory", "sync"};
  for (int i = 0; i < 4; ++i)
    if (cls == kOrder[i]) return i;
  return 4;
}

// Samples of one kind of activity, keyed by interned name while walking (no string per event).
template <typename V>
void CollectSamples(const model::Trace& t, const analyze::AnalysisResult& r, const V& acts,
                    const std::vector<int32_t>& iteration_of, const char* kind, std::vector<NameSamples>* out) {
  struct Acc {
    std::vector<int64_t> durations;
    std::map<int64_t, int64_t> per_iteration;
  };
  std::map<model::StringId, Acc> by;
  for (size_t i = 0; i < acts.size(); ++i) {
    Acc& a = by[acts[i].name];
    const int64_t d = acts[i].end_ns - acts[i].start_ns;
    a.durations.push_back(d);
    if (i < iteration_of.size())
      if (std::optional<int64_t> n = IterationNumber(r, iteration_of[i])) a.per_iteration[*n] += d;
  }
  for (auto& [name, a] : by) {
    NameSamples s{kind, Str(t, name), std::move(a.durations), {}};
    for (const auto& [n, ns] : a.per_iteration) s.per_iteration.push_back({n, ns});
    out->push_back(std::move(s));
  }
}

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2 == 1) return v[mid];
  const int64_t hi = v[mid];
  const int64_t lo = *std::max_element(v.begin(), v.begin() + mid);
  return lo + (hi - lo) / 2;
}

}  // namespace

Report Header(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info) {
  Report h;
  h.warnings = ImportWarningsOf(t);
  h.tool = "overlapscope " + info.tool_version;
  h.inputs = info.inputs;
  h.options.iteration_marker = r.iterations.marker;
  h.options.min_gap_ns = r.min_gap_ns;
  h.options.runtime_cutoff_ns = r.launch.runtime_cutoff_ns;
  h.options.launch_delay_cutoff_ns = r.launch.launch_delay_cutoff_ns;
  h.options.top_n = info.top_n;
  h.options.align_clocks = std::string(analyze::ToString(info.clock_alignment.mode));
  h.clock_note = t.clock_note();
  h.clock_alignment = Clock(t, info.clock_alignment);
  for (const analyze::ClassRule& rule : r.classes.rules) h.classes.rules.push_back({rule.Describe(), rule.origin});
  return h;
}

GlobalPartial BuildGlobalPartial(const model::Trace& t, const analyze::AnalysisResult& r) {
  GlobalPartial p;
  p.has_events = t.total_events() > 0;
  p.time_span = {t.start_ns(), t.end_ns()};
  for (int c = 0; c < 4; ++c)
    p.class_totals.push_back({std::string(analyze::ToString(static_cast<analyze::ActivityClass>(c))),
                              r.classes.count[c], r.classes.total_ns[c]});
  p.iterations = {r.iterations.marker, static_cast<int64_t>(r.iterations.iterations.size()),
                  r.iterations.by_launch_call, r.iterations.by_own_start, r.iterations.outside};
  for (const analyze::ClassExplanation& e : r.classes.names)
    p.activities.push_back({std::string(model::ToString(e.kind)), Str(t, e.name), std::string(analyze::ToString(e.cls)),
                            e.rule, e.count, e.total_ns, e.max_ns});
  CollectSamples(t, r, t.kernels(), r.iterations.kernel_iteration, "kernel", &p.samples);
  CollectSamples(t, r, t.memcpys(), r.iterations.memcpy_iteration, "memcpy", &p.samples);
  CollectSamples(t, r, t.memsets(), r.iterations.memset_iteration, "memset", &p.samples);
  return p;
}

GlobalPartial MergePartials(const std::vector<GlobalPartial>& parts) {
  GlobalPartial m;
  std::map<std::tuple<std::string, std::string, int64_t>, size_t> activity;  // (kind, name, rule)
  for (const GlobalPartial& p : parts) {
    if (p.has_events) {
      m.time_span = m.has_events ? TimeSpan{std::min(m.time_span.start_ns, p.time_span.start_ns),
                                            std::max(m.time_span.end_ns, p.time_span.end_ns)}
                                 : p.time_span;
      m.has_events = true;
    }
    for (const ClassTotal& c : p.class_totals) {
      auto it = std::find_if(m.class_totals.begin(), m.class_totals.end(),
                             [&](const ClassTotal& x) { return x.cls == c.cls; });
      if (it == m.class_totals.end()) it = m.class_totals.insert(m.class_totals.end(), ClassTotal{c.cls, 0, 0});
      it->count += c.count;
      it->total_ns = Sum(it->total_ns, c.total_ns);
    }
    if (m.iterations.marker.empty()) m.iterations.marker = p.iterations.marker;
    m.iterations.count += p.iterations.count;
    m.iterations.assigned_by_launch_call += p.iterations.assigned_by_launch_call;
    m.iterations.assigned_by_own_start += p.iterations.assigned_by_own_start;
    m.iterations.outside_iterations += p.iterations.outside_iterations;
    for (const ActivityTotal& a : p.activities) {
      auto [it, added] = activity.try_emplace({a.kind, a.name, a.rule}, m.activities.size());
      if (added) {
        m.activities.push_back(a);
        continue;
      }
      ActivityTotal& x = m.activities[it->second];
      x.count += a.count;
      x.total_ns = Sum(x.total_ns, a.total_ns);
      x.max_ns = std::max(x.max_ns, a.max_ns);
    }
    for (const NameSamples& ns : p.samples) {
      auto it = std::find_if(m.samples.begin(), m.samples.end(),
                             [&](const NameSamples& x) { return x.kind == ns.kind && x.name == ns.name; });
      if (it == m.samples.end()) {
        m.samples.push_back(ns);
        continue;
      }
      it->durations_ns.insert(it->durations_ns.end(), ns.durations_ns.begin(), ns.durations_ns.end());
      std::map<int64_t, int64_t> sum;
      for (const IterationNs& v : it->per_iteration) sum[v.iteration] += v.ns;
      for (const IterationNs& v : ns.per_iteration) sum[v.iteration] += v.ns;
      it->per_iteration.clear();
      for (const auto& [n, v] : sum) it->per_iteration.push_back({n, v});
    }
  }
  return m;
}

void AddSamples(const std::vector<NameSamples>& samples, std::vector<KernelTotal>* top) {
  std::map<std::pair<std::string, std::string>, const NameSamples*> by;
  for (const NameSamples& s : samples) by[{s.kind, s.name}] = &s;
  for (KernelTotal& k : *top) {
    auto it = by.find({k.kind, k.name});
    if (it == by.end()) continue;
    k.median_ns = Median(it->second->durations_ns);
    k.per_iteration = it->second->per_iteration;
  }
}

std::vector<KernelTotal> TopKernels(const std::vector<ActivityTotal>& activities, int64_t top_n) {
  struct Merged {
    KernelTotal k;
    const ActivityTotal* best = nullptr;  // the entry whose class the name takes
  };
  std::map<std::pair<std::string, std::string>, Merged> by;  // (kind, name)
  auto better = [](const ActivityTotal& a, const ActivityTotal& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.rule < b.rule;
  };
  for (const ActivityTotal& a : activities) {
    Merged& m = by[{a.kind, a.name}];
    m.k.kind = a.kind;
    m.k.name = a.name;
    m.k.count += a.count;
    m.k.total_ns = Sum(m.k.total_ns, a.total_ns);
    m.k.max_ns = std::max(m.k.max_ns, a.max_ns);
    if (m.best == nullptr || better(a, *m.best)) m.best = &a;
  }
  std::vector<KernelTotal> all;
  all.reserve(by.size());
  for (auto& [key, m] : by) {
    m.k.cls = m.best->cls;
    all.push_back(std::move(m.k));
  }
  std::sort(all.begin(), all.end(), [](const KernelTotal& a, const KernelTotal& b) {
    const int ca = ClassOrder(a.cls), cb = ClassOrder(b.cls);
    if (ca != cb) return ca < cb;
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.kind < b.kind;
  });
  std::vector<KernelTotal> out;
  int64_t in_class = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    in_class = (i > 0 && all[i].cls == all[i - 1].cls) ? in_class + 1 : 0;
    if (in_class < top_n) out.push_back(all[i]);
  }
  return out;
}

Report Assemble(Report header, const GlobalPartial& merged, std::vector<RankReport> ranks, CrossRank cross) {
  Report r = std::move(header);
  r.time_span = merged.has_events ? merged.time_span : TimeSpan{};
  r.classes.totals = merged.class_totals;
  r.iterations = merged.iterations;
  r.top_kernels = TopKernels(merged.activities, r.options.top_n);
  AddSamples(merged.samples, &r.top_kernels);
  r.ranks = std::move(ranks);
  r.collectives_across_ranks = std::move(cross);
  return r;
}

Report BuildReport(const model::Trace& t, const analyze::AnalysisResult& r, const ReportInfo& info) {
  std::vector<RankReport> ranks;
  ranks.reserve(r.ranks.size());
  // A process without GPU activity (a launcher, a data-loader worker) is no rank: listed apart,
  // as long as some other process has GPU activity (a CPU-only trace keeps its processes).
  const bool any_gpu =
      std::any_of(r.ranks.begin(), r.ranks.end(), [](const analyze::RankSummary& s) { return !s.devices.empty(); });
  std::vector<ProcessWithoutGpu> others;
  auto build_ranks = [&] {
    for (const analyze::RankSummary& s : r.ranks) {
      if (any_gpu && s.devices.empty() && InRange(t.processes(), s.process)) {
        ProcessWithoutGpu p;
        p.pid = s.pid;
        if (s.rank != model::kNone) p.rank = s.rank;
        p.name = Str(t, t.processes()[s.process].name);
        p.host = Str(t, t.processes()[s.process].host);
        others.push_back(std::move(p));
        continue;
      }
      ranks.push_back(BuildRankReport(t, r, s, r.cross_rank, info.top_n, info.threads));
    }
  };
  // The ranks' sections, the job-wide totals and the sections across ranks read only the trace
  // and the results, each writing its own part: at once.
  Report header;
  GlobalPartial global;
  CrossRank cross;
  CriticalPath critical_path;
  StragglerCauses stragglers;
  StreamConcurrency concurrency;
  base::RunAll(info.threads, {build_ranks, [&] { global = BuildGlobalPartial(t, r); },
                              [&] {
                                header = Header(t, r, info);
                                cross = BuildCrossRank(t, r.cross_rank, r.overlap, info.top_n);
                              },
                              [&] {
                                critical_path = BuildCriticalPath(t, r.critical_path);
                                stragglers = BuildStragglerCauses(t, r.stragglers, r.cross_rank);
                                concurrency = BuildStreamConcurrency(t, r.concurrency);
                              }});
  Report rep = Assemble(std::move(header), global, std::move(ranks), std::move(cross));
  rep.processes_without_gpu_work = std::move(others);
  rep.critical_path = std::move(critical_path);
  rep.straggler_causes = std::move(stragglers);
  rep.stream_concurrency = std::move(concurrency);
  return rep;
}

ClassExplanations BuildClassExplanations(const model::Trace& t, const analyze::ClassificationSummary& c) {
  ClassExplanations e;
  for (const analyze::ClassRule& rule : c.rules) e.rules.push_back({rule.Describe(), rule.origin});
  for (const analyze::ClassExplanation& n : c.names)
    e.names.push_back({std::string(analyze::ToString(n.cls)), std::string(model::ToString(n.kind)), Str(t, n.name),
                       n.rule, n.count, n.total_ns});
  return e;
}

}  // namespace overlapscope::report
