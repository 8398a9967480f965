// JSON report, schema "overlapscope.report/1" (docs/report-schema.md). Key names follow
// METRICS.md. Ratios without a denominator are null, never NaN.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "report/report_internal.h"

namespace overlapscope::report {
namespace {

using namespace overlapscope::analyze;  // NOLINT: result types read better unqualified here

ojson Opt(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }
std::string Str(const model::Trace& t, model::StringId id) { return std::string(t.str(id)); }
ojson Tid(const model::Trace& t, model::ThreadId th) {
  return th == model::kNone ? ojson(nullptr) : ojson(t.threads()[th].tid);
}
ojson StreamId(const model::Trace& t, model::StreamId s) {
  return s == model::kNone ? ojson(nullptr) : ojson(t.streams()[s].native_id);
}
ojson IterNumber(const AnalysisResult& r, int32_t it) {
  return it == model::kNone ? ojson(nullptr) : ojson(r.iterations.iterations[it].number);
}
std::string Key(std::string_view kebab) {
  std::string k(kebab);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

ojson StatsJson(const OverlapStats& s) {
  ojson j;
  j["comm_ns"] = s.comm_ns;
  j["hidden_comm_ns"] = s.hidden_comm_ns;
  j["exposed_comm_ns"] = s.exposed_comm_ns;
  j["overlap_ratio"] = Opt(s.overlap_ratio);
  j["no_communication"] = s.comm_ns == 0;
  j["compute_ns"] = s.compute_ns;
  j["compute_share_overlapped"] = Opt(s.compute_share_overlapped);
  j["contention_ns"] = s.contention_ns;
  j["net_overlap_gain_ns"] = s.net_overlap_gain_ns;
  j["overlapped_compute_instances"] = s.overlapped_compute_instances;
  j["contention_unknown_instances"] = s.contention_unknown_instances;
  j["activities"] = s.activities;
  return j;
}

ojson GpuRefJson(const model::Trace& t, const std::optional<model::GpuRef>& r) {
  if (!r) return nullptr;
  ojson j;
  j["kind"] = std::string(model::ToString(r->kind));
  j["name"] = Str(t, r->kind == model::GpuKind::kKernel   ? t.kernels()[r->index].name
                     : r->kind == model::GpuKind::kMemcpy ? t.memcpys()[r->index].name
                                                          : t.memsets()[r->index].name);
  j["start_ns"] = t.StartNs(*r);
  j["end_ns"] = t.EndNs(*r);
  j["stream"] = StreamId(t, t.StreamOf(*r));
  return j;
}

ojson PercentilesJson(const Percentiles& p) {
  return ojson{{"count", p.count},   {"min_ns", p.min_ns}, {"p50_ns", p.p50_ns},  {"p90_ns", p.p90_ns},
               {"p99_ns", p.p99_ns}, {"max_ns", p.max_ns}, {"mean_ns", p.mean_ns}};
}

ojson DeviceJson(const model::Trace& t, const AnalysisResult& r, size_t i, size_t top_n) {
  const DeviceOverlap& d = r.overlap[i];
  const DeviceIdle& di = r.idle[i];
  ojson j;
  j["device"] = t.devices()[d.device].ordinal;
  j["name"] = Str(t, t.devices()[d.device].name);
  j["overlap"] = StatsJson(d.whole);
  ojson its = ojson::array();
  for (const IterationOverlap& io : d.iterations) {
    ojson x;
    x["iteration"] = io.number;
    x["gpu_start_ns"] = io.gpu_start_ns;
    x["gpu_end_ns"] = io.gpu_end_ns;
    x["cpu_start_ns"] = r.iterations.iterations[io.iteration].start_ns;
    x["cpu_end_ns"] = r.iterations.iterations[io.iteration].end_ns;
    x.update(StatsJson(io.stats));
    its.push_back(x);
  }
  j["iterations"] = its;
  // Collectives: totals, then the instances with the most exposed time.
  std::vector<const CollectiveOverlap*> cs;
  int64_t exposed = 0;
  for (const CollectiveOverlap& c : d.collectives) {
    cs.push_back(&c);
    exposed += c.own_ns - c.hidden_ns;
  }
  std::stable_sort(cs.begin(), cs.end(), [](const CollectiveOverlap* a, const CollectiveOverlap* b) {
    return a->own_ns - a->hidden_ns > b->own_ns - b->hidden_ns;
  });
  ojson top = ojson::array();
  for (size_t k = 0; k < cs.size() && k < top_n; ++k) {
    const CollectiveOverlap& c = *cs[k];
    top.push_back({{"name", Str(t, c.name)},
                   {"stream", StreamId(t, c.stream)},
                   {"start_ns", c.start_ns},
                   {"end_ns", c.end_ns},
                   {"own_ns", c.own_ns},
                   {"hidden_ns", c.hidden_ns},
                   {"exposed_ns", c.own_ns - c.hidden_ns},
                   {"overlap_ratio", Opt(c.overlap_ratio)}});
  }
  j["collectives"] = {{"count", cs.size()}, {"exposed_ns", exposed}, {"top_exposed", top}};
  ojson sl = ojson::array();
  for (size_t k = 0; k < d.slowdowns.size() && k < top_n; ++k) {
    const KernelSlowdown& s = d.slowdowns[k];
    sl.push_back({{"name", Str(t, s.name)},
                  {"overlapped_count", s.overlapped_count},
                  {"alone_count", s.alone_count},
                  {"median_overlapped_ns", s.median_overlapped_ns},
                  {"median_alone_ns", s.median_alone_ns},
                  {"slowdown", s.slowdown}});
  }
  j["slowdowns"] = sl;
  ojson idle;
  idle["span_ns"] = di.span_ns;
  idle["busy_ns"] = di.busy_ns;
  idle["idle_ns"] = di.idle_ns;
  idle["idle_share"] =
      di.span_ns > 0 ? ojson(static_cast<double>(di.idle_ns) / static_cast<double>(di.span_ns)) : ojson(nullptr);
  idle["min_gap_ns"] = r.min_gap_ns;
  idle["gaps"] = di.gaps;
  idle["gap_ns"] = di.gap_ns;
  ojson causes;
  for (int c = 0; c < kGapCauses; ++c)
    causes[Key(ToString(static_cast<GapCause>(c)))] = {{"ns", di.cause_ns[c]}, {"count", di.cause_count[c]}};
  idle["causes"] = causes;
  j["idle"] = idle;
  std::vector<const IdleGap*> gaps;
  for (const IdleGap& g : r.gaps)
    if (g.device == d.device) gaps.push_back(&g);
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const IdleGap* a, const IdleGap* b) { return a->duration_ns() > b->duration_ns(); });
  ojson tg = ojson::array();
  for (size_t k = 0; k < gaps.size() && k < top_n; ++k) {
    const IdleGap& g = *gaps[k];
    tg.push_back({{"start_ns", g.start_ns},
                  {"end_ns", g.end_ns},
                  {"duration_ns", g.duration_ns()},
                  {"cause", std::string(ToString(g.cause))},
                  {"ended_by", GpuRefJson(t, g.ended_by)},
                  {"launch_call",
                   g.launch_call == model::kNone ? ojson(nullptr) : ojson(Str(t, t.api_calls()[g.launch_call].name))},
                  {"thread", Tid(t, g.thread)},
                  {"iteration", IterNumber(r, g.iteration)}});
  }
  j["top_gaps"] = tg;
  ojson ld = ojson::array();
  for (const StreamLaunchStats& s : r.launch.streams) {
    if (s.device != d.device) continue;
    ld.push_back({{"stream", StreamId(t, s.stream)},
                  {"launch_delay", PercentilesJson(s.launch_delay)},
                  {"launch_delay_outliers", s.launch_delay_outliers},
                  {"without_launch_call", s.without_launch_call}});
  }
  j["launch_delay"] = ld;
  return j;
}

}  // namespace

