// One rank's section of the report: its summary, devices, blocking, findings, sync points and
// launch statistics, from that rank's rows of the analysis results.
#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/run_all.h"
#include "report/build.h"
#include "report/build_internal.h"
#include "report/gates.h"
#include "report/overview.h"

namespace overlapscope::report {

using namespace overlapscope::report::build;  // NOLINT: the resolvers read better unqualified

namespace build {
bool ValidRef(const model::Trace& t, const model::GpuRef& r) {
  return r.kind == model::GpuKind::kKernel   ? InRange(t.kernels(), r.index)
         : r.kind == model::GpuKind::kMemcpy ? InRange(t.memcpys(), r.index)
                                             : InRange(t.memsets(), r.index);
}

std::optional<GpuActivity> Activity(const model::Trace& t, const model::GpuRef& r) {
  if (!ValidRef(t, r)) return std::nullopt;
  const model::StringId name = t.NameOf(r);
  return GpuActivity{std::string(model::ToString(r.kind)), Str(t, name), t.StartNs(r), t.EndNs(r),
                     NativeStream(t, t.StreamOf(r))};
}
}  // namespace build

namespace {

OverlapFigures Figures(const analyze::OverlapStats& s) {
  return OverlapFigures{s.comm_ns,
                        s.hidden_comm_ns,
                        s.exposed_comm_ns,
                        s.overlap_ratio,
                        s.compute_ns,
                        s.compute_share_overlapped,
                        s.contention_ns,
                        s.net_overlap_gain_ns,
                        s.overlapped_compute_instances,
                        s.contention_unknown_instances,
                        s.activities};
}

report::Percentiles Pcts(const analyze::Percentiles& p) {
  return report::Percentiles{p.count, p.min_ns, p.p50_ns, p.p90_ns, p.p99_ns, p.max_ns, p.mean_ns};
}

// Indexes of the items `keep` selects, the `top_n` largest by `size` (stable: ties keep order).
template <typename T, typename Keep, typename Size>
std::vector<const T*> Top(const std::vector<T>& v, Keep keep, Size size, int64_t top_n, int64_t* count = nullptr) {
  std::vector<const T*> out;
  for (const T& x : v)
    if (keep(x)) out.push_back(&x);
  if (count != nullptr) *count = static_cast<int64_t>(out.size());
  std::stable_sort(out.begin(), out.end(), [&](const T* a, const T* b) { return size(*a) > size(*b); });
  if (out.size() > static_cast<size_t>(std::max<int64_t>(0, top_n))) out.resize(static_cast<size_t>(top_n));
  return out;
}

void DeviceIdleOf(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::DeviceIdle& di,
                  DeviceReport& d, model::DeviceId device, int64_t top_n) {
  d.idle.span_ns = di.span_ns;
  d.idle.busy_ns = di.busy_ns;
  d.idle.idle_ns = di.idle_ns;
  if (di.span_ns > 0) d.idle.idle_share = static_cast<double>(di.idle_ns) / static_cast<double>(di.span_ns);
  d.idle.min_gap_ns = r.min_gap_ns;
  d.idle.gaps = di.gaps;
  d.idle.gap_ns = di.gap_ns;
  for (int c = 0; c < analyze::kGapCauses; ++c)
    d.idle.causes.push_back(
        {Key(analyze::ToString(static_cast<analyze::GapCause>(c))), di.cause_ns[c], di.cause_count[c]});
  auto split = [](const analyze::HostSplit& h) {
    return report::HostSplit{h.blocked_ns, h.launch_ns, h.other_calls_ns, h.outside_ns};
  };
  if (di.cause_count[static_cast<int>(analyze::GapCause::kHostBlocked)] > 0)
    d.idle.host_blocked_split = split(di.host_blocked_split);
  auto gaps = Top(
      r.gaps, [&](const analyze::IdleGap& g) { return g.device == device; },
      [](const analyze::IdleGap& g) { return g.duration_ns(); }, top_n);
  for (const analyze::IdleGap* g : gaps) {
    report::IdleGap x{
        g->start_ns,  g->end_ns,         std::string(analyze::ToString(g->cause)), Activity(t, g->ended_by),
        std::nullopt, Tid(t, g->thread), IterationNumber(r, g->iteration),         std::nullopt,
        std::nullopt};
    if (InRange(t.api_calls(), g->launch_call)) x.launch_call = Str(t, t.api_calls()[g->launch_call].name);
    if (g->cause == analyze::GapCause::kHostBlocked) x.host = split(g->host);
    if (g->waited_for)
      if (std::optional<GpuActivity> a = Activity(t, *g->waited_for))
        x.waiting_on = IdleGap::WaitingOn{a->stream, a->name, g->wait_inferred};
    d.top_gaps.push_back(std::move(x));
  }
}

// Per iteration (index into r.iterations.iterations) the device's gap time by cause: a gap
// belongs to the iteration of the activity that ends it (analyze::IdleGap::iteration).
std::vector<std::array<int64_t, analyze::kGapCauses>> GapsByIteration(const analyze::AnalysisResult& r,
                                                                      model::DeviceId device) {
  std::vector<std::array<int64_t, analyze::kGapCauses>> v(r.iterations.iterations.size(),
                                                          std::array<int64_t, analyze::kGapCauses>{});
  for (const analyze::IdleGap& g : r.gaps)
    if (g.device == device && InRange(v, g.iteration)) v[g.iteration][static_cast<int>(g.cause)] += g.duration_ns();
  return v;
}

report::WaitedFor WaitedForOf(const analyze::CrossRankResult& x, const analyze::WaitedFor& f) {
  report::WaitedFor w;
  w.wait_ns = f.wait_ns;
  if (InRange(x.participants, f.participant)) {
    w.label = x.participants[f.participant].label;
    if (x.participants[f.participant].rank != model::kNone) w.rank = x.participants[f.participant].rank;
  }
  return w;
}

DeviceReport Device(const model::Trace& t, const analyze::AnalysisResult& r, size_t i, int64_t top_n) {
  const analyze::DeviceOverlap& o = r.overlap[i];
  const auto gaps = GapsByIteration(r, o.device);
  DeviceReport d;
  if (InRange(t.devices(), o.device)) {
    d.device = t.devices()[o.device].ordinal;
    d.name = Str(t, t.devices()[o.device].name);
  }
  d.overlap = Figures(o.whole);
  for (const analyze::IterationOverlap& io : o.iterations) {
    report::IterationOverlap x{io.number, io.gpu_start_ns, io.gpu_end_ns, 0, 0, Figures(io.stats), {}};
    if (InRange(r.iterations.iterations, io.iteration)) {
      x.cpu_start_ns = r.iterations.iterations[io.iteration].start_ns;
      x.cpu_end_ns = r.iterations.iterations[io.iteration].end_ns;
    }
    for (int c = 0; c < analyze::kGapCauses; ++c)
      x.gap_ns.push_back({Key(analyze::ToString(static_cast<analyze::GapCause>(c))),
                          InRange(gaps, io.iteration) ? gaps[io.iteration][c] : 0});
    d.iterations.push_back(x);
  }
  for (const analyze::CollectiveOverlap& c : o.collectives) d.collectives.exposed_ns += c.own_ns - c.hidden_ns;
  auto top = Top(
      o.collectives, [](const analyze::CollectiveOverlap&) { return true; },
      [](const analyze::CollectiveOverlap& c) { return c.own_ns - c.hidden_ns; }, top_n, &d.collectives.count);
  for (const analyze::CollectiveOverlap* c : top)
    d.collectives.top_exposed.push_back({Str(t, c->name), NativeStream(t, c->stream), c->start_ns, c->end_ns, c->own_ns,
                                         c->hidden_ns, c->overlap_ratio});
  for (size_t k = 0; k < o.slowdowns.size() && k < static_cast<size_t>(std::max<int64_t>(0, top_n)); ++k) {
    const analyze::KernelSlowdown& s = o.slowdowns[k];
    d.slowdowns.push_back(
        {Str(t, s.name), s.overlapped_count, s.alone_count, s.median_overlapped_ns, s.median_alone_ns, s.slowdown});
  }
  if (o.wait.known) {
    CommWait w{o.wait.comm_wait_ns, o.wait.hidden_wait_ns, o.wait.exposed_wait_ns, {}};
    for (const analyze::WaitedFor& f : o.wait.waited_for)
      if (static_cast<int64_t>(w.waited_for.size()) < top_n) w.waited_for.push_back(WaitedForOf(r.cross_rank, f));
    d.comm_wait = std::move(w);
  }
  if (i < r.idle.size()) DeviceIdleOf(t, r, r.idle[i], d, o.device, top_n);
  for (const analyze::StreamLaunchStats& s : r.launch.streams)
    if (s.device == o.device)
      d.launch_delay.push_back(
          {NativeStream(t, s.stream), Pcts(s.launch_delay), s.launch_delay_outliers, s.without_launch_call});
  return d;
}

report::RankSummary Summary(const analyze::RankSummary& s, const analyze::CrossRankResult& cross) {
  report::RankSummary j;
  j.comm_ns = s.comm_ns;
  j.hidden_comm_ns = s.hidden_comm_ns;
  j.exposed_comm_ns = s.exposed_comm_ns;
  if (s.wait_known) {
    j.comm_wait_ns = s.comm_wait_ns;
    j.hidden_wait_ns = s.hidden_wait_ns;
    j.exposed_wait_ns = s.exposed_wait_ns;
  }
  j.overlap_ratio = s.overlap_ratio;
  j.compute_ns = s.compute_ns;
  if (s.compute_ns > 0)
    j.compute_share_overlapped = static_cast<double>(s.hidden_comm_ns) / static_cast<double>(s.compute_ns);
  j.contention_ns = s.contention_ns;
  j.net_overlap_gain_ns = s.net_overlap_gain_ns;
  j.hta_compat_overlap_pct = s.hta_compat_overlap_pct;
  j.hta_wholetrace_overlap_pct = s.hta_wholetrace_overlap_pct;
  j.blocked_ns = s.blocked_ns;
  j.blocked_share = s.blocked_share;
  j.gpu_span_ns = s.gpu_span_ns;
  j.gpu_idle_ns = s.gpu_idle_ns;
  j.gpu_idle_share = s.gpu_idle_share;
  j.gpu_gap_ns = s.gpu_gap_ns;
  for (int c = 0; c < analyze::kGapCauses; ++c)
    j.gap_ns.push_back({Key(analyze::ToString(static_cast<analyze::GapCause>(c))), s.gap_cause_ns[c]});
  const auto& kinds = analyze::FindingKinds();
  for (size_t k = 0; k < kinds.size(); ++k)
    j.findings.push_back({Key(kinds[k]), k < s.finding_count.size() ? s.finding_count[k] : 0});
  AddCrossRankSummary(cross, s.process, &j);
  return j;
}

}  // namespace

// METRICS §6, from the cross-rank matching (0 for a single rank or without collectives). A
// process driving several GPUs has one participant per GPU: their sums.
void AddCrossRankSummary(const analyze::CrossRankResult& cross, model::ProcessId process, RankSummary* summary) {
  summary->collective_wait_ns = 0;
  summary->collective_times_last = 0;
  for (const analyze::RankStraggling& rs : cross.ranks)
    if (InRange(cross.participants, rs.participant) && cross.participants[rs.participant].process == process) {
      summary->collective_wait_ns += rs.own_wait_ns;
      summary->collective_times_last += rs.times_last;
    }
}

namespace {

void Blocking(const model::Trace& t, const analyze::AnalysisResult& r, model::ProcessId p, int64_t top_n,
              RankReport& rk) {
  for (const analyze::ThreadBlocking& th : r.blocking.threads) {
    if (th.process != p || (th.blocked_ns == 0 && th.final_sync_ns == 0)) continue;
    report::ThreadBlocking x;
    x.thread = Tid(t, th.thread);
    if (InRange(t.threads(), th.thread)) x.name = Str(t, t.threads()[th.thread].name);
    x.blocked_ns = th.blocked_ns;
    x.final_sync_ns = th.final_sync_ns;
    x.active_span_ns = th.active_span_ns;
    x.blocked_share = th.blocked_share;
    for (const analyze::CallSite& c : th.top_calls)
      x.top_calls.push_back({Str(t, c.call), c.count, c.total_ns, c.max_ns});
    rk.threads.push_back(std::move(x));
  }
  auto top = Top(
      r.blocking.intervals, [&](const analyze::BlockedInterval& b) { return b.process == p; },
      [](const analyze::BlockedInterval& b) { return b.duration_ns(); }, top_n, &rk.blocked_intervals.count);
  for (const analyze::BlockedInterval* b : top) {
    report::BlockedInterval x;
    x.call = Str(t, b->call);
    x.reason = std::string(analyze::ToString(b->reason));
    x.thread = Tid(t, b->thread);
    x.start_ns = b->start_ns;
    x.duration_ns = b->duration_ns();
    x.stream = NativeStream(t, b->stream);
    if (b->released_by) x.released_by = Activity(t, *b->released_by);
    x.device_busy_ns = b->device_busy_ns;
    x.device_idle_ns = b->device_idle_ns;
    x.iteration = IterationNumber(r, b->iteration);
    x.final_sync = b->final_sync;
    rk.blocked_intervals.top.push_back(std::move(x));
  }
}

void FindingItems(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::RankSummary& s, int threads,
                  RankReport& rk) {
  const auto& kinds = analyze::FindingKinds();
  for (size_t k = 0; k < kinds.size(); ++k)
    rk.findings.by_kind.push_back({std::string(kinds[k]), k < s.finding_count.size() ? s.finding_count[k] : 0,
                                   k < s.finding_cost_ns.size() ? s.finding_cost_ns[k] : 0});
  // The items copy every message and advice (tens of MB where a rule fires on every
  // collective): in ranges at once, appended in order.
  base::ParallelAppend(
      threads, r.sync.findings.size(), 2048, &rk.findings.items, [&](size_t lo, size_t hi, std::vector<Finding>* out) {
        for (size_t i = lo; i < hi; ++i) {
          const analyze::Finding& f = r.sync.findings[i];
          if (f.process != s.process) continue;
          out->push_back({std::string(f.kind), f.time_ns, f.end_ns, Tid(t, f.thread), NativeStream(t, f.stream),
                          Str(t, f.call), IterationNumber(r, f.iteration), f.cost_ns, f.message, f.advice});
        }
      });
}

void SyncPointsOf(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::RankSummary& s,
                  RankReport& rk) {
  // Kinds in the order they first appear; stream waits grouped by their figures, in the order
  // each group first appears, looked up by the names' ids (one id per distinct text, 0 the
  // empty one: what Activity()'s names compare as) instead of copies of the names.
  std::array<int32_t, static_cast<size_t>(analyze::SyncPointKind::kStreamWaitEvent) + 1> kind_at;
  kind_at.fill(-1);
  using WaitKey = std::tuple<std::optional<int64_t>, std::optional<int64_t>, model::StringId, model::StringId, bool>;
  absl::flat_hash_map<WaitKey, size_t> wait_at;
  auto name_of = [&](const model::GpuRef& a) -> model::StringId {
    if (!ValidRef(t, a)) return 0;
    const model::StringId name = t.NameOf(a);
    return InRange(t.strings(), name) ? name : 0;
  };
  for (const analyze::SyncPoint& p : r.sync.points) {
    if (p.process != s.process) continue;
    ++rk.sync_points.count;
    int32_t& k = kind_at.at(static_cast<size_t>(p.kind));
    if (k < 0) {
      k = static_cast<int32_t>(rk.sync_points.by_kind.size());
      rk.sync_points.by_kind.push_back(KindFigures{std::string(analyze::ToString(p.kind)), 0, 0});
    }
    ++rk.sync_points.by_kind[k].count;
    rk.sync_points.by_kind[k].ns += p.blocked_ns;
    if (!p.wait_source) continue;
    WaitKey key{NativeStream(t, p.stream), NativeStream(t, p.wait_on_stream), name_of(*p.wait_source),
                name_of(p.waiter), p.wait_inferred};
    auto [it, added] = wait_at.try_emplace(key, rk.sync_points.stream_waits.size());
    if (added)
      rk.sync_points.stream_waits.push_back(
          {std::get<0>(key), std::get<1>(key), Str(t, std::get<2>(key)), Str(t, std::get<3>(key)), p.wait_inferred, 1});
    else
      ++rk.sync_points.stream_waits[it->second].count;
  }
  std::stable_sort(rk.sync_points.stream_waits.begin(), rk.sync_points.stream_waits.end(),
                   [](const SyncPoints::StreamWait& a, const SyncPoints::StreamWait& b) { return a.count > b.count; });
}

void Launches(const model::Trace& t, const analyze::AnalysisResult& r, model::ProcessId p, int64_t top_n,
              RankReport& rk) {
  const size_t limit = static_cast<size_t>(std::max<int64_t>(0, top_n));
  for (const analyze::RuntimeCallStats& c : r.launch.calls)
    if (c.process == p && rk.launch_calls.size() < limit)
      rk.launch_calls.push_back({Str(t, c.call), Pcts(c.duration), c.outliers});
  for (const analyze::ShortKernelStats& k : r.launch.short_kernels) {
    if (!InRange(t.devices(), k.device) || t.ProcessOfDevice(k.device) != p) continue;
    rk.short_kernels.count += k.count;
    if (rk.short_kernels.top.size() < limit)
      rk.short_kernels.top.push_back({Str(t, k.name), k.count, k.gpu_total_ns, k.cpu_total_ns});
  }
}

// Capture windows of one process (analyze/windows.h); empty for traces recorded throughout.
std::vector<Window> Windows(const model::Trace& t, const analyze::AnalysisResult& r, model::ProcessId p) {
  std::vector<Window> out;
  for (const analyze::WindowFigures& w : r.windows) {
    if (w.process != p) continue;
    out.push_back({w.index, std::string(model::ToString(w.trigger)), Str(t, w.name), w.capture_start_ns,
                   w.capture_end_ns, w.start_ns, w.end_ns, w.startup_excluded_ns, w.kernels, w.memcpys, w.memsets,
                   w.gpu_span_ns, w.gpu_busy_ns, w.gpu_idle_ns, w.gpu_gap_ns, w.gaps});
  }
  return out;
}

}  // namespace

std::vector<std::string> GateMetricNames() {
  RankSummary s = Summary(analyze::RankSummary{}, analyze::CrossRankResult{});
  AddPathSummary(analyze::CriticalPathResult{}, analyze::StragglerResult{}, analyze::CrossRankResult{}, model::kNone,
                 &s);
  return MetricNames(s);
}

report::HtaCompat BuildHtaCompat(const analyze::HtaCompat& h) {
  report::HtaCompat x;
  x.overlap_pct = h.overlap_pct;
  x.comm_us = h.comm_us;
  x.overlap_us = h.overlap_us;
  x.step_filter = h.step_filter;
  if (h.step_filter) x.last_step_start_us = h.last_step_start_us;
  x.filtered_out = h.filtered_out;
  x.wholetrace_overlap_pct = h.wholetrace_overlap_pct;
  x.wholetrace_comm_us = h.wholetrace_comm_us;
  x.wholetrace_overlap_us = h.wholetrace_overlap_us;
  x.dropped_sub_us = h.dropped_sub_us;
  x.note =
      "Holistic Trace Analysis' comp_comm_overlap_pctg as TraceAnalysis(dir).get_comm_comp_overlap() prints it: its "
      "kernel-name rules, all GPUs of the rank, start rounded up and end down to µs, and (step_filter) only GPU "
      "work launched before the rank's last ProfilerStep when the trace has >= 2 steps; wholetrace_*: the same "
      "rules without that filter";
  return x;
}

RankReport BuildRankReport(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::RankSummary& s,
                           const analyze::CrossRankResult& cross, int64_t top_n, int threads) {
  RankReport rk;
  if (s.rank != model::kNone) rk.rank = s.rank;
  rk.pid = s.pid;
  if (InRange(t.processes(), s.process)) {
    rk.host = Str(t, t.processes()[s.process].host);
    rk.source = Str(t, t.processes()[s.process].source);
  }
  rk.summary = Summary(s, cross);
  if (s.waited_for != model::kNone) rk.waited_for_most = WaitedForOf(cross, {s.waited_for, s.waited_for_ns});
  AddPathSummary(r.critical_path, r.stragglers, cross, s.process, &rk.summary);  // build_paths.cc
  rk.windows = Windows(t, r, s.process);
  // The devices, the blocking and launch figures, the findings and the sync points read only
  // the trace and the results and write their own members of rk: at once.
  base::RunAll(threads, {[&] {
                           for (int32_t i : s.devices)
                             if (InRange(r.overlap, i))
                               rk.devices.push_back(Device(t, r, static_cast<size_t>(i), top_n));
                         },
                         [&] { FindingItems(t, r, s, threads, rk); }, [&] { SyncPointsOf(t, r, s, rk); },
                         [&] {
                           Blocking(t, r, s.process, top_n, rk);
                           Launches(t, r, s.process, top_n, rk);
                         }});
  rk.summary.step_time_ns = MedianStepNs(rk);  // the job overview's first column
  // "rank 3", or "pid 42 (GPU 0, GPU 1)" for a process without a rank: reports never say "rank ?".
  if (rk.rank) {
    rk.label = absl::StrCat("rank ", *rk.rank);
  } else {
    std::string gpus;
    for (const DeviceReport& d : rk.devices) absl::StrAppend(&gpus, gpus.empty() ? "" : ", ", "GPU ", d.device);
    rk.label = absl::StrCat("pid ", rk.pid, gpus.empty() ? "" : " (" + gpus + ")");
  }
  for (const analyze::HtaCompat& h : r.hta)
    if (h.process == s.process) rk.hta_compat = BuildHtaCompat(h);
  if (InRange(r.dependency_graph_by_process, s.process)) {
    const analyze::graph::GraphStats& g = r.dependency_graph_by_process[s.process];
    DependencyGraph d;
    // Peer edges join ranks: the per-rank reduction cannot count them on a rank alone, and
    // collectives_across_ranks reports the matching they come from.
    for (int k = 0; k < analyze::graph::kEdgeKinds; ++k)
      if (static_cast<analyze::graph::EdgeKind>(k) != analyze::graph::EdgeKind::kPeer)
        d.edges.push_back({std::string(analyze::graph::ToString(static_cast<analyze::graph::EdgeKind>(k))),
                           g.recorded[k], g.inferred[k]});
    d.waits_recorded = g.waits_recorded, d.waits_recorded_without_source = g.waits_recorded_without_source;
    d.waits_inferred = g.waits_inferred, d.waits_ambiguous = g.waits_ambiguous;
    d.waits_inferred_by_order = g.waits_inferred_by_order;
    d.waits_unresolved = g.waits_unresolved, d.waits_not_delayed = g.waits_not_delayed;
    d.waits_already_complete = g.waits_already_complete;
    d.gpu_without_launch = g.gpu_without_launch, d.syncs_without_release = g.syncs_without_release;
    d.backward_edges = g.backward_edges;
    rk.dependency_graph = std::move(d);
  }
  return rk;
}

}  // namespace overlapscope::report