std::vector<std::string> GateMetricNames() {
  std::vector<std::string> v = {"comm_ns",       "hidden_comm_ns",      "exposed_comm_ns",
                                "overlap_ratio", "compute_ns",          "compute_share_overlapped",
                                "contention_ns", "net_overlap_gain_ns", "hta_compat_overlap_pct",
                                "blocked_ns",    "blocked_share",       "gpu_span_ns",
                                "gpu_idle_ns",   "gpu_idle_share",      "gpu_gap_ns"};
  for (int c = 0; c < kGapCauses; ++c) v.push_back("gap_" + Key(ToString(static_cast<GapCause>(c))) + "_ns");
  v.push_back("findings");
  for (int k = 0; k < kFindingKinds; ++k) v.push_back("finding_" + Key(ToString(static_cast<FindingKind>(k))));
  v.push_back("collective_wait_ns");
  v.push_back("collective_times_last");
  return v;
}

ojson RankSummaryJson(const model::Trace& t, const AnalysisResult& r, const RankSummary& s) {
  ojson j;
  j["comm_ns"] = s.comm_ns;
  j["hidden_comm_ns"] = s.hidden_comm_ns;
  j["exposed_comm_ns"] = s.exposed_comm_ns;
  j["overlap_ratio"] = Opt(s.overlap_ratio);
  j["compute_ns"] = s.compute_ns;
  j["compute_share_overlapped"] = s.compute_ns > 0
                                      ? ojson(static_cast<double>(s.hidden_comm_ns) / static_cast<double>(s.compute_ns))
                                      : ojson(nullptr);
  j["contention_ns"] = s.contention_ns;
  j["net_overlap_gain_ns"] = s.net_overlap_gain_ns;
  j["hta_compat_overlap_pct"] = Opt(s.hta_compat_overlap_pct);
  j["blocked_ns"] = s.blocked_ns;
  j["blocked_share"] = Opt(s.blocked_share);
  j["gpu_span_ns"] = s.gpu_span_ns;
  j["gpu_idle_ns"] = s.gpu_idle_ns;
  j["gpu_idle_share"] = Opt(s.gpu_idle_share);
  j["gpu_gap_ns"] = s.gpu_gap_ns;
  for (int c = 0; c < kGapCauses; ++c) j["gap_" + Key(ToString(static_cast<GapCause>(c))) + "_ns"] = s.gap_cause_ns[c];
  int64_t total = 0;
  for (int k = 0; k < kFindingKinds; ++k) total += s.finding_count[k];
  j["findings"] = total;
  for (int k = 0; k < kFindingKinds; ++k)
    j["finding_" + Key(ToString(static_cast<FindingKind>(k)))] = s.finding_count[k];
  // METRICS §6, from the cross-rank matching (0 for a single rank or without collectives).
  // A process driving several GPUs has one participant per GPU: their sums.
  int64_t wait = 0, last = 0;
  for (const RankStraggling& rs : r.cross_rank.ranks)
    if (r.cross_rank.participants[rs.participant].process == s.process) {
      wait += rs.own_wait_ns;
      last += rs.times_last;
    }
  j["collective_wait_ns"] = wait;
  j["collective_times_last"] = last;
  return j;
}

// Capture windows of one process (analyze/windows.h); empty for traces recorded throughout.
ojson WindowsJson(const model::Trace& t, const AnalysisResult& r, model::ProcessId p) {
  ojson out = ojson::array();
  for (const WindowFigures& w : r.windows) {
    if (w.process != p) continue;
    out.push_back({{"index", w.index},
                   {"trigger", std::string(model::ToString(w.trigger))},
                   {"name", Str(t, w.name)},
                   {"capture_start_ns", w.capture_start_ns},
                   {"capture_end_ns", w.capture_end_ns},
                   {"start_ns", w.start_ns},
                   {"end_ns", w.end_ns},
                   {"startup_excluded_ns", w.startup_excluded_ns},
                   {"kernels", w.kernels},
                   {"memcpys", w.memcpys},
                   {"memsets", w.memsets},
                   {"gpu_span_ns", w.gpu_span_ns},
                   {"gpu_busy_ns", w.gpu_busy_ns},
                   {"gpu_idle_ns", w.gpu_idle_ns},
                   {"gpu_gap_ns", w.gpu_gap_ns},
                   {"gaps", w.gaps}});
  }
  return out;
}

ojson BuildReportJson(const model::Trace& t, const AnalysisResult& r, const ReportInfo& info) {
  ojson j;
  j["schema"] = "overlapscope.report/1";
  j["schema_version"] = "1.4";  // minor: additive changes only (docs/report-schema.md)
  j["tool"] = "overlapscope " + info.tool_version;
  j["inputs"] = info.inputs;
  j["time_span"] = {{"start_ns", t.start_ns()}, {"end_ns", t.end_ns()}, {"duration_ns", t.end_ns() - t.start_ns()}};
  j["options"] = {{"iteration_marker", r.iterations.marker},
                  {"min_gap_ns", r.min_gap_ns},
                  {"runtime_cutoff_ns", r.launch.runtime_cutoff_ns},
                  {"launch_delay_cutoff_ns", r.launch.launch_delay_cutoff_ns},
                  {"top_n", info.top_n},
                  {"align_clocks", std::string(ToString(info.clock_alignment.mode))}};
  j["clock_note"] = t.clock_note();
  j["clock_alignment"] = ClockAlignmentJson(t, info.clock_alignment);
  ojson rules = ojson::array();
  for (const ClassRule& rule : r.classes.rules) rules.push_back({{"rule", rule.Describe()}, {"origin", rule.origin}});
  ojson totals;
  for (int c = 0; c < 4; ++c)
    totals[std::string(ToString(static_cast<ActivityClass>(c)))] = {{"count", r.classes.count[c]},
                                                                    {"total_ns", r.classes.total_ns[c]}};
  j["classes"] = {{"rules", rules}, {"totals", totals}};
  j["iterations"] = {{"marker", r.iterations.marker},
                     {"count", r.iterations.iterations.size()},
                     {"assigned_by_launch_call", r.iterations.by_launch_call},
                     {"assigned_by_own_start", r.iterations.by_own_start},
                     {"outside_iterations", r.iterations.outside}};
  ojson top = ojson::array();
  for (const KernelTotal& k : r.top_kernels)
    top.push_back({{"class", std::string(ToString(k.cls))},
                   {"kind", std::string(model::ToString(k.kind))},
                   {"name", Str(t, k.name)},
                   {"count", k.count},
                   {"total_ns", k.total_ns},
                   {"max_ns", k.max_ns}});
  j["top_kernels"] = top;

  ojson ranks = ojson::array();
  for (const RankSummary& s : r.ranks) {
    ojson jr;
    jr["label"] = nullptr;  // set below, once the devices are known
    jr["rank"] = s.rank == model::kNone ? ojson(nullptr) : ojson(s.rank);
    jr["pid"] = s.pid;
    jr["host"] = Str(t, t.processes()[s.process].host);
    jr["source"] = Str(t, t.processes()[s.process].source);
    jr["summary"] = RankSummaryJson(t, r, s);
    jr["windows"] = WindowsJson(t, r, s.process);
    ojson devs = ojson::array();
    for (int32_t i : s.devices) devs.push_back(DeviceJson(t, r, static_cast<size_t>(i), info.top_n));
    jr["devices"] = devs;
    jr["label"] = RankLabel(jr);
    for (const HtaCompat& h : r.hta) {
      if (h.process != s.process) continue;
      jr["hta_compat"] = {{"overlap_pct", Opt(h.overlap_pct)},
                          {"comm_us", h.comm_us},
                          {"overlap_us", h.overlap_us},
                          {"dropped_sub_us", h.dropped_sub_us},
                          {"note",
                           "Holistic Trace Analysis' comp_comm_overlap_pctg: its kernel-name rules, whole "
                           "trace, all GPUs of the rank, start rounded up and end down to µs"}};
    }
    ojson threads = ojson::array();
    for (const ThreadBlocking& th : r.blocking.threads) {
      if (th.process != s.process || (th.blocked_ns == 0 && th.final_sync_ns == 0)) continue;
      ojson calls = ojson::array();
      for (const CallSite& c : th.top_calls)
        calls.push_back({{"call", Str(t, c.call)}, {"count", c.count}, {"total_ns", c.total_ns}, {"max_ns", c.max_ns}});
      threads.push_back({{"thread", Tid(t, th.thread)},
                         {"name", Str(t, t.threads()[th.thread].name)},
                         {"blocked_ns", th.blocked_ns},
                         {"final_sync_ns", th.final_sync_ns},
                         {"active_span_ns", th.active_span_ns},
                         {"blocked_share", Opt(th.blocked_share)},
                         {"top_calls", calls}});
    }
    jr["threads"] = threads;
    std::vector<const BlockedInterval*> bl;
    for (const BlockedInterval& b : r.blocking.intervals)
      if (b.process == s.process) bl.push_back(&b);
    std::stable_sort(bl.begin(), bl.end(), [](const BlockedInterval* a, const BlockedInterval* b) {
      return a->duration_ns() > b->duration_ns();
    });
    ojson tb = ojson::array();
    for (size_t k = 0; k < bl.size() && k < info.top_n; ++k) {
      const BlockedInterval& b = *bl[k];
      tb.push_back({{"call", Str(t, b.call)},
                    {"reason", std::string(ToString(b.reason))},
                    {"thread", Tid(t, b.thread)},
                    {"start_ns", b.start_ns},
                    {"duration_ns", b.duration_ns()},
                    {"stream", StreamId(t, b.stream)},
                    {"released_by", GpuRefJson(t, b.released_by)},
                    {"device_busy_ns", b.device_busy_ns},
                    {"device_idle_ns", b.device_idle_ns},
                    {"iteration", IterNumber(r, b.iteration)},
                    {"final_sync", b.final_sync}});
    }
    jr["blocked_intervals"] = {{"count", bl.size()}, {"top", tb}};
    ojson counts;
    for (int k = 0; k < kFindingKinds; ++k)
      counts[std::string(ToString(static_cast<FindingKind>(k)))] = {{"count", s.finding_count[k]},
                                                                    {"cost_ns", s.finding_cost_ns[k]}};
    ojson items = ojson::array();
    for (const Finding& f : r.sync.findings) {
      if (f.process != s.process) continue;
      items.push_back({{"kind", std::string(ToString(f.kind))},
                       {"time_ns", f.time_ns},
                       {"end_ns", f.end_ns},
                       {"thread", Tid(t, f.thread)},
                       {"stream", StreamId(t, f.stream)},
                       {"call", Str(t, f.call)},
                       {"iteration", IterNumber(r, f.iteration)},
                       {"cost_ns", f.cost_ns},
                       {"message", f.message},
                       {"advice", f.advice}});
    }
    jr["findings"] = {{"by_kind", counts}, {"items", items}};
    ojson by_kind;
    int64_t npoints = 0;
    for (const SyncPoint& p : r.sync.points) {
      if (p.process != s.process) continue;
      ++npoints;
      std::string k(ToString(p.kind));
      if (!by_kind.contains(k)) by_kind[k] = {{"count", 0}, {"blocked_ns", 0}};
      by_kind[k]["count"] = by_kind[k]["count"].get<int64_t>() + 1;
      by_kind[k]["blocked_ns"] = by_kind[k]["blocked_ns"].get<int64_t>() + p.blocked_ns;
    }
    jr["sync_points"] = {{"count", npoints}, {"by_kind", by_kind.is_null() ? ojson::object() : by_kind}};
    ojson calls = ojson::array();
    for (const RuntimeCallStats& c : r.launch.calls) {
      if (c.process != s.process || calls.size() >= info.top_n) continue;
      calls.push_back({{"call", Str(t, c.call)}, {"duration", PercentilesJson(c.duration)}, {"outliers", c.outliers}});
    }
    jr["launch_calls"] = calls;
    ojson shorts = ojson::array();
    int64_t nshort = 0;
    for (const ShortKernelStats& k : r.launch.short_kernels) {
      if (t.ProcessOfDevice(k.device) != s.process) continue;
      nshort += k.count;
      if (shorts.size() < info.top_n)
        shorts.push_back({{"name", Str(t, k.name)},
                          {"count", k.count},
                          {"gpu_total_ns", k.gpu_total_ns},
                          {"cpu_total_ns", k.cpu_total_ns}});
    }
    jr["short_kernels"] = {{"count", nshort}, {"top", shorts}};
    ranks.push_back(jr);
  }
  j["ranks"] = ranks;

  // Collectives across ranks (METRICS §6), every matched instance (report_collectives.cc).
  j["collectives_across_ranks"] = CrossRankJson(t, r, info);
  return j;
}

std::string RenderReportJson(const model::Trace& t, const AnalysisResult& r, const ReportInfo& info) {
  return BuildReportJson(t, r, info).dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace overlapscope::report
